"""The `mt-captions` dataset: machine-translated captions with quality estimates, one config
per language. Registered in builders/core/datasets.py; its audit section is builders/captions/audit.py."""

from __future__ import annotations

from babelforge.core.datasets import (
    AuditSection,
    DatasetSpec,
    DatasetTables,
    SectionPlot,
    Value,
    artifact_path,
    artifact_provenance,
    per_language_lazy,
)
from babelforge.core.determinism import MACHINE_LIMITATION
from babelforge.core.io import read_schema
from babelforge.core.licences import Licence

MT_CAPTIONS = DatasetSpec(
    name="mt-captions",
    pretty_name="Machine-translated captions with quality estimates",
    summary=(
        "English captions machine-translated with n-best NLLB-200, hypotheses in the wrong language or "
        "script dropped, the one COMETKiwi scores highest kept, with its score and per-language percentile."
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
    audit=AuditSection(
        key="captions",
        title="MT captions",
        artifact="captions/selected.parquet",
        reader="babelforge.captions.audit:captions",
        plot=SectionPlot(
            "kiwi.png", "COMETKiwi score distribution of the selected caption translations", "COMETKiwi score"
        ),
    ),
)


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
    )
