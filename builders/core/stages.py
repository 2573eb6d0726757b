"""A command declared once: `STAGE = Stage(...)` at the top level of its module.

The declaration holds everything the project says about a command: its name and help, its typed
settings (`config`, a frozen dataclass with `GROUP`), the function that runs it, its extra flags,
and, for a DVC stage, what it reads and writes. From it the rest is derived: the command table
(found here by reading the package's source, never importing a command's module, so
`babelforge --help` stays fast), the CLI, `dvc.yaml`, the settings in `params.yaml`, the README's
stage table and the reference docs (scripts/generate.py writes them; a test fails when a committed
one differs from what the declarations give).

Two kinds: a *stage* (`dvc repro` runs it; it declares `outs`) and a *tool* (`tool=True`, run by
hand over what its command line names). One calling convention: `run(config)` when the command
has a `config`, `run(args)` (the parsed command line) when it has none.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from babelforge.core.config import declared_default, from_group, has_profile_choice, setting
from babelforge.core.declarations import declared_calls, declaring_files, keywords, literal, package_folders
from babelforge.core.determinism import BuildSettings
from babelforge.core.errors import BabelforgeError
from babelforge.core.numbers import ANY, number_flag

_DECLARATION = re.compile(r"^STAGE = Stage\(", re.MULTILINE)
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
    # help come from the setting (babelforge.core.stages.flag_argument); `configure` adds only arguments
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
    paths: Mapping[str, tuple[str, str]] = dataclasses.field(default_factory=dict)
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
        return [*self.deps, *self.view_deps(), *self.outs, *self.metrics, *(plot.path for plot in self.plots)]

    def view_deps(self) -> list[str]:
        """Its language views as `dvc.yaml` names them."""
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


FOREACH_KEY = "${key}"


def padded_item(what: str, deps: list[str], keys: tuple[str, ...]) -> dict[str, str]:
    """A foreach item's deps under `keys` (`${item.<key>}` in the template): a DVC template takes a
    fixed list of deps, so an item with fewer repeats its last one; more is an error naming `what`."""
    if not 1 <= len(deps) <= len(keys):
        raise BabelforgeError(
            f"{what}: {len(deps)} files; its stage reads 1 to {len(keys)} (${{item.{'}, ${item.'.join(keys)}}})"
        )
    return dict(zip(keys, deps + [deps[-1]] * (len(keys) - len(deps))))


def view_deps(views: Iterable[str]) -> list[str]:
    return [f"${{paths.language_views}}/{view}.tsv" for view in views]


@dataclasses.dataclass(frozen=True)
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
    paths: tuple[tuple[str, str, str], ...] = ()  # the `paths:` settings it owns: (name, default, help)


def _declaring_modules() -> list[tuple[Path, str]]:
    """(file, module name) of every command module: named `<name>_stage.py`, declaring `STAGE = Stage(`
    (tests/test_pipeline_files.py: no other module declares one)."""
    found: dict[Path, str] = {}
    for folder, package in package_folders():
        # the one name a command's module has
        for path, module in declaring_files(folder, package, "*_stage.py", recursive=True):
            if path not in found and _DECLARATION.search(path.read_text(encoding="utf-8")):
                found[path] = module
    return list(found.items())


def _literal_strings(node: ast.AST | None) -> tuple[tuple[str, ...], bool]:
    """The string literals of a tuple (or list) node, and whether it holds anything else (computed items)."""
    if node is None:
        return (), False
    items = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    found = [item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    return tuple(found), len(found) < len(items)


def _entry(path: Path, module: str) -> Entry:
    call = next(call for name, call in declared_calls(path, "Stage") if name == "STAGE")
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
        _owned_paths(path, words.get("paths")),
    )


def _owned_paths(path: Path, node: ast.AST | None) -> tuple[tuple[str, str, str], ...]:
    """A declaration's `paths={name: (default, help)}`, which must be literal strings."""
    value = literal(node) if node is not None else {}
    if not isinstance(value, dict) or not all(
        isinstance(name, str)
        and name.isidentifier()
        and isinstance(pair, tuple)
        and len(pair) == 2
        and all(isinstance(part, str) for part in pair)
        for name, pair in value.items()
    ):
        raise BabelforgeError(f"{path}: STAGE = Stage(paths=...) is a literal {{name: (default, help)}} of strings")
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
    entries = [_entry(path, module) for path, module in _declaring_modules()]
    seen: dict[str, Entry] = {}
    for entry in entries:
        if entry.name in seen:
            raise BabelforgeError(f"two commands named {entry.name}: {seen[entry.name].module} and {entry.module}")
        seen[entry.name] = entry
    return {entry.name: entry for entry in _pipeline_order(entries)}


