"""The Babel-ImageNet datasets: the labels (`babel-imagenet`) and the translated prompts
(`babel-imagenet-prompts`). Registered in builders/core/datasets.py; the prompts' audit section is
builders/babel_imagenet/audit_section.py (the labels are the audit's own rows)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from babelforge.babel_imagenet.precision import Estimate
from babelforge.babel_imagenet.resource_groups import resource_group
from babelforge.babel_imagenet.reviews import REVIEW_SOURCE, labels_review_coverage
from babelforge.babel_imagenet.tables import PRECISION_COLUMNS
from babelforge.core.datasets import AuditSection, DatasetSpec, DatasetTables, LanguageView, per_language, read_artifact
from babelforge.core.determinism import MACHINE_LIMITATION
from babelforge.core.io import read_table
from babelforge.core.licences import Licence, SourceInfo
from babelforge.lexicon.dataset import imagenet_class_label
from babelforge.lexicon.licences import omw_sources, sense_source_info

# Reviews are files of this repository: they are under the project's licence (pyproject.toml).
REVIEW_LICENCE = Licence(
    "Apache-2.0 (babelforge label reviews)", "apache-2.0", "https://www.apache.org/licenses/LICENSE-2.0"
)
LABEL_COLUMNS = ("class_idx", "wnid", "label", "source", "is_duplicate", "p_correct")

LABELS = DatasetSpec(
    name="babel-imagenet",
    pretty_name="Babel-ImageNet labels",
    summary=(
        "ImageNet-1k class labels in many languages, built without machine translation: each class's "
        "WordNet 3.0 synset is mapped to its multilingual senses; senses equal to an English lemma and "
        "machine-translated senses are dropped, and the first remaining sense becomes the label. Each row is "
        "one class of one language: `class_idx` (ImageNet-1k index), `wnid`, `label`, `source` (which "
        "resource gave the sense; it decides the row's licence), `p_correct` (the estimated chance that the "
        "label is right: its source's learned precision in the language, moved by the class's other sources "
        "and the label's rule flags; 1 for a label a person reviewed)."
    ),
    # languages.parquet: the per-config label precision; it is written with labels.parquet, whose p_correct and
    # review columns change whenever the figure does, so the `data` dep (labels) also covers it
    artifacts=("labels", "languages", "omw"),
    read="babelforge.babel_imagenet.dataset:read_labels",
    task_categories=("zero-shot-image-classification", "image-classification"),
    citations=(
        "geigle-etal-2024-babel",
        "navigli-ponzetto-2012-babelnet",
        "bond-foster-2013-linking",
        "miller-1995-wordnet",
    ),
    source_licences="babelforge.babel_imagenet.dataset:label_source_licences",
    audit_notes="babelforge.babel_imagenet.dataset:label_audit_notes",
    limitations=(
        "Labels are chosen by rules from the sources' senses; unless a person reviewed them (see the review "
        "coverage below), a sense may be rare, archaic or too general for the class.",
        "Only labels are provided, not images: pair them with the ImageNet-1k validation set.",
    ),
    # the labels are what the audit checks row by row: no section reader, its slice is the audit's own counts
    audit=AuditSection(key="labels", title="Labels", artifact="labels", reader=None),
)

PROMPTS = DatasetSpec(
    name="babel-imagenet-prompts",
    pretty_name="Babel-ImageNet prompts",
    summary=(
        "The 80 CLIP prompt templates machine-translated into each label language with NLLB-200, "
        "with the class slot `{}` kept; `strategy` says how the slot survived translation, `fallback` "
        "marks prompts where it was appended instead."
    ),
    artifacts=("prompts",),
    read="babelforge.babel_imagenet.dataset:read_prompts",
    task_categories=("zero-shot-image-classification",),
    citations=("geigle-etal-2024-babel", "nllb-2022"),
    licences=(
        ("English templates", Licence("MIT (CLIP prompt templates)", "mit", "https://opensource.org/licenses/MIT")),
    ),
    limitations=(
        "Translations are machine output (NLLB-200, whose weights are CC-BY-NC-4.0); "
        "check the validity flags before use.",
        MACHINE_LIMITATION,
    ),
    machine_translated=(
        "`text` is machine translation: each English CLIP template translated by NLLB-200 (CTranslate2) with the "
        "`{}` class slot kept; the quality columns (`score`, `langid_*`, `script_share`, `length_ratio`) are "
        "automatic checks of it."
    ),
    audit=AuditSection(
        key="prompts", title="Prompts", artifact="prompts", reader="babelforge.babel_imagenet.audit_section:prompts"
    ),
)


def review_coverage_sentence(coverage: Mapping[str, Mapping[str, Any]]) -> str:
    """The card's statement of review coverage per language (resources/reviews/<lang>.tsv)."""
    reviewed = {lang: entry for lang, entry in coverage.items() if entry["reviewed"]}
    if not reviewed:
        return "No label has been reviewed by a person yet (resources/reviews/ holds no decision)."
    parts = [
        f"{lang} {entry['reviewed']} of {entry['classes']} classes ({100 * entry['reviewed_share']:.1f}%, "
        f"{entry['changed']} changed)"
        for lang, entry in sorted(reviewed.items())
    ]
    return (
        f"Reviewed by people in {len(reviewed)} of {len(coverage)} languages: "
        + "; ".join(parts)
        + ". Every other label is the rules' choice."
    )


