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

import argparse
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from babelforge.captions.readers import InputConfig, stream_captions
from babelforge.captions.settings import (
    HYPOTHESES_DIR,
    INPUT_SUMMARY_FILE,
    KEY,
    QUARANTINE_DIR,
    REFERENCES_DIR,
    SOURCE_DIR,
    directory_sha256,
    load_registry,
    split_references,
    write_side_shards,
)
from babelforge.captions.translate import hypotheses_table, translate_nbest
from babelforge.core import shards
from babelforge.core.bad_rows import Quarantine, quarantine_table, summary_line
from babelforge.core.config import Paths, from_group, hidden_alias, setting, stage_paths
from babelforge.core.determinism import runtime
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import write_json
from babelforge.core.progress import info
from babelforge.core.provenance import provenance
from babelforge.core.runners import RunnerConfig, record_rate, run_sharded
from babelforge.translation.nllb import NllbTranslator, resolve_compute_type, resolve_device


@dataclass(frozen=True)
class Config:
    """The `captions.translate` group of params.yaml (the paper: beam_size 100, num_hypotheses 25)."""

    GROUP = "captions.translate"
    beam_size: int = setting(8, "beam size (full: 100)")
    num_hypotheses: int = setting(8, "hypotheses kept per caption and language, best first (full: 25)")
    max_decoding_length: int = setting(48, "output tokens (full: 256; the random tiny model of sample rarely stops)")
    max_batch_size: int = setting(4096, "translator batch size (batch_type units)")
    batch_type: str = setting("tokens", "tokens or examples")
    device: str = setting("auto", "cuda when present, else cpu")
    compute_type: str = setting("auto", "int8 on CPU, int8_float16 on GPU")
    chunk_size: int = setting(512, "(text, target) pairs per translator call")
    threads: int = setting(0, "CPU threads per translator (one per worker); 0: CTranslate2's default")
    registry: str | None = setting(None, "language registry TSV (null: resources/languages.tsv)")
    input: InputConfig = from_group(InputConfig, "captions.input", "the English caption set (captions.input)")
    runner: RunnerConfig = from_group(RunnerConfig, "captions.runner", "how the shards run (captions.runner)")
    profile: str = from_group(str, "profile", "the build profile")
    paths: Paths = stage_paths()

    def __post_init__(self):
        if not 1 <= self.num_hypotheses <= self.beam_size:
            raise BabelforgeError(
                f"captions.translate: num_hypotheses ({self.num_hypotheses}) must be between 1 "
                f"and beam_size ({self.beam_size})"
            )

    def translator_kwargs(self) -> dict[str, Any]:
        return dict(
            device=self.device,
            compute_type=self.compute_type,
            beam_size=self.beam_size,
            num_hypotheses=self.num_hypotheses,
            max_batch_size=self.max_batch_size,
            batch_type=self.batch_type,
            max_decoding_length=self.max_decoding_length,
        )


def configure(parser: argparse.ArgumentParser) -> None:

    parser.add_argument(
        "--registry", dest="registry", metavar="FILE", help="language registry TSV (captions.translate.registry)"
    )
    parser.add_argument(
        "--out",
        dest="paths.captions",
        metavar="DIR",
        help="folder of the caption artifacts: source/, references/, hypotheses/ (paths.captions); "
        "the runner: --set captions.runner.runner=ray",
    )
    hidden_alias(parser, "--data-dir", "--out")


def make_translator(config: Config):
    """The NLLB translator for `captions.translate` (the one place that names the class)."""

    if not Path(config.paths.nllb_model).exists():
        raise BabelforgeError(f"{config.paths.nllb_model}: no NLLB model; run `babelforge nllb` first")
    return NllbTranslator(config.paths.nllb_model, **config.translator_kwargs(), intra_threads=config.threads)


class TranslateWorker:
    """The per-shard work: loads NLLB once, maps a chunk of caption rows to their hypothesis rows."""

    def __init__(self, config: Config, source_code: str, targets: dict[str, str]):
        self.config, self.source_code, self.targets = config, source_code, targets
        self.translator = make_translator(config)

    def __call__(self, captions):

        rows = translate_nbest(
            self.translator,
            list(zip(captions.column("caption_id").to_pylist(), captions.column("caption").to_pylist())),
            self.source_code,
            self.targets,
            chunk_size=self.config.chunk_size,
        )
        return hypotheses_table(rows)


def language_codes(config: Config, registry) -> tuple[str, dict[str, str]]:
    """(NLLB code of the source language, {target key: NLLB code}); an error for a language NLLB lacks."""
    targets = [registry.get(key).key for key in config.input.targets]
    source = registry.get(config.input.source).key
    if source in targets:
        raise BabelforgeError(f"captions.input.targets contains the source language {source}")
    codes = {}
    for key in [*targets, source]:
        language = registry.get(key)
        if not language.nllb:
            raise BabelforgeError(f"{key} has no NLLB code in the language registry: NLLB cannot translate it")
        codes[key] = language.nllb
    return codes.pop(source), dict(sorted(codes.items()))


def model_record(config: Config) -> dict[str, Any]:
    """What identifies the translator without loading it: its files' hashes and its settings
    (no hash where the folder is missing: the translator then says so when it loads)."""

    path = config.paths.nllb_model
    return {
        "model": path,
        "sha256": directory_sha256(path) if Path(path).exists() else None,
        **config.translator_kwargs(),
    }


def shard_params(config: Config, source_code: str, targets: dict[str, str]) -> dict[str, Any]:
    """Everything besides the input rows and the model that decides a hypotheses shard's bytes."""
    return {
        "source": source_code,
        "targets": targets,
        "chunk_size": config.chunk_size,
        "batch_size": config.runner.batch_size,
        "threads": config.threads,
    }


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

    device = resolve_device(config.device)
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
        (config, source_code, targets),
        config.runner,
        params_hash=shards.stable_hash(params),
        model_hash=shards.stable_hash(model),
        sort_by=KEY,
        desc="captions_translate",
        provenance=record,
    )
    record_rate(data, "captions_translate", stats, config.runner, unit="captions")
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