def load(name: str) -> Stage:
    """The declaration of command `name` (its module imported; an error importing it keeps its traceback)."""
    entry = table()[name]
    stage = importlib.import_module(entry.module).STAGE
    if stage.name != name:
        raise BabelforgeError(f"{entry.module}: STAGE is named {stage.name!r}, the table read {name!r}")
    return stage


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
    """The `paths:` group as a frozen dataclass: every stage's `paths=` in pipeline order, then core's
    own. Assembled from the declarations (read, not imported), so core names no dataset."""
    owners: dict[str, str] = {}
    fields: list[tuple[str, type, Any]] = []
    declared = [(entry.module, path) for entry in table().values() for path in entry.paths]
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


def setting_groups(config: type, group: str | None = None) -> dict[str, type]:
    """params.yaml group -> the Config class that reads it, for `config` and every group it takes from
    elsewhere (`from_group`); `profile` is no group."""
    found = {group or config.GROUP: config}
    hints = typing.get_type_hints(config)
    for field in dataclasses.fields(config):
        other = field.metadata.get("group")
        if other and other != "profile" and dataclasses.is_dataclass(hints[field.name]):
            for name, cls in setting_groups(hints[field.name], other).items():
                found.setdefault(name, cls)
    return found


def params_groups() -> dict[str, tuple[type, list[str]]]:
    """Every params.yaml group -> (the class of its settings, the commands that read it): `paths` and
    `build` first, then each command's own groups and those it takes from elsewhere, in pipeline order."""
    groups: dict[str, tuple[type, list[str]]] = {"paths": (paths_class(), []), "build": (BuildSettings, [])}
    for name in table():
        stage = load(name)
        if stage.pinned:
            groups["build"][1].append(name)
        if stage.config is None or not stage.in_params_yaml:
            continue
        # setting_groups names `paths` too (stage_paths() takes it from the group): each reader once
        for group, cls in setting_groups(stage.config).items():
            groups.setdefault(group, (cls, []))[1].append(name)
    return groups


def own_settings(config: type) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(config) if "group" not in f.metadata and "subgroup" not in f.metadata]


def _chooses_by_profile(config: type) -> bool:
    hints = typing.get_type_hints(config)
    return any(
        has_profile_choice(declared_default(f))
        or (dataclasses.is_dataclass(hints[f.name]) and _chooses_by_profile(hints[f.name]))
        for f in own_settings(config)
    )


def dvc_params(stage: Stage) -> list[str]:
    """The params a DVC stage is rerun for: `profile` when its config reads it or a setting it reads
    has a per-profile value; every `paths.*` its files name; its groups (a group holding another
    command's sub-group by key, so that one's changes do not rerun it; a group without settings left
    out), or the keys its declaration names; the CPU pin of a pinned stage."""
    groups = setting_groups(stage.config) if stage.config is not None else {}
    reads_profile = stage.config is not None and any(
        f.metadata.get("group") == "profile"
        for cls in [stage.config, *groups.values()]
        for f in dataclasses.fields(cls)
    )
    paths = [name for path in stage.files() for name in named_settings(path) if name.startswith("paths.")]
    chosen: list[str] = []
    if stage.params is not None:
        chosen = list(stage.params)
    else:
        every = {group for entry in table().values() for group in _declared_groups(entry)}
        for group, cls in groups.items():
            if group == "paths" or not own_settings(cls):
                continue
            if any(other.startswith(group + ".") for other in every):
                chosen += [f"{group}.{f.name}" for f in own_settings(cls)]
            else:
                chosen.append(group)
    profile = reads_profile or any(_chooses_by_profile(cls) for group, cls in groups.items() if group != "paths")
    pin = ["build.cpu_isa"] if stage.pinned else []
    return list(dict.fromkeys([*(["profile"] if profile else []), *paths, *chosen, *pin]))


