"""The package's own static files: the language registry, the ImageNet-1k class list, the CLIP
templates, the source registry, the citations (the `resources/` folder of the repository).

They stay in the repository's `resources/` folder, where DVC tracks them and the builders read them;
a wheel ships them as the package data `babelforge/resources/` (pyproject.toml maps
`babelforge.resources` to `resources/`), so an installed `babelforge` outside a checkout finds them
too. Every module finds them through `resource`, never relative to its own file.

A project's own `resources/` comes first: `resource` looks in the project the working folder lies
in (the nearest folder at or above it holding params.yaml and dvc.yaml, as params.yaml is found),
and takes the package's copy only for a file the project does not have (the installed default).
So a project whose virtual environment belongs to another checkout reads its own registry and
class list, not that checkout's. Modules that keep a resource's path as a constant resolve it
when first imported, in the working folder of the command.
"""

from __future__ import annotations

from pathlib import Path

from babelforge.core.params import project_folder

# `babelforge/` installed from a wheel; `builders/` in a checkout (an editable install)
_PACKAGE = Path(__file__).resolve().parents[1]
# the wheel's package data, else the checkout's folder beside `builders/`
RESOURCES = next(
    (folder for folder in (_PACKAGE / "resources", _PACKAGE.parent / "resources") if folder.is_dir()),
    _PACKAGE.parent / "resources",
)


def project_resources(start: Path | None = None) -> Path | None:
    """The `resources/` folder of the project `start` (the working folder unless given) lies in; None
    outside a project or when the project has none."""
    try:
        here = (start or Path.cwd()).resolve()
    except OSError:  # the working folder was removed: no project to look in
        return None
    folder = project_folder(here)
    return folder / "resources" if folder is not None and (folder / "resources").is_dir() else None


def resource(name: str, start: Path | None = None) -> Path:
    """The path of the static file `name` (`languages.tsv`, `source_files/omw.tsv`): the project's
    copy when the project (of `start`, the working folder unless given) has it, else the package's."""
    project = project_resources(start)
    if project is not None and (project / name).exists():
        return project / name
    return RESOURCES / name
