"""Time a reviewer's journey on a built project, and weigh and time the largest audit page.

Run from the repo root: `.venv/bin/python benchmarks/review_journey.py [--built DIR] [--until STAGE]`.
DIR is a checkout whose pipeline is built (`dvc repro` done: data/, models/, reports/, build/,
dvc.lock); default: this one. The benchmark works on a copy in a temporary folder (this
checkout's code, DIR's built outputs), so nothing here is touched:

1. catch up: `dvc repro` brings the copied outputs up to date with this code (not timed as journey);
2. the journey, timed: `babelforge review export <lang>`, three decisions (replace, reject, accept),
   `babelforge review import`, then `dvc repro STAGE` with each stage's seconds: `labels` by default (the
   decisions applied: under a minute in all on 2 cores), `card@babel-imagenet` for the audit and the card
   too (about 2 minutes), `all` for a plain `dvc repro` (the evaluations too: about 3 minutes);
3. the English audit page (1,000 classes): bytes, gzip bytes, and load time in headless Chromium
   (Navigation Timing loadEventEnd, median of 5 fresh loads).
"""

from __future__ import annotations

import asyncio
import csv
import gzip
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_cli import benchmark_parser  # noqa: E402

from tests.browser import chromium_page  # noqa: E402
from tests.project import command_env, copy_project  # noqa: E402

BUILT = ("data", "models", "reports", "build", ".cache", "dvc.lock")
DECISIONS = {  # German: the duplicate Fliege (fly / bow tie), Flügel (wing / grand piano), an accept
    "n02883205": {"decision": "replace", "new_label": "Querbinder"},
    "n03452741": {"decision": "reject"},
    "n01518878": {"decision": "accept"},
}


def sh(command: list[str], cwd: Path, env: dict) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
    return elapsed, result.stdout + result.stderr


def stages(output: str) -> list[str]:
    return re.findall(r"Running stage '([^']+)'", output)


def timed_repro(targets: list[str], cwd: Path, env: dict) -> tuple[float, dict[str, float]]:
    """`dvc repro TARGETS`: its seconds, and each stage's (from its "Running stage" line to the next
    stage's, or to the end), read from DVC's output as it comes."""
    start = time.perf_counter()
    process = subprocess.Popen(
        ["dvc", "repro", *targets], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    began: list[tuple[str, float]] = []
    lines = []
    for line in process.stdout:
        lines.append(line)
        if found := stages(line):
            began.append((found[0], time.perf_counter()))
    if process.wait() != 0:
        raise SystemExit(f"dvc repro {' '.join(targets)} failed:\n{''.join(lines)[-3000:]}")
    end = time.perf_counter()
    ends = [at for _, at in began[1:]] + [end]
    return end - start, {name: stop - at for (name, at), stop in zip(began, ends)}


def decide(sheet: Path) -> None:
    with sheet.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row.update(DECISIONS.get(row["wnid"], {}))
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


async def page_load_ms(page_path: Path, profile: Path, runs: int) -> list[float]:
    times = []
    for run in range(runs):
        async with chromium_page(profile / str(run)) as page:
            await page.open(page_path.as_uri())
            times.append(await page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
    return times


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--built", default=".", help="a checkout with the pipeline built (default: here)")
    parser.add_argument("--lang", default="deu_Latn", help="the language reviewed (its sheet is edited)")
    parser.add_argument("--runs", type=int, default=5, help="page loads to time")
    parser.add_argument(
        "--until",
        default="labels",
        help="the stage `dvc repro` rebuilds up to after the import (card@babel-imagenet: the audit and the card "
        "too); all: every stage the review reaches, the evaluations too",
    )
    args = parser.parse_args()
    built = Path(args.built).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        copy = copy_project(Path(tmp) / "project")
        (Path(tmp) / "shared").mkdir()  # the source mirror where params.yaml expects it: ../shared/data
        (Path(tmp) / "shared" / "data").symlink_to((built / ".." / "shared" / "data").resolve())
        for name in BUILT:
            source = built / name
            if source.is_dir():
                shutil.copytree(source, copy / name, symlinks=True, dirs_exist_ok=True)
            elif source.exists():
                shutil.copy2(source, copy / name)
        # DVC counts an output missing from its cache as changed: without the cache every stage
        # reruns. Hard links cost no space, and DVC never rewrites a cache file, it adds new ones.
        if (built / ".dvc" / "cache").is_dir():
            shutil.copytree(
                built / ".dvc" / "cache", copy / ".dvc" / "cache", copy_function=os.link, dirs_exist_ok=True
            )
        env = command_env(copy)
        elapsed, out = sh(["dvc", "repro"], copy, env)
        print(f"catch-up dvc repro  {elapsed:7.1f} s  ({len(stages(out))} stages: {', '.join(stages(out)) or 'none'})")

        sheet = Path(tmp) / f"{args.lang}.review.csv"
        t_export, _ = sh(["babelforge", "review", "export", args.lang, "--out", str(sheet)], copy, env)
        decide(sheet)
        t_import, _ = sh(["babelforge", "review", "import", str(sheet), "--reviewer", "benchmark"], copy, env)
        t_repro, seconds = timed_repro([] if args.until == "all" else [args.until], copy, env)
        print(f"review export       {t_export:7.1f} s")
        print(f"review import       {t_import:7.1f} s")
        command = "dvc repro" if args.until == "all" else f"dvc repro {args.until}"
        each = ", ".join(f"{name} {stage_s:.1f} s" for name, stage_s in seconds.items())
        print(f"{command:<19s} {t_repro:7.1f} s  ({each})")
        print(f"journey             {t_export + t_import + t_repro:7.1f} s")

        page = copy / "reports" / "audit" / "eng_Latn.html"
        data = page.read_bytes()
        rows = data.count(b'id="class-')
        times = asyncio.run(page_load_ms(page, Path(tmp) / "chromium", args.runs))
        print(
            f"eng_Latn.html       {len(data) / 1024:7.1f} KiB ({len(gzip.compress(data)) / 1024:.1f} KiB gzip), "
            f"{rows} class rows; load {statistics.median(times):.0f} ms median of {len(times)} "
            f"(min {min(times):.0f}, max {max(times):.0f})"
        )


if __name__ == "__main__":
    main()
