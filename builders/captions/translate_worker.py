"""The per-shard work of `captions_translate`: the worker that translates caption rows n-best, and
what identifies a hypotheses shard (the language codes, the settings and the model that decide its bytes).

`TranslateWorker` is what a runner builds once per process (the local runner here, each Ray actor on
its node: Ray ships the class by this module's path) and calls with one chunk of caption rows at a
time. `config` is `captions_translate`'s Config (the `captions.translate` settings); `captions_plan`
builds the same worker for its warm-up.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from babelforge.captions.translate import hypotheses_table, translate_nbest
from babelforge.core import shards
from babelforge.core.errors import BabelforgeError
from babelforge.core.model_identity import content_of, local_model_record
from babelforge.core.ray_runner import model_path
from babelforge.translation.nllb import NllbTranslator


def make_translator(config):
    """The NLLB translator for `captions.translate` (the one place that names the class)."""

    if not Path(config.paths.nllb_model).exists():
        raise BabelforgeError(f"{config.paths.nllb_model}: no NLLB model; run `babelforge nllb` first")
    return NllbTranslator(config.paths.nllb_model, **config.translator_kwargs(), intra_threads=config.threads)


class TranslateWorker:
    """The per-shard work: loads NLLB once, maps a chunk of caption rows to their hypothesis rows."""

    def __init__(self, config, source_code: str, targets: dict[str, str]):
        self.config, self.source_code, self.targets = config, source_code, targets
        self.translator = make_translator(config)

    @staticmethod
    def model_paths(config, source_code: str, targets: dict[str, str]) -> list[str]:
        """What a Ray actor checks on its node before loading (ray_runner.ChunkWorker)."""
        return [config.paths.nllb_model]

    def __call__(self, captions):

        rows = translate_nbest(
            self.translator,
            list(zip(captions.column("caption_id").to_pylist(), captions.column("caption").to_pylist())),
            self.source_code,
            self.targets,
            chunk_size=self.config.chunk_size,
        )
        return hypotheses_table(rows)


def for_every_node(config):
    """The config the workers get: the model folder absolute, as every node must hold it (a relative
    one would be looked up from wherever an actor's node was started)."""
    return replace(config, paths=replace(config.paths, nllb_model=model_path(config.paths.nllb_model)))


def language_codes(config, registry) -> tuple[str, dict[str, str]]:
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


def model_record(config) -> dict[str, Any]:
    """What identifies the translator without loading it: its folder's name and content hash
    (`local_model_record`, never the path as spelled) and its settings (no hash where the folder
    is missing: the translator then says so when it loads)."""

    return {**local_model_record(config.paths.nllb_model), **config.translator_kwargs()}


def settings_key(params: dict[str, Any], model: dict[str, Any]) -> str:
    """One hash of what a translate rate depends on (`shard_params`, `model_record`: targets, beam,
    hypotheses, the model): the rate a run records holds for a plan with the same key."""
    return shards.stable_hash({"params": params, "model": content_of(model)})


def shard_params(config, source_code: str, targets: dict[str, str]) -> dict[str, Any]:
    """Everything besides the input rows and the model that decides a hypotheses shard's bytes."""
    return {
        "source": source_code,
        "targets": targets,
        "chunk_size": config.chunk_size,
        "batch_size": config.runner.batch_size,
        "threads": config.threads,
    }
