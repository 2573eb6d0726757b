"""Time `babelforge prompts` when only the label language list changes: cold, then reusing the cache.

Run from the repo root: `.venv/bin/python benchmarks/prompts_reuse.py [--languages 20] [--drop 5]`.
Builds the tiny NLLB model (sample profile) in a temporary folder, translates the templates into
N registry languages with an empty translation cache, then reruns the stage on N - drop of them
(what `-S labels.min_classes=20` does to the language list) with the cache and without it.
Prints the three wall times. Nothing in data/ or .cache/ is touched.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import yaml
from bench_cli import benchmark_parser

from babelforge.cli import main as cli


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--mirror", default="../shared/data", help="the source mirror (SIB-200 for the tiny model)")
    parser.add_argument("--languages", type=int, default=20, help="label languages of the first run")
    parser.add_argument("--drop", type=int, default=5, help="languages the second run no longer has")
    args = parser.parse_args()

    import pandas as pd

    from babelforge.core.io import write_table
    from babelforge.core.languages import REGISTRY_PATH, read_registry
    from babelforge.translation.tiny import build_tiny_nllb

    registry = read_registry(REGISTRY_PATH)
    keys = sorted(key for key in registry.keys() if registry.get(key).nllb and not key.startswith("eng_"))
    keys = keys[:: max(1, len(keys) // args.languages)][: args.languages]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = build_tiny_nllb(tmp / "nllb", sib_dir=Path(args.mirror, "sib-200", "annotated").resolve()) / "ct2"
        params = yaml.safe_load(Path("params.yaml").read_text(encoding="utf-8"))
        params["profile"] = "sample"

        def run(languages: list[str], cache: str | None) -> float:
            params["prompts"]["cache"] = cache
            (tmp / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
            write_table(
                pd.DataFrame({"lang": languages, "n_classes": [100] * len(languages)}),
                tmp / "languages.parquet",
                sort_by=["lang"],
            )
            start = time.perf_counter()
            code = cli(
                [
                    "prompts",
                    "--params",
                    str(tmp / "params.yaml"),
                    "--languages",
                    str(tmp / "languages.parquet"),
                    "--model",
                    str(model),
                    "--out",
                    str(tmp / "prompts.parquet"),
                    "--summary",
                    str(tmp / "summary.json"),
                ]
            )
            if code != 0:
                raise SystemExit("prompts failed")
            return time.perf_counter() - start

        cache = str(tmp / "translations")
        cold = run(keys, cache)
        kept = keys[: len(keys) - args.drop]
        warm = run(kept, cache)
        uncached = run(kept, None)
        print(f"{len(keys)} languages, empty cache:              {cold:7.2f} s")
        print(f"{len(kept)} languages, every translation reused: {warm:7.2f} s")
        print(f"{len(kept)} languages, no cache (before):        {uncached:7.2f} s  ({uncached / warm:.1f}x the reuse)")


if __name__ == "__main__":
    main()
