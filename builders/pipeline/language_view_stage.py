"""`babelforge language_view <view>`: write `<paths.language_views>/<view>.tsv`, the language registry's
rows (byte for byte) for the languages one view's data holds, English always among them.

A stage that maps only the languages of the data it reads names its views (`Stage(languages=...)`):
under `dvc repro` its `registry()` is their rows, and its dependency is the views, not
`resources/languages.tsv`. A language added to the registry then reruns this stage (a second per
view) and the stages whose views it enters, not every stage that maps a language. The views are
declared where their data is made (`LanguageView` in `builders/<area>/dataset.py`: every dataset has
the view of its name; the captions area adds the raw caption sets). A view whose languages depend on
settings (the MT-caption targets) reads them from params.yaml, as DVC runs it; they are the stage's
DVC params, so changing them rewrites the view. A registry that `registry()` would refuse (a key
twice, a bidi control in any column) writes no view: the same rule checks it first.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.config import setting
from babelforge.core.datasets import LANGUAGE_VIEWS, language_view
from babelforge.core.declarations import imported
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import write_text
from babelforge.core.languages import ENGLISH, REGISTRY_PATH, read_registry, view_text
from babelforge.core.params import DEFAULT_PARAMS, load_params
from babelforge.core.progress import info
from babelforge.core.runs import filled
from babelforge.core.stages import Paths, Stage, padded_item, stage_paths

ITEM_KEYS = ("data", "more")


@dataclass(frozen=True)
class Config:
    """Which view to write; where is `paths.language_views`."""

    GROUP = "language_view"
    view: str | None = setting(None, "which language view to write (a LanguageView name)")
    paths: Paths = stage_paths()


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("view", choices=list(LANGUAGE_VIEWS), help="which language view to write")


def view_keys(name: str, params: dict) -> tuple[list[str], set[str]]:
    """(the files the view reads, as params.yaml fills them; the registry keys of its languages)."""
    view = language_view(name)
    reads = []
    for template in view.reads:
        path = filled(template, params)
        if path is None:
            raise BabelforgeError(f"language view {name}: {template} names a setting params.yaml does not have")
        reads.append(path)
    return reads, {ENGLISH, *imported(view.keys)(reads, params)}


def run(config: Config) -> int:
    if config.view is None:
        raise BabelforgeError("language_view: name the view, e.g. `babelforge language_view babel-imagenet`")
    _, keys = view_keys(config.view, load_params(DEFAULT_PARAMS))
    read_registry(REGISTRY_PATH)  # bytes that are not UTF-8: one line naming the file, as registry() says it
    text = view_text(REGISTRY_PATH.read_text(encoding="utf-8"), keys, str(REGISTRY_PATH))
    write_text(text, Path(config.paths.language_views) / f"{config.view}.tsv")
    info(f"language_view {config.view}: {len(keys)} languages")
    return 0


def view_items() -> dict[str, dict[str, str]]:
    """One dvc.yaml stage per view, `language_view@<view>`, reading what its declaration names."""
    items = {}
    for name in LANGUAGE_VIEWS:
        items[name] = padded_item(f"language view {name}'s reads", list(language_view(name).reads), ITEM_KEYS)
    return items


def view_params() -> tuple[str, ...]:
    """The params any view's languages depend on (a foreach stage has one list for all its items)."""
    return tuple(sorted({key for name in LANGUAGE_VIEWS for key in language_view(name).params}))


STAGE = Stage(
    "language_view",
    "write the language registry's rows for one view's languages (what the stages reading it map)",
    run,
    config=Config,
    configure=configure,
    deps=("resources/languages.tsv", "${item.data}", "${item.more}"),
    outs=("${paths.language_views}/${key}.tsv",),
    params=view_params(),
    foreach=view_items(),
    cmd_args="${key}",
    key_setting="view",
    in_params_yaml=False,
    docs="docs/guides/add-a-language.md",
    owns={
        "language_views": ("build/languages", "language views: the registry rows each stage maps"),
    },
)
