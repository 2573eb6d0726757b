"""Zero-shot over many languages: image-embedding cache vs re-encoding the images per language.

Builds the tiny CLIP and a drawn image set in a temporary folder, then evaluates the
same synthetic languages twice on the same model:
  cached     - `babelforge.eval.zeroshot.rows.zeroshot_rows` with an empty on-disk cache: the images are
               encoded once (cold cache, included in the time) and reused by every language;
  re-encode  - the same per-language evaluation, encoding the images again for each language
               (what an evaluation loop without the cache does).
Prints both times and the ratio (target >= 10x for 50 languages and 5,000 images), and checks that both
ways give the same accuracies.

    python benchmarks/eval_cache.py                 # 1,000 images: about half a minute on 2 cores
    python benchmarks/eval_cache.py --images 5000   # 50 per class, as in ImageNet val: about 2 minutes
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from bench_cli import benchmark_parser

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--languages", type=int, default=50, help="label languages evaluated")
    parser.add_argument(
        "--images",
        type=int,
        default=1000,
        # Re-encoding costs images x languages: 5,000 (50 per class, as in ImageNet val) takes minutes.
        help="images in the evaluation set (5000: 50 per class, as in ImageNet val, about 2 minutes)",
    )
    parser.add_argument("--classes", type=int, default=100, help="classes with images; each language labels all")
    parser.add_argument("--templates", type=int, default=4, help="prompt templates per class")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args()

    import numpy as np
    import torch

    from babelforge.eval.cache import ImageEmbeddingCache
    from babelforge.eval.images import ImageSet
    from babelforge.eval.models import load_model
    from babelforge.eval.sample.images_stage import draw_image
    from babelforge.eval.sample.tiny_clip_stage import build_tiny_clip
    from babelforge.eval.zeroshot.metric import evaluate_language
    from babelforge.eval.zeroshot.rows import zeroshot_rows

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = load_model(str(build_tiny_clip(tmp / "tiny_clip", seed=0)), device="cpu")
        files, targets = [], []
        for i in range(args.images):
            cls = i % args.classes
            name = f"{cls:04d}_{i}.png"
            draw_image(name, 64, family=str(cls)).save(tmp / name)
            files.append(name)
            targets.append(cls)
        image_set = ImageSet(tmp, tuple(files), tuple(targets))
        templates = [f"a photo of a {{}} number {t}." for t in range(args.templates)]
        labels = {f"l{n:02d}_Test": {c: f"label {n} {c}" for c in range(args.classes)} for n in range(args.languages)}
        start = time.perf_counter()
        image_set_hash = image_set.content_hash()  # the cache key reads every image once
        cache = ImageEmbeddingCache(tmp / "cache")
        cached_rows = zeroshot_rows(
            model,
            image_set,
            cache,
            labels,
            templates,
            prompt_sets=["english"],
            control_classes=args.classes,
            control_repeats=1,
            image_set_hash=image_set_hash,
        )
        cached = time.perf_counter() - start

        start = time.perf_counter()
        reencoded_top1 = []
        for lang in sorted(labels):
            image_emb = model.encode_images(image_set.paths)
            metrics = evaluate_language(
                model.encode_texts,
                image_emb,
                targets,
                labels[lang],
                templates,
                control_classes=args.classes,
                control_repeats=1,
            )
            reencoded_top1.append(metrics["top1"])
        reencode = time.perf_counter() - start

    assert np.allclose([r["top1"] for r in cached_rows], reencoded_top1), "cache changed the results"
    print(
        f"setup: {args.languages} languages x {args.classes} classes x {args.templates} templates, "
        f"{args.images} images, tiny CLIP on CPU ({args.threads} thread)"
    )
    print(f"cached (images encoded once, cold cache):  {cached:8.2f} s  (image encodes: {cache.misses})")
    print(f"re-encoding images for every language:     {reencode:8.2f} s  (image encodes: {args.languages})")
    # the target is set for ImageNet val's size: on fewer images the text encoding weighs more
    target = " (target >= 10x)" if args.images >= 5000 else " (the 10x target is for --images 5000)"
    print(f"speed-up: {reencode / cached:.1f}x{target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
