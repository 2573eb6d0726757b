"""A command declared once: `STAGE = Stage(...)` at the top level of its module.

The declaration holds everything the project says about a command: its name and help, its typed
settings (`config`, a frozen dataclass with `GROUP`), the function that runs it, its extra flags,
and, for a DVC stage, what it reads and writes. This module is the declaration type and what a
stage's own code takes from it (`Paths`, the `paths:` group every Config holds; `outputs`, its
outs filled from a config). The rest is derived elsewhere: the command table, found by reading the
package's source without importing a command's module (babelforge.core.stage_table), and what the
settings become in params.yaml, dvc.yaml and the CLI's flags (babelforge.core.stage_settings);
scripts/pipeline_files.py and scripts/docs_reference.py write the generated files (a test fails
when a committed one differs from what the declarations give).

Two kinds: a *stage* (`dvc repro` runs it; it declares `outs`) and a *tool* (`tool=True`, run by
hand over what its command line names). One calling convention: `run(config)` when the command
has a `config`, `run(args)` (the parsed command line) when it has none.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import re
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from babelforge.core.config import from_group, setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.stage_table import FOREACH_KEY, table, view_deps

_INTERPOLATION = re.compile(r"\$\{([^}]+)\}")


@dataclasses.dataclass(frozen=True)
class Plot:
    """A `dvc.yaml` plot: a file, and for a CSV how `dvc plots` draws it."""

    path: str
    template: str | None = None
    x: str | None = None
    y: str | None = None
    title: str | None = None


@dataclasses.dataclass(frozen=True)
class Stage:
    """One command. Paths in `deps`/`outs`/`metrics`/`plots` are as `dvc.yaml` writes them:
    `${paths.labels}` or `${wordnet.classes}` name a setting (DVC fills them from params.yaml)."""

    name: str
    help: str
    run: Callable[[Any], int | None]
    config: type | None = None
    configure: Callable | None = None
    tool: bool = False
    deps: tuple[str, ...] = ()
    outs: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()  # small JSON in git (`cache: false`)
    plots: tuple[Plot, ...] = ()
    # The params the stage is rerun for, beside the derived ones (profile when the config reads it, every
    # `paths.*` its files name, the CPU pin): None = every group its config reads; else these keys.
    params: tuple[str, ...] | None = None
    # A `dvc.yaml` foreach: item key -> values its `${item.*}` name; `cmd_args` follows the name.
    foreach: Mapping[str, Mapping[str, str]] | None = None
    cmd_args: str = ""
    # Numbers from CTranslate2, torch or numpy kernels: the CLI pins the CPU instruction set
    # (build.cpu_isa, babelforge.core.determinism) before importing the module.
    pinned: bool = False
    # Runs outside any project (no params.yaml): its settings' defaults, profile `full`.
    standalone: bool = False
    # An ad-hoc run (a flag that changes what it computes) writes a run folder: flag dest -> file name.
    ad_hoc_outputs: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # What an ad-hoc run's folder is named after (babelforge.core.runs): the models an evaluation runs.
    run_subject: Callable[[Any], list[str]] | None = None
    # The taggers (babelforge.core.taggers) whose columns the stage writes (`babelforge taggers`).
    taggers: tuple[str, ...] = ()
    # Flags that set a setting: flag -> the setting's key (`paths.labels`, an own key `min_classes`, or
    # another group's `eval.common.device`), or (key, what this command does with it). Type, metavar and
    # help come from the setting (babelforge.core.stage_settings.flag_argument); `configure` adds only arguments
    # that are no setting (a tool's files, a sub-command) or need their own parsing (`--model`).
    flags: Mapping[str, str | tuple[str, str]] = dataclasses.field(default_factory=dict)
    # Its config's settings have a params.yaml group; False: a command-line tool's config, set by its
    # flags alone (`publish`, `diff`: which dataset, which revisions).
    in_params_yaml: bool = True
    # The docs page about what it builds (the README's stage table links it).
    docs: str = ""
    # The artifact paths it owns (writes, or keeps in git): `paths:` name -> (default, help), written as
    # literals (read without importing the module). Every Config's `paths` field holds every stage's
    # (`Paths` below): the stage reading `paths.labels` names it, the labels stage declares it.
    owns: Mapping[str, tuple[str, str]] = dataclasses.field(default_factory=dict)
    # The language views it reads (babelforge.core.languages): its `registry()` is their rows, and its
    # dependency is them (`${paths.language_views}/<view>.tsv`), not resources/languages.tsv, so a
    # language its data lacks does not rerun it. () = the whole registry, as a dep it names itself.
    # In a foreach stage `${key}` is the item, the value of its setting `key_setting`.
    languages: tuple[str, ...] = ()
    key_setting: str = ""

    def __post_init__(self) -> None:
        if self.config is not None and not hasattr(self.config, "GROUP"):
            raise TypeError(f"stage {self.name}: its config {self.config.__name__} has no GROUP")
        if not self.tool and not self.outs:
            raise TypeError(f"stage {self.name}: a DVC stage declares its outs (or is a tool=True)")

    @property
    def kind(self) -> str:
        return "tool" if self.tool else "stage"

    def files(self) -> list[str]:
        """Every path the stage names (deps, outs, metrics, plots), in that order."""
        return [*self.dvc_deps(), *self.outs, *self.metrics, *(plot.path for plot in self.plots)]

    def dvc_deps(self) -> list[str]:
        """Its deps as `dvc.yaml` lists them before its code: `deps`, then its language views."""
        return [*self.deps, *self.view_deps()]

    def view_deps(self) -> list[str]:
        """Its language views as `dvc.yaml` names them (the rule the command table reads them by too)."""
        return view_deps(self.languages)

    def view_files(self, config) -> list[Path]:
        """Its language views' files for a run with `config` (`${key}` filled as in `outputs`)."""
        key = self.foreach_key(config)
        folder = Path(config.paths.language_views)
        return [folder / f"{view.replace(FOREACH_KEY, key) if key else view}.tsv" for view in self.languages]

    def foreach_key(self, config) -> str | None:
        """The item a run of a foreach stage is for (the value of its `key_setting`), None otherwise."""
        value = getattr(config, self.key_setting, None) if self.key_setting else None
        return str(value) if value else None


