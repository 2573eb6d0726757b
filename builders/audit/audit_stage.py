"""`babelforge audit`: per-language quality report of the built labels -> reports/audit/.

Reads labels.parquet (required) and, when built, a reference release and the input of each
registered dataset's audit section (prompts, MT captions, MVL-SIB: read and summarised by the
dataset's area, builders/<area>/audit_section.py); an optional input that is absent is reported as
"not built", so the audit runs on labels alone. Paths come from the `paths:` group of
params.yaml, severities, score weights and langid's limits from the `audit:` group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from babelforge.audit import checks, report, review_sheet, sections
from babelforge.audit.checks import AUDIT_TAGGERS, AuditPolicy, LangidPolicy
from babelforge.audit.english import english_reference
from babelforge.babel_imagenet.tables import PRECISION_COLUMNS
from babelforge.core.config import setting
from babelforge.core.datasets import artifact_path
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_json, read_provenance, read_table
from babelforge.core.langid import identifier
from babelforge.core.languages import ENGLISH, read_registry, registry
from babelforge.core.progress import info, progress
from babelforge.core.provenance import profile_of_record
from babelforge.core.stages import Paths, Stage, stage_paths

TAGGERS = AUDIT_TAGGERS


@dataclass(frozen=True)
class Config:
    """The `audit` group of params.yaml; reads the built artifacts in `paths`, writes `paths.audit`."""

    GROUP = "audit"
    reference: str | None = setting(
        None,
        "a release in the original JSON layout {LANG: [[class_idx...], [label...]]} to compare with",
        metavar="FILE",
    )
    total_classes: int = setting(1000, "classes of a complete language (coverage = classes kept / this)", minimum=1)
    langid: LangidPolicy = setting(LangidPolicy(), "langid on labels")
    severity: dict[str, str] = setting(
        {
            "empty_label": "error",
            "script_mismatch": "error",
            "han_variant": "warning",
            "english_lookalike": "warning",
            "duplicate": "warning",
            "langid_other": "info",
            "ambiguous_source": "info",
        },
        "check -> error | warning | info; error rows make `publish` refuse without --force",
    )
    score_weights: dict[str, float] = setting(
        {
            "empty_label": 1.0,
            "script_mismatch": 1.0,
            "han_variant": 0.5,
            "english_lookalike": 1.0,
            "duplicate": 0.5,
            "langid_other": 0.1,
            "ambiguous_source": 0.1,
        },
        "quality score penalty per flagged row of each check (see docs/architecture/audit.md)",
        minimum=0,
    )
    registry: str | None = setting(None, "language registry TSV (null: resources/languages.tsv)", metavar="FILE")
    paths: Paths = stage_paths()


def run(config: Config) -> int:

    summary = build_audit(config, _registry(config.registry))
    info(
        f"audit: {len(summary['languages'])} languages, {summary['errors']} error rows, "
        f"{summary['warnings']} warning rows -> {config.paths.audit}/index.html"
    )
    return 0


def _registry(path: str | None):

    return read_registry(path) if path else registry()


def policy_of(config: Config):

    try:
        return AuditPolicy(
            severity=dict(config.severity),
            score_weights=dict(config.score_weights),
            langid=config.langid,
            total_classes=config.total_classes,
        )
    except ValueError as error:
        raise BabelforgeError(f"params.yaml audit: {error}") from None


def langid_ranking():
    """langid.py's ranking [(code, probability), ...] of a text, most likely first."""

    return identifier().rank


