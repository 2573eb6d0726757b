"""`babelforge diff`: per-language changelog between two label releases.

Given two prompts.parquet or caption tables (hypotheses, attributes, selected) instead, it
counts rows added, removed and changed per language: how far apart two builds are (a GPU
build against a CPU one), where a hash only says that they differ.

    babelforge diff OLD.parquet NEW.parquet            two built labels files
    babelforge diff --rev v1.0 --rev v1.1              the labels of two git revisions
    babelforge diff --rev HEAD                         what the workspace changed since a revision

With `--rev`, the file is read through DVC's API (`dvc.api.open(path, repo=".", rev=...)`):
DVC looks up the file's hash in that revision's `dvc.lock`, then reads it from the local
cache or, when it is not cached, from the DVC remote — the same as
`dvc get . data/babel_imagenet/labels.parquet --rev v1.0`. The file read at each revision is
`paths.labels` unless `--path` names another.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from babelforge.audit.diff import (
    ROW_KEYS,
    diff_labels,
    diff_rows,
    labels_by_language,
    render_markdown,
    render_rows_markdown,
    review_confirmed,
    review_made,
    table_kind,
)
from babelforge.babel_imagenet.reviews import review_record
from babelforge.core.config import setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import PROVENANCE_KEY, canonical_json, read_provenance, read_table, write_text
from babelforge.core.stages import Paths, Stage, stage_paths


@dataclass(frozen=True)
class Config:
    """The `diff` group (absent from params.yaml: a tool run by hand, the flags give the inputs)."""

    GROUP = "diff"
    files: list[str] = setting(
        [], "OLD and NEW labels.parquet (or prompts / caption tables: rows changed per language)"
    )
    rev: list[str] = setting(
        [], "git revisions (tag, branch, commit) instead of files: two, or one against the workspace"
    )
    path: str | None = setting(None, "labels file inside the repo for `rev` (null: paths.labels)")
    repo: str = setting(".", "git/DVC repository for `rev`", metavar="DIR")
    format: Literal["markdown", "json"] = setting("markdown", "output format")
    output: str | None = setting(None, "write here instead of stdout", metavar="FILE")
    paths: Paths = stage_paths()


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE", help="OLD and NEW labels.parquet")
    parser.add_argument(
        "--rev",
        action="append",
        metavar="REV",
        help="a git revision (tag, branch, commit): two instead of FILEs, or one to compare the workspace with",
    )


def run(config: Config) -> int:

    if config.rev and config.files:
        raise BabelforgeError("diff: give either two FILEs or two --rev, not both")
    if config.rev:
        if len(config.rev) > 2:
            raise BabelforgeError(
                f"diff: --rev takes one revision (against the workspace) or two, got {len(config.rev)}"
            )
        path = config.path or config.paths.labels
        names = [f"{path}@{rev}" for rev in config.rev]
        tables = [read_labels_at_revision(config.repo, path, rev) for rev in config.rev]
        if len(config.rev) == 1:  # the revision against what the workspace holds now (built, not committed)
            names.append(f"{path} (workspace)")
            tables.append(read_labels_file(Path(config.repo) / path))
    elif len(config.files) == 2:
        names = list(config.files)
        tables = [read_labels_file(Path(name)) for name in config.files]
    else:
        raise BabelforgeError(
            "diff: give OLD and NEW labels files, --rev A --rev B, or --rev A (against the workspace)"
        )
    (old_table, old_provenance), (new_table, new_provenance) = tables
    old_rows, new_rows = old_table.to_dict("records"), new_table.to_dict("records")
    kind = table_kind(old_table.columns)
    if kind != table_kind(new_table.columns):
        raise BabelforgeError(f"diff: {names[0]} and {names[1]} are not the same kind of table")
    if kind != "labels":
        # Prompts and caption tables: rows changed per language (a GPU build's size, not just a hash).
        keys = [key for key in ROW_KEYS[kind] if key in old_table.columns and key in new_table.columns]
        rows_diff = diff_rows(old_rows, new_rows, keys)
        text = (
            canonical_json({"old": names[0], "new": names[1], "table": kind, **rows_diff})
            if config.format == "json"
            else render_rows_markdown(rows_diff, names[0], names[1])
        )
        _write(text, config.output)
        return 0
    by_review = review_made(old_rows, new_rows, review_record(old_provenance), review_record(new_provenance))
    confirmed = review_confirmed(old_rows, new_rows)
    diff = diff_labels(labels_by_language(old_rows), labels_by_language(new_rows), by_review, confirmed)
    text = (
        canonical_json({"old": names[0], "new": names[1], **diff})
        if config.format == "json"
        else render_markdown(diff, names[0], names[1])
    )
    _write(text, config.output)
    return 0


def _write(text: str, output: str | None) -> None:

    if output:
        write_text(text, output)
    else:
        sys.stdout.write(text)


def _check_columns(table, where: str):

    if table_kind(table.columns) is None:
        raise BabelforgeError(
            f"{where}: not a labels, prompts or captions table "
            "(needs lang + class_idx + label, lang + prompt_set + template_id, or lang + caption_id)"
        )
    return table


def read_labels_file(path: Path):
    """(labels table, its provenance) of a labels.parquet."""

    if not path.exists():
        raise BabelforgeError(f"{path}: no such labels file")
    return _check_columns(read_table(path), str(path)), read_provenance(path)


def read_labels_at_revision(repo: str, path: str, rev: str):
    """(labels.parquet, its provenance) as it was at git revision `rev` (DVC-tracked or git-tracked)."""

    import dvc.api
    import pyarrow.parquet as pq
    from dvc.exceptions import DvcException

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


STAGE = Stage(
    "diff",
    "changelog between two label releases (files or git revisions)",
    run,
    config=Config,
    flags={
        "--format": "format",
        "--path": ("path", "labels file inside the repo for --rev (default: paths.labels)"),
        "--repo": ("repo", "git/DVC repository for --rev (default: here)"),
        "--out": ("output", "write here instead of stdout"),
    },
    configure=configure,
    tool=True,
    docs="docs/guides/review-labels.md",
    in_params_yaml=False,
)
