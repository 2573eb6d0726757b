"""The command table: every `STAGE = Stage(...)` of the package, found by reading the source.

A command's module is a `<name>_stage.py` that declares `STAGE = Stage(...)` at its top level
(babelforge.core.stages is the declaration type). The table lists them without importing one, so
`babelforge --help` and the generators stay fast: each declaration is read with `ast`
(babelforge.core.declarations, the one discovery mechanism), its literal paths give the pipeline
order, and `load` imports a command's module only when that command is asked for.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.declarations import declared_calls, declaring_files, keywords, literal, package_folders
from babelforge.core.errors import BabelforgeError

# In a foreach stage's paths, the item a run is for (a language view's name, say).
FOREACH_KEY = "${key}"


def view_deps(views: Iterable[str]) -> list[str]:
    """Language views as `dvc.yaml` names them as deps: the one rule, for a declaration read from its
    source (the pipeline order) and for one imported (`Stage.dvc_deps`)."""
    return [f"${{paths.language_views}}/{view}.tsv" for view in views]


@dataclass(frozen=True)
class Entry:
    """A command as the table knows it without importing its module."""

    name: str
    module: str
    help: str
    kind: str
    pinned: bool
    reads: tuple[str, ...]  # the literal paths its declaration names, for the pipeline order
    writes: tuple[str, ...]
    reads_computed: bool = False  # its deps are computed (the report reads every task's run): it comes last
    owned_paths: tuple[tuple[str, str, str], ...] = ()  # the `paths:` settings it declares: (name, default, help)


def _declaration(path: Path) -> ast.Call | None:
    """The file's top-level `STAGE = Stage(...)`, None when it declares no command."""
    return next((call for name, call in declared_calls(path, "Stage") if name == "STAGE"), None)


def _declaring_modules() -> list[tuple[Path, str, ast.Call]]:
    """(file, module name, declaration) of every command module: named `<name>_stage.py` and declaring
    `STAGE = Stage(` (tests/test_pipeline_files.py: no other module declares one)."""
    found: dict[Path, tuple[str, ast.Call]] = {}
    for folder, package in package_folders():
        # the one name a command's module has
        for path, module in declaring_files(folder, package, "*_stage.py", recursive=True):
            if path not in found and (call := _declaration(path)) is not None:
                found[path] = (module, call)
    return [(path, module, call) for path, (module, call) in found.items()]


def _literal_strings(node: ast.AST | None) -> tuple[tuple[str, ...], bool]:
    """The string literals of a tuple (or list) node, and whether it holds anything else (computed items)."""
    if node is None:
        return (), False
    items = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    found = [item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    return tuple(found), len(found) < len(items)


def _entry(path: Path, module: str, call: ast.Call | None = None) -> Entry:
    """The table's entry of the command `path` declares (`call`: its declaration, read again when not given)."""
    call = call if call is not None else _declaration(path)
    if call is None:
        raise BabelforgeError(f"{path}: declares no command (STAGE = Stage(...) at its top level)")
    words = keywords(call)
    positional = dict(zip(("name", "help"), call.args))
    name, help_text = (literal(positional.get(key) or words.get(key)) for key in ("name", "help"))
    if not isinstance(name, str) or not isinstance(help_text, str):
        raise BabelforgeError(f"{path}: STAGE = Stage(...) names its command and help as string literals")
    deps, computed = _literal_strings(words.get("deps"))
    deps += tuple(view_deps(_literal_strings(words.get("languages"))[0]))
    writes = (*_literal_strings(words.get("outs"))[0], *_literal_strings(words.get("metrics"))[0])
    return Entry(
        name,
        module,
        help_text,
        "tool" if literal(words.get("tool"), False) else "stage",
        bool(literal(words.get("pinned"), False)),
        deps,
        writes,
        computed,
        _owned_paths(path, words),
    )


def _owned_paths(path: Path, words: dict[str, ast.AST]) -> tuple[tuple[str, str, str], ...]:
    """A declaration's `owns={name: (default, help)}`, which must be literal strings."""
    if "paths" in words:  # the keyword's earlier name, which read like a Config's `paths` group
        raise BabelforgeError(f"{path}: Stage(paths=...) is now Stage(owns=...): the artifact paths the stage owns")
    node = words.get("owns")
    value = literal(node) if node is not None else {}
    if not isinstance(value, dict) or not all(
        isinstance(name, str)
        and name.isidentifier()
        and isinstance(pair, tuple)
        and len(pair) == 2
        and all(isinstance(part, str) for part in pair)
        for name, pair in value.items()
    ):
        raise BabelforgeError(f"{path}: STAGE = Stage(owns=...) is a literal {{name: (default, help)}} of strings")
    return tuple((name, default, help_text) for name, (default, help_text) in value.items())


def _names(written: str, read: str) -> bool:
    """Whether the path a stage reads is (inside) one another writes; a written `${key}` (a foreach
    stage's item) stands for any one name."""
    pattern = "[^/]+".join(re.escape(part) for part in written.split(FOREACH_KEY))
    return re.fullmatch(f"{pattern}(/.*)?", read) is not None


def _pipeline_order(entries: list[Entry]) -> list[Entry]:
    """Stages in the order their files flow (a stage after every stage writing what it reads; among
    those ready, one fed by the latest placed stage first, then the builders' before eval's, then by
    name), then tools by name. Only literal paths count: the order is for reading, DVC orders the runs."""

    def feeds(writer: Entry, reader: Entry) -> bool:
        if reader.reads_computed and not writer.reads_computed:
            return True
        return any(_names(written, read) for read in reader.reads for written in writer.writes)

    # the builders' stages before eval's (eval checks what was built), then by name
    stages = sorted(
        (e for e in entries if e.kind == "stage"), key=lambda e: (e.module.startswith("babelforge.eval."), e.name)
    )
    ordered: list[Entry] = []
    while stages:
        candidates = [s for s in stages if not any(feeds(o, s) for o in stages if o is not s)]
        if not candidates:  # a cycle: keep the rest by name
            ordered += stages
            break
        # follow the chain: the stage fed by the latest placed one first, then by name
        ready = next(
            (c for placed in reversed(ordered) for c in candidates if feeds(placed, c)),
            candidates[0],
        )
        ordered.append(ready)
        stages.remove(ready)
    return ordered + sorted((e for e in entries if e.kind == "tool"), key=lambda e: e.name)


@functools.cache
def table() -> dict[str, Entry]:
    """Every command, in pipeline order: each module under the package that declares `STAGE = Stage(`."""
    entries = [_entry(path, module, call) for path, module, call in _declaring_modules()]
    seen: dict[str, Entry] = {}
    for entry in entries:
        if entry.name in seen:
            raise BabelforgeError(f"two commands named {entry.name}: {seen[entry.name].module} and {entry.module}")
        seen[entry.name] = entry
    return {entry.name: entry for entry in _pipeline_order(entries)}
