"""Translation throughput: the original release's method vs batching vs CTranslate2.

Runs the tiny NLLB-architecture model (built locally, random weights: the work per
sentence is real, the text is not) three ways on the same inputs: the 80 CLIP templates
in every slot strategy (+ the slot-less fallback input), for N target languages.

1. HF `generate`, one sentence at a time (how the original Babel-ImageNet prompts were made);
2. HF `generate`, batched (padding, `--hf-batch-size` sentences per call);
3. CTranslate2, batched by tokens, int8 (`NllbTranslator`, what the `prompts` stage runs).

Same beam size and maximum output length everywhere. Prints sentences/s and the ratios.

    python benchmarks/translate.py [--languages 1] [--beam-size 4] [--max-length 32] [--device auto]
    (one language: about half a minute on 2 cores; --languages 2, the docs' figures: about a minute)
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_cli import benchmark_parser

from babelforge.translation.placeholders import STRATEGIES, strategy_inputs  # noqa: E402

TARGETS = ["deu_Latn", "zho_Hans", "rus_Cyrl", "hin_Deva", "arb_Arab", "jpn_Jpan", "swh_Latn", "fra_Latn"]


def hf_generate(model, tokenizer, texts, targets, beam_size, max_length, batch_size, device):
    """Translate with transformers' generate; batches share a target language (forced BOS)."""
    import torch

    tokenizer.src_lang = "eng_Latn"
    outputs = []
    start = 0
    while start < len(texts):
        lang = targets[start]
        end = start
        while end < len(texts) and end - start < batch_size and targets[end] == lang:
            end += 1
        batch = tokenizer(texts[start:end], return_tensors="pt", padding=True).to(device)
        with torch.no_grad():
            generated = model.generate(
                **batch,
                forced_bos_token_id=tokenizer.convert_tokens_to_ids(lang),
                num_beams=beam_size,
                max_new_tokens=max_length,
                do_sample=False,
            )
        outputs += tokenizer.batch_decode(generated, skip_special_tokens=True)
        start = end
    return outputs


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def main(argv=None) -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument(
        "--languages", type=int, default=1, help=f"target languages (max {len(TARGETS)}; 2: the docs' figures)"
    )
    parser.add_argument("--beam-size", type=int, default=4, help="beam width of both decoders")
    parser.add_argument("--max-length", type=int, default=32, help="maximum output tokens")
    parser.add_argument("--hf-batch-size", type=int, default=64, help="sentences per transformers generate call")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--model-dir", default=None, help="a tiny-model root to reuse (default: build one)")
    parser.add_argument(
        "--sib-dir",
        default="../shared/data/sib-200/annotated",
        help="SIB-200 annotated/ (the tiny model's vocabulary text)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="CPU threads for torch and CTranslate2 alike (1 is fairest on a shared machine)",
    )
    args = parser.parse_args(argv)

    import ctranslate2
    import torch
    import transformers

    from babelforge.core.device import resolve_device
    from babelforge.translation.nllb import NllbTranslator
    from babelforge.translation.tiny import build_tiny_nllb

    device = resolve_device(args.device, runtime="ctranslate2")
    torch.set_num_threads(args.threads)
    templates = [
        line.strip()
        for line in (Path(__file__).resolve().parents[1] / "resources" / "clip_templates_en.txt")
        .read_text()
        .splitlines()
        if line.strip()
    ]
    per_language = strategy_inputs(templates, list(STRATEGIES.values()))
    texts, targets = [], []
    for lang in TARGETS[: args.languages]:
        texts += per_language
        targets += [lang] * len(per_language)

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(args.model_dir) if args.model_dir else build_tiny_nllb(Path(scratch) / "tiny", sib_dir=args.sib_dir)
        model = transformers.M2M100ForConditionalGeneration.from_pretrained(str(root / "hf")).eval().to(device)
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(root / "hf"), legacy_behaviour=False)
        translator = NllbTranslator(
            root,
            device=device,
            beam_size=args.beam_size,
            max_decoding_length=args.max_length,
            intra_threads=args.threads,
        )
        # Warm-up (allocations, OpenMP pools, CUDA context), not timed.
        hf_generate(model, tokenizer, texts[:4], targets[:4], args.beam_size, args.max_length, 4, device)
        translator.translate(texts[:4], "eng_Latn", targets[:4])

        _, t_single = timed(
            lambda: hf_generate(model, tokenizer, texts, targets, args.beam_size, args.max_length, 1, device)
        )
        _, t_batched = timed(
            lambda: hf_generate(
                model, tokenizer, texts, targets, args.beam_size, args.max_length, args.hf_batch_size, device
            )
        )
        _, t_ct2 = timed(lambda: translator.translate(texts, "eng_Latn", targets))

    n = len(texts)
    print(
        f"inputs: {n} sentences = {len(templates)} templates x {len(STRATEGIES) + 1} encodings x "
        f"{args.languages} languages; beam {args.beam_size}, max {args.max_length} tokens; device {device}; "
        f"torch {torch.__version__} ({torch.get_num_threads()} threads), ctranslate2 {ctranslate2.__version__} "
        f"({translator.compute_type})"
    )
    rows = [
        ("HF generate, one at a time", t_single),
        (f"HF generate, batched ({args.hf_batch_size})", t_batched),
        (f"CTranslate2 batched {translator.compute_type}", t_ct2),
    ]
    for name, seconds in rows:
        print(f"{name:<34} {seconds:8.2f} s {n / seconds:10.1f} sentences/s  {t_single / seconds:6.1f}x")
    ratio = t_single / t_ct2
    print(f"CTranslate2 batched vs one-at-a-time: {ratio:.1f}x (target >= 10x: {'met' if ratio >= 10 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
