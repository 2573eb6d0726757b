"""Each model-spec error of `babelforge eval_zeroshot --model ...` as a user meets it: the command run
as a process of its own in an empty folder, its seconds (wall and CPU, the interpreter's start and
imports included) and what it printed on stderr, which should be one line naming the real cause.

Builds one tiny model of each family with its own library first (the tests' builders:
babelforge.eval.sample.tiny_clip_stage, tests/eval/tiny_open_clip.py, tests/eval/tiny_text_only.py,
and a SigLIP whose towers give 32-d and 16-d vectors), then runs every case --repeats times and keeps
the fastest. The network is never needed: a case that asked the Hub would show it in its seconds.

    python benchmarks/model_errors.py [--repeats 1] [--json FILE]
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_cli import benchmark_parser

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
TARGET_S = 5.0  # issue 50: one line in under 5 s


def build_folders(folder: Path) -> dict[str, Path]:
    """family name -> a tiny model folder its own library saved; `odd` is a SigLIP whose config states
    32-d text vectors beside 16-d image vectors."""
    from babelforge.eval.sample.tiny_clip_stage import build_tiny_clip
    from tests.eval.test_model_errors import siglip_folder
    from tests.eval.tiny_open_clip import build_clip_bpe
    from tests.eval.tiny_text_only import DIM, build_tiny_mclip, build_tiny_st, build_tiny_xlmr

    clip = build_tiny_clip(folder / "clip", seed=0)
    xlmr = build_tiny_xlmr(folder / "xlmr", seed=0)
    return {
        "hf": Path(clip),
        "open_clip": Path(build_clip_bpe(folder / "oc-bpe", seed=0)),
        "mclip": Path(build_tiny_mclip(folder / "mclip", xlmr, seed=0)),
        "st": Path(build_tiny_st(folder / "st", xlmr, seed=0)),
        "odd": Path(siglip_folder(folder / "odd", clip, text_projection=32, vision_hidden=DIM)),
    }


def cases(folders: dict[str, Path]) -> list[tuple[str, list[str]]]:
    """(what the case is, the arguments after `babelforge`): the issue's list, in its order."""
    clip, oc, mclip, st, odd = (folders[name] for name in ("hf", "open_clip", "mclip", "st", "odd"))
    zeroshot = ["eval_zeroshot", "--language", "de", "--model"]
    return [
        ("mclip: on a folder that is not M-CLIP (a CLIP)", [*zeroshot, f"mclip:{clip}+{clip}"]),
        ("hf: on an open_clip folder", [*zeroshot, f"hf:{oc}"]),
        ("hf: on an M-CLIP folder", [*zeroshot, f"hf:{mclip}"]),
        ("st: on a CLIP folder", [*zeroshot, f"st:{clip}+{clip}"]),
        ("open_clip: on a sentence-transformers folder", [*zeroshot, f"open_clip:{st}"]),
        (
            "text and image vectors of different sizes (the stage, under the project's params)",
            ["eval_zeroshot", "--params", str(REPO / "params.yaml"), "--model", str(odd)],
        ),
        ("@REVISION on a local folder", [*zeroshot, f"hf:{clip}@abc123"]),
        ("a Hub id without a revision: hf", [*zeroshot, "hf:org/clip"]),
        ("a Hub id without a revision: mclip", [*zeroshot, f"mclip:org/mclip+{clip}"]),
        ("a Hub id without a revision: st", [*zeroshot, f"st:org/st+{clip}"]),
        ("a Hub id without a revision: open_clip", [*zeroshot, "open_clip:hf-hub:org/oc"]),
        ("an image tower without a revision", [*zeroshot, f"st:{st}+org/clip"]),
    ]


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_case(args: list[str], cwd: Path) -> dict:
    """One run of `babelforge ARGS` in `cwd`: its exit status, seconds and stderr."""
    command = [str(Path(sys.executable).with_name("babelforge")), *args]
    cpu, start = children_cpu_s(), time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    return {
        "rc": done.returncode,
        "wall_s": time.perf_counter() - start,
        "cpu_s": children_cpu_s() - cpu,
        "stderr": done.stderr,
    }


def fastest(args: list[str], cwd: Path, repeats: int) -> dict:
    runs = [run_case(args, cwd) for _ in range(repeats)]
    return min(runs, key=lambda result: result["wall_s"])


def report_row(name: str, result: dict) -> str:
    lines = result["stderr"].splitlines()
    verdict = "ok" if result["rc"] != 0 and len(lines) == 1 and result["wall_s"] < TARGET_S else "MISSED"
    head = f"{name}: {result['wall_s']:.2f} s wall, {result['cpu_s']:.2f} s CPU, {len(lines)} line(s), exit {result['rc']} [{verdict}]"
    return head + "".join(f"\n    {line}" for line in lines[-3:])


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=1, help="runs of each case; the fastest is kept")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="model-errors-") as scratch:
        scratch_dir = Path(scratch)
        start = time.perf_counter()
        folders = build_folders(scratch_dir / "models")
        print(f"built {len(folders)} tiny models in {time.perf_counter() - start:.1f} s", flush=True)
        empty = scratch_dir / "empty"
        empty.mkdir()
        rows = []
        for name, args in cases(folders):
            result = fastest(args, empty, options.repeats)
            result["stderr"] = result["stderr"].replace(str(scratch_dir), "$TMP")  # the same on any machine
            rows.append({"case": name, **result})
            print(report_row(name, result), flush=True)
    missed = sum(
        1 for row in rows if row["rc"] == 0 or len(row["stderr"].splitlines()) != 1 or row["wall_s"] >= TARGET_S
    )
    print(f"{len(rows) - missed} of {len(rows)} cases: one line in under {TARGET_S:.0f} s")
    if options.json:
        options.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
