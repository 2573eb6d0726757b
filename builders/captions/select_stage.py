"""`babelforge captions_select`: keep one hypothesis per caption and language; record quality.

Reads hypotheses + attributes (never recomputes a score) and the `captions.select` checks
(thresholds as data); writes `selected.parquet`, one row per (caption_id, lang) — with the
kept translation, its Kiwi score, the score's percentile within the language and the
bottom-25 % / top-75 % flags, or the reason nothing was kept — and `quality.json`
(per language counts, rejection reasons, mean Kiwi, chrF against human translations).

Memory follows the shard, not the input: a first pass chooses shard by shard and keeps only
what the figures need (counts, and per language the kept Kiwi scores, 8 bytes each, for exact
percentiles; chrF pairs only where a human reference exists); a second pass chooses again and
writes each shard's rows, with their percentiles over all shards, into the one Parquet file
(a row group per shard, rows in shard order, then language and caption id within a shard).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from babelforge.captions.layout import (
    ATTRIBUTES_DIR,
    HYPOTHESES_DIR,
    INPUT_SUMMARY_FILE,
    KEY,
    QUALITY_FILE,
    REFERENCES_DIR,
    SELECTED_FILE,
    SOURCE_DIR,
    flagged_by_language,
    shard_inputs,
)
from babelforge.captions.quality import QualityTally, add_quality_flags
from babelforge.captions.select import CHECKS, KIWI_SCORE, SELECT_TAGGERS, headline
from babelforge.captions.selected import SELECTED_COLUMNS, select_rows, selected_part, selected_schema
from babelforge.captions.taggers import KIWI_TRUNCATED
from babelforge.core import shards, taggers
from babelforge.core.config import as_params, from_group, setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_json, write_json, write_table_parts
from babelforge.core.metrics import write_metrics
from babelforge.core.progress import info, progress
from babelforge.core.provenance import provenance
from babelforge.core.stages import Paths, Stage, stage_paths
from babelforge.core.taggers import Thresholds

TAGGERS = SELECT_TAGGERS


@dataclass(frozen=True)
class Config:
    """The `captions.select` group of params.yaml: the checks, as thresholds on attribute columns."""

    GROUP = "captions.select"
    default: dict[str, dict[str, Any] | None] = setting(
        CHECKS,
        "rejection reason -> {attribute column: {min: x} | {max: x} | {equals: x}}, for every "
        "language; a hypothesis failing a condition is rejected for that reason; null turns a reason or bound off",
    )
    languages: dict[str, dict[str, Any]] = setting(
        {}, "per-language overrides merged into `default`, e.g. {jpn_Jpan: {script: {script_v1__share: {min: 0.7}}}}"
    )
    profile: str = from_group(str, "profile", "the build profile")
    paths: Paths = stage_paths()

    @property
    def thresholds(self) -> Thresholds:
        return Thresholds(self.default, self.languages)


def choose_shard(data, shard, langs: Sequence[str], thresholds: Thresholds):
    """One shard's choices: (rows without percentiles, its hyp_rank-0 hypotheses, its source
    rows, its references by (caption_id, lang)); one shard of each directory in memory."""
    import pandas as pd

    def part(name):
        return pd.read_parquet(shards.parquet_path(data / name, shard.index))

    hypotheses, attributes, source = part(HYPOTHESES_DIR), part(ATTRIBUTES_DIR), part(SOURCE_DIR)
    scored = hypotheses.merge(attributes, on=KEY, how="left", validate="one_to_one")
    if len(attributes) != len(hypotheses) or scored[KIWI_SCORE].isna().any():
        raise BabelforgeError(
            f"{data / ATTRIBUTES_DIR}: {shard.name} does not match its hypotheses; rerun `babelforge captions_tag`"
        )
    # a caption's hypotheses and attributes all lie in its shard, so the choice is made here
    pairs = [(caption_id, lang) for lang in langs for caption_id in source["caption_id"]]
    rows = select_rows(scored.to_dict("records"), pairs, thresholds, where=Config.GROUP, quality=False)
    top = hypotheses[hypotheses["hyp_rank"] == 0].to_dict("records")
    references = part(REFERENCES_DIR)
    refs = {(c, lang): t for c, lang, t in references[["caption_id", "lang", "text"]].itertuples(index=False)}
    return rows, top, source, refs


def run(config: Config) -> int:

    import pyarrow as pa

    data = Path(config.paths.captions)
    plan = shard_inputs(data, [HYPOTHESES_DIR, ATTRIBUTES_DIR, SOURCE_DIR, REFERENCES_DIR])
    selection_columns = [column for name in TAGGERS for column in taggers.get(name).stored_columns]
    attribute_columns = shards.dataset(data / ATTRIBUTES_DIR).schema.names
    if KIWI_TRUNCATED not in attribute_columns:  # tagged before the column existed
        raise BabelforgeError(f"{data / ATTRIBUTES_DIR}: no {KIWI_TRUNCATED} column; rerun `babelforge captions_tag`")
    hypothesis_columns = shards.dataset(data / HYPOTHESES_DIR).schema.names
    config.thresholds.check([*hypothesis_columns, *attribute_columns, *selection_columns], Config.GROUP)
    langs = sorted(
        set().union(
            *(
                shards.read_shard(data / HYPOTHESES_DIR, shard.index, ["lang"]).column("lang").unique().to_pylist()
                for shard in plan
            )
        )
    )
    source_schema = pa.unify_schemas([shards.read_shard(data / SOURCE_DIR, shard.index).schema for shard in plan])
    clashes = sorted(set(source_schema.names) & set(SELECTED_COLUMNS) - {"caption_id"})
    if clashes:
        raise BabelforgeError(f"input column(s) {', '.join(clashes)} clash with selected.parquet's own; rename them")
    schema = selected_schema(source_schema)

    tally = QualityTally()
    for shard in progress(plan, desc="captions_select: choose", total=len(plan), unit="shard"):
        rows, top, _, refs = choose_shard(data, shard, langs, config.thresholds)
        tally.add(rows, top, refs)
    ranks = tally.ranks()

    def parts():
        for shard in progress(plan, desc="captions_select: write", total=len(plan), unit="shard"):
            rows, _, source, _ = choose_shard(data, shard, langs, config.thresholds)
            add_quality_flags(rows, ranks)
            yield selected_part(rows, source, schema)

    record = provenance(
        "captions_select",
        params={"profile": config.profile, "select": as_params(config)},
        sources={
            name: shards.digest(data / name) for name in (HYPOTHESES_DIR, ATTRIBUTES_DIR, SOURCE_DIR, REFERENCES_DIR)
        },
    )
    write_table_parts(parts(), data / SELECTED_FILE, schema, provenance=record)
    summary = tally.summary(flagged_by_language(data / ATTRIBUTES_DIR, KIWI_TRUNCATED))
    if not (data / INPUT_SUMMARY_FILE).is_file():
        raise BabelforgeError(f"{data / INPUT_SUMMARY_FILE}: missing; rerun `babelforge captions_translate`")
    input_rows = read_json(data / INPUT_SUMMARY_FILE)
    write_json({"input": input_rows, "languages": summary}, data / QUALITY_FILE)
    write_metrics(headline(summary, input_rows), config.paths.metrics, "captions", profile=config.profile)
    for lang, figures in summary.items():
        info(
            f"captions_select: {lang}: {figures['n_selected']}/{figures['n_captions']} kept, "
            f"kiwi mean {figures['kiwi_mean']}, chrF {figures['chrf_corpus']} (top hypothesis: "
            f"{figures['chrf_corpus_top_hypothesis']}), rejections {figures['rejections']}, "
            f"Kiwi pairs cut {figures['n_kiwi_truncated']} ({figures['n_selected_kiwi_truncated']} kept)"
        )
    return 0


STAGE = Stage(
    "captions_select",
    "keep the best checked translation per caption; quality percentiles",
    run,
    config=Config,
    flags={
        "--out": (
            "paths.captions",
            "folder of the caption artifacts: reads the shard folders, writes selected.parquet and quality.json",
        ),
        "--metrics": ("paths.metrics", "folder of the headline metrics; writes captions.json there"),
    },
    deps=(
        "${paths.captions}/input.json",
        "${paths.captions}/source",
        "${paths.captions}/references",
        "${paths.captions}/hypotheses",
        "${paths.captions}/attributes",
    ),
    outs=(
        "${paths.captions}/selected.parquet",
        "${paths.captions}/quality.json",
    ),
    metrics=("${paths.metrics}/captions.json",),
    docs="docs/datasets/mt-captions.md",
    taggers=tuple(TAGGERS),
)
