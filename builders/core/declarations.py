"""Declarations found by reading the source, and imported by name only when one is used.

Commands (`STAGE = Stage(...)` in a `*_stage.py`), datasets and language views (`NAME = DatasetSpec(...)`,
`NAME = LanguageView(...)` in an area's `dataset.py`) and eval tasks (`TASK = EvalTask(...)` in
`eval/<task>/task.py`) are each a top-level assignment in a file found by its name. Listing them reads
those files (with `ast`), never imports one, so `babelforge --help` and the generators import no model
library and no stage; a declaration is imported from its "module:attribute" reference when it is asked for.
This module is that one mechanism: babelforge.core.stage_table, babelforge.core.datasets and
babelforge.eval.tasks each say only which files and which kind.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path
from typing import Any

from babelforge.core.errors import BabelforgeError


def package_folders() -> list[tuple[Path, str]]:
    """The package's folders and their import names: builders/ is `babelforge`, eval/ `babelforge.eval`
    (in a wheel eval/ lies inside the first; found without importing it)."""
    spec = importlib.util.find_spec("babelforge.eval")
    folders = [(Path(__file__).resolve().parents[1], "babelforge")]
    if spec and spec.submodule_search_locations:
        folders.append((Path(next(iter(spec.submodule_search_locations))).resolve(), "babelforge.eval"))
    return folders


def declaring_files(folder: Path, package: str, pattern: str, recursive: bool = False) -> list[tuple[Path, str]]:
    """(file, module name) of every file below `folder` (the package `package`) whose name matches
    `pattern` (`*/dataset.py`; anywhere below it when `recursive`), sorted by path."""
    found = folder.rglob(pattern) if recursive else folder.glob(pattern)
    return [(path, ".".join((package, *path.relative_to(folder).with_suffix("").parts))) for path in sorted(found)]


def declared_calls(path: Path, kind: str) -> list[tuple[str | None, ast.Call]]:
    """(name, call) of every top-level `NAME = kind(...)` of a file, as written, read without importing
    it; the name is None where the call is not assigned to one plain name (a caller's error to name)."""
    found: list[tuple[str | None, ast.Call]] = []
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        call = node.value if isinstance(node, ast.Assign) else None
        if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == kind):
            continue
        single = len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        found.append((node.targets[0].id if single else None, call))
    return found


def keywords(call: ast.Call) -> dict[str | None, ast.expr]:
    """A call's keyword arguments, name -> the expression written."""
    return {keyword.arg: keyword.value for keyword in call.keywords}


def literal(node: ast.AST | None, default: Any = None) -> Any:
    """The value of a literal expression (a string, a tuple of them, a dict...); `default` when there is
    none or it is computed (a name, a call)."""
    if node is None:
        return default
    try:
        return ast.literal_eval(node)
    except ValueError:
        return default


def imported(reference: str, hint: str = "") -> Any:
    """The object a "module:attribute" reference names, imported now; one line naming the reference (and
    `hint`, where to look) when it cannot be imported."""
    module, _, attribute = reference.partition(":")
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as error:
        raise BabelforgeError(f"{reference}: cannot be imported ({error}){hint}") from None
