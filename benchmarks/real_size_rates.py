"""Per-item CPU rates of the `full` profile's real model architectures, built from their configs with random weights.

What is measured, each part in its own process (so one model is in memory at a time and each part's
peak RSS is its own), CPU only, `--threads` threads (default 2), under the project's CPU pin
(`build.cpu_isa`, default AVX2, set with `babelforge.core.determinism.pin_cpu` before any numeric
library loads, as the CLI does; `--cpu-isa none` leaves the machine's own kernels):

- `nllb`: NLLB-200 distilled 1.3B (facebook/nllb-200-distilled-1.3B's config.json: 24+24 layers,
  d_model 1024, FFN 8192, 16 heads, vocabulary 256,206) as `M2M100ForConditionalGeneration`, converted
  to CTranslate2 int8 by the project's own `convert_to_ctranslate2`; the tokenizer written beside it is
  a small sentencepiece model (the converter pads the vocabulary to the config's 256,206 entries, so the
  output layer and softmax have the real size). Timed with `translate_batch` called as
  `NllbTranslator.translate` calls it (target prefix, `max_batch_size` 4096, `batch_type` tokens,
  scores returned): (a) the prompts stage: one call per language of 80 templates x 6 encodings = 480
  inputs, beam 4, 1 hypothesis; (b) the captions stage's paper setting: beam 100, 25 hypotheses, a few
  inputs only. Sources are `[eng_Latn] tokens </s>` of fixed length, drawn from the vocabulary.
- `kiwi`: COMETKiwi (Unbabel/wmt22-cometkiwi-da's hparams.yaml: `unified_metric`, mt+src input,
  estimator hidden sizes 3072 and 1024, Tanh, sparsemax layer mix) over an InfoXLM-large encoder
  (microsoft/infoxlm-large's config.json: 24 layers, hidden 1024, FFN 4096, 16 heads, vocabulary
  250,002), built as the project builds its tiny one (`comet.models.UnifiedMetric` from a local
  encoder folder, no pretrained weights) and scored through the project's `KiwiScorer` (batch 32, the
  full profile's `captions.tag.kiwi_batch_size`, length-sorted). The tokenizer is a small
  sentencepiece model trained on XTD captions; pairs are XTD (English caption, human translation) pairs
  whose two texts have at least `--kiwi-side-tokens` (18) tokens, cut to that many, so a pair is about
  40 tokens with COMET's special tokens.
- `clip`: CLIP ViT-B/32 (openai/clip-vit-base-patch32's config.json) as transformers `CLIPModel`,
  fp32: `get_image_features` on 224 px pixel tensors (batch 64) and `get_text_features` on padded
  ids with attention mask (batch 256, 12 tokens), as the eval's transformers family calls them;
  `CLIPImageProcessor` (the checkpoint's preprocessing) on 640 x 480 images is timed apart.

Assumed: weights do not change what a forward pass costs, only how long a decoder runs before it
stops; so every NLLB output is forced to the stated length (`min_decoding_length` =
`max_decoding_length`; CTranslate2 counts the target-language prefix in both), where a real
translation would stop by itself (plus one step for its end token). Real sentencepiece splits are
not reproduced: lengths are set in tokens. Rates are steady-state (a warm-up call first).

Results are printed with their settings and merged into benchmarks/results/real_size_rates.json
(one entry per part; other parts' entries are kept).

    python benchmarks/real_size_rates.py --all | --only nllb|kiwi|clip ... [--threads 2] [--cpu-isa AVX2]
        [--prompt-inputs 480] [--prompt-tokens 12] [--caption-inputs 4] [--caption-tokens 20]
        [--kiwi-pairs 256] [--clip-batches 4] [--workdir DIR]   # DIR keeps the converted NLLB
"""

from __future__ import annotations

import json
import multiprocessing
import os
import platform
import resource
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
RESULTS = REPO / "benchmarks" / "results" / "real_size_rates.json"
from bench_cli import benchmark_parser  # noqa: E402

from benchmarks.kiwi import xtd_pairs  # noqa: E402

PARTS = ("nllb", "kiwi", "clip")

