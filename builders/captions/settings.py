"""The settings of the caption stages that other commands read too (`captions_plan` estimates a run
from them): `captions.translate` and `captions.tag`, declared once here, the stages' Configs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from babelforge.captions.input_config import InputConfig
from babelforge.core.config import from_group, setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.runner_config import RunnerConfig
from babelforge.core.stages import Paths, stage_paths


@dataclass(frozen=True)
class TranslateSettings:
    """The `captions.translate` group of params.yaml (the paper: beam_size 100, num_hypotheses 25)."""

    GROUP = "captions.translate"
    beam_size: int = setting({"sample": 8, "full": 100}, "beam size (the paper: 100)", minimum=1)
    num_hypotheses: int = setting(
        {"sample": 8, "full": 25}, "hypotheses kept per caption and language, best first (the paper: 25)", minimum=1
    )
    max_decoding_length: int = setting(
        {"sample": 48, "full": 256}, "output tokens (the random tiny model of sample rarely stops by itself)", minimum=1
    )
    max_batch_size: int = setting(4096, "translator batch size (batch_type units)", minimum=1)
    batch_type: str = setting("tokens", "tokens or examples")
    device: str = setting("auto", "cuda when present, else cpu")
    compute_type: str = setting("auto", "int8 on CPU, int8_float16 on GPU")
    chunk_size: int = setting(512, "(text, target) pairs per translator call", minimum=1)
    threads: int = setting(0, "CPU threads per translator (one per worker); 0: CTranslate2's default", minimum=0)
    registry: str | None = setting(None, "language registry TSV (null: resources/languages.tsv)", metavar="FILE")
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


@dataclass(frozen=True)
class TagSettings:
    """The `captions.tag` group of params.yaml; reads and writes in `paths.captions`."""

    GROUP = "captions.tag"
    kiwi_model: str = setting(
        {"sample": "models/cometkiwi-tiny", "full": "Unbabel/wmt22-cometkiwi-da"},
        "COMETKiwi: a Hub id or a local checkpoint directory",
    )
    kiwi_revision: str | None = setting(None, "Hub commit to pin (full)")
    kiwi_batch_size: int = setting({"sample": 64, "full": 32}, "pairs per COMETKiwi batch", minimum=1)
    kiwi_device: str = setting("auto", "cuda, cpu or auto (cuda when present)")
    kiwi_length_sorted: bool = setting(True, "batch by length (less padding); scores come back in input order")
    repeat_max_n: int = setting(4, "longest n-gram the repetition tagger looks for", minimum=1)
    batch_size: int = setting(
        {"sample": 100000, "full": 4096},
        "hypotheses per worker call (sample: the whole shard; captions.runner.batch_size counts captions)",
        minimum=1,
    )
    threads: int = setting(0, "torch CPU threads per worker; 0: torch's default", minimum=0)
    input: InputConfig = from_group(InputConfig, "captions.input", "the caption set: its languages are in play")
    runner: RunnerConfig = from_group(RunnerConfig, "captions.runner", "how the shards run (captions.runner)")
    profile: str = from_group(str, "profile", "the build profile")
    paths: Paths = stage_paths()
