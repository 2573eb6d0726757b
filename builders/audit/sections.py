"""The audit's per-dataset sections, looped over the dataset registry (builders/core/datasets.py).

A registered dataset whose spec has an `AuditSection` with a reader gets a section in every
language's record (its input absent: "not built"); the labels are the audit's own rows. The
audit also writes one *slice* per registered dataset, `<paths.audit>/datasets/<name>.json`:
what it found about that dataset alone, so a dataset's card depends on its own slice and is
not rebuilt when another dataset's audit figures change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from babelforge.audit import checks
from babelforge.audit.checks import mvl_sib_summary
from babelforge.core.datasets import resolve, specs
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_schema, read_table, value_counts


@dataclass
class Section:
    """A read section input: the section of one language, and the overview across languages."""

    language: Callable[[str], dict[str, Any]]
    overview: Callable[[], dict[str, Any]] = dict
    # {lang: box-plot statistics} of the section's score, where it has one to plot (checks.box_stats)
    distribution: Callable[[], dict[str, dict[str, Any]]] | None = None


def audited():
    """(spec, its AuditSection) of every registered dataset the audit reports in a section, registry order."""

    return [(spec, spec.audit) for spec in specs() if spec.audit is not None and spec.audit.reader is not None]


def read_all(path_of: Callable[[Any], Any]) -> dict[str, Section | None]:
    """{section key: Section, or None when its input is not built}; `path_of(section)` is its input's path."""

    return {section.key: resolve(section.reader)(path_of(section)) for _, section in audited()}


def language_records(read: Mapping[str, Section | None], lang: str) -> dict[str, Any]:
    return {
        key: section.language(lang) if section is not None else {"status": NOT_BUILT} for key, section in read.items()
    }


def input_status(read: Mapping[str, Section | None]) -> dict[str, str]:
    return {key: "built" if section is not None else NOT_BUILT for key, section in read.items()}


def overviews(read: Mapping[str, Section | None]) -> dict[str, Any]:
    """summary.json's entry per section that has an overview."""
    return {
        section.key: read[section.key].overview() if read[section.key] is not None else {"status": NOT_BUILT}
        for _, section in audited()
        if section.overview
    }


