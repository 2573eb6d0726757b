"""`babelforge diff`: per-language changelog between two label releases.

    babelforge diff OLD.parquet NEW.parquet            two built labels files
    babelforge diff --rev v1.0 --rev v1.1              the labels of two git revisions

With `--rev`, the file is read through DVC's API (`dvc.api.open(path, repo=".", rev=...)`):
DVC looks up the file's hash in that revision's `dvc.lock`, then reads it from the local
cache or, when it is not cached, from the DVC remote — the same as
`dvc get . data/babel_imagenet/labels.parquet --rev v1.0`.
"""
from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from builders.core.errors import BabelforgeError

LABELS_PATH = "data/babel_imagenet/labels.parquet"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE", help="OLD and NEW labels.parquet")
    parser.add_argument("--rev", action="append", default=[], metavar="REV",
                        help="a git revision (tag, branch, commit); give two instead of FILEs")
    parser.add_argument("--path", default=LABELS_PATH, help=f"labels file inside the repo for --rev ({LABELS_PATH})")
    parser.add_argument("--repo", default=".", help="git/DVC repository for --rev (default: here)")
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown")
    parser.add_argument("--output", default=None, help="write here instead of stdout")


def run(args: argparse.Namespace) -> int:
    from builders.audit.diff import diff_labels, labels_by_language, render_markdown, review_made
    from builders.babel_imagenet.reviews import review_record
    from builders.core.io import canonical_json, write_text

    if args.rev and args.files:
        raise BabelforgeError("diff: give either two FILEs or two --rev, not both")
    if args.rev:
        if len(args.rev) != 2:
            raise BabelforgeError(f"diff: --rev needs exactly two revisions, got {len(args.rev)}")
        names = [f"{args.path}@{rev}" for rev in args.rev]
        tables = [read_labels_at_revision(args.repo, args.path, rev) for rev in args.rev]
    elif len(args.files) == 2:
        names = list(args.files)
        tables = [read_labels_file(Path(name)) for name in args.files]
    else:
        raise BabelforgeError("diff: give OLD and NEW labels files, or --rev A --rev B")
    (old_table, old_provenance), (new_table, new_provenance) = tables
    old_rows, new_rows = old_table.to_dict("records"), new_table.to_dict("records")
    by_review = review_made(old_rows, new_rows, review_record(old_provenance), review_record(new_provenance))
    diff = diff_labels(labels_by_language(old_rows), labels_by_language(new_rows), by_review)
    text = (canonical_json({"old": names[0], "new": names[1], **diff}) if args.format == "json"
            else render_markdown(diff, names[0], names[1]))
    if args.output:
        write_text(text, args.output)
    else:
        sys.stdout.write(text)
    return 0


def _check_columns(table, where: str):
    missing = {"lang", "class_idx", "label"} - set(table.columns)
    if missing:
        raise BabelforgeError(f"{where}: not a labels table (missing {', '.join(sorted(missing))})")
    return table


def read_labels_file(path: Path):
    """(labels table, its provenance) of a labels.parquet."""
    from builders.core.io import read_provenance, read_table

    if not path.exists():
        raise BabelforgeError(f"{path}: no such labels file")
    return _check_columns(read_table(path), str(path)), read_provenance(path)


def read_labels_at_revision(repo: str, path: str, rev: str):
    """(labels.parquet, its provenance) as it was at git revision `rev` (DVC-tracked or git-tracked)."""
    import json

    import dvc.api
    import pyarrow.parquet as pq
    from dvc.exceptions import DvcException

    from builders.core.io import PROVENANCE_KEY

    try:
        with dvc.api.open(path, repo=repo, rev=rev, mode="rb") as handle:
            data = handle.read()
    except (DvcException, FileNotFoundError) as error:
        raise BabelforgeError(
            f"{path}@{rev}: cannot read it through DVC ({type(error).__name__}: {error}); "
            "check the revision exists and its data is in the cache or the remote (`dvc fetch --rev`)"
        ) from None
    table = pq.read_table(io.BytesIO(data))
    raw = (table.schema.metadata or {}).get(PROVENANCE_KEY)
    return _check_columns(table.to_pandas(), f"{path}@{rev}"), (json.loads(raw) if raw else {})
