"""The `mt-captions` dataset: machine-translated captions with quality estimates, one config
per language. Registered in builders/core/datasets.py; its audit section is builders/captions/audit_section.py."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from babelforge.captions.formats.xtd import XTD_LANGUAGE_KEYS, read_caption_document
from babelforge.captions.input_config import InputConfig
from babelforge.core.config import load_config
from babelforge.core.datasets import (
    AuditSection,
    DatasetSpec,
    DatasetTables,
    LanguageView,
    SectionPlot,
    Value,
    artifact_path,
    artifact_provenance,
    per_language_lazy,
)
from babelforge.core.determinism import MACHINE_LIMITATION
from babelforge.core.io import read_schema
from babelforge.core.licences import Licence
from babelforge.core.taggers import Thresholds, parse_rules

MT_CAPTIONS = DatasetSpec(
    name="mt-captions",
    pretty_name="Machine-translated captions with quality estimates",
    summary=(
        "English captions machine-translated with n-best NLLB-200; per caption and language, of the hypotheses "
        "the selection checks leave, the one COMETKiwi scores highest is kept, with its score and per-language "
        "percentile."
    ),
    artifacts=("captions/selected.parquet",),
    read="babelforge.captions.dataset:read_captions",
    task_categories=("image-to-text", "text-to-image"),
    citations=("nllb-2022",),
    licences=(
        (
            "English source captions",
            Licence("CC BY 4.0 (XTD10 / COCO captions)", "cc-by-4.0", "https://creativecommons.org/licenses/by/4.0/"),
        ),
    ),
    limitations=(
        "Translations are machine output; use the Kiwi percentile columns to split by quality.",
        MACHINE_LIMITATION,
    ),
    machine_translated=(
        "`text` is machine translation of the English `caption`: n-best NLLB-200 hypotheses, checked for "
        "language and script, scored by COMETKiwi (reference-free quality estimation); the best kept."
    ),
    audit_notes="babelforge.captions.dataset:input_notes",
    audit=AuditSection(
        key="captions",
        title="MT captions",
        artifact="captions/selected.parquet",
        reader="babelforge.captions.audit_section:captions",
        overview=True,  # the input's rows read, kept, quarantined and truncated (captions_overview)
        plot=SectionPlot(
            "kiwi.png", "COMETKiwi score distribution of the selected caption translations", "COMETKiwi score"
        ),
    ),
)


# What the card says a hypothesis failing each check of `captions.select` is, in the order it lists
# them (the order of the checks); a reason not named here is shown by its name, after these.
CHECK_CLAIMS = {
    "empty": "empty",
    "langid": "in the wrong language (langid)",
    "script": "in the wrong script",
    "copy": "a copy of the English source",
    "repetition": "a decoder loop (a repeated word or letter run)",
    "kiwi": "scored below a COMETKiwi floor",
    "truncated": "cut to a model's input (the caption to the translator's, or the pair to the COMETKiwi encoder's)",
}
SELECT_GROUP = "captions.select"


def selection_notes(record: Mapping[str, Any]) -> list[str]:
    """The card's sentences on which hypotheses were dropped, from the `captions.select` settings
    selected.parquet records (`params.select`), never from what another profile would run: a
    check whose thresholds are all null is said to be off, so hypotheses it would drop may be kept."""

    select = (record.get("params") or {}).get("select")
    if not isinstance(select, Mapping):
        return ["selected.parquet does not record its selection checks: which hypotheses were dropped is unknown."]
    dropped, off = check_claims(Thresholds(dict(select.get("default") or {}), dict(select.get("languages") or {})))
    notes = [
        f"Hypotheses dropped before the choice (the `{SELECT_GROUP}` checks this build ran): {'; '.join(dropped)}."
        if dropped
        else f"No check dropped a hypothesis in this build: every `{SELECT_GROUP}` threshold is null."
    ]
    if off:
        notes.append(
            f"Checks off in this build (null thresholds), so such hypotheses may have been kept: {'; '.join(off)}."
        )
    return notes


def check_claims(thresholds: Thresholds) -> tuple[list[str], list[str]]:
    """(claims of the checks on by default, claims of those off), each naming the languages whose
    override turns it the other way."""

    on = {rule.reason for rule in parse_rules(thresholds.default, f"{SELECT_GROUP}.default")}
    by_language = {
        lang: {rule.reason for rule in thresholds.for_language(lang, SELECT_GROUP)}
        for lang in sorted(thresholds.languages)
    }
    named = set(thresholds.default) | {
        reason for override in thresholds.languages.values() for reason in override or {}
    }
    order = list(CHECK_CLAIMS)
    dropped, off = [], []
    for reason in sorted(named, key=lambda r: (order.index(r) if r in order else len(order), r)):
        claim = CHECK_CLAIMS.get(reason, f"failing `{reason}`")
        others = [lang for lang, active in by_language.items() if (reason in active) != (reason in on)]
        if others:
            claim += f" ({'off' if reason in on else 'on'} for {', '.join(others)})"
        (dropped if reason in on else off).append(claim)
    return dropped, off


def input_notes(audit: Mapping[str, Any]) -> list[str]:
    """The card's sentences on what became of the input's rows, from the audit's slice (its
    `overview`: quality.json's counts, builders/captions/audit_section.py): read, kept, quarantined per
    reason, left out, cut to the translator's input and cut to the COMETKiwi encoder's. Every count
    is stated, zeros included: nothing is dropped or cut without a number on the card."""

    overview = audit.get("overview") or {}
    counts = overview.get("input")
    if overview.get("status") != "built" or not isinstance(counts, Mapping):
        return [f"The input's row counts are not known to this card ({overview.get('status', 'no audit overview')})."]

    def listed(found: Mapping[str, int]) -> str:
        return ", ".join(f"{reason} {n:,}" for reason, n in found.items()) or "none"

    sentence = (
        f"Input: {counts['rows']:,} caption rows read, {counts['kept']:,} kept, {counts['quarantined']:,} "
        f"quarantined as bad rows ({listed(counts.get('reasons') or {})}; kept aside with file, line and reason "
        "in the build's `quarantine/`)"
    )
    if counts.get("excluded"):
        sentence += f", left out by the input format's rules: {listed(counts['excluded'])}"
    notes = [sentence + "."]
    truncated = counts.get("truncated")
    if truncated is not None:
        notes.append(
            f"{truncated:,} captions were longer than the translator's input limit and were translated from "
            "their beginning (the hypotheses' `source_truncated`)."
        )
    kiwi = overview.get("kiwi_truncated") or {}
    if kiwi.get("hypotheses") is not None:
        notes.append(
            f"{kiwi['hypotheses']:,} (caption, hypothesis) pairs were longer than the COMETKiwi encoder reads and "
            f"were scored on their beginning (`kiwi_v1__truncated`); {kiwi['selected']:,} of the kept "
            "translations carry such a score."
        )
    return notes


def read_captions(paths) -> DatasetTables:
    """One config per language, each read from selected.parquet only when the card writes it
    (the file holds every caption x language of a training-scale run)."""

    path = artifact_path(paths, MT_CAPTIONS.artifacts[0])
    provenance = artifact_provenance(path, "selected captions")
    columns = [c for c in read_schema(path).names if c != "lang"]
    # `reason` (why a caption kept no translation) is null wherever one was kept: typed, it
    # stays a string column even when every value is null
    features = {"reason": Value("string")} if "reason" in columns else {}
    return DatasetTables(
        per_language_lazy(path, MT_CAPTIONS.split, columns),
        provenance={str(path): provenance},
        sort_by=tuple(c for c in ("caption_id",) if c in columns),
        features=features,
        notes=selection_notes(provenance),
    )


# The languages the MT-caption stages map: the input's (its source, the references an XTD-layout file
# holds) and the targets. The evaluations' raw caption sets are a view of their own.
MT_CAPTION_LANGUAGES = LanguageView(
    name="mt-captions",
    reads=("${captions.input.path}",),
    keys="babelforge.captions.dataset:mt_caption_languages",
    params=("captions.input.format", "captions.input.source", "captions.input.targets"),
)
CAPTION_SET_LANGUAGES = LanguageView(
    name="caption-sets",
    reads=("data/raw/xtd/xtd.json", "data/raw/xtd/xflickrco.json"),
    keys="babelforge.captions.dataset:caption_set_languages",
)


def mt_caption_languages(reads, params) -> list[str]:
    source = load_config(InputConfig, params, "captions.input")
    found = caption_document_languages(reads) if source.format == "xtd" else []
    return sorted({source.source, *source.targets, *found})


def caption_set_languages(reads, params) -> list[str]:
    """The languages of XTD10 and xFlickrCO (the retrieval and CLIPScore evaluations read them raw)."""
    return caption_document_languages(reads)


def caption_document_languages(files) -> list[str]:
    """Registry keys of the language codes in XTD-layout caption files."""
    codes = {code for path in files for code in read_caption_document(Path(path), "the caption file")[1]}
    return sorted({XTD_LANGUAGE_KEYS.get(code, code) for code in codes})
