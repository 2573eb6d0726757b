"""A task's run document: its result rows plus the provenance record of the run.

Every row carries `ROW_KEYS`: model id, revision, dataset, dataset version (the DVC
hash of the input artifact from dvc.lock when it is a tracked output, else the sha256
of its content), language, prompt set and seed. A run JSON holds the rows of one task
plus the provenance record; `babelforge eval_report` merges every run into one table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from babelforge.core.determinism import METRIC_DECIMALS, rounded
from babelforge.core.dvc_lock import locked_outputs
from babelforge.core.io import directory_hash, sha256_file

ROW_KEYS = ("model", "revision", "dataset", "dataset_version", "lang", "prompt_set", "seed")


def base_row(model, dataset: str, version: str, lang: str, prompt_set: str, seed: int) -> dict:
    """The `ROW_KEYS` of a result row, from the loaded model and the run."""
    return {
        "model": model.name,
        "revision": model.revision,
        "dataset": dataset,
        "dataset_version": version,
        "lang": lang,
        "prompt_set": prompt_set,
        "seed": seed,
    }


def dataset_version(path: str | Path, lock_path: str | Path = "dvc.lock") -> str:
    """The DVC hash of `path` (or of the tracked output folder that holds it), else its sha256."""
    path = Path(path)
    outs = {path: f"md5:{digest}" for path, digest in locked_outputs(lock_path).items()}
    for candidate in [path, *path.parents]:
        if candidate.as_posix() in outs:
            return outs[candidate.as_posix()]
    if path.is_dir():
        return "sha256:" + directory_hash(path)
    if path.is_file():
        return "sha256:" + sha256_file(path)
    return "absent"


def run_document(
    task: str, rows: Sequence[Mapping], provenance: Mapping, quarantine: Mapping[str, Mapping] | None = None
) -> dict:
    """`task`, `provenance`, `rows`, `text_truncation` (`text_truncation`: the texts the text encoder
    cut, per model, dataset and language) and, for a task over image sets, `quarantine`: per dataset,
    the screening's counts and the images left out (babelforge.eval.images.quarantine_record), and for
    a caption set the same record of its captions left out (`captions`, babelforge.eval.captions)."""
    missing = [key for row in rows for key in ROW_KEYS if key not in row]
    if missing:
        raise ValueError(f"result rows lack {sorted(set(missing))}")
    # Rounded to the stated precision: CPU kernel noise below it cannot change the file.
    rows = [rounded(json_safe(dict(row)), METRIC_DECIMALS) for row in rows]
    document = {"task": task, "provenance": dict(provenance), "rows": rows, "text_truncation": text_truncation(rows)}
    if quarantine is not None:
        document["quarantine"] = json_safe(dict(quarantine))
    return document


def text_truncation(rows: Sequence[Mapping]) -> dict:
    """Per model: the texts its text encoder cut to its length (rows' `texts_truncated`, summed) in
    all, and per dataset and language where any was cut; a long caption is scored on its first tokens,
    so it is counted like a skipped image. (A clipscore row's reference captions cut are its
    `ref_texts_truncated`.)"""
    # rows of one model, dataset, language and prompt set share their texts (MVL-SIB's tasks and k's
    # all read the language's sentences, and carry the language's count): counted once
    shared: dict[tuple, int] = {}
    for row in rows:
        key = (row["model"], row["dataset"], row["lang"], row["prompt_set"])
        shared[key] = max(shared.get(key, 0), int(row.get("texts_truncated") or 0))
    found: dict = {}
    for (model, dataset, lang, _), n in sorted(shared.items()):
        entry = found.setdefault(model, {"texts_truncated": 0, "by_language": {}})
        entry["texts_truncated"] += n
        if n:
            by_language = entry["by_language"].setdefault(dataset, {})
            by_language[lang] = by_language.get(lang, 0) + n
    return found


def json_safe(value):
    """JSON-safe: NaN -> None, numpy scalars -> Python, dict keys -> str."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
