"""The command-line flags the evaluation stages share: `--model`, `--device`, `--runner`,
`--language` and `--out`, each writing the setting it names."""

from __future__ import annotations

import argparse

from babelforge.core.errors import BabelforgeError
from babelforge.eval.models import missing_folder


def model_spec(text: str) -> dict:
    """`--model ID[@REVISION]` -> an `eval.common.models` entry; a folder that is not there is an
    error here, while the flags are read, before any input is loaded."""
    model, _, revision = text.partition("@")
    if not model:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a Hub id or a model directory, optionally @<revision>")
    problem = missing_folder(model, revision or None)
    if problem:
        raise BabelforgeError(problem)
    return {"id": model, "revision": revision or None}


class ExtendCommaList(argparse.Action):
    """A repeatable flag whose values may also be comma lists: `--language de --language fr,it`."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = list(getattr(namespace, self.dest, None) or [])
        items += [item.strip() for item in str(values).split(",") if item.strip()]
        setattr(namespace, self.dest, items)


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        dest="eval.common.models",
        action="append",
        type=model_spec,
        metavar="ID[@REVISION]",
        help="evaluate this model instead of eval.common.models (repeatable; a Hub id needs @<sha>)",
    )
    parser.add_argument(
        "--device", dest="eval.common.device", metavar="DEVICE", help="auto, cpu, cuda or cuda:<n> (eval.common.device)"
    )
    parser.add_argument(
        "--runner",
        dest="eval.runner.runner",
        choices=["local", "ray"],
        metavar="{local,ray}",
        help="where images are encoded: local (this process) or ray (eval.runner.runner)",
    )


def add_language_flag(parser: argparse.ArgumentParser, group: str) -> None:
    parser.add_argument(
        "--language",
        dest="languages",
        action=ExtendCommaList,
        metavar="LANG[,LANG...]",
        help=f"only these languages (repeatable or a comma list; a registry key such as deu_Latn, "
        f"an ISO 639-1 or a BabelNet code; {group}.languages)",
    )


def add_out_flag(parser: argparse.ArgumentParser, task: str) -> None:
    parser.add_argument(
        "--out",
        dest="out",
        metavar="FILE",
        help=f"results JSON to write (eval.{task}.out; default <paths.eval_reports>/{task}.json)",
    )
