"""The package's own static files: the language registry, the ImageNet-1k class list, the CLIP
templates, the source registry, the citations (the `resources/` folder of the repository).

They stay in the repository's `resources/` folder, where DVC tracks them and the builders read them;
a wheel ships them as the package data `babelforge/resources/` (pyproject.toml maps
`babelforge.resources` to `resources/`), so an installed `babelforge` outside a checkout finds them
too. Every module finds them through `resource`, never relative to its own file.
"""

from __future__ import annotations

from pathlib import Path

# `babelforge/` installed from a wheel; `builders/` in a checkout (an editable install)
_PACKAGE = Path(__file__).resolve().parents[1]
# the wheel's package data, else the checkout's folder beside `builders/`
RESOURCES = next(
    (folder for folder in (_PACKAGE / "resources", _PACKAGE.parent / "resources") if folder.is_dir()),
    _PACKAGE.parent / "resources",
)


def resource(name: str) -> Path:
    """The path of the package's static file `name` (`languages.tsv`, `source_files/omw.tsv`)."""
    return RESOURCES / name
