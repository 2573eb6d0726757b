"""The command-line flags the evaluation stages share: `--model`, `--device`, `--runner`,
`--language` and `--out`, each writing the setting it names."""

from __future__ import annotations

import argparse

from babelforge.core.errors import BabelforgeError
from babelforge.eval.families import FAMILIES, SYNTAX, parse_spec, split_family
from babelforge.eval.models import missing_folder


def model_spec(text: str) -> dict:
    """`--model SPEC` -> an `eval.common.models` entry (`id`: the spec without its model's own
    `@REVISION`, which goes to `revision`); an unknown family or a folder that is not there is an
    error here, while the flags are read, before any input is loaded."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: expected a model spec, {SYNTAX}")
    ref = parse_spec(text)
    for part in (ref, ref.image) if ref.image else (ref,):
        problem = missing_folder(part)
        if problem:
            raise BabelforgeError(problem)
    # the spec as written, its model's revision apart (what a params entry holds)
    prefix = f"{ref.family}:" if split_family(text.strip())[0] else ""
    image = f"+{ref.image.text()}" if ref.image else ""
    return {"id": f"{prefix}{ref.id}{image}", "revision": ref.revision}


def families_help() -> str:
    """The model families and an example spec of each, for --model's help."""
    return "; ".join(f"{name}: {family.example}" for name, family in FAMILIES.items())


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
        metavar="SPEC",
        help=f"evaluate this model instead of eval.common.models (repeatable): {SYNTAX}, a local folder "
        f"detected by its files, a Hub id pinned @<sha>. Families: {families_help()}",
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
