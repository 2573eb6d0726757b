"""The sharded MT captions stages at scale: memory, Ray throughput and overhead, kill -9 and resume.

    python benchmarks/captions_scale.py --only sizes        # one part (memory, throughput, overhead, kill, sizes)
    python benchmarks/captions_scale.py --all [--skip-ray]  # every part: tens of minutes on 2 cores

Needs the tiny models of the sample profile (`babelforge nllb`, `babelforge captions_kiwi_model`:
models/nllb-ct2, models/cometkiwi-tiny). Inputs are synthetic caption ids over the real XTD
English captions (data/raw/xtd/xtd.json, or the mirror's copy), written as CSV. To run in
minutes on a laptop the translation is cut down: one target language, beam 1, one hypothesis,
8 output tokens, one CPU thread per worker. Every figure is printed; nothing is asserted.

1. Peak RSS of `captions_translate` + `captions_tag` (one process, `ru_maxrss`) and of
   `captions_select` (another) at N and factor x N captions, shards of 10,000: the ratio says
   whether memory follows the shard or the input.
2. Throughput of `captions_translate`: the `ray` runner with 2 actors (a local Ray of 2 CPUs)
   against `local` with 1 worker, over the whole run (the stage's process start to end, and its
   runner alone) and steady (once under way), against what
   two plain `local` processes side by side reach (the machine's ceiling), and whether `local`
   and `ray` wrote the same bytes.
3. Ray's overhead per shard: a worker that does nothing, 100 shards, Ray against local.
4. kill -9 at a random moment of `captions_translate`, then a rerun: shards redone, and the
   output compared byte for byte with an uninterrupted run.
5. Bytes per hypothesis row with real text, for projections.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import NamedTuple

import yaml
from bench_cli import benchmark_parser

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from babelforge.core import shards  # noqa: E402

# Captions per worker call in the throughput runs, whatever the input's size: the synthetic input
# repeats XTD's 1,000 captions and a worker call translates each distinct caption once, so a
# chunk of 2,000 always holds the same share of repeats (a chunk growing with the input would make
# a larger input cheaper per caption). Runs compare from 32,000 captions up, where a shard (1/16 of
# the input) holds at least one whole chunk.
CHUNK = 2000

STAGE = """
import resource, sys, time
from babelforge.cli import main
began = time.monotonic()
for name in sys.argv[2:]:
    assert main([name, "--params", sys.argv[1]]) == 0, name
print("RESULT", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.monotonic() - began)
"""


def xtd_texts() -> list[str]:
    for path in (REPO / "data/raw/xtd/xtd.json", REPO / "../shared/data/xtd/xtd.json"):
        if path.exists():
            data = json.loads(path.read_text(encoding="utf-8"))
            return [c[0] if isinstance(c, list) else c for c in data["captions"]["en"]]
    sys.exit("no XTD captions: run `babelforge fetch` (or put the source mirror at ../shared/data)")


def write_input(path: Path, n: int, texts: list[str]) -> Path:
    import csv

    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "image", "caption"])
        for i in range(n):
            writer.writerow([f"syn{i:08d}", f"{i}.jpg", texts[i % len(texts)]])
    return path


def write_params(
    root: Path,
    captions: Path,
    shard_size: int,
    runner: str = "local",
    batch_size: int = 2000,
    concurrency: int = 2,
    beam: int = 1,
    length: int = 8,
) -> Path:
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    params["profile"] = "sample"
    params["paths"]["captions"] = str(root / "data")
    params["paths"]["nllb_model"] = str(REPO / "models/nllb-ct2")
    captions_group = params["captions"]
    captions_group["input"].update(format="table", path=str(captions), targets=["deu_Latn"], limit=None)
    captions_group["runner"].update(
        runner=runner,
        shard_size=shard_size,
        batch_size=batch_size,
        concurrency=concurrency,
        num_gpus=0,
        num_cpus=1,
        local_cpus=2,
    )
    captions_group["translate"].update(beam_size=beam, num_hypotheses=1, max_decoding_length=length, threads=1)
    captions_group["tag"].update(kiwi_model=str(REPO / "models/cometkiwi-tiny"), batch_size=10000, threads=1)
    path = root / "params.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return path


def run_stages(params: Path, *stages: str) -> tuple[int, float, str]:
    """(peak RSS in KiB, seconds, stderr) of the stages run one after the other in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-c", STAGE, str(params), *stages], env=env, cwd=params.parent, capture_output=True, text=True
    )
    if result.returncode:
        sys.exit(f"stage failed:\n{result.stderr[-3000:]}")
    rss, seconds = result.stdout.split("RESULT")[-1].split()
    return int(rss), float(seconds), result.stderr


def directory_bytes(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.name.startswith("shard-")}