def build_audit(config: Config, languages_registry, rank=None) -> dict[str, Any]:
    """Run every check for every language and write the report; returns the summary.

    `rank` (text -> [(code, probability), ...]) defaults to langid.py when
    `audit.langid.enabled` is true; tests pass a stub.
    """

    paths = config.paths
    labels_path = Path(paths.labels)
    if not labels_path.exists():
        raise BabelforgeError(f"{labels_path}: labels not built; run `dvc repro labels` first")
    policy = policy_of(config)
    if rank is None and config.langid.enabled:
        rank = langid_ranking()

    labels = read_table(labels_path)
    missing = {"class_idx", "lang", "label", "source"} - set(labels.columns)
    if missing:
        raise BabelforgeError(f"{labels_path}: missing columns {', '.join(sorted(missing))}")
    groups, dropped_totals = _language_facts(paths.languages)
    orders = _source_orders(paths.languages)
    precisions = _label_precisions(paths.languages)
    review_coverage, review_record, candidates = review_sheet.audit_review_inputs(labels, labels_path, paths.candidates)
    english = english_reference(labels, paths.wordnet)
    english_lemmas = {idx: entry["lemmas"] for idx, entry in english.items()}

    # one section per registered dataset the audit reports (builders/core/datasets.py)
    optional = sections.read_all(lambda section: artifact_path(paths, section.artifact))
    reference = read_reference(config.reference, languages_registry)

    records: dict[str, dict[str, Any]] = {}
    pages: dict[str, str] = {}
    sheets: dict[str, str] = {}
    langs = sorted(labels["lang"].unique())
    for lang in progress(langs, desc="audit", total=len(langs)):
        language = languages_registry.get(lang)
        rows = labels[labels["lang"] == lang].sort_values("class_idx").to_dict("records")
        record = checks.audit_language(
            rows,
            english_lemmas,
            language.expected_scripts,
            language.langid,
            rank,
            policy,
            is_english=(lang == ENGLISH),
        )
        record.update(name=language.name, group=groups.get(lang))
        if lang in dropped_totals:
            # labels.parquet only has classes that kept a label: the senses of classes the
            # filters emptied are counted in languages.parquet alone
            record["dropped"] = dropped_totals[lang]
        if lang in orders:
            record["source_trust"] = source_trust_record(orders[lang], candidates.get(lang, []))
        if lang in precisions:
            record["label_precision"] = precisions[lang]
        record.update(sections.language_records(optional, lang))
        if reference is not None:
            record["reference"] = (
                checks.reference_agreement({int(r["class_idx"]): str(r["label"]) for r in rows}, reference[lang])
                if lang in reference
                else {"status": "language not in the reference release"}
            )
        record["reviews"] = review_sheet.language_reviews(rows, review_coverage.get(lang), review_record.get(lang))
        records[lang] = record
        options = review_sheet.candidates_by_class(candidates.get(lang, [])) if candidates else None
        sheets[lang] = review_sheet.render_sheet(
            review_sheet.sheet_rows(lang, rows, options or {}, english, record["flags"])
        )
        pages[lang] = report.render_language(
            lang,
            record,
            {int(r["class_idx"]): r for r in rows},
            english,
            options,
            html_lang=language.iso639_1 or language.iso639_3,
        )

    summary = {
        # the build profile labels.parquet records: the index says when it is a sample build
        "profile": profile_of_record(read_provenance(labels_path)),
        "total_classes": policy.total_classes,
        "severity": dict(sorted(policy.severity.items())),
        "score_weights": dict(sorted(policy.score_weights.items())),
        "errors": sum(record["errors"] for record in records.values()),
        "warnings": sum(record["warnings"] for record in records.values()),
        "inputs": {
            "labels": "built",
            **sections.input_status(optional),
            "reference": "compared" if reference is not None else "none given",
            "langid": "langid.py" if rank else "disabled",
        },
        "languages": {
            lang: {
                key: record[key]
                for key in ("name", "group", "classes_kept", "errors", "warnings", "quality_score", "source_mix")
            }
            | {"reviews": {k: v for k, v in record["reviews"].items() if k != "decisions"}}
            | ({"label_precision": record["label_precision"]} if "label_precision" in record else {})
            for lang, record in records.items()
        },
        **sections.overviews(optional),
    }
    if reference is not None:
        summary["reference_only_languages"] = sorted(set(reference) - set(records))
    report.write_report(
        Path(paths.audit),
        summary,
        records,
        pages,
        sections.distributions(optional),
        sections.slices(summary, records, optional, paths),
        sheets,
    )
    return summary


DROPPED_COLUMNS = {
    "n_dropped_english": "english",
    "n_dropped_mt": "machine_translated",
    "n_dropped_low_precision": "low_precision",
    "n_classes_emptied": "classes_emptied",
}


def _language_facts(path: str | None) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """({lang: resource group}, {lang: senses dropped per reason over *all* classes, and the
    classes left without a label}) from languages.parquet; the totals only when it has them."""
    import pyarrow.parquet as pq

    if not path or not Path(path).exists():
        return {}, {}
    names = set(pq.read_schema(path).names)
    dropped = [column for column in DROPPED_COLUMNS if column in names]
    table = read_table(path, columns=["lang", "group", *dropped])
    groups = dict(zip(table["lang"], table["group"]))
    if len(dropped) != len(DROPPED_COLUMNS):
        return groups, {}
    totals = {
        row["lang"]: {DROPPED_COLUMNS[column]: int(row[column]) for column in dropped}
        for row in table.to_dict("records")
    }
    return groups, totals


SOURCE_ORDER_COLUMNS = ("source_order", "source_order_from", "n_trust_classes")


