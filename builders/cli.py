"""`babelforge`: one subcommand per command.

Each command is declared once, as `STAGE = Stage(...)` in its module (babelforge.core.stages); the
command table is read from those declarations without importing them, so `babelforge --help` stays
fast, and a command's module is imported only when it runs. A command with a `config` runs as
`run(config)` (params.yaml, then `--set`, then its flags); one without runs as `run(args)`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import babelforge
from babelforge.commands import COMMANDS, pinned_stages
from babelforge.core.config import check_assignments, describe, load_config, override
from babelforge.core.datasets import is_hub
from babelforge.core.determinism import cpu_isa_from_params, pin_cpu
from babelforge.core.dvc_lock import put_back, put_back_line
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import os_error_text
from babelforge.core.languages import language_views
from babelforge.core.locks import stage_lock
from babelforge.core.output_guard import OutputGuard
from babelforge.core.params import DEFAULT_PARAMS, PROJECT_MARKER, find_params, load_params, project_root, read_yaml
from babelforge.core.progress import info
from babelforge.core.runs import (
    OUT_ANYWHERE,
    RUNS,
    changed_inputs,
    config_values,
    filled,
    given_settings,
    out_problem,
    overlapping,
    replace_problem,
    run_folder,
    run_name,
    run_outputs,
    tracked_outputs,
)
from babelforge.core.stage_settings import flag_argument, setting_groups
from babelforge.core.stages import Stage, load, named_settings, outputs
from babelforge.core.written_records import (
    WrittenRecords,
    file_stats,
    git_tracked_files,
    not_written_by,
    read_written_record,
)

# The CPU-pinned commands, from the command table (tests/test_reproducibility.py empties it to
# measure what the pin changes).
PINNED_STAGES = pinned_stages()


def pin_cpu_for(argv: list[str]) -> None:
    """Set the CPU-pinning environment from the params the stage will load (`--params`, `--set`)."""

    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--params", default=DEFAULT_PARAMS)
    early.add_argument("--set", action="append", default=[])
    known, _ = early.parse_known_args(argv)
    try:
        params = load_params(find_params(known.params))
    except BabelforgeError:  # no params file: the stage itself says so, after the pin
        params = {}
    pin_cpu(cpu_isa_from_params(override(params, known.set)))


def _top_parser() -> argparse.ArgumentParser:
    width = max(map(len, COMMANDS))
    parser = argparse.ArgumentParser(
        prog="babelforge",
        description="Build, version, audit and publish multilingual vision-and-language benchmarks.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="stages:\n"
        + "\n".join(f"  {name:<{width}} {command.help}" for name, command in COMMANDS.items())
        + "\n\nRun `babelforge <stage> --help` for a stage's options.",
    )
    parser.add_argument("--version", action="store_true", help="print the package version")
    parser.add_argument("command", nargs="?", choices=list(COMMANDS), metavar="stage")
    return parser


def stage_parser(stage: Stage) -> argparse.ArgumentParser:
    """A command's parser: its config's settings in the help, `--params`, `--set`, `--debug`, its own flags.

    The declaration's `flags` set settings (type, metavar and help from each setting; a flag given
    overrides params.yaml); its `configure(parser)` adds the arguments that are no setting.
    """

    name, help_text, config_cls = stage.name, stage.help, stage.config
    epilog = None
    if config_cls is not None:
        epilog = f"settings (params.yaml group `{config_cls.GROUP}`, or --set KEY=VALUE):\n" + describe(config_cls)
    parser = argparse.ArgumentParser(
        prog=f"babelforge {name}",
        description=help_text,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    if config_cls is not None:
        parser.add_argument("--params", default=DEFAULT_PARAMS, help="params file (default: params.yaml)")
        parser.add_argument(
            "--set",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help=f"override a setting for this run, e.g. --set {config_cls.GROUP}.<key>=<value> "
            f"(repeatable; values are YAML); keys: {', '.join(settable(config_cls, stage.pinned))}",
        )
    for flag in stage.flags:
        dest, words = flag_argument(stage, flag)
        parser.add_argument(flag, dest=dest, **words)
    if stage.configure is not None:
        stage.configure(parser)
    if "--out" in parser._option_string_actions:
        parser.add_argument(
            "--out-anywhere",
            dest=OUT_ANYWHERE,
            action="store_true",
            help="let --out write where it is refused otherwise (outside the project and the temp folder, in "
            "another stage's tracked output, over files git tracks or the command did not write, over its inputs); "
            "says what it replaces",
        )
    return parser


def settable(config_cls, pinned: bool = False) -> list[str]:
    """What `--set` may name for a stage: the groups its Config reads, `profile` (every stage
    resolves its settings for the profile) and, for a CPU-pinned stage, `build.cpu_isa` (the pin)."""
    groups = [f"{group}.*" for group in setting_groups(config_cls)]
    return [*groups, "profile", *(["build.cpu_isa"] if pinned and "build.*" not in groups else [])]


def config_from_args(stage: Stage, args: argparse.Namespace):
    """The stage's Config: params.yaml, then `--set`, then the stage's own flags that were given.

    A flag's `dest` is a key of the stage's group (`min_classes`) or a dotted key from the top
    of params.yaml (`paths.labels`), so every way in goes through the same typed loader. A `--set`
    key outside the groups the stage reads is an error (`settable`).
    """

    config_cls = stage.config
    params = override(standalone_params(stage, args.params), args.set)
    check_assignments(args.set, settable(config_cls, stage.pinned))
    reserved = {"params", "set", "debug", OUT_ANYWHERE}
    for key, value in vars(args).items():
        if key in reserved or value is None:
            continue
        parts = key.split(".") if "." in key else [*config_cls.GROUP.split("."), key]
        node = params
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return load_config(config_cls, params)


def standalone_params(stage: Stage, params_path: str) -> dict:
    """The params file; for a standalone stage (eval_zeroshot on a published dataset) run outside any
    project, where no params.yaml is found, none: its settings' defaults, recorded as the `full`
    profile (its inputs say whether they are a sample build)."""
    if stage.standalone and params_path == DEFAULT_PARAMS:
        try:
            find_params(params_path)
        except BabelforgeError:
            info("no params.yaml here or above: the settings' defaults (--help lists them), profile full")
            return {"profile": "full"}
    return load_params(params_path)


def ad_hoc_run(stage: Stage, parser: argparse.ArgumentParser, args: argparse.Namespace, config):
    """(the run's config, the outputs it writes, a line saying where or None). A stage that declares
    `ad_hoc_outputs` writes a run whose command line changes what it computes into a run folder of
    its own, never over its DVC-tracked outputs (babelforge.core.runs); its own run is left as is."""

    name, ad_hoc = stage.name, stage.ad_hoc_outputs
    if not ad_hoc:
        return config, outputs(stage, config), None
    defaults = {a.dest: a.default for a in parser._actions if a.default is not argparse.SUPPRESS}
    given = given_settings(vars(args), defaults, args.set, stage.config.GROUP)
    out_flag = parser._option_string_actions["--out"].dest
    models = stage.run_subject(config) if stage.run_subject else []
    taken = {path.name for path in RUNS.iterdir()} if RUNS.is_dir() else set()
    folder = run_folder(run_name(models, name), datetime.now(UTC), taken)
    settings = run_outputs(given, out_flag, ad_hoc, folder)
    if out_flag in given:
        refuse_tracked_out(stage, parser, given, [*settings.values(), given[out_flag]])
    if not settings:
        return config, outputs(stage, config), None
    for dest, value in settings.items():
        setattr(args, dest, value)
    config = config_from_args(stage, args)
    if out_flag in given:
        return config, outputs(stage, config), None
    return config, list(settings.values()), f"{name}: an ad-hoc run, written to {folder}/ (not the tracked outputs)"


def refuse_tracked_out(stage: Stage, parser: argparse.ArgumentParser, given: dict, targets: list) -> None:
    """An `--out` onto a DVC-tracked output (params.yaml's paths) is an error in a run that changes what
    the stage computes: only the stage's own run writes there."""

    out_flag = parser._option_string_actions["--out"].dest
    name = stage.name
    changed = changed_inputs(given, out_flag, stage.ad_hoc_outputs)
    if not changed or not Path(DEFAULT_PARAMS).is_file():
        return
    targets = [*targets, *(given[dest] for dest in stage.ad_hoc_outputs if dest in given)]
    clash = overlapping(targets, outputs(stage, load_config(stage.config, load_params(DEFAULT_PARAMS))))
    if clash:
        flags = {
            a.dest: a.option_strings[0] for a in parser._actions if a.option_strings and a.help != argparse.SUPPRESS
        }
        raise BabelforgeError(
            f"{clash} is a DVC-tracked output of {name}; a run with "
            f"{', '.join(flags.get(dest, f'--set {dest}') for dest in changed)} writes elsewhere: "
            f"name another --out, or none (a run folder under {RUNS}/)"
        )


def refuse_out_elsewhere(
    stage: Stage, parser: argparse.ArgumentParser, args: argparse.Namespace, config, written
) -> WrittenRecords | None:
    """An `--out` given on the command line, and what the stage then writes, must not land (after symlinks)
    in another stage's DVC-tracked output (dvc.yaml of the project root, the working folder here) nor
    outside the project and the system temp folder (babelforge.core.runs.out_problem), and what it replaces
    must not be one of its inputs, hold files git tracks or files this command did not write
    (babelforge.core.runs.replace_problem); `--out-anywhere` writes there all the same, saying what it
    replaces in one line. Returns the records of what the run writes there (None without --out)."""
    action = parser._option_string_actions.get("--out")
    if action is None or getattr(args, action.dest, None) is None:
        return None
    out = str(getattr(args, action.dest))
    tracked = {}
    if Path(PROJECT_MARKER).is_file() and Path(DEFAULT_PARAMS).is_file():
        tracked = tracked_outputs(read_yaml(PROJECT_MARKER) or {}, load_params(DEFAULT_PARAMS))
    others = {
        output: owner for owner, paths in tracked.items() if owner.split("@")[0] != stage.name for output in paths
    }
    here = real(Path.cwd())
    problem = out_problem(out, [str(path) for path in written], others, [here, Path(tempfile.gettempdir())])
    forced = "writing there all the same"
    own = {real(path) for path in own_outputs(stage, action.dest, tracked)}
    # what the run replaces: its outputs (a tool that declares none: the --out itself), its own places aside
    targets = [real(path) for path in (written or [out]) if real(path) not in own]
    inputs = {name: real(name) for name in command_inputs(stage, parser, args, config)}
    clean = []
    for target in targets:
        shown = target.relative_to(here).as_posix() if target.is_relative_to(here) else str(target)
        fault = replace_problem(
            stage.name,
            target,
            shown,
            inputs,
            git_tracked_files(target),
            not_written_by(stage.name, target, read_written_record(target), file_stats(target)),
        )
        if fault is None:
            clean.append(target)
        elif problem is None:
            problem, forced = fault, "replacing it all the same"
    if problem and getattr(args, OUT_ANYWHERE, False):
        info(f"babelforge {stage.name}: --out-anywhere: {problem}; {forced}")
    elif problem:
        raise BabelforgeError(
            f"--out {out}: {problem}; name another --out, or pass --out-anywhere to write there all the same"
        )
    return WrittenRecords(stage.name, targets, clean)


def refuse_out_over_tracked(stage: Stage, parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A tool without settings (eval_paper, eval_cider, ...) writes named files at its `--out` and deletes
    nothing else; it must still not replace a file git tracks (`--out README.md`), unless `--out-anywhere`."""
    action = parser._option_string_actions.get("--out")
    out = getattr(args, action.dest, None) if action is not None else None
    if out is None:
        return
    tracked = git_tracked_files(out) if real(out).is_file() else []
    if not tracked:
        return
    problem = f"{out} is a file git tracks"
    if getattr(args, OUT_ANYWHERE, False):
        info(f"babelforge {stage.name}: --out-anywhere: {problem}; replacing it all the same")
        return
    raise BabelforgeError(
        f"--out {out}: {problem}; name another --out, or pass --out-anywhere to write there all the same"
    )


def real(path: str | Path) -> Path:
    return Path(os.path.realpath(path))


def own_outputs(stage: Stage, out_dest: str, tracked: dict[str, list[str]]) -> list[str]:
    """Where the command writes without an --out: its DVC-tracked outputs (dvc.yaml) and the paths
    params.yaml gives its outputs and its --out setting. An --out there needs no record to be its own."""
    own = [path for owner, paths in tracked.items() if owner.split("@")[0] == stage.name for path in paths]
    if Path(DEFAULT_PARAMS).is_file():
        try:
            config = load_config(stage.config, load_params(DEFAULT_PARAMS))
        except BabelforgeError:  # the run's own settings were read already; these are only defaults
            return own
        own += outputs(stage, config)
        default = filled(f"${{{setting_key(stage, out_dest)}}}", config_values(config, stage.config.GROUP))
        own += [default] if default else []
    return own


def setting_key(stage: Stage, dest: str) -> str:
    """A flag's dest as a dotted key from the top of params.yaml (`paths.labels`, `eval.export.out_dir`)."""
    return dest if "." in dest else f"{stage.config.GROUP}.{dest}"


def command_inputs(stage: Stage, parser: argparse.ArgumentParser, args: argparse.Namespace, config) -> list[str]:
    """What a run reads, as paths: its declared deps filled from its settings, its language views, and
    every FILE or DIR flag but --out (given, or its setting's value); Hub datasets left out."""
    values = config_values(config, stage.config.GROUP)
    found = [filled(dep, values) for dep in stage.deps]
    found += [str(path) for path in stage.view_files(config)] if stage.languages else []
    # a flag setting what the declaration writes is no input (--summary, --metrics; labels' --languages)
    written = [*stage.outs, *stage.metrics, *(plot.path for plot in stage.plots)]
    output_settings = {key for path in written for key in named_settings(path)}
    not_inputs = {parser._option_string_actions["--out"].dest, "params", *stage.ad_hoc_outputs}
    for action in parser._actions:
        if action.metavar not in PATH_METAVARS or action.dest in not_inputs:
            continue
        if setting_key(stage, action.dest) in output_settings:
            continue
        value = getattr(args, action.dest, None)
        if value is None:
            value = filled(f"${{{setting_key(stage, action.dest)}}}", values)
        found += value if isinstance(value, list) else [value]
    return sorted({str(path) for path in found if isinstance(path, str) and path and not is_hub(path)})


# A flag whose value shows as FILE or DIR in --help names a path: given on the command line, it is
# taken from the working folder, while the params file's paths are taken from the project root.
PATH_METAVARS = ("FILE", "DIR")


def seen_from(root: Path, here: Path, value: str) -> str:
    """`value`, a path as written in the folder `here`, as written in `root`: relative when it lies
    inside `root` (what provenance records stays the same from any subfolder), absolute otherwise."""
    if Path(value).is_absolute():
        return value
    target = Path(os.path.normpath(here / value))
    return target.relative_to(root).as_posix() if target.is_relative_to(root) else str(target)


def command_line_actions(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[argparse.Action]:
    """The parser's arguments, those of the sub-command `args` chose included."""
    actions = []
    for action in parser._actions:
        actions.append(action)
        if isinstance(action, argparse._SubParsersAction) and getattr(args, action.dest, None) in action.choices:
            actions += command_line_actions(action.choices[getattr(args, action.dest)], args)
    return actions


def rebased(value, path: bool, root: Path, here: Path):
    """A command-line value as seen from `root`: FILE/DIR values (`path`; a list of them; not a Hub
    dataset, hf:ORG/NAME@REVISION), and model
    specs (`--model`: {"id", "revision"}) whose id names a folder here rather than a Hub model."""
    if isinstance(value, list):
        return [rebased(item, path, root, here) for item in value]
    if path and isinstance(value, str) and not is_hub(value):
        return seen_from(root, here, value)
    if isinstance(value, dict) and isinstance(value.get("id"), str) and (here / value["id"]).is_dir():
        return {**value, "id": seen_from(root, here, value["id"])}
    return value


@contextlib.contextmanager
def at_project_root(parser: argparse.ArgumentParser, args: argparse.Namespace, required: bool = True):
    """Run the command in the project's root folder (babelforge.core.params.project_root), wherever it
    was started: the params file's relative paths (`paths.*`, `fetch.mirror`, ...) and `--set` values
    resolve there as in `dvc repro`, while FILE/DIR arguments keep meaning what they meant where the
    command was started (they are rewritten as seen from the root). From the root itself nothing changes.
    A tool that reads the params file only for defaults (not `required`) runs where it is without one."""
    try:
        params = find_params(args.params)
    except BabelforgeError:
        if required:
            raise
        yield
        return
    here, root = Path.cwd().resolve(), project_root(params)
    if root == here:
        args.params = str(params)
        yield
        return
    for action in command_line_actions(parser, args):
        if action.dest != "params" and hasattr(args, action.dest):
            value = getattr(args, action.dest)
            setattr(args, action.dest, rebased(value, action.metavar in PATH_METAVARS, root, here))
    args.params = seen_from(root, here, os.path.relpath(here / params, here))  # the project's own: params.yaml
    os.chdir(root)
    try:
        yield
    finally:
        os.chdir(here)


def dvc_stage(argv: list[str]) -> str | None:
    """The DVC stage this command runs as, when it is this command's: DVC 3 names it in `DVC_STAGE` for a
    stage's command (`labels`, `card@mvl-sib`, `sub/dvc.yaml:labels`); None when not under DVC, or for a
    babelforge command run inside another stage's."""
    stage = (os.environ.get("DVC_STAGE") or "").rpartition(":")[2]
    return stage if argv and stage and stage.split("@")[0] == argv[0] else None


def main(argv: list[str] | None = None) -> int:
    """`babelforge <command> ...`. Under `dvc repro` or `dvc exp run`, DVC removed the stage's outputs before
    running it: a stage that fails (an error, a non-zero exit, Ctrl-C, a crash) puts back the outputs
    dvc.lock records for it, from the DVC cache (babelforge.core.dvc_lock.put_back), and says so."""
    argv = list(sys.argv[1:] if argv is None else argv)
    stage = dvc_stage(argv)
    if stage is None:
        return run_command(argv)
    started_in, code = Path.cwd(), 1  # DVC runs a stage's command where its dvc.yaml and dvc.lock are
    try:
        code = run_command(argv)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
        raise
    finally:
        if code != 0:
            put_back_after_failure(stage, started_in)
    return code


def put_back_after_failure(stage: str, root: Path) -> None:
    """Put back what dvc.lock records for the failed `stage`; one line saying what (nothing when nothing was
    recorded: a first build)."""
    try:
        done = put_back(stage, root)
    except (BabelforgeError, OSError) as error:
        print(
            f"babelforge {stage}: could not put back the outputs dvc.lock records ({error}); "
            f"`dvc checkout {stage}` does",
            file=sys.stderr,
        )
        return
    in_experiment = bool(os.environ.get("DVC_EXP_NAME"))  # set by `dvc exp run` only
    if in_experiment and (root / DEFAULT_PARAMS).is_file():
        # DVC rewrote git's index after writing `-S` into params.yaml, in the same second: git compares whole
        # seconds and sizes, so a same-size value (`10 ` -> `abc`) looked unchanged to `git status`, `git diff`
        # and `git checkout`. A new time makes git read the file, so the undo the line gives works.
        with contextlib.suppress(OSError):
            os.utime(root / DEFAULT_PARAMS)
    line = put_back_line(stage, done, in_experiment)
    if line:
        print(line, file=sys.stderr)


def run_command(argv: list[str]) -> int:
    """Parse and run one command; an error is one line on stderr and a non-zero exit."""
    if not argv or argv[0] not in COMMANDS:
        parser = _top_parser()
        args, _ = parser.parse_known_args(argv)
        if args.version:
            print(babelforge.__version__)
            return 0
        parser.print_help()
        return 0 if not argv or argv[0] in ("-h", "--help") else 2

    name, rest = argv[0], argv[1:]
    if name in PINNED_STAGES:
        try:
            pin_cpu_for(rest)
        except BabelforgeError as error:
            if "--debug" in rest:
                raise
            print(f"babelforge {name}: error: {error}", file=sys.stderr)
            return 1
    stage = load(name)
    parser = stage_parser(stage)
    try:
        # a flag's type may check what it names (`--model` a folder that is not there) before anything runs
        args = parser.parse_args(rest)
        in_project = hasattr(args, "params")  # a command that reads params.yaml
        required = stage.config is not None and not stage.standalone
        with at_project_root(parser, args, required) if in_project else contextlib.nullcontext():
            if stage.config is None:
                refuse_out_over_tracked(stage, parser, args)
                return int(stage.run(args) or 0)
            config = config_from_args(stage, args)
            config, written, note = ad_hoc_run(stage, parser, args, config)
            records = refuse_out_elsewhere(stage, parser, args, config, written) or WrittenRecords(name, [], [])
            # one writer per output: a second run of the stage on the same outputs stops at once; the
            # outputs it had (and the records of an --out run) are put back unless it succeeds
            # under `dvc repro` a stage maps only the languages of its views, the dependency DVC tracks
            views = stage.view_files(config) if os.environ.get("DVC_STAGE") else []
            with (
                stage_lock(name, written),
                records,
                OutputGuard([*written, *records.paths]) as guard,
                language_views(views),
            ):
                records.start()
                code = int(stage.run(config) or 0)
                if code == 0:
                    records.commit()
                    guard.commit()
            if note and code == 0:
                info(note)
            return code
    except (BabelforgeError, OSError) as error:  # OSError: a full disk, a folder that cannot be written
        if "--debug" in rest:
            raise

        text = (
            f"{str(error.filename) + ': ' if error.filename else ''}{os_error_text(error)}"
            if isinstance(error, OSError)
            else str(error)
        )
        print(f"babelforge {name}: error: {text}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"babelforge {name}: interrupted; nothing partial was written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