# facebook/nllb-200-distilled-1.3B, config.json (dropouts are irrelevant at inference).
NLLB_ID = "facebook/nllb-200-distilled-1.3B"
NLLB_CONFIG = dict(
    vocab_size=256206,
    d_model=1024,
    encoder_layers=24,
    decoder_layers=24,
    encoder_attention_heads=16,
    decoder_attention_heads=16,
    encoder_ffn_dim=8192,
    decoder_ffn_dim=8192,
    activation_function="relu",
    max_position_embeddings=1024,
    scale_embedding=True,
    bos_token_id=0,
    pad_token_id=1,
    eos_token_id=2,
    decoder_start_token_id=2,
    tokenizer_class="NllbTokenizer",
)
# The prompts stage: one translate call per language for 80 templates x (5 slot strategies + bare).
PROMPT_INPUTS = 80 * 6
# NllbTranslator's batching (params.yaml prompts / captions.translate: max_batch_size, batch_type).
MAX_BATCH_SIZE = 4096
BATCH_TYPE = "tokens"

# microsoft/infoxlm-large, config.json: COMETKiwi's encoder.
INFOXLM_LARGE = dict(
    vocab_size=250002,
    hidden_size=1024,
    num_hidden_layers=24,
    num_attention_heads=16,
    intermediate_size=4096,
    hidden_act="gelu",
    max_position_embeddings=514,
    type_vocab_size=1,
    layer_norm_eps=1e-05,
    bos_token_id=0,
    pad_token_id=1,
    eos_token_id=2,
)
# Unbabel/wmt22-cometkiwi-da, hparams.yaml (the arguments that shape inference).
KIWI_ID = "Unbabel/wmt22-cometkiwi-da"
KIWI_HPARAMS = dict(
    encoder_model="XLM-RoBERTa",
    input_segments=["mt", "src"],
    hidden_sizes=[3072, 1024],
    activations="Tanh",
    final_activation=None,
    sent_layer="mix",
    layer_transformation="sparsemax",
    layer_norm=False,
    word_layer=24,
    word_level_training=False,
    loss_lambda=0.65,
    dropout=0.1,
)
KIWI_BATCH = 32  # params.yaml captions.tag.kiwi_batch_size, full

# openai/clip-vit-base-patch32, config.json.
CLIP_ID = "openai/clip-vit-base-patch32"
CLIP_TEXT = dict(
    vocab_size=49408,
    hidden_size=512,
    intermediate_size=2048,
    num_hidden_layers=12,
    num_attention_heads=8,
    max_position_embeddings=77,
    hidden_act="quick_gelu",
    bos_token_id=0,
    eos_token_id=2,
    pad_token_id=1,
)
CLIP_VISION = dict(
    hidden_size=768,
    intermediate_size=3072,
    num_hidden_layers=12,
    num_attention_heads=12,
    image_size=224,
    patch_size=32,
    hidden_act="quick_gelu",
)
CLIP_PROJECTION = 512
CLIP_LOGIT_SCALE = 2.6592


# ---------------------------------------------------------------- running a part in its own process


