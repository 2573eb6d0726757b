"""`babelforge captions_select`: keep one hypothesis per caption and language; record quality.

Reads hypotheses + attributes (never recomputes a score) and the `captions.select` checks
(thresholds as data); writes `selected.parquet`, one row per (caption_id, lang) — with the
kept translation, its Kiwi score, the score's percentile within the language and the
bottom-25 % / top-75 % flags, or the reason nothing was kept — and `quality.json`
(per language counts, rejection reasons, mean Kiwi, chrF against human translations).
"""
from __future__ import annotations

import argparse
import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from builders.captions.select import (
    DEFAULT_CHECKS, KIWI_SCORE, SELECT_TAGGERS, choose, percentiles, quality_flags, with_text_tags,
)
from builders.core.config import Paths, setting, stage_paths
from builders.core.taggers import Thresholds

TAGGERS = SELECT_TAGGERS
BOTTOM_PERCENT = 25.0
QUALITY_FILE = "quality.json"
SELECTED_COLUMNS = (
    "caption_id", "lang", "text", "hyp_rank", "mt_score", "kiwi_score", "kiwi_percentile",
    "is_bottom_25", "is_top_75", "chrf", "n_hypotheses", "n_passed", "reason",
)


@dataclass(frozen=True)
class Config:
    """The `captions.select` group of params.yaml: the checks, as thresholds on attribute columns."""

    GROUP = "captions.select"
    default: dict[str, dict[str, Any] | None] = setting(
        DEFAULT_CHECKS, "rejection reason -> {attribute column: {min: x} | {max: x} | {equals: x}}, for every "
        "language; a hypothesis failing a condition is rejected for that reason; null turns a reason or bound off")
    languages: dict[str, dict[str, Any]] = setting(
        {}, "per-language overrides merged into `default`, e.g. {jpn_Jpan: {script: {script_v1__share: {min: 0.7}}}}")
    paths: Paths = stage_paths()

    @property
    def thresholds(self) -> Thresholds:
        return Thresholds(self.default, self.languages)


def configure(parser: argparse.ArgumentParser) -> None:
    from builders.core.config import hidden_alias

    parser.add_argument("--out", dest="paths.captions", metavar="DIR",
                        help="folder of the caption artifacts: reads the shard folders, writes selected.parquet and "
                             "quality.json (paths.captions)")
    hidden_alias(parser, "--data-dir", "--out")
    parser.add_argument("--metrics", dest="paths.metrics", metavar="DIR",
                        help="folder of the headline metrics; writes captions.json there (paths.metrics)")


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
        out.append({
            "caption_id": caption_id, "lang": lang, "text": best.get("text"), "hyp_rank": best.get("hyp_rank"),
            "mt_score": best.get("mt_score"), "kiwi_score": best.get(KIWI_SCORE),
            "chrf": best.get("chrf_v1__score"), "n_hypotheses": choice.n_hypotheses,
            "n_passed": choice.n_passed, "reason": choice.reason,
        })
    if quality:
        add_quality_flags(out)
    return out


def add_quality_flags(rows: list[dict[str, Any]], bottom_percent: float = BOTTOM_PERCENT) -> None:
    """Per language: percentile of each kept translation's Kiwi score, and the two flags."""
    by_lang: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        row.update(kiwi_percentile=None, is_bottom_25=False, is_top_75=False)
        score = row["kiwi_score"]
        if row["text"] is not None and score is not None and not math.isnan(score):
            by_lang[row["lang"]].append(row)
    for kept in by_lang.values():
        for row, percentile in zip(kept, percentiles([row["kiwi_score"] for row in kept])):
            bottom, top = quality_flags(percentile, bottom_percent)
            row.update(kiwi_percentile=percentile, is_bottom_25=bottom, is_top_75=top)


def _corpus_chrf(rows: Sequence[Mapping[str, Any]], lang: str, references: Mapping[tuple[str, str], str]):
    from builders.captions.chrf import corpus_chrf

    pairs = [(row["text"], references[(row["caption_id"], lang)]) for row in rows
             if (row["caption_id"], lang) in references]
    if not pairs:
        return None
    return round(corpus_chrf([hyp for hyp, _ in pairs], [ref for _, ref in pairs]), 4)


