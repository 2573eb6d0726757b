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

import functools
from dataclasses import replace
from pathlib import Path

from babelforge.captions.layout import (
    ATTRIBUTES_DIR,
    HYPOTHESES_DIR,
    KEY,
    REFERENCES_DIR,
    SOURCE_DIR,
    flagged_by_language,
    load_registry,
    shard_inputs,
)
from babelforge.captions.qe import kiwi_scorer
from babelforge.captions.settings import TagSettings as Config
from babelforge.captions.tag_worker import TagWorker, attribute_schema, for_every_node, languages_in_play
from babelforge.captions.taggers import ATTRIBUTES, KIWI_TRUNCATED, TAGGERS
from babelforge.core import shards
from babelforge.core.config import as_params
from babelforge.core.determinism import runtime
from babelforge.core.device import resolve_device
from babelforge.core.errors import BabelforgeError
from babelforge.core.progress import info
from babelforge.core.provenance import provenance
from babelforge.core.rates import record_rate
from babelforge.core.ray_connect import check_ray_address
from babelforge.core.runners import run_sharded
from babelforge.core.shards import read_shard
from babelforge.core.stages import Stage


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

    if config.runner.runner == "ray":  # a wrong cluster address is one line in seconds, before COMETKiwi loads
        check_ray_address(config.runner)
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
        "kiwi": {**kiwi_record, "runtime": runtime(resolve_device(config.kiwi_device), "float32")},
        "langid": {"package": "langid", "languages": in_play},
    }
    record = provenance("captions_tag", params={"profile": config.profile, "tag": params}, models=models)
    runner = replace(config.runner, batch_size=config.batch_size)
    stats = run_sharded(
        data / ATTRIBUTES_DIR,
        plan,
        input_reader,
        TagWorker,
        # the local runner's worker finds the Kiwi loaded above by the same settings (kiwi_scorer)
        (for_every_node(config) if runner.runner == "ray" else config, in_play),
        runner,
        params_hash=shards.stable_hash(params),
        model_hash=shards.model_hash(kiwi_record),
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


STAGE = Stage(
    "captions_tag",
    "tag caption translations: langid, script, copy, repetition, chrF, COMETKiwi",
    run,
    config=Config,
    flags={
        "--out": (
            "paths.captions",
            "folder of the caption artifacts: reads hypotheses/, writes attributes/ (paths.captions); the runner: --set captions.runner.runner=ray",
        ),
    },
    deps=(
        "${paths.captions}/source",
        "${paths.captions}/references",
        "${paths.captions}/hypotheses",
        "${paths.kiwi_tiny}",
    ),
    languages=("mt-captions",),
    outs=("${paths.captions}/attributes",),
    pinned=True,
    docs="docs/datasets/mt-captions.md",
    taggers=tuple(TAGGERS),
)
