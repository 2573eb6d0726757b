"""A tiny NLLB-architecture model built locally: offline, deterministic, a few seconds.

Its translations are meaningless (random weights), but it has NLLB's real interface: a
sentencepiece vocabulary shifted by the fairseq offset, the 202 NLLB language codes as
special tokens, an `M2M100ForConditionalGeneration` with tiny dimensions, and the same
CTranslate2 conversion as the real model. Every code path that runs on NLLB-200 runs on it.

Layout written by `build_tiny_nllb(out_dir)` (the returned path is `out_dir`):

    out_dir/hf/   Hugging Face checkpoint: config.json, model.safetensors, generation_config.json,
                  sentencepiece.bpe.model, tokenizer.json, tokenizer_config.json, special_tokens_map.json
    out_dir/ct2/  CTranslate2 conversion (int8) + tokenizer files + babelforge_model.json

`NllbTranslator(out_dir)` and `NllbTranslator(out_dir / "ct2")` both load it.
"""

from __future__ import annotations

import csv
import io
import tempfile
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import atomic_directory
from babelforge.core.resources import resource
from babelforge.translation.nllb import convert_to_ctranslate2

TINY_MODEL_ID = "babelforge/tiny-nllb"
VOCAB_SIZE = 2500
SIB_SENTENCES_PER_LANGUAGE = 4

# Strings the vocabulary must hold as single pieces: the placeholder markers, so that
# even a random model can emit (or lose, or duplicate) them.
MARKER_SYMBOLS = ("{}", "{c}", "<b>", "</b>", "°", "§", "※")

TINY_DIMS = dict(
    d_model=32,
    encoder_layers=2,
    decoder_layers=2,
    encoder_attention_heads=2,
    decoder_attention_heads=2,
    encoder_ffn_dim=64,
    decoder_ffn_dim=64,
    max_position_embeddings=512,
)


TEMPLATES = resource("clip_templates_en.txt")


def training_text(
    sib_dir: Path, templates: Path | None = None, per_language: int = SIB_SENTENCES_PER_LANGUAGE
) -> list[str]:
    """CLIP templates + the first SIB-200 sentences of every language (many scripts)."""
    sib = Path(sib_dir)
    templates = Path(templates) if templates else TEMPLATES
    if not templates.exists() or not sib.is_dir():
        raise BabelforgeError(
            f"the tiny NLLB vocabulary is trained on {templates} and SIB-200 sentences in {sib}: "
            f"{'the latter' if templates.exists() else 'that file'} is missing (run `babelforge fetch`)"
        )
    lines = [line for line in templates.read_text(encoding="utf-8").splitlines() if line.strip()]
    for lang_dir in sorted(p for p in sib.iterdir() if p.is_dir()):
        with (lang_dir / "train.tsv").open(encoding="utf-8", newline="") as handle:
            for number, row in enumerate(csv.DictReader(handle, delimiter="\t")):
                if number >= per_language:
                    break
                lines.append(row["text"].strip())
    return lines


def train_sentencepiece(lines: list[str], path: Path, vocab_size: int = VOCAB_SIZE) -> Path:
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=model,
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=1.0,
        num_threads=1,
        hard_vocab_limit=False,
        user_defined_symbols=list(MARKER_SYMBOLS),
        shuffle_input_sentence=False,
        unk_id=0,
        bos_id=1,
        eos_id=2,
        pad_id=-1,
        minloglevel=2,
    )
    path.write_bytes(model.getvalue())
    return path


def build_tiny_hf(hf_dir: Path, sib_dir: Path, seed: int = 0, templates: Path | None = None) -> Path:
    """The Hugging Face half: tokenizer (slow + fast) and random-weight M2M100."""
    import torch
    import transformers

    hf_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        spm_path = train_sentencepiece(training_text(sib_dir, templates), Path(scratch) / "sentencepiece.bpe.model")
        # Default additional_special_tokens = the 202 FAIRSEQ/NLLB language codes.
        slow = transformers.NllbTokenizer(vocab_file=str(spm_path), legacy_behaviour=False)
        slow.save_pretrained(scratch)
        fast = transformers.NllbTokenizerFast.from_pretrained(scratch, legacy_behaviour=False)
        # Saved while the sentencepiece file still exists, so the slow files are written too.
        fast.save_pretrained(str(hf_dir))
    config = transformers.M2M100Config(
        vocab_size=len(fast),
        pad_token_id=fast.pad_token_id,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        decoder_start_token_id=fast.eos_token_id,
        scale_embedding=True,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        tokenizer_class="NllbTokenizer",
        **TINY_DIMS,
    )
    torch.manual_seed(seed)
    model = transformers.M2M100ForConditionalGeneration(config).eval()
    model.save_pretrained(str(hf_dir), safe_serialization=True)
    return hf_dir


def build_tiny_nllb(out_dir, sib_dir, seed=0, templates=None) -> Path:
    """Build the tiny model under `out_dir` (layout in the module docstring); returns `out_dir`.

    `sib_dir` (SIB-200 `annotated/`) / `templates`: the vocabulary's text (templates default to the repo's).
    """

    out = Path(out_dir)
    with atomic_directory(out / "hf") as tmp:
        build_tiny_hf(tmp, seed=seed, sib_dir=sib_dir, templates=templates)
    convert_to_ctranslate2(
        out / "hf", out / "ct2", quantization="int8", revision=f"seed-{seed}", model_id=TINY_MODEL_ID
    )
    return out
