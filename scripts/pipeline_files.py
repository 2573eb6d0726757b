"""Write `dvc.yaml` and `params.yaml` from the stage declarations (`STAGE = Stage(...)` in each command's module).

    python scripts/pipeline_files.py          # (re)write both
    python scripts/pipeline_files.py --check  # exit 1, naming what differs, when a committed file is stale

dvc.yaml: one stage per declared DVC stage, in pipeline order, with the deps, outs, metrics and plots
the declaration names, its params (derived: babelforge.core.stage_settings.dvc_params) and its code
deps: the files its command's module imports, and nothing else, so a change reruns exactly the stages that run
the changed file. The import closure is followed through every import with `ast` (tests/imports.py),
plus the modules a stage resolves by name (the audit and the cards run every dataset spec and its audit
section, a stage that loads models every model family's loader, the report every eval task's spec). The
command line itself (cli.py, the command table) is left out: it parses and dispatches, it does not
decide what a stage writes.

params.yaml: every setting of every command's Config with its declared default (per-profile choices as
`{sample: ..., full: ...}`) and its help as a comment; the settings are written once, in the Config.
A project that runs another value says so with `dvc exp run -S` or `--set` (or edits the file and keeps
the difference as its own: the check then names it).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import textwrap
import typing
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

from babelforge.core.config import declared_default  # noqa: E402
from babelforge.core.datasets import LANGUAGE_VIEWS, REGISTRY, specs  # noqa: E402
from babelforge.core.params import PROFILES  # noqa: E402
from babelforge.core.stage_settings import dvc_params, params_groups  # noqa: E402
from babelforge.core.stage_table import table
from babelforge.core.stages import (
    Stage,  # noqa: E402
    load,  # noqa: E402
)
from babelforge.eval.families import FAMILIES  # noqa: E402
from babelforge.eval.tasks import REGISTRY as TASK_REGISTRY  # noqa: E402
from tests.imports import repo_files_run_by  # noqa: E402

DVC_HEADER = (
    "# Generated from the stage declarations (STAGE = Stage(...) in each command's module) by\n"
    "# `python scripts/pipeline_files.py`: edit the declaration, then rerun it (tests/test_pipeline_files.py checks).\n"
)
PARAMS_HEADER = """\
# babelforge build settings, written from the commands' Configs by `python scripts/pipeline_files.py`
# (each default and help is written once, in its Config; tests/test_pipeline_files.py checks this file).
# Change a value for an experiment with `dvc exp run -S group.key=value` or `babelforge <stage> --set`.
# The one-line profile switch: `sample` builds offline from ../shared/data and tiny local models;
# `full` uses the real sources and models (BabelNet key, NLLB 1.3B, COMETKiwi, CLIP). A setting written
# {sample: ..., full: ...} takes the value of the selected profile.
"""
# What a stage module imports to declare itself (the type, the table behind `Paths`, the source reading):
# like the CLI, it decides nothing a stage writes (its deps and outs are listed in dvc.yaml itself).
DECLARATION_MECHANISM = (
    "builders/core/stages.py",
    "builders/core/stage_table.py",
    "builders/core/declarations.py",
)
# The stages that resolve code by name (not an import `ast` can see).
READS_EVERY_SPEC = {"audit", "card"}  # every dataset spec (and its audit section reader): one card's is one of them
LOADS_MODELS = REPO / "eval" / "models.py"  # a local folder's family is found by trying each family's detector
READS_TASKS = REPO / "eval" / "tasks.py"  # the eval task specs, imported by name from its REGISTRY


def code_files(stage: Stage) -> list[str]:
    """Repo-relative files the stage runs, sorted."""
    roots = [table()[stage.name].module]
    if stage.name in READS_EVERY_SPEC:
        roots += [target.split(":")[0] for target in REGISTRY.values()]
        roots += [found.audit.reader.split(":")[0] for found in specs() if found.audit and found.audit.reader]
    if stage.name == "language_view":  # every view's declaration and the function finding its languages
        roots += [target.split(":")[0] for target in LANGUAGE_VIEWS.values()]
    files: set[Path] = set()
    for root in roots:
        files |= set(repo_files_run_by(root))
    if READS_TASKS in files:
        for target in TASK_REGISTRY:
            files |= set(repo_files_run_by(target.split(":")[0]))
    if LOADS_MODELS in files:
        for entry in FAMILIES.values():
            files |= set(repo_files_run_by(entry.loader.split(":")[0]))
    files -= {REPO / path for path in DECLARATION_MECHANISM}
    return sorted(path.relative_to(REPO).as_posix() for path in files)


def dvc_stage(stage: Stage) -> dict:
    body: dict = {"cmd": " ".join(["babelforge", stage.name, *([stage.cmd_args] if stage.cmd_args else [])])}
    body["deps"] = [*stage.dvc_deps(), *code_files(stage)]
    params = dvc_params(stage)
    if params:
        body["params"] = params
    body["outs"] = list(stage.outs)
    if stage.metrics:
        body["metrics"] = [{path: {"cache": False}} for path in stage.metrics]
    if stage.plots:
        body["plots"] = [
            {plot.path: options}
            if (options := {k: v for k, v in dataclasses.asdict(plot).items() if k != "path" and v})
            else plot.path
            for plot in stage.plots
        ]
    if stage.foreach:
        return {"foreach": {key: dict(item) for key, item in stage.foreach.items()}, "do": body}
    return body


def dvc_yaml() -> str:
    stages = {name: dvc_stage(load(name)) for name, entry in table().items() if entry.kind == "stage"}
    text = yaml.safe_dump({"stages": stages}, sort_keys=False, width=1000, allow_unicode=True)
    return DVC_HEADER + re.sub(r"(?m)^(?=  \S)", "\n", text).replace("stages:\n\n", "stages:\n", 1)


# ---------------------------------------------------------------- params.yaml


def plain(value):
    """A declared default as params.yaml writes it: a dataclass value as the mapping of its fields that
    differ from their defaults, tuples and sets as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if getattr(value, f.name) != declared_default(f)
        }
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted(plain(item) for item in value)
    return value


