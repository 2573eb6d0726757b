"""NLLB-200 translation through CTranslate2: conversion once, batched translation after.

A converted model directory (what `convert_to_ctranslate2` writes, DVC output
`models/nllb-ct2/`) holds the CTranslate2 `model.bin` + `shared_vocabulary.json`, the
Hugging Face tokenizer files copied next to them (so the directory is self-contained), and
`babelforge_model.json` recording the model id, revision and quantisation it came from.

Tokenizer contract (checked in tests/translation/test_nllb.py): the source is
`[src_lang] tokens </s>` (transformers' non-legacy NLLB behaviour, which matches how
NLLB was trained: the language code is a *prefix* of the source), and the decoder is
forced to start with the target language code via `target_prefix=[[tgt_lang]]`; that
token is stripped from every hypothesis.

Heavy libraries (ctranslate2, transformers, huggingface_hub) are imported inside functions.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from babelforge.core.determinism import NLLB_SCORE_DECIMALS, rounded, runtime
from babelforge.core.device import resolve_device
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import atomic_directory, canonical_json, read_json
from babelforge.core.weights import check_weights

FULL_MODEL_ID = "facebook/nllb-200-distilled-1.3B"
# Hub commit of FULL_MODEL_ID the project pins (the snapshot the public HF caches of this
# model resolve to); params.yaml `nllb.revision` overrides it.
FULL_MODEL_REVISION = "7be3e24664b38ce1cac29b8aeed6911aa0cf0576"

METADATA_FILE = "babelforge_model.json"
# Tokenizer files copied into the CTranslate2 directory when the source has them.
TOKENIZER_FILES = (
    "sentencepiece.bpe.model",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)
QUANTIZATIONS = ("int8", "int8_float16", "int8_float32", "int8_bfloat16", "int16", "float16", "bfloat16", "float32")


# CTranslate2's own default `max_input_length`: the source length assumed for a conversion that
# did not record its model's (babelforge_model.json without `max_source_positions`).
DEFAULT_MAX_SOURCE_POSITIONS = 1024


@dataclass(frozen=True)
class Hypothesis:
    text: str
    score: float  # CTranslate2's length-normalised log-probability; higher is better
    source_truncated: bool = False  # the source was cut to the model's input limit before translating


def cut_to_limit(tokens: list[str], limit: int) -> tuple[list[str], bool]:
    """A source token sequence (`[src_lang] ... </s>`) no longer than `limit`: the end of the text is
    cut, the closing `</s>` kept; True when something was cut. Past the model's position table the
    encoder has no position for a token (CTranslate2 stops with an error), so a 5,000-word caption
    is translated from its beginning instead."""
    if len(tokens) <= limit:
        return tokens, False
    return tokens[: limit - 1] + tokens[-1:], True


def resolve_compute_type(compute_type: str, device: str) -> str:
    """`auto` -> int8_float16 on GPU, int8 on CPU (the project's quantisation choice)."""
    if compute_type == "auto":
        return "int8_float16" if device == "cuda" else "int8"
    return compute_type


def resolve_quantization(quantization: str) -> str:
    """The quantisation to store weights in; `auto` follows the device this machine has."""
    if quantization == "auto":
        return resolve_compute_type("auto", resolve_device("auto", runtime="ctranslate2"))
    if quantization not in QUANTIZATIONS:
        raise BabelforgeError(f"unknown quantization {quantization!r}: use auto or one of {', '.join(QUANTIZATIONS)}")
    return quantization


def locate_hf_model(model: str, revision: str | None = None) -> Path:
    """A local directory with the Hugging Face checkpoint `model` (a path or a Hub id).

    A Hub id is looked up in the local Hugging Face cache first; only when it is missing
    there (and HF_HUB_OFFLINE is not set) is a download tried. Failing both, one error
    names the model and the two ways to provide it.
    """
    path = Path(model)
    if path.is_dir():
        if not (path / "config.json").exists():
            raise BabelforgeError(f"{path}: not a Hugging Face model directory (no config.json)")
        return path
    if path.is_absolute() or model.startswith((".", "~")) or model.count("/") != 1:
        raise BabelforgeError(f"model directory {model} does not exist")
    import huggingface_hub

    patterns = ["*.json", "*.model", "*.safetensors", "*.bin"]
    try:
        return Path(
            huggingface_hub.snapshot_download(model, revision=revision, local_files_only=True, allow_patterns=patterns)
        )
    except Exception:  # not cached: fall through to the network
        pass
    try:
        if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
            raise RuntimeError("HF_HUB_OFFLINE is set")
        return Path(huggingface_hub.snapshot_download(model, revision=revision, allow_patterns=patterns))
    except Exception as error:
        raise BabelforgeError(
            f"model {model} (revision {revision or 'main'}) is not in the Hugging Face cache and could not be "
            f"downloaded ({type(error).__name__}); on a machine with Hub access run "
            f"`huggingface-cli download {model} --revision {revision or 'main'}` and copy the cache "
            f"(HF_HOME), or set params.yaml nllb.local_path to a local copy of the model directory"
        ) from None


def max_source_positions(hf_dir: Path) -> int:
    """The encoder's input limit in tokens, from the checkpoint's config.json (NLLB: 1024)."""
    config = read_json(hf_dir / "config.json") if (hf_dir / "config.json").is_file() else {}
    return int(config.get("max_position_embeddings") or DEFAULT_MAX_SOURCE_POSITIONS)


def convert_to_ctranslate2(
    hf_dir_or_id: str | os.PathLike,
    out_dir: str | os.PathLike,
    quantization: str,
    revision: str | None = None,
    model_id: str | None = None,
) -> Path:
    """Convert an NLLB/M2M100 checkpoint to a self-contained CTranslate2 directory.

    Written into a temporary sibling and renamed, so `out_dir` is either the previous
    conversion or the complete new one. `model_id` overrides the id recorded for
    provenance (defaults to `hf_dir_or_id`).
    """
    import ctranslate2
    from ctranslate2.converters import TransformersConverter

    quantization = resolve_quantization(quantization)
    source = locate_hf_model(str(hf_dir_or_id), revision)
    check_weights(source, f"the checkpoint {hf_dir_or_id} is damaged: copy or fetch it again")
    out = Path(out_dir)
    with atomic_directory(out) as tmp:
        converter = TransformersConverter(str(source))
        converter.convert(str(tmp), quantization=quantization, force=True)
        for name in TOKENIZER_FILES:
            if (source / name).exists():
                shutil.copyfile(source / name, tmp / name)
        metadata = {
            "max_source_positions": max_source_positions(source),
            "model_id": model_id or str(hf_dir_or_id),
            "revision": revision,
            "quantization": quantization,
            "ctranslate2": ctranslate2.__version__,
        }
        (tmp / METADATA_FILE).write_text(canonical_json(metadata), encoding="utf-8")
    return out


def resolve_model_dir(model_dir: str | os.PathLike) -> Path:
    """The CTranslate2 directory: `model_dir` itself, or its `ct2/` child (a `build_tiny_nllb` root)."""
    path = Path(model_dir)
    for candidate in (path, path / "ct2"):
        if (candidate / "model.bin").exists():
            return candidate
    raise BabelforgeError(
        f"{path}: no CTranslate2 model (model.bin) there; build it with `babelforge nllb` (or `dvc repro nllb`)"
    )


class NllbTranslator:
    """Batched NLLB translation with CTranslate2; one target language per input text."""

    def __init__(
        self,
        model_dir,
        device="auto",
        compute_type="auto",
        beam_size=4,
        num_hypotheses=1,
        max_batch_size=4096,
        batch_type="tokens",
        max_decoding_length=256,
        *,
        intra_threads=0,
    ):
        # intra_threads (keyword-only, beyond the shared contract): CPU threads CTranslate2 uses;
        # 0 = its default.
        import ctranslate2
        import transformers

        self.model_dir = resolve_model_dir(model_dir)
        self.device = resolve_device(device, runtime="ctranslate2")
        self.compute_type = resolve_compute_type(compute_type, self.device)
        if num_hypotheses > beam_size:
            raise BabelforgeError(f"num_hypotheses ({num_hypotheses}) cannot exceed beam_size ({beam_size})")
        self.beam_size = beam_size
        self.num_hypotheses = num_hypotheses
        self.max_batch_size = max_batch_size
        self.batch_type = batch_type
        self.max_decoding_length = max_decoding_length
        metadata_path = self.model_dir / METADATA_FILE
        self._metadata: dict[str, Any] = read_json(metadata_path) if metadata_path.exists() else {}
        # legacy_behaviour=False pins the source layout `[src_lang] ... </s>` whatever the
        # checkpoint's tokenizer_config says (see module docstring).
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(self.model_dir), legacy_behaviour=False)
        weights = self.model_dir / "model.bin"
        remedy = "convert it again: babelforge nllb (dvc repro nllb)"
        check_weights(weights, remedy)
        try:
            self._translator = ctranslate2.Translator(
                str(self.model_dir), device=self.device, compute_type=self.compute_type, intra_threads=intra_threads
            )
        except RuntimeError as error:
            # CTranslate2 raises RuntimeError without the file's folder for a file cut short ("File
            # model.bin is incomplete"), a damaged one ("has an invalid payload size") or a device it lacks.
            first = (str(error).strip().splitlines() or [type(error).__name__])[0][:300]
            raise BabelforgeError(
                f"weights file {weights}: CTranslate2 cannot load it on {self.device} ({first}); "
                f"a damaged file? {remedy}"
            ) from None

    @property
    def model_id(self) -> str:
        return self._metadata.get("model_id") or str(self.model_dir)

    @property
    def max_input_tokens(self) -> int:
        """Source tokens the model reads (recorded at conversion; CTranslate2's default otherwise)."""
        return int(self._metadata.get("max_source_positions") or DEFAULT_MAX_SOURCE_POSITIONS)

    @property
    def revision(self) -> str | None:
        return self._metadata.get("revision")

    @property
    def quantization(self) -> str | None:
        return self._metadata.get("quantization")

    def provenance(self) -> dict[str, Any]:
        return {
            "model_id": self.model_id,
            "revision": self.revision,
            "quantization": self.quantization,
            "compute_type": self.compute_type,
            "device": self.device,
            "beam_size": self.beam_size,
            "num_hypotheses": self.num_hypotheses,
            "max_decoding_length": self.max_decoding_length,
            "runtime": self.runtime(),
        }

    def runtime(self) -> dict[str, Any]:
        """Device, compute type, pinned CPU ISA or GPU name, library versions (determinism.runtime)."""

        return runtime(self.device, self.compute_type)

    def _check_codes(self, codes: set[str]) -> None:
        unk = self.tokenizer.unk_token_id
        unknown = sorted(code for code in codes if self.tokenizer.convert_tokens_to_ids(code) in (None, unk))
        if unknown:
            raise BabelforgeError(
                f"NLLB language code(s) {', '.join(unknown)} not in the vocabulary of {self.model_id}"
            )

    def source_tokens(self, texts: list[str], src_lang: str) -> list[list[str]]:
        """Subword tokens of each text as the model reads them: `[src_lang] ... </s>`."""
        self._check_codes({src_lang})
        self.tokenizer.src_lang = src_lang
        ids = self.tokenizer(list(texts), add_special_tokens=True)["input_ids"]
        return [self.tokenizer.convert_ids_to_tokens(row) for row in ids]

    def translate(self, texts: list[str], src_lang: str, tgt_langs: list[str]) -> list[list[Hypothesis]]:
        """Translate each `texts[i]` into `tgt_langs[i]`; `num_hypotheses` per text, best first."""
        if len(texts) != len(tgt_langs):
            raise BabelforgeError(f"translate: {len(texts)} texts but {len(tgt_langs)} target languages")
        if not texts:
            return []
        self._check_codes(set(tgt_langs))
        sources = [cut_to_limit(tokens, self.max_input_tokens) for tokens in self.source_tokens(texts, src_lang)]
        results = self._translator.translate_batch(
            [tokens for tokens, _ in sources],
            target_prefix=[[lang] for lang in tgt_langs],
            beam_size=self.beam_size,
            num_hypotheses=self.num_hypotheses,
            max_batch_size=self.max_batch_size,
            batch_type=self.batch_type,
            max_decoding_length=self.max_decoding_length,
            return_scores=True,
        )
        output = []
        for lang, result, (_, truncated) in zip(tgt_langs, results, sources):
            hypotheses = []
            for tokens, score in zip(result.hypotheses, result.scores):
                if tokens and tokens[0] == lang:
                    tokens = tokens[1:]
                ids = self.tokenizer.convert_tokens_to_ids(tokens)
                text = self.tokenizer.decode(ids, skip_special_tokens=True)
                # Rounded: the last decimals differ between CPU instruction sets (see determinism.py).
                score = rounded(float(score), NLLB_SCORE_DECIMALS)
                hypotheses.append(Hypothesis(text=text, score=score, source_truncated=truncated))
            output.append(hypotheses)
        return output