def memory(tmp: Path, texts: list[str], small: int, factor: int) -> None:
    print(
        "\n1. peak RSS, captions_translate + captions_tag (one process), then captions_select (another), "
        "shards of 10,000 captions"
    )
    peaks: dict[str, list[int]] = {"translate + tag": [], "select": []}
    for n in (small, small * factor):
        root = tmp / f"rss{n}"
        root.mkdir()
        params = write_params(root, write_input(root / "captions.csv", n, texts), shard_size=10000)
        rss, seconds, _ = run_stages(params, "captions_translate", "captions_tag")
        rows = shards.digest(root / "data" / "attributes")["rows"]
        select_rss, select_seconds, _ = run_stages(params, "captions_select")
        peaks["translate + tag"].append(rss)
        peaks["select"].append(select_rss)
        print(
            f"   {n:>9,} captions: translate + tag peak RSS {rss / 1024:,.0f} MiB, {rows:,} hypotheses tagged, "
            f"{seconds:,.0f} s; select peak RSS {select_rss / 1024:,.0f} MiB, {select_seconds:,.0f} s"
        )
    for name, values in peaks.items():
        print(f"   {name}: ratio at {factor}x input {values[1] / values[0]:.3f}")


class LoggedStage:
    """`stage` in a fresh process; the moment (seconds since its start) of each shard's log line."""

    def __init__(self, params: Path, stage: str):
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.began = time.monotonic()
        self.process = subprocess.Popen(
            [sys.executable, "-c", STAGE, str(params), stage],
            env=env,
            cwd=params.parent,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.moments: list[float] = []
        self.reader = threading.Thread(target=self._follow, daemon=True)
        self.reader.start()

    def _follow(self) -> None:
        for line in self.process.stderr:
            if " done (" in line and ": shard-" in line:
                self.moments.append(time.monotonic() - self.began)

    def finish(self) -> float:
        """Wait for the process; the seconds from its start to its end: interpreter start,
        planning, model loads, Ray's start and shutdown, everything a user waits for."""
        self.process.wait()
        self.reader.join()
        if self.process.returncode:
            sys.exit("a throughput stage failed")
        return time.monotonic() - self.began


def steady_rate(moments: list[float], rows_per_shard: int) -> float:
    """Input rows per second once a run is under way: the least-squares slope of rows written
    against time over the second half of its shards (the start, model loads and Ray's own
    actors left out; a constant amount of work in flight does not bias a slope)."""
    tail = moments[len(moments) // 2 :]
    rows = [rows_per_shard * i for i in range(len(tail))]
    mean_t, mean_r = sum(tail) / len(tail), sum(rows) / len(rows)
    return sum((t - mean_t) * (r - mean_r) for t, r in zip(tail, rows)) / sum((t - mean_t) ** 2 for t in tail)


class Run(NamedTuple):
    """One throughput run of `captions_translate`."""

    wall: float  # the stage's process, start to end
    runner: float  # of it, in the runner (ray.init and model loads included)
    steady: float  # captions/s once under way
    root: Path


def throughput(tmp: Path, texts: list[str], n: int) -> None:
    shard = n // 16
    print(
        f"\n2. captions_translate throughput, {n:,} captions, shards of {shard:,}, beam 4, 24 tokens, "
        "1 thread per worker"
    )
    results = {}
    for runner in ("local", "ray"):
        root = tmp / f"tp-{runner}"
        root.mkdir()
        params = write_params(
            root,
            write_input(root / "captions.csv", n, texts),
            shard_size=shard,
            runner=runner,
            batch_size=CHUNK,
            beam=4,
            length=24,
        )
        stage = LoggedStage(params, "captions_translate")
        wall = stage.finish()
        rate = json.loads((root / "data" / ".rates" / "captions_translate.json").read_text())
        results[runner] = Run(wall, rate["seconds"], steady_rate(stage.moments, shard), root)
        print(
            f"   {runner:>5}{' (2 actors)' if runner == 'ray' else ' (1 worker)'}: {wall:,.1f} s the stage's "
            f"process, {rate['seconds']:,.1f} s of it in the runner (ray.init, model loads included; "
            f"{n / rate['seconds']:,.0f} captions/s), first shard written at {stage.moments[0]:,.1f} s; "
            f"steady {results[runner].steady:,.0f} captions/s"
        )
    local, ray_ = results["local"], results["ray"]
    print(
        f"   speed-up ray/local: {local.wall / ray_.wall:.2f}x the stage's process, {local.runner / ray_.runner:.2f}x "
        f"the runner, {ray_.steady / local.steady:.2f}x steady"
    )
    ceiling_wall, ceiling_seconds, ceiling_rate = side_by_side(tmp, texts, n)
    print(
        f"   this machine's ceiling, no Ray: 2 `local` processes side by side, {n // 2:,} captions each: "
        f"{ceiling_wall:,.1f} s the processes ({local.wall / ceiling_wall:.2f}x one worker), {ceiling_seconds:,.1f} "
        f"s in the runners ({local.runner / ceiling_seconds:.2f}x), steady {ceiling_rate:,.0f} captions/s "
        f"({ceiling_rate / local.steady:.2f}x); ray reaches {ceiling_wall / ray_.wall:.0%} of it over the process, "
        f"{ceiling_seconds / ray_.runner:.0%} over the runner, {ray_.steady / ceiling_rate:.0%} steady"
    )
    same = all(
        directory_bytes(local.root / "data" / name) == directory_bytes(ray_.root / "data" / name)
        for name in ("source", "references", "hypotheses")
    )
    print(f"   local and ray outputs byte-identical: {same}")


def side_by_side(tmp: Path, texts: list[str], n: int) -> tuple[float, float, float]:
    """Two `local` stage processes started together on half the captions each (shards as in
    the throughput run): (seconds until both processes ended, seconds until both are through
    their runners, their steady rates summed). What two workers reach on this machine without
    any scheduler, against which Ray's speed-up is read."""
    stages, roots = [], []
    for half in ("a", "b"):
        root = tmp / f"tp-half-{half}"
        root.mkdir()
        params = write_params(
            root,
            write_input(root / "captions.csv", n // 2, texts),
            shard_size=n // 16,
            batch_size=CHUNK,
            beam=4,
            length=24,
        )
        roots.append(root)
        stages.append(LoggedStage(params, "captions_translate"))
    wall = max(stage.finish() for stage in stages)  # started within moments: the slower one decides
    seconds = max(
        json.loads((root / "data" / ".rates" / "captions_translate.json").read_text())["seconds"] for root in roots
    )
    return wall, seconds, sum(steady_rate(stage.moments, n // 16) for stage in stages)


class Passthrough:
    """A worker that does nothing: what is left is the runner's own cost."""

    def __init__(self):
        pass

    def __call__(self, batch):
        return batch


def overhead(texts: list[str]) -> None:
    import pyarrow as pa

    from babelforge.core.ray_connect import connect_ray
    from babelforge.core.runner_config import RunnerConfig
    from babelforge.core.runners import run_sharded
    from babelforge.core.shard_work import slice_reader

    print("\n3. the runner's own cost: XTD's 1,000 captions in 100 shards, a worker that does nothing")
    table = pa.table({"id": [f"c{i:04d}" for i in range(len(texts))], "text": texts})
    plan = shards.plan_shards([table], 10)

    timings = {}
    for runner in ("local", "ray"):
        config = RunnerConfig(runner=runner, shard_size=10, batch_size=10, concurrency=2, local_cpus=2)
        if runner == "ray":
            began = time.monotonic()
            connect_ray(config)
            print(f"   ray.init (a local Ray, 2 CPUs): {time.monotonic() - began:.1f} s")
        with tempfile.TemporaryDirectory() as out:
            began = time.monotonic()
            run_sharded(
                Path(out), plan, slice_reader(table), Passthrough, (), config, "p", "m", ["id"], f"overhead-{runner}"
            )
            timings[runner] = time.monotonic() - began
        print(f"   {runner:>5}: {timings[runner]:.2f} s for {len(plan)} shards")
    import ray

    ray.shutdown()
    print(
        f"   ray's overhead: {(timings['ray'] - timings['local']) / len(plan) * 1000:.0f} ms per shard "
        f"(actor pool start included)"
    )


def kill_and_resume(tmp: Path, texts: list[str], n: int, seed: int) -> None:
    print(f"\n4. kill -9 during captions_translate ({n:,} captions, shards of {n // 8:,}, beam 4), then a rerun")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    clean = tmp / "clean"
    clean.mkdir()
    clean_params = write_params(
        clean, write_input(clean / "captions.csv", n, texts), shard_size=n // 8, batch_size=n // 32, beam=4, length=24
    )
    _, clean_seconds, _ = run_stages(clean_params, "captions_translate")
    killed = tmp / "killed"
    killed.mkdir()
    params = write_params(
        killed, write_input(killed / "captions.csv", n, texts), shard_size=n // 8, batch_size=n // 32, beam=4, length=24
    )
    delay = random.Random(seed).uniform(0.2, 0.8) * clean_seconds
    process = subprocess.Popen(
        [sys.executable, "-c", STAGE, str(params), "captions_translate"],
        env=env,
        cwd=killed,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(delay)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    hypotheses = killed / "data" / "hypotheses"
    committed = len(list(hypotheses.glob("shard-*.json"))) if hypotheses.exists() else 0
    _, _, log = run_stages(params, "captions_translate")
    plan_line = next(line for line in log.splitlines() if "current," in line and "to do" in line)
    total = len(shards.listed_shards(hypotheses))
    made = int(plan_line.split(" current, ")[1].split(" to do")[0])
    print(f"   killed after {delay:.1f} s of a {clean_seconds:.1f} s run: {committed} of {total} shards committed")
    print(
        f"   rerun: {plan_line.split(': ', 1)[1]}: every committed shard kept, the one in flight lost"
        if made == total - committed
        else f"   rerun: {plan_line.split(': ', 1)[1]}: committed shards redone!"
    )
    same = all(
        directory_bytes(killed / "data" / name) == directory_bytes(clean / "data" / name)
        for name in ("source", "references", "hypotheses")
    )
    print(f"   output byte-identical to the uninterrupted run: {same}")


def row_sizes(seed: int) -> None:
    """Bytes per row of hypotheses/ and attributes/ with real text: the tiny model's output ("EEEE…")
    compresses far better than any real translation, so the projection uses this proxy."""
    import random as rnd

    import pyarrow as pa

    from babelforge.captions.tag_stage import attribute_schema
    from babelforge.captions.translate import hypotheses_table
    from babelforge.core.io import write_table

    print("\n5. bytes per row with real text (XTD's human translations as hypotheses, 10 languages)")
    for path in (REPO / "data/raw/xtd/xtd.json", REPO / "../shared/data/xtd/xtd.json"):
        if path.exists():
            data = json.loads(path.read_text(encoding="utf-8"))
            break
    rng = rnd.Random(seed)
    rows = [
        {"caption_id": f"syn{i:08d}", "lang": code, "hyp_rank": 0, "text": caption[0], "mt_score": -rng.random()}
        for code, captions in sorted(data["captions"].items())
        if code != "en"
        for i, caption in enumerate(captions)
    ]
    hypotheses = hypotheses_table(rows)
    schema = attribute_schema()
    columns = {}
    for field in schema:
        if field.name in ("caption_id", "lang", "hyp_rank"):
            columns[field.name] = hypotheses.column(field.name)
        elif pa.types.is_floating(field.type):
            columns[field.name] = pa.array([rng.random() for _ in rows], field.type)
        elif pa.types.is_integer(field.type):
            columns[field.name] = pa.array([rng.randint(1, 3) for _ in rows], field.type)
        elif pa.types.is_boolean(field.type):
            columns[field.name] = pa.array([rng.random() < 0.05 for _ in rows], field.type)
        else:
            columns[field.name] = hypotheses.column("lang")
    attributes = pa.table(columns, schema=schema)
    with tempfile.TemporaryDirectory() as tmp:
        for name, table in (("hypotheses", hypotheses), ("attributes", attributes)):
            size = (
                write_table(table, Path(tmp) / f"{name}.parquet", sort_by=["caption_id", "lang", "hyp_rank"])
                .stat()
                .st_size
            )
            print(
                f"   {name}: {size / table.num_rows:.1f} bytes per row ({table.num_rows:,} rows; attribute "
                f"scores random, so incompressible: an upper bound)"
                if name == "attributes"
                else f"   {name}: {size / table.num_rows:.1f} bytes per row ({table.num_rows:,} rows)"
            )


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--small", type=int, default=10000, help="captions of the smaller input (memory)")
    parser.add_argument("--factor", type=int, default=10, help="the larger input is this many times bigger")
    parser.add_argument("--throughput", type=int, default=128000, help="captions of the throughput run")
    parser.add_argument("--kill-size", type=int, default=8000, help="captions of the kill -9 run")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill moment")
    parser.add_argument("--skip-ray", action="store_true", help="no Ray parts (2 and 3)")
    parser.add_argument("--only", choices=["memory", "throughput", "overhead", "kill", "sizes"], help="one part only")
    parser.add_argument("--all", action="store_true", help="every part (tens of minutes on 2 cores)")
    args = parser.parse_args()
    if not args.only and not args.all:
        # The parts together take tens of minutes, so a plain run says what to choose rather than start them.
        parser.error("choose --only memory|throughput|overhead|kill|sizes (one part) or --all (tens of minutes)")
    for model in ("models/nllb-ct2", "models/cometkiwi-tiny"):
        if not (REPO / model).exists():
            sys.exit(f"{model} missing: build it with `babelforge nllb` / `babelforge captions_kiwi_model`")
    texts = xtd_texts()
    print(f"captions_scale: {os.cpu_count()} CPUs; synthetic ids over {len(texts):,} XTD captions")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if args.only in (None, "memory"):
            memory(tmp, texts, args.small, args.factor)
        if args.only in (None, "throughput") and not args.skip_ray:
            throughput(tmp, texts, args.throughput)
        if args.only in (None, "overhead") and not args.skip_ray:
            overhead(texts)
        if args.only in (None, "kill"):
            kill_and_resume(tmp, texts, args.kill_size, args.seed)
        if args.only in (None, "sizes"):
            row_sizes(args.seed)


if __name__ == "__main__":
    main()
