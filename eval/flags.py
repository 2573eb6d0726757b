"""The command-line flags the evaluation stages share: `--model`, `--device`, `--runner`,
`--language` and `--out`, each writing the setting it names; and `flag_file`, the one check of a
flag that names a file of a given kind (Parquet, text), in one line naming the flag, the file and
what it expected."""

from __future__ import annotations

import argparse
import codecs
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_schema
from babelforge.eval.families import FAMILIES, SYNTAX, parse_spec, split_family
from babelforge.eval.models import check_local_weights, missing_folder


def model_spec(text: str) -> dict:
    """`--model SPEC` -> an `eval.common.models` entry (`id`: the spec without its model's own
    `@REVISION`, which goes to `revision`); an unknown family, a folder that is not there, a revision
    on a folder or a damaged weights file in one is an error here, while the flags are read, before
    any input is loaded."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: expected a model spec, {SYNTAX}")
    ref = parse_spec(text)
    for part in (ref, ref.image) if ref.image else (ref,):
        problem = missing_folder(part)
        if problem:
            raise BabelforgeError(problem)
        check_local_weights(part)
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


# ------------------------------------------------------------------ flags that name a file

PARQUET_MAGIC = b"PAR1"  # a Parquet file starts and ends with it
SNIFFED_BYTES = 4096
PARQUET = "a Parquet file"
TEXT = "UTF-8 text"
# What the first bytes of a file that is not what a flag wants say it is, for the error line.
KNOWN_STARTS = (
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"PK\x03\x04", "a zip archive"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"SQLite format 3\x00", "an SQLite database"),
)


def file_kind(head: bytes, tail: bytes) -> str:
    """What a file is, from its first bytes (`head`) and its last four (`tail`): `PARQUET`, `TEXT`
    (UTF-8 without NUL bytes), "an empty file", a Parquet file cut short, or what its first bytes
    say it is ("a zip archive", "a PNG image", ..., else "binary data")."""
    if not head:
        return "an empty file"
    if head.startswith(PARQUET_MAGIC):
        whole = tail == PARQUET_MAGIC and len(head) > 2 * len(PARQUET_MAGIC)
        return PARQUET if whole else "a Parquet file cut short (its closing PAR1 is missing)"
    for start, kind in KNOWN_STARTS:
        if head.startswith(start):
            return kind
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)  # a character cut at the end is fine
    except UnicodeDecodeError:
        return "binary data"
    return "binary data" if b"\x00" in head else TEXT


def flag_file(flag: str, value: str, kind: str, expected: str) -> Path:
    """The file a flag names, when it is a file of `kind` (`PARQUET`, `TEXT`); one line naming the
    flag, the file, what it is and `expected` (what the flag takes) otherwise."""
    path = Path(value)
    if not path.exists():
        raise BabelforgeError(f"{flag} {value}: no such file; expected {expected}")
    if not path.is_file():
        raise BabelforgeError(f"{flag} {value}: a folder, not a file; expected {expected}")
    with path.open("rb") as handle:
        head = handle.read(SNIFFED_BYTES)
        handle.seek(max(path.stat().st_size - len(PARQUET_MAGIC), 0))
        tail = handle.read()
    found = file_kind(head, tail)
    if found != kind:
        said = found if found.startswith(kind) else f"{found}, not {kind}"  # "a Parquet file cut short"
        raise BabelforgeError(f"{flag} {value}: {said}; expected {expected}")
    return path


def flag_table(flag: str, value: str, columns: tuple[str, ...], expected: str) -> Path:
    """A flag's Parquet table (`flag_file`) that has `columns`; one line naming the flag, the file and
    the first column it lacks otherwise."""
    path = flag_file(flag, value, PARQUET, expected)
    try:
        names = read_schema(path).names
    except BabelforgeError as error:  # its footer damaged: the line names the file, the flag goes before it
        raise BabelforgeError(f"{flag} {error}") from None
    missing = [column for column in columns if column not in names]
    if missing:
        raise BabelforgeError(f"{flag} {value}: a Parquet table without the column {missing[0]!r}; expected {expected}")
    return path