def summarise(
    rows: Sequence[Mapping[str, Any]],
    references: Mapping[tuple[str, str], str],
    top_hypotheses: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Per-language figures for quality.json.

    `rejections` counts, per check, the captions left without translation where that
    check failed at least one hypothesis. `chrf_corpus` is chrF of the kept translations
    against the human ones; `chrf_corpus_top_hypothesis` that of the translator's own best
    (hyp_rank 0) over all captions, the unfiltered baseline.
    """
    by_lang: dict[str, list] = defaultdict(list)
    for row in rows:
        by_lang[row["lang"]].append(row)
    top_by_lang: dict[str, list] = defaultdict(list)
    for row in top_hypotheses:
        top_by_lang[row["lang"]].append(row)
    summary = {}
    for lang, group in sorted(by_lang.items()):
        kept = [row for row in group if row["text"] is not None]
        reasons = Counter(check.split("=")[0] for row in group if row["reason"]
                          for check in row["reason"].removeprefix("rejected:").split(","))
        with_ref = [row for row in kept if (row["caption_id"], lang) in references]
        scores = [row["kiwi_score"] for row in kept if row["kiwi_score"] is not None and not math.isnan(row["kiwi_score"])]
        summary[lang] = {
            "n_captions": len(group),
            "n_selected": len(kept),
            "n_without_translation": len(group) - len(kept),
            "rejections": dict(sorted(reasons.items())),
            "kiwi_mean": round(sum(scores) / len(scores), 6) if scores else None,
            "n_with_reference": len(with_ref),
            "chrf_corpus": _corpus_chrf(kept, lang, references),
            "chrf_corpus_top_hypothesis": _corpus_chrf(top_by_lang.get(lang, []), lang, references),
        }
    return summary


def run(config: Config) -> int:
    from pathlib import Path

    import pandas as pd

    from builders.captions.settings import (
        ATTRIBUTES_DIR, HYPOTHESES_DIR, KEY, REFERENCES_DIR, SELECTED_FILE, SOURCE_DIR, shard_inputs,
    )
    from builders.core import shards, taggers
    from builders.core.config import as_params
    from builders.core.errors import BabelforgeError
    from builders.captions.select import headline
    from builders.core.io import write_json, write_table
    from builders.core.metrics import write_metrics
    from builders.core.progress import info, progress
    from builders.core.provenance import provenance

    data = Path(config.paths.captions)
    plan = shard_inputs(data, [HYPOTHESES_DIR, ATTRIBUTES_DIR, SOURCE_DIR, REFERENCES_DIR])
    selection_columns = [column for name in TAGGERS for column in taggers.get(name).stored_columns]
    attribute_columns = shards.dataset(data / ATTRIBUTES_DIR).schema.names
    hypothesis_columns = shards.dataset(data / HYPOTHESES_DIR).schema.names
    config.thresholds.check([*hypothesis_columns, *attribute_columns, *selection_columns], Config.GROUP)
    langs = sorted(set(shards.read(data / HYPOTHESES_DIR, columns=["lang"]).column("lang").unique().to_pylist()))

    # Shard by shard: a caption's hypotheses and attributes all lie in its shard, so the choice
    # is made there; only the chosen rows (one per caption and language) are kept.
    rows, top_hypotheses, sources, references = [], [], [], []
    for shard in progress(plan, desc="captions_select", total=len(plan), unit="shard"):
        def part(name):
            return pd.read_parquet(shards.parquet_path(data / name, shard.index))
        hypotheses, attributes = part(HYPOTHESES_DIR), part(ATTRIBUTES_DIR)
        source = part(SOURCE_DIR)
        scored = hypotheses.merge(attributes, on=KEY, how="left", validate="one_to_one")
        if len(attributes) != len(hypotheses) or scored[KIWI_SCORE].isna().any():
            raise BabelforgeError(f"{data / ATTRIBUTES_DIR}: {shard.name} does not match its hypotheses; "
                                  "rerun `babelforge captions_tag`")
        pairs = [(caption_id, lang) for lang in langs for caption_id in source["caption_id"]]
        rows += select_rows(scored.to_dict("records"), pairs, config.thresholds, quality=False)
        top_hypotheses += hypotheses[hypotheses["hyp_rank"] == 0].to_dict("records")
        sources.append(source)
        references.append(part(REFERENCES_DIR))
    # The order a single table gave (language, then caption id): percentiles and sums see it.
    rows.sort(key=lambda row: (row["lang"], row["caption_id"]))
    top_hypotheses.sort(key=lambda row: (row["caption_id"], row["lang"]))
    add_quality_flags(rows)
    source = pd.concat(sources, ignore_index=True)
    references = pd.concat(references, ignore_index=True)

    clashes = sorted(set(source.columns) & set(SELECTED_COLUMNS) - {"caption_id"})
    if clashes:
        raise BabelforgeError(f"input column(s) {', '.join(clashes)} clash with selected.parquet's own; rename them")
    selected = pd.DataFrame(rows, columns=list(SELECTED_COLUMNS)).astype({"hyp_rank": "Int32"})
    # The source row (image, English caption, any extra input column) rides along untouched.
    selected = selected.merge(source, on="caption_id", how="left")
    record = provenance("captions_select", params={"select": as_params(config)}, sources={
        name: shards.digest(data / name) for name in (HYPOTHESES_DIR, ATTRIBUTES_DIR, SOURCE_DIR, REFERENCES_DIR)})
    write_table(selected, data / SELECTED_FILE, sort_by=["lang", "caption_id"], provenance=record)
    refs = {(c, l): t for c, l, t in references[["caption_id", "lang", "text"]].itertuples(index=False)}
    summary = summarise(rows, refs, top_hypotheses)
    write_json(summary, data / QUALITY_FILE)
    write_metrics(headline(summary), config.paths.metrics, "captions")
    for lang, figures in summary.items():
        info(f"captions_select: {lang}: {figures['n_selected']}/{figures['n_captions']} kept, "
             f"kiwi mean {figures['kiwi_mean']}, chrF {figures['chrf_corpus']} (top hypothesis: "
             f"{figures['chrf_corpus_top_hypothesis']}), rejections {figures['rejections']}")
    return 0