def flow(value) -> str:
    return (
        yaml.safe_dump(value, default_flow_style=True, width=10_000, allow_unicode=True, sort_keys=False)
        .strip()
        .removesuffix("...")
        .strip()
    )


def comment(help_text: str, indent: str) -> list[str]:
    return [indent + "# " + line for line in textwrap.wrap(help_text, 116 - len(indent))]


def value_lines(key: str, value, help_text: str, indent: str) -> list[str]:
    """`key: value`, with its help: after it when the line stays short, else above it. A list or a
    mapping in block style: DVC's YAML round trip (`dvc exp run -S`) rewraps a long flow collection at
    80 columns into text it cannot read back (a `:` inside a wrapped plain scalar)."""
    if isinstance(value, (dict, list)) and value:
        block = yaml.safe_dump(
            {key: value}, default_flow_style=False, sort_keys=False, allow_unicode=True, width=10_000
        )
        return [*(comment(help_text, indent) if help_text else []), *(indent + line for line in block.splitlines())]
    line = f"{indent}{key}: {flow(value)}"
    if help_text and len(line) + len(help_text) + 4 <= 120:
        return [f"{line}  # {help_text}"]
    return [*(comment(help_text, indent) if help_text else []), line]


def config_lines(cls: type, indent: str, children: dict[str, list[str]], instance=None) -> list[str]:
    """A Config's own settings (nested dataclass settings as sub-mappings, from the `instance` its field
    declares as default), then its sub-groups."""
    hints = typing.get_type_hints(cls)
    lines: list[str] = []
    for field in dataclasses.fields(cls):
        if "group" in field.metadata or "subgroup" in field.metadata:
            continue
        help_text = field.metadata.get("help", "")
        value = declared_default(field)
        if instance is not None and getattr(instance, field.name) != getattr(cls(), field.name):
            value = getattr(instance, field.name)  # the enclosing setting's default sets it otherwise
        if dataclasses.is_dataclass(hints[field.name]):
            lines += comment(help_text, indent) if help_text else []
            lines.append(f"{indent}{field.name}:")
            lines += config_lines(hints[field.name], indent + "  ", {}, value)
            continue
        lines += value_lines(field.name, plain(value), help_text, indent)
    for name, block in children.items():
        lines += [f"{indent}{name}:", *block]
    return lines


