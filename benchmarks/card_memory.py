"""Benchmark: peak memory and wall time of one dataset's card stage on the built data.

Runs `babelforge card <dataset> --out <tmp>` in a child process over the artifacts params.yaml
names (for MVL-SIB: data/mvl_sib, read only) and prints the child's peak resident memory
(getrusage RUSAGE_CHILDREN ru_maxrss) and its wall time; the card is written to a temporary
folder (or --out), never to build/hub. The MVL-SIB card holds one config at a time, so its peak
is bounded by one config's rows, not by the dataset's millions (target: under 1 GB).

    python benchmarks/card_memory.py [--dataset mvl-sib] [--out DIR] [--code CHECKOUT] [--target-mb 1024]

`--code` runs the card of another checkout's code (a folder holding `builders/` and
`resources/`, e.g. `git archive HEAD builders resources | tar -x -C /tmp/base`), to measure the
code before a change on the same data.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_cli import benchmark_parser

REPO = Path(__file__).resolve().parents[1]

RUN_CARD = "import sys\nfrom babelforge.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def child_env(code: Path | None, scratch: Path) -> dict[str, str]:
    """The environment of the card process: with `code`, `babelforge` is that checkout's `builders/`."""

    env = dict(os.environ)
    if code is None:
        return env
    builders = code.resolve() / "builders"
    if not (builders / "__init__.py").is_file():
        raise SystemExit(f"--code {code}: no builders/__init__.py there")
    link = scratch / "code" / "babelforge"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(builders, target_is_directory=True)
    # before the editable install's finder, which sits after the path finder on sys.meta_path
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(link.parent), env.get("PYTHONPATH")]))
    return env


def run_card(dataset: str, out: Path, env: dict[str, str]) -> tuple[int, float, float]:
    """(exit status, wall seconds, peak RSS in MiB) of `babelforge card <dataset> --out <out>`."""

    command = [sys.executable, "-c", RUN_CARD, "card", dataset, "--out", str(out)]
    started = time.monotonic()
    status = subprocess.run(command, cwd=REPO, env=env).returncode
    wall = time.monotonic() - started
    # ru_maxrss is in KiB on Linux: the largest of the children waited for (only this one)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return status, wall, peak


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--dataset", default="mvl-sib", help="which dataset's card")
    parser.add_argument("--out", type=Path, help="folder of the card folder (default: a temporary folder, removed)")
    parser.add_argument("--code", type=Path, help="a checkout whose builders/ to run instead of this repo's")
    parser.add_argument("--target-mb", type=float, default=1024.0, help="peak RSS to stay under, in MB")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="card-memory-") as scratch:
        out = args.out or Path(scratch) / "hub"
        env = child_env(args.code, Path(scratch))
        status, wall, peak = run_card(args.dataset, out, env)
        card = out / args.dataset
        files = sum(1 for path in card.rglob("*") if path.is_file()) if card.is_dir() else 0
    code = args.code or REPO
    print(f"card {args.dataset} (code: {code}): exit {status}, {files} files")
    print(f"peak RSS: {peak:,.0f} MiB (target < {args.target_mb:,.0f} MiB)")
    print(f"wall time: {wall:.1f} s")
    if status != 0:
        return status
    return 0 if peak < args.target_mb else 1


if __name__ == "__main__":
    sys.exit(main())
