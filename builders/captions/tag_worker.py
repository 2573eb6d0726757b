"""The per-shard work of `captions_tag`: the worker that tags hypothesis rows, and the schema of what it writes.

`TagWorker` is what a runner builds once per process (the local runner here, each Ray actor on its
node: Ray ships the class by this module's path) and calls with one chunk of rows at a time.
`config` is `captions_tag`'s Config (the `captions.tag` settings); `captions_plan` builds the same
worker for its warm-up.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from babelforge.captions import langcheck
from babelforge.captions.layout import load_registry
from babelforge.captions.qe import kiwi_scorer
from babelforge.captions.taggers import ATTRIBUTES, TAGGERS, TagContext, run_taggers
from babelforge.core import taggers
from babelforge.core.ray_runner import model_path


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

    def __init__(self, config, in_play: dict[str, str | None]):

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

    @staticmethod
    def model_paths(config, in_play: dict[str, str | None]) -> list[str]:
        """What a Ray actor checks on its node before loading (ray_runner.ChunkWorker): a local
        checkpoint (absolute: for_every_node); a Hub id is fetched on the node."""
        return [config.kiwi_model] if Path(config.kiwi_model).is_absolute() else []

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


def for_every_node(config):
    """The config the workers get: a local Kiwi checkpoint absolute, as every node must hold it."""
    return replace(config, kiwi_model=model_path(config.kiwi_model))