def read_labels(paths) -> DatasetTables:

    labels, provenance = read_artifact(paths.labels, "labels")
    columns = [c for c in LABEL_COLUMNS if c in labels.columns]
    counts = labels.groupby("lang").size()
    n_duplicates = int(labels["is_duplicate"].sum()) if "is_duplicate" in labels.columns else 0
    sources = {
        lang: {str(s): int(n) for s, n in part["source"].value_counts().sort_index().items()}
        for lang, part in labels.groupby("lang")
    }
    return DatasetTables(
        per_language(labels, LABELS.split, columns),
        sources=sources,
        groups={lang: resource_group(int(n)) for lang, n in counts.items()},
        precision=label_precision_texts(paths.languages),
        provenance={paths.labels: provenance},
        limitations=(
            [
                f"{n_duplicates} rows share their label with another class of the same language "
                "(`is_duplicate`); such classes cannot be told apart by text alone."
            ]
            if n_duplicates
            else []
        )
        + [review_coverage_sentence(labels_review_coverage(paths.labels))],
        sort_by=("class_idx",),
        features={"class_idx": imagenet_class_label(labels)},
    )


def label_precision_texts(languages_path) -> dict[str, str]:
    """lang -> its expected share of correct labels with the interval and basis (languages.parquet,
    precision.py: `88.2 % [80.1-93.4] estimated`, `... measured (50 reviewed)`); {} for a languages
    table without them."""
    import pyarrow.parquet as pq

    if not Path(languages_path).exists() or not set(PRECISION_COLUMNS) <= set(pq.read_schema(languages_path).names):
        return {}
    table = read_table(languages_path, columns=["lang", *PRECISION_COLUMNS])
    return {
        row["lang"]: Estimate(
            row["label_precision"],
            row["label_precision_low"],
            row["label_precision_high"],
            row["label_precision_basis"],
            int(row["n_judged"]),
        ).text()
        for row in table.to_dict("records")
    }


def label_source_licences(paths, sources: Sequence[str]) -> list[SourceInfo]:
    """Licence of every label source: reviews are the project's, the rest the lexical source's.
    Raises ValueError naming a source no rule knows."""

    omw_dir = Path(paths.omw)
    omw = omw_sources(omw_dir) if omw_dir.is_dir() else {}
    return [
        review_source_info(source) if source.startswith(REVIEW_SOURCE) else sense_source_info(source, omw)
        for source in sources
    ]


def review_source_info(source: str) -> SourceInfo:
    reviewer = source[len(REVIEW_SOURCE) :].strip()
    if not reviewer:
        raise ValueError(f"source {source!r} names no reviewer; a reviewed label's source is review:<reviewer>")
    return SourceInfo(source, f"Human review by {reviewer} (resources/reviews)", REVIEW_LICENCE)


def label_audit_notes(audit: Mapping[str, Any]) -> list[str]:
    """Known limitations the audit measured on the labels."""
    if not audit.get("audited"):
        return []
    languages = audit.get("languages", {})
    low = sorted(lang for lang, entry in languages.items() if entry.get("group") == "very-low")
    items = [
        f"The audit counted {audit.get('errors', 0)} error rows and {audit.get('warnings', 0)} warning rows "
        f"over {len(languages)} languages (reports/audit/index.html of the build)."
    ]
    if low:
        items.append(
            f"{len(low)} languages have at most 100 classes (group very-low); "
            "their accuracy is not comparable to full 1,000-class languages."
        )
    return items


def read_prompts(paths) -> DatasetTables:
    table, provenance = read_artifact(paths.prompts, "prompts")
    columns = [c for c in table.columns if c != "lang"]
    return DatasetTables(
        per_language(table, PROMPTS.split, columns),
        provenance={paths.prompts: provenance},
        sort_by=tuple(c for c in ("prompt_set", "template_id") if c in columns),
    )


# The label languages: what the card, the prompts and zero-shot map (a language the labels stage kept).
LABEL_LANGUAGES = LanguageView(
    name="babel-imagenet", reads=("${paths.languages}",), keys="babelforge.babel_imagenet.dataset:label_languages"
)
PROMPT_LANGUAGES = LanguageView(
    name="babel-imagenet-prompts",
    reads=("${paths.languages}",),
    keys="babelforge.babel_imagenet.dataset:label_languages",
)


def label_languages(reads, params) -> list[str]:
    """The languages the labels stage kept (languages.parquet, a row each)."""
    return read_table(reads[0], columns=["lang"])["lang"].tolist()
