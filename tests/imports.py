"""The project's own import graph, read from the source with `ast` (nothing is imported).

One package, `babelforge`, lives in two folders (pyproject.toml's `package-dir`): `builders/` is
`babelforge`, `eval/` is `babelforge.eval`. Shared by the tests that follow imports: the layer
contract, the DVC code deps of each stage, the dataset cards' code deps.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "babelforge"


@cache
def package_dirs() -> dict[str, Path]:
    """{dotted package: its folder}, longest name first, from pyproject.toml."""
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    dirs = {name: REPO / folder for name, folder in setuptools["package-dir"].items()}
    return dict(sorted(dirs.items(), key=lambda item: -len(item[0])))


def module_file(module: str) -> Path | None:
    """The repo file of a dotted module name (a module, or a package's __init__.py); None outside the project."""
    for package, folder in package_dirs().items():
        if module == package or module.startswith(package + "."):
            rest = module[len(package) :].lstrip(".")
            base = folder.joinpath(*rest.split(".")) if rest else folder
            for candidate in (base.with_suffix(".py"), base / "__init__.py"):
                if candidate.is_file():
                    return candidate
            return None
    return None


def module_name(path: Path) -> str:
    """The dotted name of a project file (the inverse of `module_file`)."""
    path = path.resolve()
    for package, folder in package_dirs().items():
        if path.is_relative_to(folder):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join([package, *parts])
    raise ValueError(f"{path} is not in the {PACKAGE} package")


def project_modules() -> list[str]:
    """Every module of the package, sorted."""
    files = {
        path for folder in package_dirs().values() for path in folder.rglob("*.py") if "__pycache__" not in path.parts
    }
    return sorted(module_name(path) for path in files)


def parsed(path: Path) -> ast.Module:
    """The file's syntax tree. Parsed again once on Python 3.11's spurious "AST constructor
    recursion depth mismatch" (CPython gh-106905, fixed in 3.12): seen once in a test process
    that had run Ray, whose threads stay up."""
    source = path.read_text(encoding="utf-8")
    try:
        return ast.parse(source, filename=str(path))
    except SystemError as error:
        if "recursion depth mismatch" not in str(error):
            raise
        return ast.parse(source, filename=str(path))


def imported_names(path: Path, module: str) -> set[str]:
    """Every module name `path` may import (anywhere in the file), relative imports resolved;
    `from package import name` also yields `package.name`."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    tree = parsed(path)
    for node in (node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        else:
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def project_imports(module: str) -> set[str]:
    """The project modules `module` imports directly (names that are attributes, not modules, dropped)."""
    path = module_file(module)
    assert path is not None, f"{module} is not a module of the project"
    return {name for name in imported_names(path, module) if name != module and module_file(name) is not None}


def repo_files_run_by(module: str) -> dict[Path, str]:
    """{file: the module that imports it} for every repo file importing `module` runs
    (imports inside functions included, and each package's `__init__.py`, which Python runs first)."""
    found: dict[Path, str] = {}
    todo = [(module, "the stage command")]
    while todo:
        name, importer = todo.pop()
        parts = name.split(".")
        # importing a.b.c runs a/__init__.py and a/b/__init__.py first
        for depth in range(1, len(parts) + 1):
            dotted = ".".join(parts[:depth])
            path = module_file(dotted)
            if path is None or path in found:
                continue
            found[path] = importer
            todo.extend((imported, dotted) for imported in imported_names(path, dotted))
    return found


def build_wheel(folder: Path) -> Path:
    """The wheel of the working tree's package, built from a copy (setuptools writes into the source)."""
    source = folder / "source"
    for path in [*package_dirs().values(), REPO / "pyproject.toml", REPO / "README.md"]:
        if path.is_dir():
            shutil.copytree(path, source / path.name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(path, source / path.name)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(folder),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = folder.glob("babelforge-*.whl")
    return wheel