def load(name: str) -> Stage:
    """The declaration of command `name` (its module imported; an error importing it keeps its traceback)."""
    entry = table()[name]
    stage = importlib.import_module(entry.module).STAGE
    if stage.name != name:
        raise BabelforgeError(f"{entry.module}: STAGE is named {stage.name!r}, the table read {name!r}")
    return stage


def padded_item(what: str, deps: list[str], keys: tuple[str, ...]) -> dict[str, str]:
    """A foreach item's deps under `keys` (`${item.<key>}` in the template): a DVC template takes a
    fixed list of deps, so an item with fewer repeats its last one; more is an error naming `what`."""
    if not 1 <= len(deps) <= len(keys):
        raise BabelforgeError(
            f"{what}: {len(deps)} files; its stage reads 1 to {len(keys)} (${{item.{'}, ${item.'.join(keys)}}})"
        )
    return dict(zip(keys, deps + [deps[-1]] * (len(keys) - len(deps))))


# What core itself keeps: every stage that measures something writes one small JSON there
# (babelforge.core.metrics). Every other artifact path is declared by the stage that owns it.
_CORE_PATHS = (
    (
        "metrics",
        "metrics",
        "headline metrics, one small JSON per stage (in git: DVC metrics compared across commits and experiments)",
    ),
)


@functools.cache
def paths_class() -> type:
    """The `paths:` group as a frozen dataclass: every stage's `owns=` in pipeline order, then core's
    own. Assembled from the declarations (read, not imported), so core names no dataset."""
    owners: dict[str, str] = {}
    fields: list[tuple[str, type, Any]] = []
    declared = [(entry.module, path) for entry in table().values() for path in entry.owned_paths]
    for owner, (name, default, help_text) in [*declared, *(("babelforge.core", path) for path in _CORE_PATHS)]:
        if name in owners:
            raise BabelforgeError(f"paths.{name} is declared twice: by {owners[name]} and {owner}")
        owners[name] = owner
        fields.append((name, str, setting(default, help_text)))
    cls = dataclasses.make_dataclass("Paths", fields, frozen=True)
    cls.__module__ = __name__  # pickled by reference (a Ray actor's config): found again through __getattr__
    cls.__doc__ = (
        "The `paths:` group: every artifact path, declared once by its owner (dvc.yaml uses `${paths.<name>}`)."
    )
    return cls


def stage_paths() -> Any:
    """The usual `paths: Paths = stage_paths()` field of a stage Config."""
    return from_group(lambda: paths_class()(), "paths", "artifact paths (the `paths` group of params.yaml)")


if typing.TYPE_CHECKING:

    class Paths:
        """What a type checker sees of `paths_class()`: every attribute a path (a str)."""

        def __init__(self, **paths: str) -> None: ...

        def __getattr__(self, name: str) -> str: ...

else:

    def __getattr__(name: str) -> Any:
        if name == "Paths":  # built on first use: `from babelforge.core.stages import Paths`
            return paths_class()
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def outputs(stage: Stage, config: Any) -> list[str]:
    """The outputs the stage declares, `${paths.*}` (and a foreach stage's `${key}`, from its `key_setting`)
    filled from its config; one naming another setting is left out."""
    paths = getattr(config, "paths", None)  # a stage without paths (captions_plan) writes nothing
    values = {f"paths.{key}": value for key, value in (vars(paths) if paths is not None else {}).items()}
    if key := stage.foreach_key(config):
        values["key"] = key
    filled = [_INTERPOLATION.sub(lambda m: str(values.get(m[1], m[0])), path) for path in stage.outs]
    return [path for path in filled if "${" not in path]


def named_settings(text: str) -> list[str]:
    """The settings a `dvc.yaml` path names, `${paths.labels}` -> paths.labels (foreach `${key}`/`${item.*}` left out)."""
    return [m for m in _INTERPOLATION.findall(text) if "." in m and not m.startswith("item.")]
