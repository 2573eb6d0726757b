"""`babelforge eval_report`: every task's rows in one CSV, headline metrics, and the plots (PNG, SVG, PDF).

The headline (per model, means over languages) goes to `<paths.metrics>/eval.json`, a DVC metric
tracked by git; the per-language rows stay in `results.csv` and the plot data under `plots/`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from babelforge.core.config import setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_json, read_table
from babelforge.core.metrics import write_metrics
from babelforge.core.progress import info
from babelforge.core.provenance import build_profile
from babelforge.core.stages import Paths, Plot, Stage, stage_paths
from babelforge.eval.report.figures import (
    chance_level,
    plot_accuracy_by_language,
    plot_benchmark_vs_retrieval,
    plot_correlation_heatmap,
)
from babelforge.eval.report.merge import left_out_lines, merge_rows, summary_metrics, write_csv
from babelforge.eval.report.metric import benchmark_vs_retrieval, per_model_correlation
from babelforge.eval.tasks import check_names, names

# A run with other settings and no --out writes its CSV, plots and headline metrics into its run
# folder (babelforge.core.runs); with --out, into that folder. Never over the tracked ones.
AD_HOC_OUTPUTS = {"out": "", "paths.metrics": ""}


@dataclass(frozen=True)
class Config:
    """The `eval.report` group of params.yaml."""

    GROUP = "eval.report"
    tasks: list[str] = setting(
        names(),
        "run JSONs merged from <paths.eval_reports>/<task>.json (a missing one is left out); "
        "the eval tasks of eval/tasks.py: " + ", ".join(names()),
    )
    min_languages: int = setting(
        3, "a model's zero-shot vs retrieval correlation needs this many shared languages", minimum=1
    )
    out: str | None = setting(
        None, "folder for results.csv and plots/ (null: <paths.eval_reports>, beside the run JSONs)"
    )
    display_names: dict[str, str] = setting(
        {}, "model id -> its name in the plots (a model not listed: the id's last part, never a path)"
    )
    paths: Paths = stage_paths()

    def __post_init__(self):
        check_names(self.tasks, f"{self.GROUP}.tasks")


def run(config: Config) -> int:

    inputs = Path(config.paths.eval_reports)
    out = Path(config.out or inputs)
    documents = []
    for task in config.tasks:
        path = inputs / f"{task}.json"
        if path.exists():
            documents.append(read_json(path))
        else:
            info(f"eval_report: no {path}; left out")
    frame = merge_rows(documents)
    if frame.empty:
        raise BabelforgeError(f"no evaluation results under {inputs}; run the eval stages first")
    write_csv(frame, out / "results.csv")
    # the profile the runs record (a sample build's models are random tiny ones)
    profile = build_profile(document.get("provenance") or {} for document in documents)
    metrics = write_metrics(summary_metrics(frame, config.display_names), config.paths.metrics, "eval", profile=profile)

    plots = out / "plots"
    zeroshot = frame[frame["task"] == "zeroshot"]
    retrieval = frame[frame["task"] == "retrieval"]
    if not zeroshot.empty:
        languages_path = Path(config.paths.languages)
        if languages_path.exists():
            languages = read_table(languages_path)
        else:
            languages = zeroshot.groupby("lang", as_index=False)["n_classes"].max()
        by_language = zeroshot[["model", "prompt_set", "lang", "n_classes", "top1", "top1_100"]].assign(
            chance_top1=[chance_level(n) for n in zeroshot["n_classes"]]
        )
        write_csv(
            by_language.sort_values(["model", "prompt_set", "n_classes", "lang"]), plots / "zeroshot_by_language.csv"
        )
        plot_accuracy_by_language(zeroshot, languages, plots / "zeroshot_by_language", names=config.display_names)
    if not zeroshot.empty and not retrieval.empty:
        pairs = benchmark_vs_retrieval(zeroshot, retrieval)
        write_csv(pairs, plots / "zeroshot_vs_retrieval.csv")
        plot_benchmark_vs_retrieval(
            pairs,
            plots / "zeroshot_vs_retrieval",
            "Babel-ImageNet top-1",
            "retrieval mean recall",
            names=config.display_names,
        )
        correlations = per_model_correlation(pairs, config.min_languages)
        write_csv(correlations, plots / "correlation_by_model.csv")
        plot_correlation_heatmap(
            correlations, plots / "correlation_by_model", config.min_languages, names=config.display_names
        )
    for line in left_out_lines(documents):
        info(f"eval_report: {line}")
    info(f"eval_report: {len(frame)} rows -> {out / 'results.csv'}, {out / 'plots'}, {metrics}")
    return 0


STAGE = Stage(
    "eval_report",
    "merged results CSV, DVC metrics and the plots (PNG, SVG, PDF)",
    run,
    config=Config,
    flags={
        "--out": (
            "paths.eval_reports",
            "reads <task>.json and writes results.csv, plots/ and (unless --metrics) eval.json here",
        ),
        "--metrics": ("paths.metrics", "folder of the headline metrics; writes eval.json there"),
    },
    # every registered task's run document (babelforge.eval.tasks), and the languages table
    deps=(*(f"${{paths.eval_reports}}/{name}.json" for name in names()), "${paths.languages}"),
    outs=(
        "${paths.eval_reports}/results.csv",
        "${paths.eval_reports}/plots/zeroshot_by_language.pdf",
        "${paths.eval_reports}/plots/zeroshot_vs_retrieval.pdf",
        "${paths.eval_reports}/plots/correlation_by_model.pdf",
        # vector copies for a page; `dvc plots` shows the screen-sized PNGs and the CSVs
        "${paths.eval_reports}/plots/zeroshot_by_language.svg",
        "${paths.eval_reports}/plots/zeroshot_vs_retrieval.svg",
        "${paths.eval_reports}/plots/correlation_by_model.svg",
    ),
    metrics=("${paths.metrics}/eval.json",),
    plots=(
        Plot(
            "${paths.eval_reports}/plots/zeroshot_by_language.csv",
            template="scatter",
            x="n_classes",
            y="top1",
            title="Zero-shot top-1 per language against its class count",
        ),
        Plot(
            "${paths.eval_reports}/plots/zeroshot_vs_retrieval.csv",
            template="scatter",
            x="x",
            y="y",
            title="Babel-ImageNet top-1 (x) vs retrieval mean recall (y)",
        ),
        Plot(
            "${paths.eval_reports}/plots/correlation_by_model.csv",
            template="bar_horizontal",
            x="pearson",
            y="model",
            title="Pearson r across languages, zero-shot vs retrieval, per model",
        ),
        Plot("${paths.eval_reports}/plots/zeroshot_by_language.png"),
        Plot("${paths.eval_reports}/plots/zeroshot_vs_retrieval.png"),
        Plot("${paths.eval_reports}/plots/correlation_by_model.png"),
    ),
    docs="docs/guides/evaluate.md",
    ad_hoc_outputs=AD_HOC_OUTPUTS,
    owns={
        "eval_reports": ("reports/eval", "evaluation results"),
    },
)
