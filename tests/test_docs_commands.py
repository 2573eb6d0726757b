"""Every shell block of README.md and docs/ says whether it runs as written, and none holds what a
shell cannot take: the runnable ones are run on a built checkout (tests/test_review_journey.py), the
ones that cannot run here say why."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml

from tests.docs_blocks import REPO, RUN_CONTEXTS, ShellBlock, placeholder_problems, shell_blocks, shell_blocks_of

BLOCKS = shell_blocks()
MODEL_PATH = re.compile(r"(?<![\w/.-])models/[\w./-]+")


def model_folders() -> set[str]:
    """The model folders the sample build makes, as params.yaml names them."""
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    named = {value for value in params["paths"].values() if str(value).startswith("models/")}
    listed = {model["id"] for model in params["eval"]["common"]["models"]["sample"]}
    return named | {name for name in listed if name.startswith("models/")}


def test_every_shell_block_says_whether_it_runs():
    unmarked = [block.name for block in BLOCKS if block.runnable is None]
    assert not unmarked, f"shell blocks without <!-- runnable --> or <!-- not runnable: why -->: {unmarked}"
    reasonless = [block.name for block in BLOCKS if block.runnable is False and len(block.context) < 10]
    assert not reasonless, f"a block that cannot run here says why: {reasonless}"
    unknown = [block.name for block in BLOCKS if block.runnable and block.context and block.context not in RUN_CONTEXTS]
    assert not unknown, f"runnable in a context no test sets up: {unknown}"
    for context, test in RUN_CONTEXTS.items():
        if any(block.context == context for block in BLOCKS if block.runnable):
            assert (REPO / test).is_file() and context in (REPO / test).read_text(encoding="utf-8"), context


def test_no_block_holds_a_placeholder_a_shell_misreads():
    problems = [problem for block in BLOCKS for problem in placeholder_problems(block)]
    assert not problems, "\n".join(problems)


def test_every_model_folder_a_block_names_is_one_the_build_makes():
    known = model_folders()
    unknown = [
        f"{block.name}: {path}"
        for block in BLOCKS
        for path in MODEL_PATH.findall(block.text)
        if not any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in known)
    ]
    assert not unknown, f"model folders the sample build does not make (it has {sorted(known)}): {unknown}"


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_every_block_parses_as_bash():
    broken = {}
    for block in BLOCKS:
        result = subprocess.run(["bash", "-n"], input=block.text, capture_output=True, text=True)
        if result.returncode:
            broken[block.name] = result.stderr.strip()
    assert not broken, broken


def test_the_checks_catch_what_a_pasted_placeholder_breaks():
    page = (
        "<!-- not runnable: needs the reader's own BabelNet key -->\n```bash\nexport BABELNET_KEY=<your key>  # <ok>\n```\n"
        "```bash\ndvc exp apply <name>\n```\n"
        '<!-- runnable -->\n```bash\necho "<quoted is text>"\n```\n'
    )
    first, second, third = shell_blocks_of(page, "page.md")
    assert (first.runnable, first.context) == (False, "needs the reader's own BabelNet key")
    assert second.runnable is None and third.runnable is True and third.context == ""
    assert placeholder_problems(first) == ["page.md:3: <your key> (write a value the build has, or $NAME)"]
    assert placeholder_problems(second) == ["page.md:6: <name> (write a value the build has, or $NAME)"]
    assert placeholder_problems(third) == []
    assert MODEL_PATH.findall("babelforge eval_zeroshot --model models/my_clip --out x") == ["models/my_clip"]
    assert isinstance(first, ShellBlock)
