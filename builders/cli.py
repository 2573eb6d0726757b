"""`babelforge`: one subcommand per pipeline stage.

The command table (babelforge.commands) names each command's module without importing it,
so `babelforge --help` stays fast; a command's module is imported only when it runs.
Each stage module defines `configure(parser)` (its arguments) and `run(args) -> int`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import babelforge
from babelforge.commands import COMMANDS, pinned_stages
from babelforge.core.config import describe, load_config, override
from babelforge.core.determinism import cpu_isa_from_params, pin_cpu
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import os_error_text, stage_lock, stage_outputs
from babelforge.core.params import DEFAULT_PARAMS, load_params

# The CPU-pinned commands, from the command table (tests/test_reproducibility.py empties it to
# measure what the pin changes).
PINNED_STAGES = pinned_stages()


def pin_cpu_for(argv: list[str]) -> None:
    """Set the CPU-pinning environment from the params the stage will load (`--params`, `--set`)."""

    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--params", default=DEFAULT_PARAMS)
    early.add_argument("--set", action="append", default=[])
    known, _ = early.parse_known_args(argv)
    params = load_params(known.params) if Path(known.params).exists() else {}
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


def stage_parser(name: str, module) -> argparse.ArgumentParser:
    """A stage's parser: its Config's settings in the help, `--params`, `--set`, `--debug`, its own flags.

    A stage module is either `Config` (a dataclass with `GROUP`) + `run(config)`, where its
    optional `configure(parser)` adds flags whose `dest` names a Config field (a flag given
    overrides params.yaml), or the older `configure(parser)` + `run(args)`.
    """

    help_text = COMMANDS[name].help
    config_cls = getattr(module, "Config", None)
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
            "or --set paths.<name>=<path> (repeatable; values are YAML)",
        )
    if hasattr(module, "configure"):
        module.configure(parser)
    return parser


def config_from_args(module, args: argparse.Namespace):
    """The stage's Config: params.yaml, then `--set`, then the stage's own flags that were given.

    A flag's `dest` is a key of the stage's group (`min_classes`) or a dotted key from the top
    of params.yaml (`paths.labels`), so every way in goes through the same typed loader.
    """

    config_cls = module.Config
    params = override(load_params(args.params), args.set)
    reserved = {"params", "set", "debug"}
    for key, value in vars(args).items():
        if key in reserved or value is None:
            continue
        parts = key.split(".") if "." in key else [*config_cls.GROUP.split("."), key]
        node = params
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return load_config(config_cls, params)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
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
    module = importlib.import_module(COMMANDS[name].module)
    parser = stage_parser(name, module)
    args = parser.parse_args(rest)
    try:
        if hasattr(module, "Config"):
            config = config_from_args(module, args)
            # one writer per output: a second run of the stage on the same outputs stops at once
            with stage_lock(name, stage_outputs(name, config)):
                return int(module.run(config) or 0)
        return int(module.run(args) or 0)
    except (BabelforgeError, OSError) as error:  # OSError: a full disk, a folder that cannot be written
        if args.debug:
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
