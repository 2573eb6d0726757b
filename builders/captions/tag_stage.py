"""`babelforge captions_tag`: score every hypothesis; write the `attributes/` shard directory.

One row per (caption_id, lang, hyp_rank) with the stored columns of every caption tagger
(`babelforge.captions.taggers`: langid, script, copy, repetition, chrF and COMETKiwi), in
shard i for hypotheses shard i. Shards run on the `captions.runner` runner; a rerun redoes
only missing or stale ones (their hypotheses, source or references changed, or the settings or
Kiwi model did). The Kiwi model is checked first, so a missing or gated model stops the stage
before any work. langid's "languages in play" are the source and target languages of
`captions.input`, the same set for every shard.
"""

from __future__ import annotations

import argparse
import functools
from dataclasses import dataclass, replace
from pathlib import Path

from babelforge.captions import langcheck
from babelforge.captions.qe import kiwi_scorer, pick_device
from babelforge.captions.readers import InputConfig
from babelforge.captions.settings import (
    ATTRIBUTES_DIR,
    HYPOTHESES_DIR,
    KEY,
    REFERENCES_DIR,
    SOURCE_DIR,
    flagged_by_language,
    load_registry,
    shard_inputs,
)
from babelforge.captions.taggers import ATTRIBUTES, KIWI_TRUNCATED, TAGGERS, TagContext, run_taggers
from babelforge.core import shards, taggers
from babelforge.core.config import Paths, as_params, from_group, hidden_alias, setting, stage_paths
from babelforge.core.determinism import runtime
from babelforge.core.errors import BabelforgeError
from babelforge.core.progress import info
from babelforge.core.provenance import provenance
from babelforge.core.runners import RunnerConfig, record_rate, run_sharded
from babelforge.core.shards import read_shard


@dataclass(frozen=True)
class Config:
    """The `captions.tag` group of params.yaml; reads and writes in `paths.captions`."""

    GROUP = "captions.tag"
    kiwi_model: str = setting(
        "models/cometkiwi-tiny",
        "COMETKiwi: a Hub id (full: Unbabel/wmt22-cometkiwi-da) or a local checkpoint directory",
    )
    kiwi_revision: str | None = setting(None, "Hub commit to pin (full)")
    kiwi_batch_size: int = setting(64, "pairs per COMETKiwi batch")
    kiwi_device: str = setting("auto", "cuda, cpu or auto (cuda when present)")
    kiwi_length_sorted: bool = setting(True, "batch by length (less padding); scores come back in input order")
    repeat_max_n: int = setting(4, "longest n-gram the repetition tagger looks for")
    batch_size: int = setting(
        100000, "hypotheses per worker call (full: 4096; captions.runner.batch_size counts captions)"
    )
    threads: int = setting(0, "torch CPU threads per worker; 0: torch's default")
    input: InputConfig = from_group(InputConfig, "captions.input", "the caption set: its languages are in play")
    runner: RunnerConfig = from_group(RunnerConfig, "captions.runner", "how the shards run (captions.runner)")
    profile: str = from_group(str, "profile", "the build profile")
    paths: Paths = stage_paths()


def configure(parser: argparse.ArgumentParser) -> None:

    parser.add_argument(
        "--out",
        dest="paths.captions",
        metavar="DIR",
        help="folder of the caption artifacts: reads hypotheses/, writes attributes/ (paths.captions); "
        "the runner: --set captions.runner.runner=ray",
    )
    hidden_alias(parser, "--data-dir", "--out")


def languages_in_play(source_lang: str, target_langs, registry) -> dict[str, str | None]:
    """Registry key -> langid code for the source and every target language."""
    return {key: registry.get(key).langid for key in sorted({source_lang, *target_langs})}


def attribute_schema():
    """The pyarrow schema of an `attributes/` shard: the key, then every stored tagger column."""
    import pyarrow as pa

    arrow = {float: pa.float64(), int: pa.int64(), bool: pa.bool_(), str: pa.string()}
    declared = {column: kind for name in TAGGERS for column, kind in taggers.get(name).stored_columns.items()}
    return pa.schema(
        [("caption_id", pa.string()), ("lang", pa.string()), ("hyp_rank", pa.int32())]
        + [(column, arrow[declared[column]]) for column in ATTRIBUTES]
    )


