"""params.yaml access: one file, grouped by stage (DVC tracks each group).

Every read of params.yaml (and every `--set` value) goes through one YAML loader, `ParamsLoader`:
PyYAML's safe loader that also refuses what it would take silently or at any cost. A key written
twice in one mapping (PyYAML keeps the last: `min_classes: 10` a screen above `min_classes: 500`
is lost without a word) is an error naming both lines. Aliases are bounded: the document's nodes,
counted with every alias expanded, may be at most `MAX_NODES`, and it may nest at most
`MAX_DEPTH` deep. PyYAML shares an aliased node instead of copying it, so a "billion laughs" bomb
loads in a moment and small, then every walk of the settings (profile choices, type checks, DVC's
own) copies it out to gigabytes; counting at compose time refuses it before anything walks it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from babelforge.core.errors import BabelforgeError

DEFAULT_PARAMS = "params.yaml"
# Bounds of a params document. The project's params.yaml has 875 nodes and nests 8 deep;
# the bounds leave a hundredfold room and stop a bomb (and PyYAML's own recursion) long before
# memory or Python's stack would.
MAX_NODES = 100_000
MAX_DEPTH = 50
# The one-line switch at the top of params.yaml; any setting may be a {sample: ..., full: ...} map.
PROFILES = ("sample", "full")


# The file that marks a project's root folder (the one `dvc repro` runs stages in).
PROJECT_MARKER = "dvc.yaml"


def find_params(path: str | Path = DEFAULT_PARAMS, start: Path | None = None) -> Path:
    """The params file a command reads: `path` when it is there; the default `params.yaml`, when the
    working folder has none, that of the project the folder lies in: the nearest folder above
    holding params.yaml and dvc.yaml (as git finds `.git`, dvc `.dvc`). Relative paths are seen from
    `start`, the working folder unless given."""
    path = Path(path)
    here = (start or Path.cwd()).resolve()
    if (here / path).is_file():
        return path
    if path == Path(DEFAULT_PARAMS):
        folder = project_folder(here.parent)
        if folder is not None:
            return folder / DEFAULT_PARAMS
        raise BabelforgeError(
            f"no {DEFAULT_PARAMS} in {here} or a folder above it: run inside a babelforge project, or pass --params FILE"
        )
    raise BabelforgeError(
        f"{path}: no params file; pass --params FILE, or run inside a babelforge project without --params"
    )


def project_folder(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding params.yaml and dvc.yaml (a babelforge project)."""
    for folder in (start, *start.parents):
        if (folder / DEFAULT_PARAMS).is_file() and (folder / PROJECT_MARKER).is_file():
            return folder
    return None


def project_root(params_path: str | Path, start: Path | None = None) -> Path:
    """The folder relative paths in the params file resolve from: the project's root, the nearest folder
    holding dvc.yaml at or above the params file (so a command reads the same files from any subfolder);
    the working folder for a params file outside any project (a test's or a user's scratch copy)."""
    here = (start or Path.cwd()).resolve()
    params_folder = (here / params_path).parent.resolve()  # the file itself may be a link to elsewhere
    for folder in (params_folder, *params_folder.parents):
        if (folder / PROJECT_MARKER).is_file():
            return folder
    return here


def load_params(path: str | Path = DEFAULT_PARAMS) -> dict[str, Any]:
    """The params file as a mapping of stage groups; one-line errors for a missing or malformed file, an
    empty one and one without its `profile:` line (the switch every build states, see `profile_of`)."""
    path = Path(path)
    if not path.exists():
        raise BabelforgeError(
            f"{path}: no params file; pass --params FILE, or run inside a babelforge project without --params"
        )
    data = read_yaml(path) or {}
    if not data:  # an empty file (or only comments) would build silently with every default
        raise BabelforgeError(
            f"{path}: empty; a params file starts with `profile: sample` (or full) and holds the stage groups "
            "(`python scripts/pipeline_files.py` writes them)"
        )
    if not isinstance(data, dict):
        raise BabelforgeError(f"{path}: expected a mapping of stage groups at the top level")
    if "profile" not in data:
        raise BabelforgeError(
            f"{path}: no `profile:` line; put `profile: sample` (or full) at its top: it selects the build's settings"
        )
    return data


class RefusedYAML(yaml.MarkedYAMLError):
    """YAML that parses but that ParamsLoader refuses (a key twice, an alias bomb, deep nesting)."""

    label = "YAML refused"


