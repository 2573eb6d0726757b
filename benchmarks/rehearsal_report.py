"""The full-profile rehearsal's table, log-log plot and projection, written into docs/benchmarks.md.

    python benchmarks/rehearsal_report.py     (or: python benchmarks/full_rehearsal.py --report)

It reads the saved measurements
(benchmarks/results/full_rehearsal.json, one entry per scale) and the real architectures' per-item CPU
rates (benchmarks/results/real_size_rates.json, `benchmarks/real_size_rates.py`), and replaces the part of
docs/benchmarks.md between the `rehearsal` markers. Pure functions build the text; `write_report` does
the I/O.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from bench_cli import benchmark_parser

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs" / "benchmarks.md"
PLOT = REPO / "docs" / "full-rehearsal.png"
RATES = REPO / "benchmarks" / "results" / "real_size_rates.json"
START, END = "<!-- rehearsal table (benchmarks/rehearsal_report.py) -->", "<!-- end rehearsal table -->"
ORDER = ("1x", "10x", "full")
SCALE_OF = {"1x": 0.01, "10x": 0.1, "full": 1.0}


def by_stage(results: dict) -> dict[str, dict[str, dict]]:
    """stage -> scale -> its measured row, stages in pipeline order (the largest run's)."""
    table: dict[str, dict[str, dict]] = {}
    runs = [results[name] for name in ORDER if name in results]
    for run in sorted(runs, key=lambda run: -len(run["stages"])):
        for row in run["stages"]:
            table.setdefault(row["stage"], {})
    for run in runs:
        for row in run["stages"]:
            table[row["stage"]][run["scale"]] = row
    return table


def growth(rows: dict[str, dict], key: str = "seconds") -> float | None:
    """The exponent of the figure's growth between the two largest scales measured (1: linear, 2:
    quadratic); none when fewer than two scales ran or a figure is too small to say (under a second)."""
    measured = [(SCALE_OF[name], rows[name][key]) for name in ORDER if name in rows and rows[name]["status"] == 0]
    if len(measured) < 2:
        return None
    (small_scale, small), (large_scale, large) = measured[-2], measured[-1]
    if small < 1.0 or large <= 0:
        return None
    return math.log(large / small) / math.log(large_scale / small_scale)


def cell(rows: dict[str, dict], scale: str, key: str, digits: int = 0) -> str:
    row = rows.get(scale)
    if row is None:
        return "–"
    if row["status"] != 0:
        return "failed"
    if not row.get("ran", True):
        return "up to date"  # DVC skipped it: its time is DVC's check, not the stage's
    return f"{row[key]:,.{digits}f}"


def requests_cell(rows: dict[str, dict], scale: str) -> str:
    row = rows.get(scale)
    if row is None:
        return "–"
    return ", ".join(f"{name} {count:,}" for name, count in row["requests"].items() if count) or "0"


def stage_table(results: dict) -> list[str]:
    scales = [name for name in ORDER if name in results]
    head = (
        ["stage"]
        + [f"time s {name}" for name in scales]
        + [f"peak RSS MB {name}" for name in scales]
        + [f"out MB {scales[-1]}", f"files {scales[-1]}", f"requests {scales[-1]}", "time growth"]
    )
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for stage, rows in by_stage(results).items():
        exponent = growth(rows)
        last = scales[-1]
        cells = (
            [f"`{stage}`"]
            + [cell(rows, name, "seconds", 1) for name in scales]
            + [cell(rows, name, "peak_rss_mb") for name in scales]
            + [cell(rows, last, "out_mb", 1), cell(rows, last, "out_files"), requests_cell(rows, last)]
            + [f"{exponent:.2f}" if exponent is not None else "–"]
        )
        lines.append("| " + " | ".join(cells) + " |")
    totals = (
        ["**all**"] + [f"{results[name]['seconds']:,.0f}" for name in scales] + [""] * (len(head) - 1 - len(scales))
    )
    lines.append("| " + " | ".join(totals) + " |")
    return lines


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 5.5), dpi=110)
    for stage, rows in by_stage(results).items():
        points = [
            (SCALE_OF[name], rows[name]["seconds"]) for name in ORDER if name in rows and rows[name]["status"] == 0
        ]
        if len(points) >= 2 and max(seconds for _, seconds in points) >= 5:
            axes.plot(*zip(*points), marker="o", label=stage)
    for slope, style in ((1, ":"), (2, "--")):
        axes.plot(
            [0.01, 1.0], [1, 1 * 100**slope], color="grey", linestyle=style, linewidth=0.8, label=f"slope {slope}"
        )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("scale (share of the full build)")
    axes.set_ylabel("wall time of the stage (s)")
    axes.set_title("Full-profile rehearsal: stage time against size (stages of 5 s or more)")
    axes.legend(fontsize=7, ncol=2)
    figure.tight_layout()
    figure.savefig(path, metadata={"Software": None})
    plt.close(figure)


