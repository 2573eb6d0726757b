"""`babelforge captions_translate`: read English captions as a stream, translate them n-best with NLLB.

Writes three shard directories into `paths.captions`, shard i of each covering the same
`captions.runner.shard_size` input captions:
  `source/`      caption_id, image, caption, source_lang + the input's other columns, untouched
  `references/`  caption_id, lang, text: the human translations the source ships with
  `hypotheses/`  caption_id, lang, hyp_rank, text, mt_score, source_truncated: every caption x target
                 language (source_truncated: the caption was longer than the model's input limit)
and `quarantine/` (the input's bad rows, see `babelforge.core.bad_rows`) with `input.json` (the counts).
Each shard is a Parquet file plus its manifest (`babelforge.core.shards`); a rerun redoes only
shards that are missing or stale (input rows, settings or model changed), so a killed run
loses at most the shards in flight. The translation runs on the `captions.runner` runner.
"""

from __future__ import annotations

import functools
from pathlib import Path

from babelforge.captions.layout import (
    HYPOTHESES_DIR,
    INPUT_SUMMARY_FILE,
    KEY,
    QUARANTINE_DIR,
    REFERENCES_DIR,
    SOURCE_DIR,
    load_registry,
    split_references,
    write_side_shards,
)
from babelforge.captions.readers import stream_captions
from babelforge.captions.settings import TranslateSettings as Config
from babelforge.captions.translate_worker import (
    TranslateWorker,
    for_every_node,
    language_codes,
    model_record,
    settings_key,
    shard_params,
)
from babelforge.core import shards
from babelforge.core.bad_rows import Quarantine, quarantine_table, summary_line
from babelforge.core.determinism import runtime
from babelforge.core.device import resolve_device
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import write_json
from babelforge.core.progress import info
from babelforge.core.provenance import provenance
from babelforge.core.rates import record_rate
from babelforge.core.ray_connect import check_ray_address
from babelforge.core.runners import run_sharded
from babelforge.core.stages import Stage
from babelforge.translation.nllb import resolve_compute_type


def write_quarantine(data: Path, plan, quarantine: Quarantine, shard_size: int) -> None:
    """`quarantine/` beside `source/`: shard i holds the bad input rows met while shard i's captions
    were read (an empty table where there were none). The counts go to `input.json` after translating."""
    for shard, rows in zip(plan, quarantine.by_shard(shard_size, len(plan))):
        table = quarantine_table(rows)  # the manifest's input hash covers the kept rows only: hash these too
        write_side_shards(data / QUARANTINE_DIR, shard, table, ["line", "source"], {"rows": shards.table_hash(table)})


def run(config: Config) -> int:

    registry = load_registry(config.registry)
    source_code, targets = language_codes(config, registry)
    source_lang = registry.get(config.input.source).key
    if not Path(config.paths.nllb_model).exists():  # before any shard is written
        raise BabelforgeError(f"{config.paths.nllb_model}: no NLLB model; run `babelforge nllb` first")
    if config.runner.runner == "ray":  # a wrong cluster address is one line before any shard is written
        check_ray_address(config.runner)
    data = Path(config.paths.captions)
    shard_size = config.runner.shard_size

    quarantine = Quarantine(config.input.policy, "captions")
    stream = stream_captions(config.input, registry, batch_rows=min(shard_size, 8192), quarantine=quarantine)

    # Pass 1 (no model): plan the shards and bring source/ and references/ up to date; the bad
    # rows found on the way (and too many of them stops here, before any translation).
    plan = []
    for shard, table in shards.iter_shards(stream, shard_size):
        plan.append(shard)
        source, references = split_references(table, source_lang)
        write_side_shards(data / SOURCE_DIR, shard, source, ["caption_id"], {"source_lang": source_lang})
        write_side_shards(data / REFERENCES_DIR, shard, references, ["caption_id", "lang"], {})
    if not plan:
        raise BabelforgeError(f"{config.input.path}: no captions ({summary_line('rows', quarantine.summary())})")
    write_quarantine(data, plan, quarantine, shard_size)
    for name in (SOURCE_DIR, REFERENCES_DIR, QUARANTINE_DIR):
        shards.remove_unplanned(data / name, plan)
    captions = plan[-1].stop
    info(f"captions_translate: input: {summary_line('rows', quarantine.summary())}")
    info(
        f"captions_translate: {captions} captions -> {len(targets)} languages, beam {config.beam_size}, "
        f"{config.num_hypotheses} hypotheses, {len(plan)} shards of {shard_size}"
    )

    # Pass 2: the pending shards' captions, read back from source/ (in caption id order, the
    # order a shard file has) by the runner: a reader per shard, so Ray reads them as it goes.
    def input_reader(shard):
        return functools.partial(shards.read_shard, data / SOURCE_DIR, shard.index, ("caption_id", "caption"))

    params = shard_params(config, source_code, targets)
    model = model_record(config)

    device = resolve_device(config.device, runtime="ctranslate2")
    record = provenance(
        "captions_translate",
        params={"profile": config.profile, "translate": params},
        models={"translator": {**model, "runtime": runtime(device, resolve_compute_type(config.compute_type, device))}},
    )
    stats = run_sharded(
        data / HYPOTHESES_DIR,
        plan,
        input_reader,
        TranslateWorker,
        (for_every_node(config), source_code, targets),
        config.runner,
        params_hash=shards.stable_hash(params),
        model_hash=shards.model_hash(model),
        sort_by=KEY,
        desc="captions_translate",
        provenance=record,
    )
    record_rate(
        data, "captions_translate", stats, config.runner, unit="captions", params_hash=settings_key(params, model)
    )
    summary = shards.digest(data / HYPOTHESES_DIR)
    truncated = truncated_captions(data / HYPOTHESES_DIR)
    write_json({**quarantine.summary(), "truncated": truncated}, data / INPUT_SUMMARY_FILE)
    info(
        f"captions_translate: {summary['rows']} hypotheses in {summary['shards']} shards "
        f"({stats.shards} made now) -> {data / HYPOTHESES_DIR}; {truncated} captions longer than the "
        "model's input were translated from their beginning (hypotheses' source_truncated)"
    )
    return 0


def truncated_captions(directory: Path) -> int:
    """Captions whose source was cut to the translator's input limit (any of their hypotheses says so)."""
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    table = shards.read(directory, ["caption_id"], filter=ds.field("source_truncated"))
    return len(pc.unique(table.column("caption_id")))


STAGE = Stage(
    "captions_translate",
    "translate English captions n-best with NLLB",
    run,
    config=Config,
    flags={
        "--registry": ("registry", "language registry TSV"),
        "--out": (
            "paths.captions",
            "folder of the caption artifacts: source/, references/, hypotheses/ (paths.captions); the runner: --set captions.runner.runner=ray",
        ),
    },
    deps=(
        "${paths.nllb_model}",
        "${captions.input.path}",
    ),
    languages=("mt-captions",),
    outs=(
        "${paths.captions}/source",
        "${paths.captions}/references",
        "${paths.captions}/hypotheses",
        "${paths.captions}/quarantine",
        "${paths.captions}/input.json",
    ),
    pinned=True,
    docs="docs/datasets/mt-captions.md",
    owns={
        "captions": ("data/captions", "MT caption artifacts"),
    },
)