class ParamsLoader(yaml.SafeLoader):
    """The safe loader, refusing duplicate keys, alias expansion past MAX_NODES and nesting past MAX_DEPTH."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        # PyYAML composes recursively: a thousand `[` would end in a RecursionError, not a line
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise RefusedYAML(
                    problem=f"nested more than {MAX_DEPTH} deep", problem_mark=self.peek_event().start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_document(self) -> Any:
        node = super().compose_document()
        if node is not None:
            check_node(node)
        return node


MERGE_TAG = "tag:yaml.org,2002:merge"


def check_node(root: yaml.Node) -> None:
    """Refuse a duplicate key (naming both lines), an alias inside its own anchor and a document
    whose aliases expand past MAX_NODES. Each distinct node is visited once (its expanded size
    remembered), so a bomb is measured in the time of its text, not of its expansion."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:  # iterative post-order: the depth is bounded, but a wide document stays cheap
        node, done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if done:
            open_nodes.discard(id(node))
            sizes[id(node)] = size = 1 + sum(sizes[id(child)] for child in children)
            if size > MAX_NODES:
                raise RefusedYAML(
                    problem=f"its aliases expand to more than {MAX_NODES:,} values (an alias bomb); "
                    "write the values out instead of nesting aliases",
                    problem_mark=node.start_mark,
                )
            continue
        if id(node) in open_nodes:
            raise RefusedYAML(problem="an alias inside its own anchor (a cycle)", problem_mark=node.start_mark)
        open_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            _check_keys(node)
        stack.append((node, True))
        for child in children:
            if id(child) in open_nodes:
                raise RefusedYAML(problem="an alias inside its own anchor (a cycle)", problem_mark=child.start_mark)
            stack.append((child, False))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_keys(node: yaml.MappingNode) -> None:
    first: dict[tuple[str, str], int] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == MERGE_TAG:
            continue
        line = key.start_mark.line + 1
        name = (key.tag, key.value)
        if name in first:  # a flow mapping `{a: 1, a: 2}` repeats it on the same line
            raise RefusedYAML(
                problem=f"key {key.value!r} appears twice (lines {first[name]} and {line}); keep one",
                problem_mark=key.start_mark,
            )
        first[name] = line


def load_yaml_text(text: str) -> Any:
    """YAML text (a `--set` value) through ParamsLoader; its errors are yaml.YAMLError."""
    loader = ParamsLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def read_yaml(path: str | Path) -> Any:
    """A YAML file's content (ParamsLoader); a syntax error, a refused document or bytes that are
    not UTF-8 are one line naming the file."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as handle:
            return load_yaml_text(handle)
    except yaml.YAMLError as error:
        raise BabelforgeError(yaml_error_line(path, error)) from None
    except UnicodeDecodeError as error:
        raise BabelforgeError(f"{path}: not UTF-8 ({error.reason} at byte {error.start})") from None


def yaml_error_line(path: Path, error: Exception) -> str:
    """A YAML parse error as `file:line:column: problem` on one line (PyYAML's own text spans lines)."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    context = getattr(error, "context", None)
    label = getattr(error, "label", "YAML syntax error")
    return f"{where}: {label}: {problem}" + (f" ({context})" if context else "")


def profile_of(params: dict[str, Any]) -> str:
    """The build profile params.yaml selects (`sample` when it names none)."""
    profile = params.get("profile", "sample")
    if profile not in PROFILES:
        raise BabelforgeError(f"params.yaml: profile is {profile!r}; one of {', '.join(PROFILES)}")
    return profile


def for_profile(value: Any, profile: str, where: str) -> Any:
    """`value` with every `{sample: ..., full: ...}` choice in it (at any depth) resolved.

    A mapping whose keys are all profile names is such a choice; it must name `profile`.
    """
    if isinstance(value, dict) and value and set(value) <= set(PROFILES):
        if profile not in value:
            raise BabelforgeError(f"params.yaml: {where} has no value for profile {profile!r} (has {sorted(value)})")
        return for_profile(value[profile], profile, where)
    if isinstance(value, dict):
        return {key: for_profile(item, profile, f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, list):
        return [for_profile(item, profile, f"{where}[{index}]") for index, item in enumerate(value)]
    return value


def profile_section(params: dict[str, Any], name: str) -> dict[str, Any]:
    """The group `name` with its per-profile choices resolved for the selected profile."""
    return for_profile(section(params, name), profile_of(params), name)


def section(params: dict[str, Any], name: str) -> dict[str, Any]:
    """The group `name` of params.yaml; an error naming the file's groups if missing."""
    if name not in params:
        raise BabelforgeError(f"params.yaml has no '{name}' group (it has: {', '.join(sorted(params))})")
    return params[name]
