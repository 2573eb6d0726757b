"""A task's results: where its run JSON goes, the settings it records, writing it, and the table
printed on stdout."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from babelforge.core.config import as_params
from babelforge.core.determinism import runtime
from babelforge.core.device import resolve_device
from babelforge.core.io import write_json
from babelforge.core.progress import info
from babelforge.core.provenance import build_record, provenance
from babelforge.eval.documents import run_document


def results_path(config, task: str) -> Path:
    """Where a task writes its run JSON: `out` when set, else `<paths.eval_reports>/<task>.json`."""
    return Path(config.out) if config.out else Path(config.paths.eval_reports) / f"{task}.json"


def plain(value: Any) -> Any:
    """Settings as JSON-able values (nested dataclasses and lists of them included)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value


def stage_params(config) -> dict:
    """What a run records of its settings: the profile, `eval.common` and the task's own group."""

    return {
        "profile": config.profile,
        "eval.common": plain(as_params(config.common)),
        config.GROUP: plain(as_params(config)),
    }


def write_run(
    task: str,
    rows: list[dict],
    config,
    sources: Mapping[str, str],
    path: Path,
    quarantine: Mapping[str, Mapping] | None = None,
    inputs_profile: str | None = None,
) -> Path:
    """The run JSON of one task: its rows, the provenance record and (tasks over image sets) the
    images each dataset left out, with the counts per reason (`quarantine`). `inputs_profile`: the
    build profile a published dataset the run read states (babelforge.eval.published): `sample`
    makes the record's `build` say so whatever the run's own profile."""

    models = {r["model"]: r["revision"] for r in rows}
    record = provenance(f"eval_{task}", params=stage_params(config), sources=dict(sources), models=models)
    if inputs_profile == "sample":
        record["build"] = build_record("sample")

    device = resolve_device(config.common.device)
    record["device"] = device
    record["runtime"] = runtime(device, "float16" if device.startswith("cuda") else "float32")
    write_json(run_document(task, rows, record, quarantine), path)
    info(f"eval_{task}: {len(rows)} rows -> {path}")
    return path


def format_results(rows: Sequence[Mapping], columns: Sequence[str]) -> str:
    """A fixed-width table of `columns` (absent or NaN cells blank, numbers to 4 decimals)."""

    def cell(value) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return ""
        if isinstance(value, float):
            return f"{value:.4f}"
        return str(value)

    body = [[cell(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in body]) for i, c in enumerate(columns)]
    numeric = [all(not r[i] or _is_number(r[i]) for r in body) for i in range(len(columns))]

    def line(cells):
        return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)).rstrip()

    return "\n".join([line(columns), line(["-" * w for w in widths]), *(line(r) for r in body)])


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def print_results(rows: Sequence[Mapping], columns: Sequence[str]) -> None:
    """The results table on stdout (status lines go to stderr)."""
    print(format_results(rows, columns))
