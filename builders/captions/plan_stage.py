"""`babelforge captions_plan`: what `captions_translate` + `captions_tag` would do, before doing it.

Streams the caption input once (no model) and prints the shards (and how many are already
current), the (caption, language) pairs, the hypotheses, the expected output size and a time
estimate. Rates come from the last run (`<paths.captions>/.rates/`, written by the two stages)
or, when there is none, from a short warm-up: the first `warmup` captions translated and tagged with the configured models (model loading not counted).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from babelforge.captions.layout import ATTRIBUTES_DIR, HYPOTHESES_DIR, load_registry
from babelforge.captions.readers import stream_captions
from babelforge.captions.settings import TagSettings as TagConfig
from babelforge.captions.settings import TranslateSettings as TranslateConfig
from babelforge.captions.tag_worker import TagWorker, attribute_schema, languages_in_play
from babelforge.captions.translate_worker import (
    TranslateWorker,
    language_codes,
    model_record,
    settings_key,
    shard_params,
)
from babelforge.core import shards
from babelforge.core.bad_rows import Quarantine, summary_line
from babelforge.core.config import from_group, setting
from babelforge.core.io import write_table
from babelforge.core.progress import format_seconds
from babelforge.core.rates import measured_rate
from babelforge.core.stages import Stage


@dataclass(frozen=True)
class Config:
    """The `captions.plan` group of params.yaml (the stages' own groups are read as they are)."""

    GROUP = "captions.plan"
    warmup: int = setting(20, "captions translated and tagged to measure rates when no run has recorded any", minimum=1)
    translate: TranslateConfig = from_group(TranslateConfig, "captions.translate", "the translate stage's settings")
    tag: TagConfig = from_group(TagConfig, "captions.tag", "the tag stage's settings")


def configure(parser: argparse.ArgumentParser) -> None:
    """No flags of its own: `--set captions.plan.warmup=N`, `--set captions.runner.runner=ray`, ..."""


def estimate(
    captions: int,
    targets: int,
    hypotheses_per_pair: float,
    translate_rate: float,
    tag_rate: float,
    bytes_per_hypothesis: float,
    bytes_per_attribute: float,
    workers: int = 1,
) -> dict[str, float]:
    """Pairs, hypotheses, bytes and seconds of a run (pure). Rates are per worker, per second:
    captions translated into every target, and hypotheses tagged."""
    pairs = captions * targets
    hypotheses = pairs * hypotheses_per_pair
    return {
        "pairs": pairs,
        "hypotheses": hypotheses,
        "hypotheses_bytes": hypotheses * bytes_per_hypothesis,
        "attributes_bytes": hypotheses * bytes_per_attribute,
        "translate_seconds": captions / translate_rate / workers,
        "tag_seconds": hypotheses / tag_rate / workers,
    }


def shard_bytes_per_row(directory) -> float | None:
    """Mean Parquet bytes per row over a shard directory's committed shards, or None."""

    total = rows = 0
    for index in shards.listed_shards(directory):
        manifest = shards.read_manifest(directory, index)
        path = shards.parquet_path(directory, index)
        if manifest and path.is_file() and manifest.rows:
            total += path.stat().st_size
            rows += manifest.rows
    return total / rows if rows else None


def rate_applies(recorded: dict, key: str) -> bool:
    """True when a recorded translate rate was measured with these settings (`settings_key`: targets,
    beam, hypotheses, model); a run recorded before rates named their settings never applies."""
    return recorded.get("params_hash") == key


def warm_up(config: Config, registry, source_code: str, targets: dict[str, str], in_play) -> dict[str, Any]:
    """Translate and tag the first `warmup` captions here; their rates and bytes per row."""

    import pyarrow as pa

    limited = replace(config.translate.input, limit=config.warmup)
    captions = pa.concat_tables(list(stream_captions(limited, registry))).select(["caption_id", "caption"])
    translate = TranslateWorker(config.translate, source_code, targets)
    began = time.monotonic()
    hypotheses = translate(captions)
    translate_seconds = time.monotonic() - began
    sources = dict(zip(captions.column("caption_id").to_pylist(), captions.column("caption").to_pylist()))
    inputs = (
        hypotheses.select(["caption_id", "lang", "hyp_rank", "text"])
        .append_column(
            "source", pa.array([sources[c] for c in hypotheses.column("caption_id").to_pylist()], pa.string())
        )
        .append_column("reference", pa.nulls(hypotheses.num_rows, pa.string()))
    )
    tag = TagWorker(config.tag, in_play)
    began = time.monotonic()
    attributes = tag(inputs) if hypotheses.num_rows else pa.Table.from_pylist([], schema=attribute_schema())
    tag_seconds = time.monotonic() - began
    with tempfile.TemporaryDirectory() as tmp:
        sizes = {}
        for name, table in (("hypotheses", hypotheses), ("attributes", attributes)):
            path = write_table(table, Path(tmp) / f"{name}.parquet")
            sizes[name] = path.stat().st_size / max(table.num_rows, 1)
    return {
        "translate_rate": captions.num_rows / max(translate_seconds, 1e-9),
        "tag_rate": hypotheses.num_rows / max(tag_seconds, 1e-9),
        "hypotheses_per_pair": hypotheses.num_rows / max(captions.num_rows * len(targets), 1),
        "bytes_per_hypothesis": sizes["hypotheses"],
        "bytes_per_attribute": sizes["attributes"],
        "captions": captions.num_rows,
    }


def run(config: Config) -> int:

    translate = config.translate
    runner = translate.runner
    registry = load_registry(translate.registry)
    source_code, targets = language_codes(translate, registry)
    in_play = languages_in_play(registry.get(translate.input.source).key, list(targets), registry)
    data = Path(translate.paths.captions)

    quarantine = Quarantine(translate.input.policy, "captions")
    stream = stream_captions(translate.input, registry, batch_rows=min(runner.shard_size, 8192), quarantine=quarantine)
    plan = shards.plan_shards(stream, runner.shard_size)
    captions = plan[-1].stop if plan else 0
    todo = plan
    params, model = shard_params(translate, source_code, targets), model_record(translate)
    if Path(translate.paths.nllb_model).exists():
        todo = shards.pending_shards(data / HYPOTHESES_DIR, plan, shards.stable_hash(params), shards.stable_hash(model))
    todo_captions = sum(shard.rows for shard in todo)

    translated, tagged = measured_rate(data, "captions_translate"), measured_rate(data, "captions_tag")
    measured = {}
    # a recorded rate holds for the settings it ran with (targets, beam, hypotheses): else a warm-up
    if translated and tagged and rate_applies(translated, settings_key(params, model)):

        def per_worker(rate: dict) -> float:
            # local: the rate after the first shard (model load left out); ray finishes shards in bursts,
            # so there the whole run's rate
            steady = rate.get("steady_rows_in_per_second") if rate["runner"] == "local" else None
            return (steady or rate["rows_in_per_second"]) / rate["concurrency"]

        measured = {
            "translate_rate": per_worker(translated),
            "tag_rate": per_worker(tagged),
            "hypotheses_per_pair": translated["rows_out_per_input_row"] / len(targets),
            "source": f"measured by the last {translated['runner']} run",
        }
    else:
        warm = warm_up(config, registry, source_code, targets, in_play)
        measured = {**warm, "source": f"a warm-up of {warm['captions']} captions"}
    per_hypothesis = shard_bytes_per_row(data / HYPOTHESES_DIR) or measured.get("bytes_per_hypothesis", 0.0)
    per_attribute = shard_bytes_per_row(data / ATTRIBUTES_DIR) or measured.get("bytes_per_attribute", 0.0)
    workers = runner.concurrency if runner.runner == "ray" else 1
    whole = estimate(
        captions,
        len(targets),
        measured["hypotheses_per_pair"],
        measured["translate_rate"],
        measured["tag_rate"],
        per_hypothesis,
        per_attribute,
        workers,
    )
    left = estimate(
        todo_captions,
        len(targets),
        measured["hypotheses_per_pair"],
        measured["translate_rate"],
        measured["tag_rate"],
        per_hypothesis,
        per_attribute,
        workers,
    )

    def size(n: float) -> str:
        for unit in ("B", "KB", "MB", "GB", "TB"):
            if n < 1000 or unit == "TB":
                return f"{n:,.1f} {unit}"
            n /= 1000
        return ""

    lines = [
        f"captions_plan: {translate.input.path} ({translate.input.format}), runner {runner.runner}"
        + (f" with {workers} actors" if runner.runner == "ray" else ""),
        f"  captions        {captions:,}",
        f"  input rows      {summary_line('rows', quarantine.summary())} (on_bad_row {translate.input.on_bad_row})",
        f"  shards          {len(plan):,} of up to {runner.shard_size:,} captions "
        f"({len(plan) - len(todo):,} current, {len(todo):,} to translate)",
        f"  pairs           {whole['pairs']:,} ({len(targets)} target languages)",
        f"  hypotheses      {whole['hypotheses']:,.0f} ({measured['hypotheses_per_pair']:.2f} per pair, "
        f"num_hypotheses {translate.num_hypotheses})",
        f"  output size     {size(whole['hypotheses_bytes'])} hypotheses + {size(whole['attributes_bytes'])} "
        f"attributes ({per_hypothesis:.0f} + {per_attribute:.0f} bytes per hypothesis)",
        f"  rates           {measured['translate_rate']:,.2f} captions/s translated, {measured['tag_rate']:,.1f} "
        f"hypotheses/s tagged per worker ({measured['source']})",
        f"  time            translate {format_seconds(left['translate_seconds'])}, tag "
        f"{format_seconds(left['tag_seconds'])} for the {len(todo):,} shards to do "
        f"(all: {format_seconds(whole['translate_seconds'] + whole['tag_seconds'])})",
    ]
    print("\n".join(lines))
    return 0


STAGE = Stage(
    "captions_plan",
    "before captions_translate/tag: shards, pairs, hypotheses, output size, time",
    run,
    config=Config,
    configure=configure,
    tool=True,
    docs="docs/datasets/mt-captions.md",
)