def _child(queue, name: str, kwargs: dict) -> None:
    try:
        if kwargs.get("cpu_isa"):
            from babelforge.core.determinism import pin_cpu

            pin_cpu(kwargs["cpu_isa"])  # before ctranslate2 / torch / numpy load
        result = globals()[name](**kwargs)
        result["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        queue.put(("ok", result))
    except BaseException as error:  # reported by the parent
        queue.put(("error", f"{type(error).__name__}: {error}"))


def in_process(name: str, **kwargs) -> dict:
    """Run `name(**kwargs)` in a fresh process; its result, its peak RSS and its wall time."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    start = time.perf_counter()
    process = context.Process(target=_child, args=(queue, name, kwargs))
    process.start()
    status, result = queue.get()
    process.join()
    if status != "ok":
        raise SystemExit(f"{name} failed: {result}")
    result["process_wall_s"] = round(time.perf_counter() - start, 1)
    return result


def _threads(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


# ---------------------------------------------------------------- NLLB through CTranslate2


def nllb_build(workdir: str, cpu_isa: str | None) -> dict:
    """The random-weight NLLB-200 1.3B checkpoint and its int8 CTranslate2 conversion under `workdir`."""
    import torch
    import transformers

    from babelforge.translation.nllb import convert_to_ctranslate2
    from babelforge.translation.tiny import TEMPLATES, train_sentencepiece

    root = Path(workdir)
    hf_dir, ct2_dir = root / "hf", root / "ct2"
    start = time.perf_counter()
    hf_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        lines = [line for line in TEMPLATES.read_text(encoding="utf-8").splitlines() if line.strip()]
        spm_path = train_sentencepiece(lines, Path(scratch) / "sentencepiece.bpe.model", vocab_size=500)
        # The 202 NLLB language codes are its additional special tokens, as in the real tokenizer.
        slow = transformers.NllbTokenizer(vocab_file=str(spm_path), legacy_behaviour=False)
        slow.save_pretrained(scratch)
        fast = transformers.NllbTokenizerFast.from_pretrained(scratch, legacy_behaviour=False)
        fast.save_pretrained(str(hf_dir))
    config = transformers.M2M100Config(dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, **NLLB_CONFIG)
    torch.manual_seed(0)
    # float16 halves the build's memory; the conversion quantises to int8 either way.
    model = transformers.M2M100ForConditionalGeneration._from_config(config, torch_dtype=torch.float16).eval()
    parameters = sum(p.numel() for p in model.parameters())
    model.save_pretrained(str(hf_dir), safe_serialization=True)
    del model
    built = time.perf_counter() - start
    convert_to_ctranslate2(hf_dir, ct2_dir, quantization="int8", model_id=f"random weights, {NLLB_ID} config")
    vocabulary = json.loads((ct2_dir / "shared_vocabulary.json").read_text(encoding="utf-8"))
    return {
        "parameters": parameters,
        "ct2_vocabulary": len(vocabulary),
        "ct2_model_mib": round((ct2_dir / "model.bin").stat().st_size / 2**20),
        "build_s": round(built, 1),
        "convert_s": round(time.perf_counter() - start - built, 1),
    }


def _sources(vocabulary: list[str], count: int, length: int, seed: int) -> list[list[str]]:
    """`[eng_Latn] <length tokens> </s>` sources drawn from the vocabulary's ordinary pieces."""
    import random

    pieces = [t for t in vocabulary[4:] if t.startswith("▁") and t[1:].isalpha() and "_" not in t]
    rng = random.Random(seed)
    return [["eng_Latn", *rng.choices(pieces, k=length), "</s>"] for _ in range(count)]


def nllb_time(
    workdir: str, cpu_isa: str | None, threads: int, inputs: int, tokens: int, beam: int, hypotheses: int, source: int
) -> dict:
    """One `translate_batch` call as NllbTranslator makes it, outputs forced to `tokens` tokens."""
    import ctranslate2

    ct2_dir = Path(workdir) / "ct2"
    vocabulary = json.loads((ct2_dir / "shared_vocabulary.json").read_text(encoding="utf-8"))
    start = time.perf_counter()
    translator = ctranslate2.Translator(
        str(ct2_dir), device="cpu", compute_type="int8", intra_threads=threads, inter_threads=1
    )
    load_s = time.perf_counter() - start
    target = "fra_Latn"

    def call(sources, length):
        return translator.translate_batch(
            sources,
            target_prefix=[[target]] * len(sources),
            beam_size=beam,
            num_hypotheses=hypotheses,
            max_batch_size=MAX_BATCH_SIZE,
            batch_type=BATCH_TYPE,
            min_decoding_length=length + 1,  # the target prefix counts in the decoding length
            max_decoding_length=length + 1,
            return_scores=True,
        )

    call(_sources(vocabulary, 2, source, seed=1), 4)  # warm-up
    sources = _sources(vocabulary, inputs, source, seed=0)
    start = time.perf_counter()
    results = call(sources, tokens)
    seconds = time.perf_counter() - start
    lengths = [len(h) - 1 for r in results for h in r.hypotheses]  # prefix left out
    best = sum(len(r.hypotheses[0]) - 1 for r in results)
    return {
        "inputs": inputs,
        "source_tokens": source + 2,
        "output_tokens": tokens,
        "output_tokens_measured": sorted(set(lengths)),
        "beam_size": beam,
        "num_hypotheses": hypotheses,
        "max_batch_size": MAX_BATCH_SIZE,
        "batch_type": BATCH_TYPE,
        "threads": threads,
        "compute_type": "int8",
        "cpu_isa": cpu_isa or "machine default",
        "load_s": round(load_s, 2),
        "seconds": round(seconds, 2),
        "sentences_per_s": round(inputs / seconds, 3),
        "tokens_per_s": round(best / seconds, 2),  # output tokens of the best hypotheses
        "hypotheses_per_s": round(len(lengths) / seconds, 2),
    }


def run_nllb(args) -> dict:
    isa = None if args.cpu_isa == "none" else args.cpu_isa
    with tempfile.TemporaryDirectory() as scratch:
        # About 4 GB on disk: the float16 checkpoint and its int8 conversion.
        workdir = Path(args.workdir) / "nllb-1.3b-random" if args.workdir else Path(scratch)
        build = None
        if not (workdir / "ct2" / "model.bin").is_file():
            print("building NLLB-200 1.3B (random weights) and converting it to CTranslate2 int8 ...", flush=True)
            build = in_process("nllb_build", workdir=str(workdir), cpu_isa=None)
            print(
                f"  {build['parameters']:,} parameters, CTranslate2 vocabulary {build['ct2_vocabulary']:,}, "
                f"model.bin {build['ct2_model_mib']} MiB; built in {build['build_s']} s, converted in "
                f"{build['convert_s']} s; peak RSS {build['peak_rss_mib']} MiB",
                flush=True,
            )
        common = dict(workdir=str(workdir), cpu_isa=isa, threads=args.threads)
        prompts = in_process(
            "nllb_time",
            **common,
            inputs=args.prompt_inputs,
            tokens=args.prompt_tokens,
            beam=4,
            hypotheses=1,
            source=args.prompt_tokens,
        )
        _print_nllb("prompts stage (beam 4, 1 hypothesis)", prompts)
        captions = in_process(
            "nllb_time",
            **common,
            inputs=args.caption_inputs,
            tokens=args.caption_tokens,
            beam=100,
            hypotheses=25,
            source=args.caption_tokens,
        )
        _print_nllb("captions stage, paper setting (beam 100, 25 hypotheses)", captions)
    return {"model": NLLB_ID, "config": NLLB_CONFIG, "build": build, "prompts": prompts, "captions": captions}


def _print_nllb(label: str, r: dict) -> None:
    print(
        f"NLLB-200 1.3B, {label}: {r['sentences_per_s']} sentences/s, {r['tokens_per_s']} output tokens/s "
        f"({r['hypotheses_per_s']} hypotheses/s); {r['inputs']} inputs of {r['source_tokens']} source tokens, "
        f"outputs forced to {r['output_tokens']} tokens (measured {r['output_tokens_measured']}), "
        f"max_batch_size {r['max_batch_size']} {r['batch_type']}, {r['compute_type']}, {r['threads']} threads, "
        f"ISA {r['cpu_isa']}; {r['seconds']} s; peak RSS {r['peak_rss_mib']} MiB (model load {r['load_s']} s)",
        flush=True,
    )


# ---------------------------------------------------------------- COMETKiwi


def kiwi_time(cpu_isa: str | None, threads: int, pairs: int, side_tokens: int) -> dict:
    """A random-weight COMETKiwi with the real encoder and estimator sizes, scored by KiwiScorer."""
    import torch
    from comet.models import UnifiedMetric
    from transformers import XLMRobertaConfig, XLMRobertaTokenizerFast

    from babelforge.captions.qe import KiwiScorer, _quiet_lightning, _train_tokenizer

    _threads(threads)
    sources, translations, corpus = xtd_pairs(n=None)  # every pair, shuffled (benchmarks/kiwi.py)
    with tempfile.TemporaryDirectory() as scratch:
        encoder_dir = Path(scratch) / "encoder"
        encoder_dir.mkdir()
        _train_tokenizer(sorted(set(corpus)), encoder_dir, vocab_size=8000)
        XLMRobertaConfig(**INFOXLM_LARGE).save_pretrained(str(encoder_dir))
        tokenizer = XLMRobertaTokenizerFast.from_pretrained(str(encoder_dir), local_files_only=True)

        def cut(text: str) -> str:
            ids = tokenizer(text, add_special_tokens=False)["input_ids"][:side_tokens]
            return tokenizer.decode(ids).strip()

        def long_enough(text: str) -> bool:
            return len(tokenizer(text, add_special_tokens=False)["input_ids"]) >= side_tokens

        kept = [(s, t) for s, t in zip(sources, translations) if long_enough(s) and long_enough(t)][:pairs]
        sources, translations = [cut(s) for s, _ in kept], [cut(t) for _, t in kept]
        start = time.perf_counter()
        torch.manual_seed(0)
        with _quiet_lightning():
            model = UnifiedMetric(
                pretrained_model=str(encoder_dir),
                load_pretrained_weights=False,
                local_files_only=True,
                batch_size=KIWI_BATCH,
                **KIWI_HPARAMS,
            )
        model.eval()
        build_s = time.perf_counter() - start
        parameters = sum(p.numel() for p in model.parameters())
    # COMET joins a pair as `<s> mt </s></s> src </s>`.
    lengths = [len(ids) for ids in tokenizer(translations, sources)["input_ids"]]
    scorer = KiwiScorer(model, batch_size=KIWI_BATCH, device="cpu", length_sorted=True)
    scorer.score(sources[-KIWI_BATCH:], [f"{t} ." for t in translations[-KIWI_BATCH:]])  # warm-up, other pairs
    start = time.perf_counter()
    scores = scorer.score(sources, translations)
    seconds = time.perf_counter() - start
    return {
        "pairs": len(scores),
        "tokens_per_pair_mean": round(sum(lengths) / len(lengths), 1),
        "tokens_per_pair_range": [min(lengths), max(lengths)],
        "batch_size": KIWI_BATCH,
        "length_sorted": True,
        "threads": threads,
        "dtype": "float32",
        "cpu_isa": cpu_isa or "machine default",
        "parameters": parameters,
        "build_s": round(build_s, 1),
        "seconds": round(seconds, 2),
        "pairs_per_s": round(len(scores) / seconds, 3),
    }


def run_kiwi(args) -> dict:
    isa = None if args.cpu_isa == "none" else args.cpu_isa
    r = in_process(
        "kiwi_time", cpu_isa=isa, threads=args.threads, pairs=args.kiwi_pairs, side_tokens=args.kiwi_side_tokens
    )
    print(
        f"COMETKiwi (InfoXLM-large encoder, estimator 3072/1024): {r['pairs_per_s']} pairs/s; {r['pairs']} pairs "
        f"of {r['tokens_per_pair_mean']} tokens on average ({r['tokens_per_pair_range'][0]}-"
        f"{r['tokens_per_pair_range'][1]}), batch {r['batch_size']} length-sorted, fp32, {r['threads']} threads, "
        f"ISA {r['cpu_isa']}; {r['seconds']} s; {r['parameters']:,} parameters; peak RSS {r['peak_rss_mib']} MiB",
        flush=True,
    )
    return {"model": KIWI_ID, "encoder_config": INFOXLM_LARGE, "hparams": KIWI_HPARAMS, "scoring": r}


# ---------------------------------------------------------------- CLIP ViT-B/32


def clip_time(cpu_isa: str | None, threads: int, batches: int, text_tokens: int) -> dict:
    import numpy as np
    import torch
    from PIL import Image
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    _threads(threads)
    config = CLIPConfig(
        text_config=CLIP_TEXT,
        vision_config=CLIP_VISION,
        projection_dim=CLIP_PROJECTION,
        logit_scale_init_value=CLIP_LOGIT_SCALE,
    )
    torch.manual_seed(0)
    model = CLIPModel(config).eval()
    parameters = sum(p.numel() for p in model.parameters())
    image_batch, text_batch = 64, 256
    generator = torch.Generator().manual_seed(0)
    pixels = torch.randn(image_batch, 3, 224, 224, generator=generator)
    ids = torch.randint(3, 49406, (text_batch, text_tokens), generator=generator)
    ids[:, 0], ids[:, -1] = 49406, 49407  # <|startoftext|> ... <|endoftext|>
    mask = torch.ones_like(ids)

    def timed(function) -> float:
        with torch.inference_mode():
            function()  # warm-up
            start = time.perf_counter()
            for _ in range(batches):
                function()
            return time.perf_counter() - start

    image_s = timed(lambda: model.get_image_features(pixel_values=pixels))
    text_s = timed(lambda: model.get_text_features(input_ids=ids, attention_mask=mask))
    # The checkpoint's preprocessing (resize shortest side 224, centre crop, normalise) of camera-sized images.
    processor = CLIPImageProcessor(
        size={"shortest_edge": 224},
        crop_size={"height": 224, "width": 224},
        image_mean=[0.48145466, 0.4578275, 0.40821073],
        image_std=[0.26862954, 0.26130258, 0.27577711],
    )
    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)) for _ in range(image_batch)]
    processor(images=images[:4], return_tensors="pt")
    start = time.perf_counter()
    processor(images=images, return_tensors="pt")
    processor_s = time.perf_counter() - start
    return {
        "parameters": parameters,
        "threads": threads,
        "dtype": "float32",
        "cpu_isa": cpu_isa or "machine default",
        "image_batch": image_batch,
        "image_px": 224,
        "images": image_batch * batches,
        "image_seconds": round(image_s, 2),
        "images_per_s": round(image_batch * batches / image_s, 2),
        "text_batch": text_batch,
        "text_tokens": text_tokens,
        "texts": text_batch * batches,
        "text_seconds": round(text_s, 2),
        "texts_per_s": round(text_batch * batches / text_s, 1),
        "processor_image_size": [640, 480],
        "processor_images_per_s": round(image_batch / processor_s, 1),
    }


