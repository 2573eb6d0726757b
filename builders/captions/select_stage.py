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

import argparse
import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from babelforge.captions.chrf import corpus_chrf
from babelforge.captions.select import (
    DEFAULT_CHECKS,
    KIWI_SCORE,
    SELECT_TAGGERS,
    choose,
    headline,
    quality_flags,
    with_text_tags,
)
from babelforge.captions.settings import (
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
from babelforge.captions.taggers import KIWI_TRUNCATED
from babelforge.core import shards, taggers
from babelforge.core.config import Paths, as_params, from_group, hidden_alias, setting, stage_paths
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_json, write_json, write_table_parts
from babelforge.core.metrics import write_metrics
from babelforge.core.progress import info, progress
from babelforge.core.provenance import provenance
from babelforge.core.taggers import Thresholds

TAGGERS = SELECT_TAGGERS
BOTTOM_PERCENT = 25.0
SELECTED_COLUMNS = (
    "caption_id",
    "lang",
    "text",
    "hyp_rank",
    "mt_score",
    "kiwi_score",
    "kiwi_percentile",
    "is_bottom_25",
    "is_top_75",
    "chrf",
    "n_hypotheses",
    "n_passed",
    "reason",
)


@dataclass(frozen=True)
class Config:
    """The `captions.select` group of params.yaml: the checks, as thresholds on attribute columns."""

    GROUP = "captions.select"
    default: dict[str, dict[str, Any] | None] = setting(
        DEFAULT_CHECKS,
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


def configure(parser: argparse.ArgumentParser) -> None:

    parser.add_argument(
        "--out",
        dest="paths.captions",
        metavar="DIR",
        help="folder of the caption artifacts: reads the shard folders, writes selected.parquet and "
        "quality.json (paths.captions)",
    )
    hidden_alias(parser, "--data-dir", "--out")
    parser.add_argument(
        "--metrics",
        dest="paths.metrics",
        metavar="DIR",
        help="folder of the headline metrics; writes captions.json there (paths.metrics)",
    )


def select_rows(
    scored: Sequence[Mapping[str, Any]],
    pairs: Sequence[tuple[str, str]],
    thresholds: Thresholds,
    quality: bool = True,
) -> list[dict[str, Any]]:
    """One row per (caption_id, lang) in `pairs`, from scored hypothesis rows (pure).

    `scored` rows hold the hypothesis (`caption_id, lang, hyp_rank, text, mt_score`) and
    its attribute columns; a pair without any hypothesis gets reason `no_hypotheses`.
    `quality=False` leaves out the per-language percentiles (`add_quality_flags`), for rows
    chosen shard by shard whose percentiles are taken over all shards at the end.
    """
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for row in with_text_tags(scored):
        groups[(row["caption_id"], row["lang"])].append(row)
    rules = {lang: thresholds.for_language(lang, Config.GROUP) for lang in sorted({lang for _, lang in pairs})}
    out = []
    for caption_id, lang in pairs:
        choice = choose(groups.get((caption_id, lang), []), rules[lang])
        best = choice.best or {}
        out.append(
            {
                "caption_id": caption_id,
                "lang": lang,
                "text": best.get("text"),
                "hyp_rank": best.get("hyp_rank"),
                "mt_score": best.get("mt_score"),
                "kiwi_score": best.get(KIWI_SCORE),
                "chrf": best.get("chrf_v1__score"),
                "n_hypotheses": choice.n_hypotheses,
                "n_passed": choice.n_passed,
                "reason": choice.reason,
                # not a column of selected.parquet: quality.json counts the kept scores of a cut pair
                "kiwi_truncated": best.get(KIWI_TRUNCATED),
            }
        )
    if quality:
        add_quality_flags(out)
    return out


def add_quality_flags(
    rows: list[dict[str, Any]], ranks: Mapping[str, Any] | None = None, bottom_percent: float = BOTTOM_PERCENT
) -> None:
    """Per language: percentile of each kept translation's Kiwi score, and the two flags.

    `ranks` holds each language's kept scores over all shards, sorted (`QualityTally.ranks`);
    without it, the percentiles are taken within `rows`."""

    if ranks is None:
        tally = QualityTally()
        tally.add(rows, (), {})
        ranks = tally.ranks()
    for row in rows:
        row.update(kiwi_percentile=None, is_bottom_25=False, is_top_75=False)
        if _kiwi(row) is not None:
            ordered = ranks[row["lang"]]
            # what select.percentiles computes: 100 * (scores strictly below) / n
            percentile = 100.0 * int(np.searchsorted(ordered, row["kiwi_score"], side="left")) / len(ordered)
            bottom, top = quality_flags(percentile, bottom_percent)
            row.update(kiwi_percentile=percentile, is_bottom_25=bottom, is_top_75=top)


def _kiwi(row: Mapping[str, Any]) -> float | None:
    """The Kiwi score of a kept translation, or None (nothing kept, or no score)."""
    score = row["kiwi_score"]
    if row["text"] is None or score is None or math.isnan(score):
        return None
    return score


class QualityTally:
    """What quality.json and the percentiles need, gathered shard by shard: per language the
    counts and rejection reasons, the kept Kiwi scores (8 bytes each) and chrF pairs (caption
    id, translation, human reference) only where a reference exists."""

    def __init__(self):
        self.captions: Counter = Counter()
        self.selected: Counter = Counter()
        self.selected_kiwi_truncated: Counter = Counter()
        self.rejections: dict[str, Counter] = defaultdict(Counter)
        self.scores: dict[str, list] = defaultdict(list)
        self.kept_pairs: dict[str, list] = defaultdict(list)
        self.top_pairs: dict[str, list] = defaultdict(list)

    def add(
        self,
        rows: Sequence[Mapping[str, Any]],
        top_hypotheses: Sequence[Mapping[str, Any]],
        references: Mapping[tuple[str, str], str],
    ) -> None:
        """One shard: its chosen rows, its translator-best hypotheses (hyp_rank 0) and its human
        references by (caption_id, lang)."""

        scores: dict[str, list] = defaultdict(list)
        for row in rows:
            lang = row["lang"]
            self.captions[lang] += 1
            if row["reason"]:
                self.rejections[lang].update(
                    check.split("=")[0] for check in row["reason"].removeprefix("rejected:").split(",")
                )
            if row["text"] is None:
                continue
            self.selected[lang] += 1
            if row.get("kiwi_truncated"):
                self.selected_kiwi_truncated[lang] += 1
            if _kiwi(row) is not None:
                scores[lang].append(row["kiwi_score"])
            reference = references.get((row["caption_id"], lang))
            if reference is not None:
                self.kept_pairs[lang].append((row["caption_id"], row["text"], reference))
        for lang, values in scores.items():
            self.scores[lang].append(np.asarray(values, dtype=np.float64))
        for row in top_hypotheses:
            reference = references.get((row["caption_id"], row["lang"]))
            if reference is not None:
                self.top_pairs[row["lang"]].append((row["caption_id"], row["text"], reference))

    def ranks(self) -> dict[str, Any]:
        """Each language's kept Kiwi scores over all shards, sorted (for percentiles)."""

        return {
            lang: np.sort(np.concatenate(self.scores[lang])) if self.scores.get(lang) else np.zeros(0)
            for lang in self.captions
        }

    def summary(self, kiwi_truncated: Mapping[str, int] | None = None) -> dict[str, Any]:
        """Per-language figures for quality.json; `kiwi_truncated`: {lang: hypotheses whose (source,
        hypothesis) pair was longer than the Kiwi encoder reads} (attributes' kiwi_v1__truncated).

        `rejections` counts, per check, the captions left without translation where that
        check failed at least one hypothesis. `chrf_corpus` is chrF of the kept translations
        against the human ones; `chrf_corpus_top_hypothesis` that of the translator's own best
        (hyp_rank 0) over all captions, the unfiltered baseline. The mean Kiwi score is an
        exactly rounded sum (`math.fsum`): the same whatever the shard order. `n_kiwi_truncated`
        counts the hypotheses scored on the beginning of their pair, `n_selected_kiwi_truncated`
        the kept translations among them.
        """
        kiwi_truncated = kiwi_truncated or {}
        summary = {}
        for lang in sorted(self.captions):
            parts = self.scores.get(lang, [])
            n_scores = sum(len(part) for part in parts)
            # exactly rounded, part by part (no list of every score as Python floats)
            total = math.fsum(value for part in parts for value in part.tolist())
            summary[lang] = {
                "n_captions": self.captions[lang],
                "n_selected": self.selected[lang],
                "n_without_translation": self.captions[lang] - self.selected[lang],
                "rejections": dict(sorted(self.rejections[lang].items())),
                "kiwi_mean": round(total / n_scores, 6) if n_scores else None,
                "n_kiwi_truncated": kiwi_truncated.get(lang, 0),
                "n_selected_kiwi_truncated": self.selected_kiwi_truncated[lang],
                "n_with_reference": len(self.kept_pairs[lang]),
                "chrf_corpus": _corpus_chrf(self.kept_pairs[lang]),
                "chrf_corpus_top_hypothesis": _corpus_chrf(self.top_pairs[lang]),
            }
        return summary


def _corpus_chrf(pairs: Sequence[tuple[str, str, str]]):
    """Corpus chrF of (caption id, translation, reference) triples, in caption id order."""

    if not pairs:
        return None
    ordered = sorted(pairs)
    return round(corpus_chrf([hyp for _, hyp, _ in ordered], [ref for _, _, ref in ordered]), 4)


def selected_schema(source_schema):
    """The Arrow schema of selected.parquet: its own columns, then the source rows' other
    columns (fixed types, so every shard's row group has the same, whatever its nulls)."""
    import pyarrow as pa

    text, number, flag, count = pa.large_string(), pa.float64(), pa.bool_(), pa.int64()
    own = {
        "caption_id": text,
        "lang": text,
        "text": text,
        "hyp_rank": pa.int32(),
        "mt_score": number,
        "kiwi_score": number,
        "kiwi_percentile": number,
        "is_bottom_25": flag,
        "is_top_75": flag,
        "chrf": number,
        "n_hypotheses": count,
        "n_passed": count,
        "reason": text,
    }
    fields = [pa.field(name, own[name]) for name in SELECTED_COLUMNS]
    for field in source_schema:
        if field.name != "caption_id":
            kind = pa.large_string() if pa.types.is_string(field.type) else field.type
            fields.append(pa.field(field.name, kind))
    return pa.schema(fields)


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
    rows = select_rows(scored.to_dict("records"), pairs, thresholds, quality=False)
    top = hypotheses[hypotheses["hyp_rank"] == 0].to_dict("records")
    references = part(REFERENCES_DIR)
    refs = {(c, lang): t for c, lang, t in references[["caption_id", "lang", "text"]].itertuples(index=False)}
    return rows, top, source, refs


def selected_part(rows: list[dict[str, Any]], source, schema):
    """A shard's rows of selected.parquet as an Arrow table of `schema`: the chosen rows with
    the source row (image, English caption, any extra input column) riding along untouched."""
    import pandas as pd
    import pyarrow as pa

    selected = pd.DataFrame(rows, columns=list(SELECTED_COLUMNS)).astype({"hyp_rank": "Int32"})
    selected = selected.merge(source, on="caption_id", how="left").sort_values(["lang", "caption_id"], kind="stable")
    return pa.Table.from_pandas(selected, preserve_index=False).select(schema.names).cast(schema)


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
