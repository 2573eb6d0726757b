"""COMETKiwi scoring throughput: length-sorted vs unsorted batches, on the tiny checkpoint.

Pairs are real XTD data (English caption, human translation) in all ten languages, so
lengths vary as in a real run. Each setting is timed over the same pairs after one
warm-up batch; the scores of both settings are compared (order restored).

    python benchmarks/kiwi.py [--pairs 1000] [--batch-size 64] [--device auto]
    (1,000 pairs: well under a minute on 2 cores; --pairs 4000, the docs' figures: minutes under load)
                              [--model DIR]          # default: build the tiny checkpoint in a temp dir
                              [--sample-log FILE]    # also print the stage times of a sample run log
"""

from __future__ import annotations

import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

from bench_cli import benchmark_parser

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
XTD = REPO / ".." / "shared" / "data" / "xtd" / "xtd.json"


def xtd_pairs(n: int | None, seed: int = 0) -> tuple[list[str], list[str], list[str]]:
    """The first `n` (None: all) of XTD's (English caption, human translation) pairs, shuffled; and every caption."""
    import json

    data = json.loads(XTD.read_text(encoding="utf-8"))
    english = [c[0] for c in data["captions"]["en"]]
    pairs = [
        (english[i], caps[i][0])
        for code, caps in sorted(data["captions"].items())
        if code != "en"
        for i in range(len(english))
    ]
    random.Random(seed).shuffle(pairs)
    corpus = [c[0] for caps in data["captions"].values() for c in caps]
    return [s for s, _ in pairs[:n]], [t for _, t in pairs[:n]], corpus


def timed(scorer, sources, translations) -> tuple[float, float, list[float]]:
    """(wall seconds, this process's CPU seconds, scores): on a loaded machine the wall time grows with
    the load while the CPU seconds stay near the work done (torch's threads spinning add some)."""
    start, cpu = time.perf_counter(), time.process_time()
    scores = scorer.score(sources, translations)
    return time.perf_counter() - start, time.process_time() - cpu, scores


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--pairs", type=int, default=1000, help="source and MT pairs scored (4000: the docs' figures)")
    parser.add_argument("--batch-size", type=int, default=64, help="pairs per batch")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per setting, alternating; median kept")
    parser.add_argument("--model", default=None, help="COMET checkpoint dir (default: build the tiny one)")
    parser.add_argument("--sample-log", default=None, help="log of a sample run with '<stage> <seconds>' lines")
    args = parser.parse_args()

    from babelforge.captions.qe import KiwiScorer, build_tiny_kiwi, load_kiwi

    sources, translations, corpus = xtd_pairs(args.pairs)
    with tempfile.TemporaryDirectory() as scratch:
        model_dir = args.model
        if model_dir is None:
            start = time.perf_counter()
            model_dir = str(build_tiny_kiwi(Path(scratch) / "cometkiwi-tiny", corpus))
            print(f"tiny checkpoint built in {time.perf_counter() - start:.1f} s")
        model, _ = load_kiwi(model_dir)
        scorers = {
            flag: KiwiScorer(model, batch_size=args.batch_size, device=args.device, length_sorted=flag)
            for flag in (True, False)
        }
        scorers[True].score(sources[: 4 * args.batch_size], translations[: 4 * args.batch_size])  # warm-up
        # Alternate the settings so a change in machine load hits both alike.
        runs = {True: [], False: []}
        for _ in range(args.repeats):
            for flag, scorer in scorers.items():
                runs[flag].append(timed(scorer, sources, translations))
    scorer = scorers[True]
    n = len(sources)
    median = lambda results: sorted(results, key=lambda r: r[0])[len(results) // 2]  # noqa: E731
    (t_sorted, cpu_sorted, s_sorted), (t_plain, cpu_plain, s_plain) = median(runs[True]), median(runs[False])
    print(
        f"pairs: {n} (XTD en -> 10 languages), batch size {args.batch_size}, device {scorer.device}, "
        f"median of {args.repeats} alternating runs; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    print(f"length-sorted: {n / t_sorted:8.1f} items/s ({t_sorted:.2f} s; {cpu_sorted:.2f} s CPU)")
    print(f"unsorted:      {n / t_plain:8.1f} items/s ({t_plain:.2f} s; {cpu_plain:.2f} s CPU)")
    print(f"speed-up from length sorting: {t_plain / t_sorted:.2f}x")
    print(f"largest score difference between the two orders: {max(abs(a - b) for a, b in zip(s_sorted, s_plain)):.2e}")
    if args.sample_log:
        times = dict(re.findall(r"^(\w+) ([0-9.]+)$", Path(args.sample_log).read_text(), flags=re.M))
        for stage, seconds in times.items():
            print(f"sample run {stage}: {float(seconds):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