class TagWorker:
    """The per-shard work: loads COMETKiwi and langid once, tags a chunk of hypothesis rows that
    carry their English `source` and human `reference` (null where there is none)."""

    def __init__(self, config: Config, in_play: dict[str, str | None]):

        if config.threads:
            import torch

            torch.set_num_threads(config.threads)
        self.kiwi, _ = kiwi_scorer(
            config.kiwi_model,
            config.kiwi_revision,
            config.kiwi_batch_size,
            config.kiwi_device,
            config.kiwi_length_sorted,
        )
        registry = load_registry(None)
        self.identifier = langcheck.LanguageIdentifier(in_play) if any(in_play.values()) else None
        self.expected_scripts = {key: registry.get(key).expected_scripts for key in in_play}
        self.repeat_max_n = config.repeat_max_n

    def __call__(self, batch):
        import pyarrow as pa

        rows = batch.select(["caption_id", "lang", "hyp_rank", "text"]).to_pylist()
        ids, langs = batch.column("caption_id").to_pylist(), batch.column("lang").to_pylist()
        context = TagContext(
            sources=dict(zip(ids, batch.column("source").to_pylist())),
            expected_scripts=self.expected_scripts,
            identifier=self.identifier,
            references={
                (c, lang): t for c, lang, t in zip(ids, langs, batch.column("reference").to_pylist()) if t is not None
            },
            repeat_max_n=self.repeat_max_n,
            kiwi=self.kiwi,
        )
        columns = run_taggers(rows, context)
        schema = attribute_schema()
        arrays = [batch.column(name).cast(schema.field(name).type) for name in ("caption_id", "lang", "hyp_rank")]
        arrays += [pa.array(columns[column], schema.field(column).type, from_pandas=True) for column in ATTRIBUTES]
        return pa.Table.from_arrays(arrays, schema=schema)


def tag_inputs(data, index: int):
    """Hypotheses shard `index` with each row's English source and human reference (or null)."""
    import pyarrow as pa

    hypotheses = read_shard(data / HYPOTHESES_DIR, index, ["caption_id", "lang", "hyp_rank", "text"])
    source = read_shard(data / SOURCE_DIR, index, ["caption_id", "caption"])
    references = read_shard(data / REFERENCES_DIR, index, ["caption_id", "lang", "text"])
    captions = dict(zip(source.column("caption_id").to_pylist(), source.column("caption").to_pylist()))
    refs = {
        (c, lang): t for c, lang, t in zip(*(references.column(n).to_pylist() for n in ("caption_id", "lang", "text")))
    }
    ids, langs = hypotheses.column("caption_id").to_pylist(), hypotheses.column("lang").to_pylist()
    try:
        sources = [captions[caption_id] for caption_id in ids]
    except KeyError as missing:
        raise BabelforgeError(
            f"{data}: hypotheses of caption {missing} but no source row; rerun `babelforge captions_translate`"
        ) from None
    return hypotheses.append_column("source", pa.array(sources, pa.string())).append_column(
        "reference", pa.array([refs.get(key) for key in zip(ids, langs)], pa.string())
    )


def run(config: Config) -> int:

    # Loaded here first so a missing or gated model stops the stage before any shard; the local
    # runner's worker gets the same object back (kiwi_scorer keeps it per process).
    kiwi, kiwi_record = kiwi_scorer(
        config.kiwi_model, config.kiwi_revision, config.kiwi_batch_size, config.kiwi_device, config.kiwi_length_sorted
    )
    registry = load_registry(None)
    in_play = languages_in_play(
        registry.get(config.input.source).key, [registry.get(key).key for key in config.input.targets], registry
    )
    data = Path(config.paths.captions)
    plan = shard_inputs(data, [HYPOTHESES_DIR, SOURCE_DIR, REFERENCES_DIR])
    info(f"captions_tag: {plan[-1].stop} hypotheses in {len(plan)} shards, languages in play {', '.join(in_play)}")

    def input_reader(shard):
        return functools.partial(tag_inputs, data, shard.index)

    # the stored columns too: a tagger that gains a column (kiwi_v1's `truncated`) redoes the shards
    params = {**as_params(config), "in_play": in_play, "taggers": sorted(TAGGERS), "columns": list(ATTRIBUTES)}
    for key in ("kiwi_model", "kiwi_revision"):  # the model hash below covers what they name
        params.pop(key, None)
    models = {
        "kiwi": {**kiwi_record, "runtime": runtime(pick_device(config.kiwi_device), "float32")},
        "langid": {"package": "langid", "languages": in_play},
    }
    record = provenance("captions_tag", params={"profile": config.profile, "tag": params}, models=models)
    runner = replace(config.runner, batch_size=config.batch_size)
    stats = run_sharded(
        data / ATTRIBUTES_DIR,
        plan,
        input_reader,
        TagWorker,
        (config, in_play),
        runner,
        params_hash=shards.stable_hash(params),
        model_hash=shards.stable_hash(kiwi_record),
        sort_by=KEY,
        desc="captions_tag",
        provenance=record,
    )
    record_rate(data, "captions_tag", stats, runner, unit="hypotheses")
    info(
        f"captions_tag: {len(attribute_schema()) - len(KEY)} attribute columns, {stats.shards} shards made now "
        f"-> {data / ATTRIBUTES_DIR}"
    )
    cut = flagged_by_language(data / ATTRIBUTES_DIR, KIWI_TRUNCATED)
    per_language = ", ".join(f"{lang} {n}" for lang, n in cut.items()) or "none"
    info(
        f"captions_tag: {sum(cut.values())} (caption, hypothesis) pairs longer than the COMETKiwi encoder's "
        f"{kiwi.max_tokens} tokens were scored on their beginning ({KIWI_TRUNCATED}; per language: {per_language})"
    )
    return 0