def params_yaml(profile: str = "sample") -> str:
    """Every group every command reads, nested by their dotted names; `profile` is the project's switch
    (the committed file's, kept when the file is rewritten)."""
    groups = {group: cls for group, (cls, _) in params_groups().items()}

    def block(prefix: str, indent: str) -> list[str]:
        cls = groups.get(prefix)
        depth = prefix.count(".") + 1
        subgroups = [g for g in groups if g.startswith(prefix + ".") and g.count(".") == depth]
        # a parent that is no Config of its own (`eval`) still holds its sub-groups
        intermediate = sorted(
            {".".join(g.split(".")[: depth + 1]) for g in groups if g.startswith(prefix + ".") and g.count(".") > depth}
            - set(subgroups)
        )
        children = {g.rsplit(".", 1)[1]: block(g, indent + "  ") for g in [*subgroups, *intermediate]}
        if cls is None:
            return [line for name, lines in children.items() for line in (f"{indent}{name}:", *lines)]
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        return [*(comment(doc, indent) if doc and "." in prefix else []), *config_lines(cls, indent, children)]

    tops = ["paths", "build", *sorted({group.split(".")[0] for group in groups} - {"paths", "build"})]
    lines = [PARAMS_HEADER.rstrip("\n"), f"profile: {profile}", ""]
    for top in tops:
        cls = groups.get(top)
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls is not None and cls.__doc__ else ""
        lines += [*comment(doc, ""), f"{top}:", *block(top, "  "), ""]
    return "\n".join(lines)


def project_profile() -> str:
    """The profile the committed params.yaml selects (the one line a project switches), `sample` without one."""
    path = REPO / "params.yaml"
    found = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("profile") if path.is_file() else None
    return found if found in PROFILES else PROFILES[0]


def in_dvc_form(text: str) -> str:
    """The YAML as `dvc exp run -S` writes it back (DVC's round trip: block lists, a null as an empty
    value), so setting one parameter changes one line of the committed file, not the layout of the rest."""
    import tempfile

    from dvc.utils.hydra import apply_overrides  # what `-S` calls: read, set, merge, write

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "params.yaml"
        path.write_text(text, encoding="utf-8")
        apply_overrides(path, [])
        return path.read_text(encoding="utf-8")


def generated() -> dict[str, str]:
    return {"dvc.yaml": dvc_yaml(), "params.yaml": in_dvc_form(params_yaml(project_profile()))}


def stale_files(committed: dict[str, str | None], wanted: dict[str, str]) -> list[str]:
    """What differs between the committed files and what the declarations give, one phrase each."""
    stale = []
    for name, text in wanted.items():
        old = committed.get(name)
        if old == text:
            continue
        same_content = old is not None and yaml.safe_load(old) == yaml.safe_load(text)
        stale.append(f"{name} ({'its layout' if same_content else 'its content'} differs from the declarations)")
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when a committed file differs from the declarations"
    )
    args = parser.parse_args(argv)
    wanted = generated()
    committed = {
        name: (REPO / name).read_text(encoding="utf-8") if (REPO / name).is_file() else None for name in wanted
    }
    stale = stale_files(committed, wanted)
    if args.check:
        if stale:
            print(f"pipeline_files: stale: {'; '.join(stale)}; run python scripts/pipeline_files.py", file=sys.stderr)
            return 1
        print("pipeline_files: dvc.yaml and params.yaml are what the declarations give")
        return 0
    for name, text in wanted.items():
        if committed[name] != text:
            (REPO / name).write_text(text, encoding="utf-8")
            print(f"pipeline_files: wrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
