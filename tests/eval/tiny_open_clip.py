"""Tiny random open_clip models, built offline with open_clip's own classes and saved as open_clip
publishes a checkpoint (`open_clip.push_to_hf_hub.save_for_hf`: `open_clip_config.json` with
`model_cfg` and `preprocess_cfg`, `open_clip_model.safetensors`, the tokenizer's files).

Three variants, one per kind of model the Babel-ImageNet paper evaluates through open_clip:

- `build_clip_bpe`: a CLIP ViT with open_clip's own byte-pair tokenizer (OpenAI CLIP, LAION CLIP);
- `build_xlmr_clip`: a ViT image tower and an XLM-R text tower (transformers) with mean pooling
  (OpenCLIP XLM-R); its text tower is a tiny XLM-R folder built beside it;
- `build_nllb_siglip`: a timm ViT image tower and the encoder of an NLLB (M2M100) model with the
  first token's state as the text embedding and a SigLIP logit bias (NLLB-SigLIP).

Each builder takes the folder to write (it must not exist) and a seed, and returns the folder
`load_model` / `open_clip.create_model("local-dir:...")` load. Same seed, same weights.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from tests.eval.tiny_text_only import build_tiny_xlmr

REPO = Path(__file__).resolve().parents[2]
CONFIG = "open_clip_config.json"

# A ViT small enough to build and run in well under a second: 4 patches of 8 px, one block.
TINY_VISION = {"image_size": 32, "layers": 1, "width": 32, "head_width": 16, "patch_size": 8, "mlp_ratio": 2.0}
CONTEXT_LENGTH = 16  # of the byte-pair and NLLB variants; the XLM-R one keeps open_clip's default (77)

# The text the tiny XLM-R vocabulary is trained on besides the CLIP templates: a few scripts.
XLMR_EXTRA_TEXT = (
    "ein Foto von einem Hund im Garten.",
    "une photo d'un chat sur la table.",
    "una foto de un pájaro en el árbol.",
    "фотография собаки на траве.",
    "一张狗在草地上的照片。",
    "犬が芝生の上にいる写真。",
    "صورة كلب على العشب.",
    "घास पर एक कुत्ते की तस्वीर।",
    "ምስል የውሻ በሣር ላይ።",
    "ένα σκυλί στο γρασίδι.",
)


def build_clip_bpe(folder: Path, seed: int = 0) -> Path:
    """A CLIP ViT (open_clip's `CLIP`) with open_clip's byte-pair tokenizer, context length 16."""
    model_cfg = {
        "embed_dim": 16,
        "vision_cfg": dict(TINY_VISION),
        "text_cfg": {"context_length": CONTEXT_LENGTH, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
    }
    return _build(Path(folder), model_cfg, seed, tokenizer_source=None)


def build_xlmr_clip(folder: Path, seed: int = 0) -> Path:
    """OpenCLIP XLM-R in small: open_clip's ViT + a transformers XLM-R text tower (mean pooling), like
    open_clip's `xlm-roberta-base-ViT-B-32` config. The XLM-R is built in `<folder>-xlm-roberta/`
    (the config names it by its absolute path, as the published one names `xlm-roberta-base`)."""
    folder = Path(folder)
    templates = (REPO / "resources" / "clip_templates_en.txt").read_text(encoding="utf-8").splitlines()
    corpus = tuple(text.strip() for text in (*templates, *XLMR_EXTRA_TEXT) if text.strip())
    # 128 tokens: more than open_clip's default context of 77, which is then the limit
    text = build_tiny_xlmr(
        folder.parent / f"{folder.name}-xlm-roberta", seed, corpus, positions=128, layers=1, vocab_size=300
    )
    model_cfg = {
        "embed_dim": 16,
        "vision_cfg": dict(TINY_VISION),
        "text_cfg": {"hf_model_name": str(text), "hf_tokenizer_name": str(text), "hf_pooler_type": "mean_pooler"},
    }
    return _build(folder, model_cfg, seed, tokenizer_source=text)


def build_nllb_siglip(folder: Path, nllb_dir: Path, seed: int = 0) -> Path:
    """NLLB-SigLIP in small: a timm ViT (`test_vit`, 32 px, attention-pool head, no projection) + the
    encoder of the NLLB-architecture model in `nllb_dir` (a transformers folder: the translation
    tests' tiny NLLB, `babelforge.translation.tiny`), first-token pooling, a linear projection and
    SigLIP's logit bias, like open_clip's `nllb-clip-base-siglip` config."""
    model_cfg = {
        "embed_dim": 64,  # test_vit's width: the image tower has no projection (timm_proj none)
        "custom_text": True,
        "init_logit_bias": -10,
        "vision_cfg": {
            "image_size": 32,
            "timm_model_name": "test_vit",
            "timm_model_pretrained": False,
            "timm_pool": "map",
            "timm_proj": "none",
        },
        "text_cfg": {
            "context_length": CONTEXT_LENGTH,
            "hf_model_name": str(nllb_dir),
            "hf_tokenizer_name": str(nllb_dir),
            "hf_proj_type": "linear",
            "hf_pooler_type": "cls_pooler",
        },
    }
    return _build(Path(folder), model_cfg, seed, tokenizer_source=Path(nllb_dir))


def _build(folder: Path, model_cfg: dict, seed: int, tokenizer_source: Path | None) -> Path:
    """The model open_clip's factory makes of `model_cfg` (random weights from `seed`, a transformers
    text tower initialised from its folder as open_clip trains one), saved by `save_for_hf`."""
    import open_clip
    import torch
    from open_clip.push_to_hf_hub import save_config_for_hf, save_for_hf

    if folder.exists():
        raise FileExistsError(folder)
    with tempfile.TemporaryDirectory() as scratch:
        # create_model reads a model config from a name it knows: a local folder holding only its config
        # (no weights: random, as a new training run starts), so open_clip's registry stays as it was.
        (Path(scratch) / CONFIG).write_text(
            json.dumps({"model_cfg": model_cfg, "preprocess_cfg": {}}), encoding="utf-8"
        )
        torch.manual_seed(seed)
        model = open_clip.create_model(f"local-dir:{scratch}", device="cpu").eval()
    context_length = model_cfg["text_cfg"].get("context_length", 77)
    if tokenizer_source is None:
        # The byte-pair tokenizer is part of open_clip: a folder without tokenizer files gets it.
        # (save_for_hf would save it as a transformers tokenizer, which it is not.)
        from safetensors.torch import save_file

        folder.mkdir(parents=True)
        save_file(model.state_dict(), str(folder / "open_clip_model.safetensors"))
        save_config_for_hf(model, folder / CONFIG, model_config=model_cfg)
    else:
        tokenizer = open_clip.tokenizer.HFTokenizer(str(tokenizer_source), context_length=context_length)
        save_for_hf(model, tokenizer, model_cfg, str(folder), safe_serialization=True)
    return folder
