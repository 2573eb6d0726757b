"""`babelforge eval_tiny_clip`: the tiny random CLIP models of the sample profile (no network).

`build_tiny_clip` makes the tiny random CLIP of the `sample` profile and the tests,
entirely offline: a byte-level CLIP tokenizer over the 256 byte symbols (any script
tokenises, one symbol per byte), a 32 px image processor and a seeded 2-layer model.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.config import setting
from babelforge.core.io import write_text
from babelforge.core.progress import info
from babelforge.core.stages import Paths, Stage, stage_paths

# A run with other settings (--set, --params) and no --out writes here, in its run folder
# (babelforge.core.runs), never over <paths.tiny_clip>.
AD_HOC_OUTPUTS = {"paths.tiny_clip": "tiny_clip"}


@dataclass(frozen=True)
class Config:
    """The `eval.tiny_clip` group of params.yaml."""

    GROUP = "eval.tiny_clip"
    seeds: list[int] = setting([0, 1, 2], "one model per seed, written to <paths.tiny_clip>/s<seed>", minimum=0)
    image_size: int = setting(32, "input image size in pixels (patch size 8)", minimum=8)
    paths: Paths = stage_paths()


def run(config: Config) -> int:

    for seed in config.seeds:
        path = build_tiny_clip(Path(config.paths.tiny_clip) / f"s{seed}", seed=seed, image_size=config.image_size)
        info(f"eval_tiny_clip: seed {seed} -> {path}")
    return 0


def _byte_symbols() -> list[str]:
    """The 256 printable stand-ins GPT-2/CLIP byte-level BPE uses for the bytes 0..255."""
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    codes, extra = printable[:], 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            codes.append(256 + extra)
            extra += 1
    return [chr(code) for _, code in sorted(zip(printable, codes))]


def build_tiny_clip(out_dir: str | os.PathLike, seed: int = 0, image_size: int = 32) -> Path:
    """Write a tiny random CLIPModel + tokenizer + image processor to `out_dir`; no network.

    Deterministic for a seed: the same files come out on every run.
    """
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPTokenizerFast

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    symbols = _byte_symbols()
    vocab = {s: i for i, s in enumerate(symbols)}
    vocab.update({s + "</w>": 256 + i for i, s in enumerate(symbols)})
    vocab.update({"<|startoftext|>": 512, "<|endoftext|>": 513})
    write_text(json.dumps(vocab, ensure_ascii=False, sort_keys=True), out / "vocab.json")
    write_text("#version: 0.2\n", out / "merges.txt")
    tokenizer = CLIPTokenizerFast(vocab_file=str(out / "vocab.json"), merges_file=str(out / "merges.txt"))

    config = CLIPConfig(
        text_config=dict(
            vocab_size=len(vocab),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            max_position_embeddings=77,
            bos_token_id=512,
            eos_token_id=513,
            pad_token_id=513,
        ),
        vision_config=dict(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            image_size=image_size,
            patch_size=8,
        ),
        projection_dim=16,
    )
    torch.manual_seed(seed)
    model = CLIPModel(config).eval()
    processor = CLIPImageProcessor(
        size={"shortest_edge": image_size}, crop_size={"height": image_size, "width": image_size}
    )
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    processor.save_pretrained(out)
    return out


STAGE = Stage(
    "eval_tiny_clip",
    "build the tiny random CLIP models of the sample profile (no network)",
    run,
    config=Config,
    flags={
        "--out": ("paths.tiny_clip", "folder to write s<seed>/ models into"),
    },
    outs=("${paths.tiny_clip}",),
    pinned=True,
    docs="docs/guides/evaluate.md",
    ad_hoc_outputs=AD_HOC_OUTPUTS,
    owns={
        "tiny_clip": ("models/tiny_clip", "the tiny CLIP models of the sample profile"),
    },
)
