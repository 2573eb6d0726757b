"""The sharded image-embedding cache: what shards cost, what a warm cache saves, local vs Ray.

Builds the tiny CLIP and a drawn image set in a temporary folder, then encodes the set
  one call   - `encode_images` over the whole set (the cache's old, unsharded way; no writing);
  sharded    - `ImageEmbeddingCache` with an empty folder, per shard size: encode, write shards
               and manifests, read back (cold), then a new cache reading the shards (warm);
  ray        - (with --ray) the same on a local Ray Data actor pool (`--actors` actors, one model
               load each; Ray's start and the actors' model loads included).
Prints the times and the sharded cache's overhead, and checks every way gives the same bytes.

    python benchmarks/eval_shards.py [--images 4096] [--shard-sizes 256,1024,4096] [--ray] [--actors 2]
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
    parser.add_argument("--images", type=int, default=4096, help="drawn 64 px images in the set")
    parser.add_argument("--shard-sizes", default="256,1024,4096", help="comma list of eval.runner.shard_size values")
    parser.add_argument("--batch-size", type=int, default=64, help="eval.runner.batch_size")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (here and in each actor)")
    parser.add_argument("--ray", action="store_true", help="also encode on a local Ray Data actor pool")
    parser.add_argument("--actors", type=int, default=2, help="ray: actors (eval.runner.concurrency)")
    args = parser.parse_args()

    import numpy as np
    import torch

    from babelforge.core.progress import info
    from babelforge.eval.cache import EvalRunnerConfig, ImageEmbeddingCache
    from babelforge.eval.images import ImageSet
    from babelforge.eval.models import load_model
    from babelforge.eval.sample.images_stage import draw_image
    from babelforge.eval.sample.tiny_clip_stage import build_tiny_clip

    torch.set_num_threads(args.threads)
    sizes = [int(size) for size in args.shard_sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = load_model(str(build_tiny_clip(tmp / "tiny_clip", seed=0)), device="cpu")
        names = [f"{i:06d}.png" for i in range(args.images)]
        for i, name in enumerate(names):
            draw_image(name, 64, family=str(i % 100)).save(tmp / name)
        images = ImageSet(tmp, tuple(names))
        image_set_hash = images.content_hash()
        info(f"setup: {args.images} drawn images, tiny CLIP on CPU ({args.threads} thread), batch {args.batch_size}")

        # warm-up: the first shard written pays for imports (Parquet, zstd) that no timing should carry
        ImageEmbeddingCache(tmp / "warm-up").embeddings(model, ImageSet(tmp, tuple(names[:8])))
        start = time.perf_counter()
        whole = np.asarray(model.encode_images(images.paths, batch_size=args.batch_size), np.float32)
        one_call = time.perf_counter() - start
        lines = [f"one call (no cache):          {one_call:7.2f} s  {args.images / one_call:7.0f} images/s"]

        for size in sizes:
            runner = EvalRunnerConfig(shard_size=size, batch_size=args.batch_size)
            start = time.perf_counter()
            cold = ImageEmbeddingCache(tmp / f"cache-{size}", runner)
            vectors = cold.embeddings(model, images, image_set_hash)
            cold_s = time.perf_counter() - start
            start = time.perf_counter()
            warm = ImageEmbeddingCache(tmp / f"cache-{size}", runner).embeddings(model, images, image_set_hash)
            warm_s = time.perf_counter() - start
            assert vectors.tobytes() == whole.tobytes() == warm.tobytes(), "sharding changed the vectors"
            lines.append(
                f"sharded, {cold.encoded_shards:4d} shards of {size:5d}: {cold_s:7.2f} s cold "
                f"({(cold_s - one_call) / one_call:+4.0%} vs one call), {warm_s:6.3f} s warm read"
            )

        if args.ray:
            runner = EvalRunnerConfig(
                runner="ray",
                shard_size=sizes[0],
                batch_size=args.batch_size,
                concurrency=args.actors,
                local_cpus=args.actors,
            )
            start = time.perf_counter()
            with ImageEmbeddingCache(tmp / "cache-ray", runner, threads=args.threads) as cache:
                vectors = cache.embeddings(model, images, image_set_hash)
            ray_s = time.perf_counter() - start
            assert vectors.tobytes() == whole.tobytes(), "ray changed the vectors"
            lines.append(
                f"ray, {args.actors} actors, shards of {sizes[0]}: {ray_s:7.2f} s "
                f"(Ray start and {args.actors} model loads included)"
            )

    print("\n".join(lines))
    print("every way gave byte-identical vectors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