def _source_orders(path: str | None) -> dict[str, dict[str, Any]]:
    """{lang: languages.parquet's source order row} where the labels stage wrote one (agreement
    ranking); {} for an older languages.parquet or the `first` ranking."""
    import pyarrow.parquet as pq

    if not path or not Path(path).exists() or not set(SOURCE_ORDER_COLUMNS) <= set(pq.read_schema(path).names):
        return {}
    table = read_table(path, columns=["lang", *SOURCE_ORDER_COLUMNS])
    return {row["lang"]: row for row in table.to_dict("records") if row["source_order"]}


def _label_precisions(path: str | None) -> dict[str, dict[str, Any]]:
    """{lang: the share of correct labels languages.parquet states (precision.py): `precision`,
    `low`, `high`, `basis`, `judged`, `expected_wrong`, `estimated`, `by_source`}; {} for an older
    languages.parquet."""
    import pyarrow.parquet as pq

    if not path or not Path(path).exists() or not set(PRECISION_COLUMNS) <= set(pq.read_schema(path).names):
        return {}
    table = read_table(path, columns=["lang", *PRECISION_COLUMNS])
    return {
        row["lang"]: {
            "precision": float(row["label_precision"]),
            "low": float(row["label_precision_low"]),
            "high": float(row["label_precision_high"]),
            "basis": str(row["label_precision_basis"]),
            "judged": int(row["n_judged"]),
            "expected_wrong": float(row["expected_wrong"]),
            "estimated": float(row["estimated_precision"]),
            "by_source": str(row["measured_sources"]),
        }
        for row in table.to_dict("records")
    }


def source_trust_record(order: Mapping[str, Any], candidates: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The language page's source trust: the agreement ranking's source order, whether the sources'
    agreement set it (`evidence`) or labels.source_priority (`params`), the classes of evidence, and
    each source's estimated precision (candidates.parquet's `source_precision`, where estimated)."""
    precision: dict[str, float] = {}
    for row in candidates:
        value = row.get("source_precision")
        if value is not None and value == value:  # NaN: not estimated
            precision.setdefault(str(row["source"]), round(float(value), 4))
    return {
        "order": [name for name in str(order["source_order"]).split(",") if name],
        "order_from": str(order["source_order_from"]),
        "evidence_classes": int(order["n_trust_classes"]),
        "precision": dict(sorted(precision.items(), key=lambda item: (-item[1], item[0]))),
    }


def read_reference(path: str | None, languages_registry) -> dict[str, dict[int, str]] | None:
    """A release in the original Babel-ImageNet JSON layout, keyed by registry key.

    Its language keys may be registry keys or BabelNet codes (the original release uses `DE`).
    """

    if not path:
        return None
    if not Path(path).exists():
        raise BabelforgeError(f"{path}: reference release not found (audit.reference / --reference)")
    raw = read_json(path)
    if not isinstance(raw, dict):
        raise BabelforgeError(f"{path}: expected {{LANG: [[class_idx...], [label...]]}}")
    reference: dict[str, dict[int, str]] = {}
    for code, value in raw.items():
        if not (isinstance(value, list) and len(value) == 2 and len(value[0]) == len(value[1])):
            raise BabelforgeError(f"{path}: language {code!r} is not [[class_idx...], [label...]] of equal lengths")
        key = code if code in languages_registry else languages_registry.from_babelnet(code).key
        reference[key] = {int(idx): str(label) for idx, label in zip(*value)}
    return reference


STAGE = Stage(
    "audit",
    "per-language quality report of the labels (JSON + HTML + plots)",
    run,
    config=Config,
    flags={
        "--out": ("paths.audit", "folder of the audit report: index.html, pages"),
        "--labels": ("paths.labels", "the labels table to audit"),
        "--registry": ("registry", "language registry TSV"),
        "--reference": ("reference", "reference release JSON {LANG: [[class_idx...], [label...]]}"),
    },
    deps=(
        "${paths.labels}",
        "${paths.languages}",
        "${paths.wordnet}",
        "${paths.candidates}",
        # optional inputs: the audit reports "not built" without them; as deps they rerun it when they change
        "${paths.prompts}",
        "${paths.captions}/selected.parquet",
        "${paths.captions}/quality.json",
        "${paths.mvl_sib}",
        # the report's style and script, package files the import walk cannot see
        "builders/audit/assets/report.css",
        "builders/audit/assets/report.js",
        "builders/audit/assets/index.js",
        "builders/audit/assets/sort_table.js",
    ),
    languages=("babel-imagenet", "mt-captions", "mvl-sib"),
    outs=("${paths.audit}",),
    docs="docs/architecture/audit.md",
    taggers=tuple(TAGGERS),
    owns={
        "audit": ("reports/audit", "the audit report"),
    },
)