# What the full build asks of each real model (items at full size) and the real architecture's rate that
# prices it: (stage, work, count, rate key in real_size_rates.json, models). Counts: 298 languages x 80
# templates (prompts); 200,000 captions x 10 targets, 25 hypotheses each (captions); 298 x 1,000 x 80 texts and
# 50,000 ImageNet images (zero-shot); 6,600 images and ~290,000 captions (XTD, xFlickrCO, XM3600: retrieval);
# 205 x 1,004 sentences (MVL-SIB); the three models of eval.common.models for every eval stage.
WORK = (
    ("prompts", "template translations, beam 4", 298 * 80, "nllb.prompts.sentences_per_s", 1),
    (
        "captions_translate",
        "captions x targets, beam 100, 25 hypotheses",
        200_000 * 10,
        "nllb.captions.sentences_per_s",
        1,
    ),
    ("captions_tag", "hypotheses scored (COMETKiwi)", 200_000 * 10 * 25, "kiwi.scoring.pairs_per_s", 1),
    ("eval_zeroshot", "prompt texts encoded", 298 * 1000 * 80, "clip.embedding.texts_per_s", 3),
    ("eval_zeroshot", "images encoded", 50_000, "clip.embedding.images_per_s", 3),
    ("eval_retrieval", "caption texts encoded", 290_000, "clip.embedding.texts_per_s", 3),
    ("eval_retrieval", "images encoded", 6_600, "clip.embedding.images_per_s", 3),
    ("eval_mvl_sib", "sentences encoded", 205 * 1004, "clip.embedding.texts_per_s", 3),
)
# ASSUMED rates on one H100 (no GPU was lent to measure them): round figures of the order published for these
# model sizes (CTranslate2 int8_float16, fp16 encoders); replace them with a measurement on a GPU machine.
GPU_ASSUMED = {
    "nllb.prompts.sentences_per_s": 60.0,
    "nllb.captions.sentences_per_s": 1.5,
    "kiwi.scoring.pairs_per_s": 800.0,
    "clip.embedding.texts_per_s": 15_000.0,
    "clip.embedding.images_per_s": 2_500.0,
}


def rate(rates: dict, key: str) -> float | None:
    """A figure of real_size_rates.json by its dotted key under `parts`; none when it was not measured."""
    node = rates.get("parts", {})
    for name in key.split("."):
        node = node.get(name, {}) if isinstance(node, dict) else {}
    return float(node) if isinstance(node, (int, float)) and node > 0 else None


def hours(count: float, per_second: float | None) -> str:
    if not per_second:
        return "–"
    value = count / per_second / 3600
    return f"{value:,.1f}" if value < 1000 else f"{value / 24:,.0f} days"


def projection(rates: dict) -> list[str]:
    """The real models' cost of the full build: measured CPU rates of the real architectures (random weights,
    benchmarks/real_size_rates.py), assumed GPU rates; the stage that dominates each."""
    lines = [
        "| stage | work at full size | items | CPU rate (measured, 2 cores) | CPU hours | GPU rate (assumed, 1 H100) | GPU hours |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    totals: dict[str, dict[str, float]] = {"CPU": {}, "GPU": {}}
    for stage, work, count, key, models in WORK:
        items = count * models
        cpu, gpu = rate(rates, key), GPU_ASSUMED[key]
        for name, per_second in (("CPU", cpu), ("GPU", gpu)):
            if per_second:
                totals[name][stage] = totals[name].get(stage, 0.0) + items / per_second / 3600
        cpu_cell = f"{cpu:,.3g}/s" if cpu else "not measured"
        label = f"{work}{f' x {models} models' if models > 1 else ''}"
        lines.append(
            f"| `{stage}` | {label} | {items:,} | {cpu_cell} | {hours(items, cpu)} | {gpu:,.4g}/s | {hours(items, gpu)} |"
        )
    for name, by_stage_hours in totals.items():
        if by_stage_hours:
            top = max(by_stage_hours, key=by_stage_hours.__getitem__)
            share = by_stage_hours[top] / sum(by_stage_hours.values())
            lines += [
                "",
                f"{name}: {sum(by_stage_hours.values()):,.0f} hours of model time in all; `{top}` dominates ({share:.0%}).",
            ]
    return lines


def replace_block(text: str, block: list[str]) -> str:
    if START not in text:
        return text.rstrip("\n") + "\n\n" + "\n".join([START, *block, END]) + "\n"
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return head + "\n".join([START, *block, END]) + tail


def write_report(results_path: Path) -> None:
    results = json.loads(results_path.read_text())
    rates = json.loads(RATES.read_text()) if RATES.exists() else {}
    block = [
        "",
        *stage_table(results),
        "",
        "![stage time against size](full-rehearsal.png)",
        "",
        "What the real models cost at full size, from per-item rates (the tiny stand-ins' times above say nothing "
        "about it):",
        "",
        *projection(rates),
        "",
    ]
    plot(results, PLOT)
    DOCS.write_text(replace_block(DOCS.read_text(), block))
    print("\n".join(block))


def main() -> None:

    # No options: the parser is there so that --help explains before anything is written.
    parser = benchmark_parser(__doc__)
    parser.parse_args()
    write_report(REPO / "benchmarks" / "results" / "full_rehearsal.json")


if __name__ == "__main__":
    main()