def slices(summary: Mapping[str, Any], records: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """What the audit found per registered dataset: the labels' error and warning counts and
    per-language figures; a section's per-language entries (and overview); for a dataset the
    audit does not report, only that."""

    found: dict[str, dict[str, Any]] = {}
    for spec in specs():
        section = spec.audit
        if section is None:
            found[spec.name] = {"dataset": spec.name, "audited": False}
        elif section.reader is None:
            found[spec.name] = {
                "dataset": spec.name,
                "audited": True,
                "errors": summary["errors"],
                "warnings": summary["warnings"],
                "languages": summary["languages"],
            }
        else:
            entry = {
                "dataset": spec.name,
                "audited": True,
                "section": section.key,
                "status": summary["inputs"][section.key],
                "languages": {lang: record[section.key] for lang, record in records.items()},
            }
            if section.overview:
                entry["overview"] = summary[section.key]
            found[spec.name] = entry
    return found


def titles() -> list[tuple[str, str]]:
    """(section key, heading) of each section, for the language pages."""
    return [(section.key, section.title) for _, section in audited()]


# Section readers, named by the dataset specs: input path -> Section, or None when it is not built.


def prompts(path: str | Path | None) -> Section | None:

    table = _read_optional(path)
    if table is None:
        return None
    return Section(lambda lang: _per_language(table, lang, checks.prompt_summary))


def captions(path: str | Path | None) -> Section | None:
    """selected.parquet holds every caption x language of a run (millions of rows at training
    scale): each language's rows are read on their own, and only the columns the checks use."""

    if not path or not Path(path).exists():
        return None
    schema = read_schema(path)
    if "lang" not in schema.names:
        raise BabelforgeError(f"{path}: no `lang` column; check paths.captions")
    kiwi, chrf = caption_columns(schema)
    columns = [column for column in ("reason", kiwi, chrf) if column in schema.names]
    languages = value_counts(path, "lang")
    boxes: dict[str, dict[str, Any]] = {}  # the plot's few numbers, kept from each language's one read

    def read(lang: str, names: list[str]):
        table = read_table(path, names, where=("lang", lang))
        if kiwi is not None and kiwi in names:
            boxes[lang] = checks.box_stats(table[kiwi].dropna().to_numpy(), lang)
        return table

    def language(lang: str) -> dict[str, Any]:
        if lang not in languages or not columns:
            return checks.caption_summary(languages.get(lang, 0), {}, kiwi, chrf)
        table = read(lang, columns)
        return checks.caption_summary(languages[lang], {c: table[c].tolist() for c in columns}, kiwi, chrf)

    def distribution() -> dict[str, dict[str, Any]]:
        if kiwi is None:
            return {}
        for lang in sorted(set(languages) - set(boxes)):  # caption languages the audit has no labels for
            read(lang, [kiwi])
        return {lang: boxes[lang] for lang in sorted(languages)}

    return Section(language, distribution=distribution)


def mvl_sib(path: str | Path | None) -> Section | None:

    files = _mvl_sib_files(Path(path) if path else None)
    if not files:
        return None
    return Section(lambda lang: _mvl_sib_for(files, lang), overview=lambda: mvl_sib_overview(files))


NOT_BUILT = "not built"


def _read_optional(path: str | None):

    if not path or not Path(path).exists():
        return None
    return read_table(path)


def _per_language(table, lang: str, summarise) -> dict[str, Any]:
    if table is None:
        return {"status": NOT_BUILT}
    if "lang" not in table.columns:
        raise BabelforgeError("an optional audit input has no `lang` column; check paths.prompts / paths.captions")
    return summarise(table[table["lang"] == lang].to_dict("records"))


def caption_columns(schema) -> tuple[str | None, str | None]:
    """The Kiwi score and chrF columns of selected.parquet (its Arrow schema), found by name
    among the floating-point ones (not percentiles/flags)."""
    import pyarrow as pa

    numeric = [field.name for field in schema if pa.types.is_floating(field.type)]
    kiwi = next((c for c in numeric if "kiwi" in c.lower() and "percentile" not in c.lower()), None)
    chrf = next((c for c in numeric if "chrf" in c.lower()), None)
    return kiwi, chrf


def _mvl_sib_files(root: Path | None) -> dict[str, dict[str, Path]]:
    """{task: {lang: path}} for data/mvl_sib/<task>/<lang>.parquet."""
    if root is None or not root.is_dir():
        return {}
    files: dict[str, dict[str, Path]] = {}
    for path in sorted(root.glob("*/*.parquet")):
        files.setdefault(path.parent.name, {})[path.stem] = path
    return files


def _mvl_sib_for(files: dict[str, dict[str, Path]], lang: str) -> dict[str, Any]:

    if not files:
        return {"status": NOT_BUILT}
    tasks = {
        task: read_table(paths[lang], columns=_balance_columns(paths[lang])).to_dict("records")
        for task, paths in files.items()
        if lang in paths
    }
    if not tasks:
        return {"status": "language not in MVL-SIB"}
    return mvl_sib_summary(tasks)


def _balance_columns(path: Path) -> list[str]:
    """Only what the balance check reads: a task table's other columns hold whole sentences."""
    import pyarrow.parquet as pq

    names = pq.read_schema(path).names
    return [column for column in ("label", "topic", "category") if column in names] or names[:1]


def mvl_sib_overview(files: dict[str, dict[str, Path]]) -> dict[str, Any]:
    """Rows per task across all languages (from Parquet metadata only): equal counts = balanced."""
    import pyarrow.parquet as pq

    if not files:
        return {"status": NOT_BUILT}
    tasks = {}
    for task, paths in files.items():
        rows = {lang: pq.read_metadata(path).num_rows for lang, path in paths.items()}
        tasks[task] = {
            "languages": len(rows),
            "rows_min": min(rows.values()),
            "rows_max": max(rows.values()),
            "balanced": min(rows.values()) == max(rows.values()),
        }
    return {"status": "built", "tasks": tasks}