def run_clip(args) -> dict:
    isa = None if args.cpu_isa == "none" else args.cpu_isa
    r = in_process("clip_time", cpu_isa=isa, threads=args.threads, batches=args.clip_batches, text_tokens=12)
    settings = f"fp32, {r['threads']} threads, ISA {r['cpu_isa']}"
    print(
        f"CLIP ViT-B/32 image embeddings: {r['images_per_s']} images/s ({r['images']} images at 224 px, batch "
        f"{r['image_batch']}, {settings}; {r['image_seconds']} s)",
        flush=True,
    )
    print(
        f"CLIP ViT-B/32 text embeddings: {r['texts_per_s']} texts/s ({r['texts']} texts of {r['text_tokens']} "
        f"tokens, batch {r['text_batch']}, {settings}; {r['text_seconds']} s)",
        flush=True,
    )
    print(
        f"CLIP image preprocessing (640 x 480 -> 224 px): {r['processor_images_per_s']} images/s; "
        f"peak RSS {r['peak_rss_mib']} MiB; {r['parameters']:,} parameters",
        flush=True,
    )
    return {"model": CLIP_ID, "text_config": CLIP_TEXT, "vision_config": CLIP_VISION, "embedding": r}


# ---------------------------------------------------------------- main


def write_results(parts: dict) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    try:
        existing = json.loads(RESULTS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        existing = {}
    existing.setdefault("parts", {}).update(parts)
    existing["machine"] = {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine()}
    temporary = RESULTS.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(existing, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    temporary.replace(RESULTS)


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--only", action="append", choices=PARTS, help="run this part (repeatable)")
    parser.add_argument("--all", action="store_true", help="every part (about 11 minutes on 2 cores)")
    parser.add_argument("--threads", type=int, default=2, help="torch and CTranslate2 CPU threads")
    parser.add_argument("--cpu-isa", default="AVX2", help="GENERIC, AVX, AVX2 (the project's pin) or none")
    parser.add_argument("--prompt-inputs", type=int, default=PROMPT_INPUTS, help="inputs of the prompts call")
    parser.add_argument("--prompt-tokens", type=int, default=12, help="source and output tokens of a prompt")
    parser.add_argument("--caption-inputs", type=int, default=4, help="captions translated at beam 100")
    parser.add_argument("--caption-tokens", type=int, default=20, help="source and output tokens of a caption")
    parser.add_argument("--kiwi-pairs", type=int, default=256, help="pairs of the COMETKiwi call")
    parser.add_argument("--kiwi-side-tokens", type=int, default=18, help="tokens kept of each source and MT text")
    parser.add_argument("--clip-batches", type=int, default=4, help="timed batches of images and of texts")
    parser.add_argument("--workdir", default=None, help="keep the converted NLLB here (reused when present)")
    args = parser.parse_args()
    if not args.only and not args.all:
        # The parts take minutes each and replace their saved results, so a plain run says what to choose.
        parser.error(
            "choose --only clip (about 1.5 minutes on 2 cores), --only kiwi (about 2), --only nllb (about 8) "
            "or --all (about 11)"
        )
    runners = {"nllb": run_nllb, "kiwi": run_kiwi, "clip": run_clip}
    for part in args.only or PARTS:
        # The machine is shared: the load average before and after says how quiet it was.
        load_before = round(os.getloadavg()[0], 2)
        start = time.perf_counter()
        result = runners[part](args)
        result["part_wall_s"] = round(time.perf_counter() - start, 1)
        result["load_average_1min"] = [load_before, round(os.getloadavg()[0], 2)]
        result["measured"] = date.today().isoformat()
        result["command"] = " ".join(["benchmarks/real_size_rates.py", *sys.argv[1:]])
        print(f"{part}: {result['part_wall_s']} s in all; load average {result['load_average_1min']}", flush=True)
        write_results({part: result})
    print(f"written: {RESULTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
