"""Model families on the CPU: images/s and texts/s of each family's code path, as ratios to the
transformers CLIP path, and the memory each load adds.

Builds a tiny random model of each family with its own library (the tests' builders:
babelforge.eval.sample.tiny_clip_stage, tests/eval/tiny_open_clip.py, tests/eval/tiny_text_only.py) in a
temporary folder, then measures each in a process of its own, so one family's imports and
allocations do not count for the next: the resident memory the family's library adds to torch and
transformers (which every family imports), the memory the model's load adds, the load time, then `encode_images` over drawn images and
`encode_texts` over multilingual prompts (best of --repeats).

The tiny models differ in size (a 1-layer ViT of 32 px beside a 2-layer XLM-R), so the figures
compare what each family's path costs around a model this small: preprocessing, tokenising,
batching, normalising. Real checkpoints are dominated by their transformer layers instead.

    python benchmarks/eval_families.py [--images 256] [--texts 1024] [--repeats 3] [--threads 1] [--every-tower]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_cli import benchmark_parser

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# The library each family's loader imports beyond torch and transformers (hf: none).
FAMILY_LIBRARIES = {
    "hf": "transformers",
    "open_clip": "open_clip",
    "mclip": "multilingual_clip.pt_multilingual_clip",
    "st": "sentence_transformers",
}
LANGUAGE_WORDS = (
    "goldfish",
    "Goldfisch",
    "poisson rouge",
    "золотая рыбка",
    "金魚",
    "金鱼",
    "سمكة ذهبية",
    "सुनहरी मछली",
    "ወርቃማ ዓሣ",
    "χρυσόψαρο",
)


def build_models(folder: Path, every_tower: bool) -> dict[str, str]:
    """label -> spec of each family's tiny model (the tiny CLIP is the baseline and M-CLIP's and the
    sentence-transformers model's image tower); open_clip's XLM-R and NLLB-SigLIP towers only with
    `every_tower` (the tiny NLLB they need is the slowest build)."""
    from babelforge.eval.sample.tiny_clip_stage import build_tiny_clip
    from babelforge.translation.tiny import build_tiny_hf
    from tests.eval.tiny_open_clip import build_clip_bpe, build_nllb_siglip, build_xlmr_clip
    from tests.eval.tiny_text_only import build_tiny_mclip, build_tiny_st, build_tiny_xlmr

    clip = build_tiny_clip(folder / "clip", seed=0)
    xlmr = build_tiny_xlmr(folder / "xlmr", seed=0)
    specs = {
        "hf (transformers CLIP)": str(clip),
        "open_clip (CLIP, byte-pair)": str(build_clip_bpe(folder / "oc-bpe", seed=0)),
    }
    if every_tower:
        nllb = build_tiny_hf(folder / "nllb", REPO / ".." / "shared" / "data" / "sib-200" / "annotated", seed=0)
        specs["open_clip (XLM-R tower)"] = str(build_xlmr_clip(folder / "oc-xlmr", seed=0))
        specs["open_clip (NLLB-SigLIP)"] = str(build_nllb_siglip(folder / "oc-nllb", nllb, seed=0))
    specs["mclip (+ tiny CLIP images)"] = f"{build_tiny_mclip(folder / 'mclip', xlmr, seed=0)}+{clip}"
    specs["st (+ tiny CLIP images)"] = f"{build_tiny_st(folder / 'st', xlmr, seed=0)}+{clip}"
    return specs


def rss_mb() -> float:
    """This process's resident memory now (Linux: /proc/self/statm's resident pages)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure(spec: str, images: Path, texts: list[str], repeats: int, threads: int) -> dict:
    """One family in this process: memory and time of its import and load, then throughput."""
    import torch
    import transformers  # noqa: F401  (every family loads its text or image tower through it)

    torch.set_num_threads(threads)
    from babelforge.eval.families import parse_spec
    from babelforge.eval.models import load_model

    base = rss_mb()  # torch and transformers in: what every family shares
    importlib.import_module(FAMILY_LIBRARIES[parse_spec(spec).family])
    imported = rss_mb()
    start = time.perf_counter()
    model = load_model(spec, device="cpu")
    load_s = time.perf_counter() - start
    loaded = rss_mb()
    files = sorted(images.iterdir())
    model.encode_images(files[:8])
    model.encode_texts(texts[:8])  # warm: first-call allocations are not throughput
    image_s = min(_timed(lambda: model.encode_images(files)) for _ in range(repeats))
    text_s = min(_timed(lambda: model.encode_texts(texts)) for _ in range(repeats))
    return {
        "import_mb": imported - base,
        "load_mb": loaded - imported,
        "load_s": load_s,
        "images_per_s": len(files) / image_s,
        "texts_per_s": len(texts) / text_s,
        "dim": model.embedding_dim,
    }


def _timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--images", type=int, default=256, help="drawn images encoded per repeat (64 px)")
    parser.add_argument("--texts", type=int, default=1024, help="prompts encoded per repeat")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many timed passes")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument(
        "--every-tower",
        action="store_true",
        help="also open_clip's XLM-R and NLLB-SigLIP towers (the docs' figures; about 90 s on 2 cores, "
        "against under a minute without)",
    )
    parser.add_argument("--measure", metavar="SPEC", help=argparse.SUPPRESS)  # the child process's one model
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.measure:
        texts = json.loads((args.workdir / "texts.json").read_text(encoding="utf-8"))
        result = measure(args.measure, args.workdir / "images", texts, args.repeats, args.threads)
        print(json.dumps(result))
        return 0

    from babelforge.babel_imagenet.prompts import read_templates
    from babelforge.eval.labels import ENGLISH_TEMPLATES
    from babelforge.eval.sample.images_stage import draw_image

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "images").mkdir()
        for i in range(args.images):
            draw_image(f"{i:05d}.png", 64, family=str(i % 20)).save(work / "images" / f"{i:05d}.png")
        templates = read_templates(ENGLISH_TEMPLATES)
        texts = [
            templates[i % len(templates)].replace("{}", LANGUAGE_WORDS[i % len(LANGUAGE_WORDS)])
            for i in range(args.texts)
        ]
        (work / "texts.json").write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
        specs = build_models(work / "models", args.every_tower)
        results = {}
        for label, spec in specs.items():
            command = [sys.executable, __file__, "--measure", spec, "--workdir", str(work)]
            command += ["--repeats", str(args.repeats), "--threads", str(args.threads)]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            results[label] = json.loads(done.stdout.strip().splitlines()[-1])
    baseline = results["hf (transformers CLIP)"]
    print(
        f"{args.images} images (64 px), {args.texts} prompts in 10 scripts; CPU, {args.threads} thread(s); best of {args.repeats}"
    )
    header = f"{'family (tiny model)':30} {'images/s':>9} {'ratio':>6} {'texts/s':>9} {'ratio':>6} {'import MB':>9} {'load MB':>8} {'load s':>7}"
    print(header)
    print("-" * len(header))
    for label, r in results.items():
        print(
            f"{label:30} {r['images_per_s']:9.0f} {r['images_per_s'] / baseline['images_per_s']:6.2f} "
            f"{r['texts_per_s']:9.0f} {r['texts_per_s'] / baseline['texts_per_s']:6.2f} "
            f"{r['import_mb']:9.0f} {r['load_mb']:8.1f} {r['load_s']:7.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
