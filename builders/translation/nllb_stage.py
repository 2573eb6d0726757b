"""`babelforge nllb`: the CTranslate2 NLLB model, converted once (DVC output `paths.nllb_model`).

`sample` profile: the tiny NLLB-architecture model built locally (`tiny.py`), converted the
same way. `full`: `facebook/nllb-200-distilled-1.3B` at the pinned revision, from the local
Hugging Face cache, `nllb.local_path`, or (when online) the Hub.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.config import setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.progress import info
from babelforge.core.stages import Paths, Stage, stage_paths
from babelforge.translation.nllb import convert_to_ctranslate2
from babelforge.translation.tiny import TINY_MODEL_ID, build_tiny_hf


@dataclass(frozen=True)
class Config:
    """The `nllb` group of params.yaml; writes `paths.nllb_model`."""

    GROUP = "nllb"
    source: str = setting(
        {"sample": "tiny", "full": "facebook/nllb-200-distilled-1.3B"},
        "`tiny` = build the tiny model locally, else a Hub id",
    )
    revision: str | None = setting("7be3e24664b38ce1cac29b8aeed6911aa0cf0576", "pinned Hub commit of the full model")
    local_path: str = setting("", "local copy of the full model (HF dir), used instead of the Hub when set")
    quantization: str = setting(
        {"sample": "int8", "full": "auto"}, "weights as stored; auto = int8_float16 with a GPU, int8 without"
    )
    tiny_seed: int = setting(0, "seed of the tiny model's random weights", minimum=0)
    sib_dir: str = setting(
        "data/raw/sib-200/annotated", "the tiny model's vocabulary text: SIB-200, as `fetch` lays it out"
    )
    templates: str = setting("resources/clip_templates_en.txt", "... and the CLIP templates (empty: the repo's)")
    paths: Paths = stage_paths()


def run(config: Config) -> int:

    out_dir, quantization = config.paths.nllb_model, config.quantization
    if config.source == "tiny":
        seed = config.tiny_seed
        with tempfile.TemporaryDirectory() as scratch:
            hf_dir = build_tiny_hf(
                Path(scratch) / "hf", seed=seed, sib_dir=config.sib_dir, templates=config.templates or None
            )
            out = convert_to_ctranslate2(hf_dir, out_dir, quantization, revision=f"seed-{seed}", model_id=TINY_MODEL_ID)
        info(f"nllb: tiny NLLB model (seed {seed}, {quantization}) -> {out}")
        return 0
    revision = config.revision or None
    location = config.local_path or config.source
    if config.local_path and not Path(location).is_dir():
        # Never read as a Hub id: `models/nllb` would otherwise be looked up on the Hub.
        raise BabelforgeError(
            f"params.yaml nllb.local_path {location}: no such directory "
            f"(a local copy of {config.source}; leave it empty to use the Hugging Face cache)"
        )
    out = convert_to_ctranslate2(location, out_dir, quantization, revision=revision, model_id=config.source)
    info(f"nllb: {config.source}@{revision} ({quantization}) from {location} -> {out}")
    return 0


STAGE = Stage(
    "nllb",
    "convert NLLB to CTranslate2 once (tiny local model in sample)",
    run,
    config=Config,
    flags={
        "--out": ("paths.nllb_model", "CTranslate2 model directory to write"),
    },
    deps=(
        "${nllb.templates}",
        "${nllb.sib_dir}",
    ),
    outs=("${paths.nllb_model}",),
    pinned=True,
    docs="docs/datasets/prompts.md",
    owns={
        "nllb_model": ("models/nllb-ct2", "the CTranslate2 NLLB model"),
    },
)
