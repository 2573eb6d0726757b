"""COMETKiwi: reference-free quality estimation of (source, translation) pairs.

`full` uses `Unbabel/wmt22-cometkiwi-da` (gated on the Hugging Face Hub, CC BY-NC-SA 4.0)
or a local checkpoint directory; `sample` uses a tiny `unified_metric` checkpoint that
`build_tiny_kiwi` makes here from random weights and a locally trained tokenizer, so
the real COMET code paths run offline. Nothing is imported or downloaded at import time.

A checkpoint directory has COMET's layout: `hparams.yaml` and `checkpoints/model.ckpt`.
The tiny one also bundles its encoder (tokenizer + XLM-R config) in `encoder/`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import logging
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from babelforge.core.determinism import KIWI_DECIMALS, rounded
from babelforge.core.device import resolve_device
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import atomic_directory
from babelforge.core.model_identity import display_name
from babelforge.core.progress import progress

KIWI_HUB_ID = "Unbabel/wmt22-cometkiwi-da"
# The tiny checkpoint's encoder folder, relative to its directory (as hparams.yaml records it).
BUNDLED_ENCODER = "encoder"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_LOCAL_PREFIXES = ("/", "./", "../", "~", "models/")


def access_help(model: str) -> str:
    return (
        f"{model} is gated (non-commercial licence): accept its terms at https://huggingface.co/{model} "
        "while logged in, put a read token in the HF_TOKEN environment variable and run once online; "
        "or set captions.tag.kiwi_model to a local checkpoint directory (hparams.yaml + checkpoints/model.ckpt)"
    )


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def is_hub_id(model: str) -> bool:
    return not model.startswith(_LOCAL_PREFIXES) and not model.endswith(".ckpt") and bool(_HUB_ID.match(model))


def resolve_checkpoint(model: str, revision: str | None = None) -> tuple[Path, dict]:
    """The `model.ckpt` path for a local directory / .ckpt file or a Hub id, and a provenance record.

    Hub ids are looked up in the local Hugging Face cache first; only when absent, and
    when HF_HUB_OFFLINE is not set, is the model downloaded (a token comes from HF_TOKEN).
    Any failure raises at once, saying how to get access.
    """
    if not is_hub_id(model):
        path = Path(model)
        checkpoint = path if path.suffix == ".ckpt" else path / "checkpoints" / "model.ckpt"
        if not checkpoint.is_file():
            raise BabelforgeError(
                f"COMETKiwi checkpoint {checkpoint} not found; build the tiny one with "
                "`babelforge captions_kiwi_model` (dvc repro captions_kiwi_model) or point "
                "captions.tag.kiwi_model at a COMET checkpoint directory"
            )
        if not (checkpoint.parents[1] / "hparams.yaml").is_file():
            raise BabelforgeError(f"{checkpoint.parents[1]}: no hparams.yaml beside checkpoints/ (COMET layout)")
        # Identified by its weights once loaded (`load_kiwi`), shown by its folder's name: never
        # the path as spelled, so the same checkpoint at any path makes the same bytes.
        return checkpoint, {"name": display_name(checkpoint.parents[1])}

    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import GatedRepoError, LocalEntryNotFoundError, RepositoryNotFoundError

    try:
        folder = snapshot_download(model, revision=revision, local_files_only=True)
    except (LocalEntryNotFoundError, OSError, ValueError):
        if _hub_offline():
            raise BabelforgeError(
                f"COMETKiwi model {model} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set; "
                + access_help(model)
            ) from None
        try:
            folder = snapshot_download(model, revision=revision)
        except GatedRepoError:
            raise BabelforgeError(f"COMETKiwi model {model}: access denied; " + access_help(model)) from None
        except RepositoryNotFoundError:
            raise BabelforgeError(
                f"COMETKiwi model {model}: not found on the Hub or no access with the current token; "
                + access_help(model)
            ) from None
        except Exception as error:  # network down, proxy, disk: all mean "cannot load"
            raise BabelforgeError(
                f"COMETKiwi model {model} cannot be downloaded ({type(error).__name__}); " + access_help(model)
            ) from None
    checkpoint = Path(folder) / "checkpoints" / "model.ckpt"
    if not checkpoint.is_file():
        raise BabelforgeError(f"COMETKiwi model {model}: the download has no checkpoints/model.ckpt")
    return checkpoint, {"id": model, "revision": Path(folder).name}


def load_kiwi(model: str, revision: str | None = None):
    """Load a COMET model (unified_metric for Kiwi) on CPU; returns (model, provenance record)."""
    checkpoint, record = resolve_checkpoint(model, revision)
    root = checkpoint.parents[1]
    bundled_encoder = root / BUNDLED_ENCODER
    try:
        with _quiet_lightning():
            if bundled_encoder.is_dir():
                # A self-contained checkpoint: hparams.yaml names its encoder relative to the
                # directory (same bytes at any path); resolve it against where the directory is.
                import torch
                from comet.models import str2model

                hparams = yaml.safe_load((root / "hparams.yaml").read_text(encoding="utf-8"))
                scorer = str2model[hparams["class_identifier"]].load_from_checkpoint(
                    checkpoint_path=checkpoint,
                    hparams_file=root / "hparams.yaml",
                    map_location=torch.device("cpu"),
                    strict=False,
                    load_pretrained_weights=False,
                    local_files_only=True,
                    pretrained_model=str(bundled_encoder.resolve()),
                )
            else:
                from comet import load_from_checkpoint

                # The encoder's tokenizer/config (e.g. microsoft/infoxlm-large) come from the
                # Hugging Face cache, or the Hub unless HF_HUB_OFFLINE is set.
                scorer = load_from_checkpoint(str(checkpoint), local_files_only=_hub_offline())
    except OSError as error:
        raise BabelforgeError(
            f"COMETKiwi {model}: its encoder's tokenizer/config cannot be loaded ({error}); "
            "run once online so the Hugging Face cache holds it, or use a self-contained local checkpoint"
        ) from None
    except Exception as error:  # a corrupt or foreign checkpoint: torch/COMET raise many kinds
        first_line = (str(error).strip().splitlines() or [""])[0][:200]
        raise BabelforgeError(
            f"COMETKiwi {model}: {checkpoint} cannot be loaded as a COMET checkpoint "
            f"({type(error).__name__}: {first_line}); rebuild the tiny one with `babelforge captions_kiwi_model` "
            "or point captions.tag.kiwi_model at a valid checkpoint"
        ) from None
    scorer.eval()
    if "name" in record:
        record = {**record, "weights_sha256": weights_sha256(scorer)}
    return scorer, record


@functools.lru_cache(maxsize=4)
def kiwi_scorer(
    model: str, revision: str | None = None, batch_size: int = 64, device: str = "auto", length_sorted: bool = True
) -> tuple[KiwiScorer, dict]:
    """A COMETKiwi scorer and its provenance record, loaded once per process for the same
    settings: the `kiwi_v1` tagger and every shard a runner hands to this process share it."""
    scorer, record = load_kiwi(model, revision)
    return KiwiScorer(scorer, batch_size=batch_size, device=device, length_sorted=length_sorted), record


def weights_sha256(model) -> str:
    """sha256 over a model's parameters and buffers (name, dtype, shape, bytes, in name order):
    the same weights give the same hash wherever the checkpoint file lies."""

    import torch

    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        flat = tensor.detach().cpu().contiguous().reshape(-1)
        digest.update(f"{name}:{flat.dtype}:{tuple(tensor.shape)};".encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


@contextlib.contextmanager
def _quiet_lightning() -> Iterator[None]:

    # torchmetrics 0.10 (pinned by COMET) imports pkg_resources, which warns on every import
    warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
    loggers = [logging.getLogger(name) for name in ("comet", "pytorch_lightning", "lightning", "lightning.pytorch")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def batch_order(lengths: Sequence[int], length_sorted: bool) -> list[int]:
    """Indices in the order they are scored: by length (stable) to cut padding, or as given."""
    if not length_sorted:
        return list(range(len(lengths)))
    return sorted(range(len(lengths)), key=lambda i: (lengths[i], i))


@dataclass
class KiwiScorer:
    """Batched scoring that returns one score per pair, in input order."""

    model: object
    batch_size: int = 64
    device: str = "auto"
    length_sorted: bool = True

    def __post_init__(self):
        self.device = resolve_device(self.device)
        self.model.to(self.device)

    @property
    def max_tokens(self) -> int:
        """The most tokens the encoder reads of one (translation, source) pair, special tokens
        included: the loaded model's own limit (COMET's `encoder.max_positions`, 512 for
        wmt22-cometkiwi-da), past which COMET cuts the pair's end (the source's last tokens)."""
        return int(self.model.encoder.max_positions)

    def truncated(self, sources: Sequence[str], translations: Sequence[str]) -> list[bool]:
        """Per (source, translation) pair: True when it is longer than `max_tokens`, so COMET
        scores it on its first `max_tokens` tokens only (it cuts silently; this is the count).
        The pair is measured as COMET joins it: `<s> translation </s></s> source </s>`."""
        if len(sources) != len(translations):
            raise ValueError(f"{len(sources)} sources but {len(translations)} translations")
        pairs = list(zip(sources, translations))
        unique = list(dict.fromkeys(pairs))  # an n-best list repeats its source: measure each pair once
        if not unique:
            return []
        # untruncated: the full length is what is measured (verbose=False: no warning per long pair)
        ids = self.model.encoder.tokenizer(
            [mt for _, mt in unique], [src for src, _ in unique], truncation=False, verbose=False
        )["input_ids"]
        cut = {pair: len(tokens) > self.max_tokens for pair, tokens in zip(unique, ids)}
        return [cut[pair] for pair in pairs]

    def score(self, sources: Sequence[str], translations: Sequence[str]) -> list[float]:
        """One score per (source, translation) pair, in input order; repeated pairs scored once."""
        if len(sources) != len(translations):
            raise ValueError(f"{len(sources)} sources but {len(translations)} translations")
        pairs = list(zip(sources, translations))
        unique = list(dict.fromkeys(pairs))
        scored = dict(zip(unique, self._score_unique(unique)))
        return [scored[pair] for pair in pairs]

    def _score_unique(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        import torch

        order = batch_order([len(src) + len(mt) for src, mt in pairs], self.length_sorted)
        scores: list[float] = [0.0] * len(order)
        starts = range(0, len(order), self.batch_size)
        for start in progress(starts, desc="COMETKiwi", total=len(starts), unit="batch"):
            chunk = order[start : start + self.batch_size]
            samples = [{"src": pairs[i][0], "mt": pairs[i][1]} for i in chunk]
            inputs = self.model.prepare_sample(samples, stage="predict")
            inputs = tuple({k: v.to(self.device) for k, v in part.items()} for part in inputs)
            with torch.inference_mode():
                batch_scores = self.model.predict_step(inputs)["scores"].float().cpu().tolist()
            for index, value in zip(chunk, batch_scores):
                # Rounded: float noise of the CPU's kernels stays below the stated precision.
                scores[index] = rounded(float(value), KIWI_DECIMALS)
        return scores


# --- the tiny checkpoint -----------------------------------------------------------


def build_tiny_kiwi(
    out_dir: str | os.PathLike,
    corpus: Iterable[str],
    seed: int = 0,
    vocab_size: int = 4000,
    hidden_size: int = 32,
    layers: int = 2,
    heads: int = 2,
    max_positions: int = 256,
) -> Path:
    """A random-weight COMET `unified_metric` (Kiwi input: mt + src) in COMET's checkpoint layout.

    The tokenizer is a sentencepiece unigram model trained on `corpus` (use text in the
    languages to score, so few characters map to <unk>), wrapped as an XLM-R tokenizer.
    Same corpus and arguments give byte-identical files.
    """
    out_dir = Path(out_dir)
    texts = sorted({text for text in corpus if text and text.strip()})
    if not texts:
        raise BabelforgeError("tiny COMETKiwi: the tokenizer corpus is empty")
    with atomic_directory(out_dir) as tmp:
        encoder_dir = tmp / "encoder"
        encoder_dir.mkdir()
        _train_tokenizer(texts, encoder_dir, vocab_size)
        model = _random_unified_metric(
            encoder_dir,
            seed=seed,
            hidden_size=hidden_size,
            layers=layers,
            heads=heads,
            max_positions=max_positions,
        )
        _calibrate(model, texts)
        # The encoder path is stored relative to the checkpoint directory, so the files are the
        # same bytes in any checkout; `load_kiwi` resolves it against wherever the directory lies.
        hparams = dict(model.hparams)
        hparams["pretrained_model"] = BUNDLED_ENCODER
        _save_checkpoint(model, hparams, tmp)
    return out_dir


def _train_tokenizer(texts: list[str], encoder_dir: Path, vocab_size: int) -> None:

    import sentencepiece as spm
    from transformers import XLMRobertaTokenizerFast

    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts),
        model_writer=buffer,
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=1.0,
        hard_vocab_limit=False,
        num_threads=1,
        minloglevel=2,
        shuffle_input_sentence=False,
    )
    spm_path = encoder_dir / "sentencepiece.bpe.model"
    spm_path.write_bytes(buffer.getvalue())
    # The fast tokenizer adds XLM-R's fairseq ids (<s>=0 <pad>=1 </s>=2 <unk>=3, <mask> last).
    tokenizer = XLMRobertaTokenizerFast(vocab_file=str(spm_path))
    tokenizer.save_pretrained(str(encoder_dir))


def _random_unified_metric(encoder_dir: Path, seed: int, hidden_size: int, layers: int, heads: int, max_positions: int):
    import torch
    from comet.models import UnifiedMetric
    from transformers import XLMRobertaConfig, XLMRobertaTokenizerFast

    tokenizer = XLMRobertaTokenizerFast.from_pretrained(str(encoder_dir), local_files_only=True)
    XLMRobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=2 * hidden_size,
        max_position_embeddings=max_positions + 2,
        type_vocab_size=1,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    ).save_pretrained(str(encoder_dir))
    torch.manual_seed(seed)
    with _quiet_lightning():
        model = UnifiedMetric(
            pretrained_model=str(encoder_dir),
            load_pretrained_weights=False,
            local_files_only=True,
            input_segments=["mt", "src"],
            hidden_sizes=[4 * hidden_size],
            word_layer=layers - 1,
            final_activation="Sigmoid",
            layer_transformation="sparsemax",
            batch_size=16,
        )
    return model


def _calibrate(model, texts: list[str], pairs: int = 256) -> None:
    """Standardise the last layer's output on corpus pairs.

    A random head scores every input almost alike (and its bias pushes the sigmoid to
    one end); after this, scores spread over (0, 1) around 0.5, so ranking, percentiles
    and ties are exercised as with a trained model.
    """
    import torch

    last = [module for module in model.estimator.modules() if isinstance(module, torch.nn.Linear)][-1]
    # Evenly spaced over the sorted corpus, so every script of it takes part.
    picked = [texts[i * len(texts) // min(pairs, len(texts))] for i in range(min(pairs, len(texts)))]
    samples = [{"mt": text, "src": picked[-1 - i]} for i, text in enumerate(picked)]
    captured = []
    handle = last.register_forward_hook(lambda module, args, output: captured.append(output.detach()))
    model.eval()
    with torch.inference_mode():
        model.predict_step(model.prepare_sample(samples, stage="predict"))
    handle.remove()
    outputs = torch.cat(captured).flatten()
    mean, std = outputs.mean(), outputs.std().clamp_min(1e-6)
    with torch.no_grad():
        last.weight.div_(std)
        last.bias.sub_(mean).div_(std)


def _save_checkpoint(model, hparams: dict, root: Path) -> None:
    import pytorch_lightning
    import torch

    (root / "checkpoints").mkdir()
    state = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
    torch.save(
        {"state_dict": state, "hyper_parameters": hparams, "pytorch-lightning_version": pytorch_lightning.__version__},
        root / "checkpoints" / "model.ckpt",
    )
    (root / "hparams.yaml").write_text(yaml.safe_dump(hparams, sort_keys=True), encoding="utf-8")
