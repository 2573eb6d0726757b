"""Time the `wordnet -> senses -> labels` chain for every language from the source mirror.

Run from the repo root: `.venv/bin/python benchmarks/labels_build.py [--mirror ../shared/data]`.
Prints each stage's wall time and the total (target: under 60 s on a 2-core machine).
Builds into a temporary directory; nothing in data/ is touched.
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
    parser.add_argument("--mirror", default="../shared/data")
    args = parser.parse_args()
    params = yaml.safe_load(Path("params.yaml").read_text())
    params["profile"] = "sample"
    params["senses"]["omw_dir"] = str(Path(args.mirror, "omw").resolve())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "params.yaml").write_text(yaml.safe_dump(params))
        p = str(tmp / "params.yaml")
        steps = [
            ("wordnet", ["wordnet", "--params", p, "--out", str(tmp / "wordnet.parquet")]),
            (
                "senses",
                ["senses", "--params", p, "--wordnet", str(tmp / "wordnet.parquet"), "--out", str(tmp / "senses")],
            ),
            (
                "labels",
                [
                    "labels",
                    "--params",
                    p,
                    "--wordnet",
                    str(tmp / "wordnet.parquet"),
                    "--senses",
                    str(tmp / "senses"),
                    "--out",
                    str(tmp / "bi" / "labels.parquet"),
                    "--languages",
                    str(tmp / "bi" / "languages.parquet"),
                    "--candidates",
                    str(tmp / "bi" / "candidates.parquet"),
                    "--metrics",
                    str(tmp / "metrics"),
                ],
            ),
        ]
        total = 0.0
        for name, argv in steps:
            start = time.perf_counter()
            if cli(argv) != 0:
                raise SystemExit(f"{name} failed")
            elapsed = time.perf_counter() - start
            total += elapsed
            print(f"{name:<8} {elapsed:7.2f} s")
        import pandas as pd

        languages = pd.read_parquet(tmp / "bi" / "languages.parquet")
        labels = pd.read_parquet(tmp / "bi" / "labels.parquet")
        print(f"{'total':<8} {total:7.2f} s   ({len(labels)} labels, {len(languages)} languages; target < 60 s)")


if __name__ == "__main__":
    main()
