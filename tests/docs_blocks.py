"""The fenced shell blocks of README.md and docs/, each with what its page says about running it.

Every ```bash block is preceded (on the line right above its fence) by one marker:

    <!-- runnable -->                 run verbatim, in order, on a built sample checkout
                                      (tests/test_review_journey.py runs them on its built copy)
    <!-- runnable: <context> -->      run verbatim by the test that sets up <context> (a Ray
                                      cluster on loopback, ...): RUN_CONTEXTS says which test
    <!-- not runnable: <why> -->      shown, not run here: the reason says what it needs (a GPU,
                                      the network, a key, the full build)

A marked block is still checked for placeholders a shell cannot take (`<your key>` is a syntax
error when pasted) and parsed by `bash -n`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHELLS = ("bash", "sh", "shell", "console")
MARKER = re.compile(r"<!--\s*(runnable|not runnable)(?::\s*(.*?))?\s*-->")
FENCE = re.compile(r"^```(\w*)\s*$")
# the tests that run the blocks of a context other than the built checkout
RUN_CONTEXTS = {"ray-loopback": "tests/core/test_ray_guide.py"}


@dataclass(frozen=True)
class ShellBlock:
    page: str  # relative to the repository
    line: int  # the fence's line, 1-based
    runnable: bool | None  # None: no marker above the fence
    context: str  # the runnable context ("" for the built checkout), or why it is not runnable
    text: str

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


def pages(repo: Path = REPO) -> list[Path]:
    """README.md and the docs' own pages (the generated reference lists settings, not commands)."""
    docs = sorted(path for path in (repo / "docs").rglob("*.md") if "reference" not in path.relative_to(repo).parts)
    return [repo / "README.md", *docs]


def shell_blocks_of(text: str, page: str) -> list[ShellBlock]:
    lines = text.splitlines()
    blocks, index = [], 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        end = next((j for j in range(index + 1, len(lines)) if lines[j].startswith("```")), len(lines))
        if fence.group(1) in SHELLS:
            above = lines[index - 1].strip() if index else ""
            marker = MARKER.fullmatch(above)
            runnable = None if not marker else marker.group(1) == "runnable"
            context = (marker.group(2) or "") if marker else ""
            blocks.append(ShellBlock(page, index + 1, runnable, context, "\n".join(lines[index + 1 : end]) + "\n"))
        index = end + 1
    return blocks


def shell_blocks(repo: Path = REPO) -> list[ShellBlock]:
    return [
        block
        for path in pages(repo)
        for block in shell_blocks_of(path.read_text(encoding="utf-8"), path.relative_to(repo).as_posix())
    ]


# `<your key>`, `<commit sha>`, `<name>`: a redirection when pasted (bash: syntax error); comments aside
ANGLE_PLACEHOLDER = re.compile(r"<[A-Za-z][\w .-]*>")


def placeholder_problems(block: ShellBlock) -> list[str]:
    """The placeholders of a block a shell would misread: `<...>` outside comments and quotes."""
    problems = []
    for offset, line in enumerate(block.text.splitlines(), start=1):
        code = strip_comment(line)
        for found in ANGLE_PLACEHOLDER.findall(unquoted(code)):
            problems.append(f"{block.page}:{block.line + offset}: {found} (write a value the build has, or $NAME)")
    return problems


def unquoted(code: str) -> str:
    """The line without its single- and double-quoted parts (a `<` inside quotes is text)."""
    return re.sub(r"'[^']*'|\"(?:\\.|[^\"\\])*\"", "''", code)


def strip_comment(line: str) -> str:
    """The line up to its shell comment (a `#` at the start or after a space, outside quotes)."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index]
    return line
