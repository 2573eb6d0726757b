"""`babelforge captions_kiwi_model`: build the tiny COMETKiwi checkpoint of the `sample` profile.

Random weights, a sentencepiece tokenizer trained on the captions and their human
translations (`captions.input`), COMET's checkpoint layout. Offline and deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass

from babelforge.captions.input_config import InputConfig
from babelforge.captions.qe import build_tiny_kiwi
from babelforge.captions.readers import read_captions
from babelforge.core.config import as_params, from_group, setting
from babelforge.core.languages import registry
from babelforge.core.progress import info
from babelforge.core.stages import Paths, Stage, stage_paths


@dataclass(frozen=True)
class Config:
    """The `captions.kiwi_tiny` group of params.yaml; writes `paths.kiwi_tiny`."""

    GROUP = "captions.kiwi_tiny"
    seed: int = setting(0, "seed of the random weights", minimum=0)
    vocab_size: int = setting(4000, "sentencepiece vocabulary size (a soft limit)", minimum=1)
    hidden_size: int = setting(32, "encoder hidden size", minimum=1)
    layers: int = setting(2, "encoder layers", minimum=1)
    heads: int = setting(2, "attention heads", minimum=1)
    input: InputConfig = from_group(InputConfig, "captions.input", "the caption set whose text trains the tokenizer")
    paths: Paths = stage_paths()


def run(config: Config) -> int:

    source = config.input
    captions = read_captions(source.format, source.path, source.source, registry()).limited(source.limit)
    corpus = [row["caption"] for row in captions.captions] + [text for _, _, text in captions.references]
    build_tiny_kiwi(config.paths.kiwi_tiny, corpus, **as_params(config))
    info(f"captions_kiwi_model: tiny unified_metric checkpoint -> {config.paths.kiwi_tiny}")
    return 0


STAGE = Stage(
    "captions_kiwi_model",
    "build the tiny COMETKiwi checkpoint (sample profile)",
    run,
    config=Config,
    flags={
        "--out": ("paths.kiwi_tiny", "checkpoint directory to write"),
    },
    deps=("${captions.input.path}",),
    languages=("mt-captions",),
    outs=("${paths.kiwi_tiny}",),
    pinned=True,
    docs="docs/datasets/mt-captions.md",
    owns={
        "kiwi_tiny": ("models/cometkiwi-tiny", "the tiny COMETKiwi checkpoint of the sample profile"),
    },
)