@functools.cache
def _declared_groups_of(name: str) -> tuple[str, ...]:
    stage = load(name)
    return tuple(setting_groups(stage.config)) if stage.config is not None else ()


def _declared_groups(entry: Entry) -> tuple[str, ...]:
    return _declared_groups_of(entry.name)


# ---------------------------------------------------------------- flags derived from settings


def setting_field(config: type, key: str) -> tuple[dataclasses.Field, Any, str]:
    """(field, annotation, qualified key) of the setting `key` names in `config`: an own key
    (`min_classes`) or a dotted key from the top of params.yaml through the groups the config reads
    (`paths.labels`, `eval.common.device`)."""
    if "." not in key:
        owner, name, qualified = config, key, f"{config.GROUP}.{key}"
    else:
        qualified = key
        group, _, name = key.rpartition(".")
        owner = next((cls for found, cls in setting_groups(config).items() if found == group), None)
        if owner is None:
            raise TypeError(
                f"{config.GROUP}: no group {group} among those it reads ({', '.join(setting_groups(config))})"
            )
    fields = {f.name: f for f in dataclasses.fields(owner)}
    if name not in fields:
        raise TypeError(f"{qualified}: no such setting of {owner.__name__}")
    return fields[name], typing.get_type_hints(owner)[name], qualified


def _comma_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def flag_argument(stage: Stage, flag: str) -> tuple[str, dict[str, Any]]:
    """(dest, argparse keywords) of one of the stage's flags, from its setting: the type from the
    annotation, FILE/DIR for a path (its default has a suffix: a file), the help from the setting's
    help and what this command does with it."""
    target = stage.flags[flag]
    key, note = (target, "") if isinstance(target, str) else target
    field, kind, qualified = setting_field(stage.config, key)
    options = (
        [a for a in typing.get_args(kind) if a is not type(None)]
        if typing.get_origin(kind) in (typing.Union, types.UnionType)
        else [kind]
    )
    base = options[0] if len(options) == 1 else str
    help_text = field.metadata.get("help", "")
    words: dict[str, Any] = {"help": f"{help_text}{': ' + note if note else ''} ({qualified})"}
    metavar = field.metadata.get("metavar")
    if qualified.startswith("paths."):
        metavar = metavar or ("FILE" if PurePosixPath(str(declared_default(field))).suffix else "DIR")
    if base is bool:  # the flag turns it on; params.yaml (or --set) turns it off
        words.update(action="store_const", const=True)
    elif typing.get_origin(base) is typing.Literal:
        words["choices"] = list(typing.get_args(base))
        metavar = metavar or "{" + ",".join(map(str, words["choices"])) + "}"
    elif typing.get_origin(base) in (list, tuple):
        words["type"] = _comma_list
        metavar = metavar or "A[,B...]"
    elif base in (int, float, str):
        # a number keeps the setting's declared range, checked as the flag is read
        words["type"] = number_flag(base, flag, field.metadata.get("bounds", ANY)) if base is not str else str
        metavar = metavar or {int: "N", float: "X", str: "VALUE"}[base]
    else:
        raise TypeError(f"{stage.name} {flag}: {qualified} is {kind}; a flag for it is written in configure")
    if metavar and "action" not in words:
        words["metavar"] = metavar
    return key, words
