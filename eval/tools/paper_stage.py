"""`babelforge eval_paper`: a run beside the papers' published numbers, or (`--plan`) what the whole paper
suite needs here. A tool, run by hand on any run (outside `dvc repro`).

    babelforge eval_paper --run runs/my_clip.json --as "OC B-32=models/my_clip" --out runs/paper
    babelforge eval_paper --plan --paper babel-imagenet --task zeroshot

Compare reads run JSONs of eval_zeroshot / eval_retrieval (or eval_report's results.csv), pairs our
models with the paper's by spec name (or `--as SHORT=MODEL`: a stand-in, marked as one), and prints
what differs in the setup, then ours vs the paper per model (and Table 2's groups for zero-shot). With
`--out DIR` it writes `paper_<task>.csv` (per language), `paper_<task>_groups.csv`, `paper_<task>.json`
(the setup statement, coverage, summary) and the plot `paper_<task>.png` (+ .svg, .pdf).
"""

from __future__ import annotations

import argparse
import csv
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import atomic_path, read_json, read_table, write_json
from babelforge.core.languages import registry
from babelforge.core.numbers import Bounds, number_flag
from babelforge.core.progress import info
from babelforge.core.provenance import build_profile
from babelforge.core.stages import Stage
from babelforge.eval.documents import json_safe
from babelforge.eval.flags import TEXT, flag_file, flag_table
from babelforge.eval.models import first_line
from babelforge.eval.paper.compare import (
    COLUMNS,
    GROUP_ROW_COLUMNS,
    compare,
    coverage,
    group_averages,
    parse_aliases,
    setup_differences,
)
from babelforge.eval.paper.figure import plot_comparison
from babelforge.eval.paper.plan import DEFAULT_IMAGES_PER_SECOND, DEFAULT_TEXTS_PER_SECOND, hub_cached, plan, plan_lines
from babelforge.eval.paper.tables import PAPERS, TASKS, group_table, paper_scores, read_models
from babelforge.eval.results import format_results

LANGUAGES_TABLE = "data/babel_imagenet/languages.parquet"
# What tells the languages table from the labels table (also per language, one row per label).
LANGUAGES_COLUMNS = ("lang", "n_classes")
LANGUAGES_EXPECTED = "the languages table of babelforge labels (languages.parquet: lang, n_classes, ...)"
RUN_EXPECTED = "a run JSON of eval_zeroshot / eval_retrieval, or eval_report's results.csv"
PRINTED_ROWS = 60  # more per-language rows than this go to the CSV only
LANGUAGE_COLUMNS = ("model", "paper_model", "lang", "prompt_set", "ours", "paper", "diff", "n_classes", "paper_classes")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="FILE",
        help="a run JSON of eval_zeroshot / eval_retrieval, or eval_report's results.csv (repeatable)",
    )
    parser.add_argument(
        "--paper", choices=PAPERS, default="babel-imagenet", help="whose tables (default babel-imagenet)"
    )
    parser.add_argument(
        "--task",
        choices=sorted({task for tasks in TASKS.values() for task in tasks}),
        help="which numbers: zeroshot | retrieval (babel-imagenet; default zeroshot), correlation (mclipscore)",
    )
    parser.add_argument(
        "--as",
        dest="aliases",
        action="append",
        default=[],
        metavar="SHORT=MODEL",
        help="put a model of the run beside a paper model (its short name, e.g. 'OC B-32'): a stand-in, marked so",
    )
    parser.add_argument("--out", metavar="DIR", help="write the CSVs, the JSON and the plot here (default: print only)")
    parser.add_argument(
        "--plan",
        action="store_true",
        help="no run: which paper models load here (offline), languages, images and estimated GPU-hours",
    )
    parser.add_argument(
        "--languages",
        metavar="FILE",
        help=f"--plan: our languages table (languages.parquet; default {LANGUAGES_TABLE} when it is built)",
    )
    parser.add_argument(
        "--images-per-second",
        type=number_flag(float, "--images-per-second", Bounds(above=0)),
        default=DEFAULT_IMAGES_PER_SECOND,
        metavar="N",
        help=f"--plan: images a GPU encodes per second (default {DEFAULT_IMAGES_PER_SECOND:g}: assumed, not measured; "
        "time one eval_zeroshot language on yours)",
    )
    parser.add_argument(
        "--texts-per-second",
        type=number_flag(float, "--texts-per-second", Bounds(above=0)),
        default=DEFAULT_TEXTS_PER_SECOND,
        metavar="N",
        help=f"--plan: prompts a GPU encodes per second (default {DEFAULT_TEXTS_PER_SECOND:g}: assumed, not measured)",
    )


def read_runs(paths: Sequence[str]) -> tuple[list[dict], list[dict | None], dict[str, dict]]:
    """(every row with its `task`, each file's provenance record (None for a results.csv), the task
    settings the runs record: {task: eval.<task> group})."""
    rows, records, settings = [], [], {}
    for name in paths:
        path = flag_file("--run", name, TEXT, RUN_EXPECTED)
        if path.suffix == ".csv":
            import pandas as pd

            try:
                frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
            except ValueError as error:  # not UTF-8 further on, ragged rows (pandas' ParserError is one)
                raise BabelforgeError(
                    f"--run {path}: not a readable CSV ({first_line(error)}); expected {RUN_EXPECTED}"
                ) from None
            if not {"task", "model", "lang"} <= set(frame.columns):
                raise BabelforgeError(f"{path}: not eval_report's results.csv (needs task, model, lang columns)")
            rows += [json_safe(record) for record in frame.to_dict("records")]
            records.append(None)
            continue
        try:
            document = read_json(path)
        except ValueError as error:
            raise BabelforgeError(f"run {path}: not JSON ({error})") from None
        if not isinstance(document, dict) or "rows" not in document or "task" not in document:
            raise BabelforgeError(f"run {path}: not a run document of an eval stage (no task and rows)")
        rows += [{"task": document["task"], **row} for row in document["rows"]]
        record = document.get("provenance") or {}
        records.append(record)
        settings.setdefault(document["task"], (record.get("params") or {}).get(f"eval.{document['task']}") or {})
    return rows, records, settings


def run_profile(records: Sequence[dict | None]) -> str | None:
    """The profile of the runs; None when any is a results.csv (no provenance) and none says sample."""
    profile = build_profile(record for record in records if record)
    return profile if profile == "sample" or all(records) else None


def summary(comparison: Sequence[Mapping]) -> list[dict]:
    """Per paired model (and prompt set): languages compared, mean ours, mean paper, mean difference."""
    groups: dict[tuple, list[Mapping]] = {}
    for row in comparison:
        key = (row["model"], row["paper_model"], row["matched_by"], row["dataset"], row["prompt_set"] or "")
        groups.setdefault(key, []).append(row)
    return [
        {
            "model": model,
            "paper_model": short,
            "matched_by": how,
            "dataset": dataset,
            "prompt_set": prompt_set,
            "n": len(part),
            "ours": statistics.fmean(r["ours"] for r in part),
            "paper": statistics.fmean(r["paper"] for r in part),
            "diff": statistics.fmean(r["diff"] for r in part),
        }
        for (model, short, how, dataset, prompt_set), part in sorted(groups.items())
    ]


def language_columns(task: str) -> tuple[str, ...]:
    """The printed per-language table's columns: with `dataset` after the paper model, but for zero-shot
    (one dataset, Babel-ImageNet): retrieval rows are per caption set, and without it German on XTD
    and on xFlickrCO were two rows that did not say which was which."""
    if task == "zeroshot":
        return LANGUAGE_COLUMNS
    return (*LANGUAGE_COLUMNS[:2], "dataset", *LANGUAGE_COLUMNS[2:])


def write_csv(rows: Sequence[Mapping], columns: Sequence[str], path: Path) -> Path:
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), lineterminator="\n", extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in row.items()})
    return path


def our_languages(path: str | None) -> list[str] | None:
    """The languages of our languages table: `--languages FILE` (checked to be one), else the built
    LANGUAGES_TABLE; None when neither is there."""
    if path:
        table = flag_table("--languages", path, LANGUAGES_COLUMNS, LANGUAGES_EXPECTED)
    elif Path(LANGUAGES_TABLE).is_file():
        table = Path(LANGUAGES_TABLE)
    else:
        return None
    return [str(lang) for lang in read_table(table, columns=["lang"])["lang"]]


def run(args: argparse.Namespace) -> int:
    paper = args.paper
    task = args.task or TASKS[paper][0]
    if task not in TASKS[paper]:
        raise BabelforgeError(f"--task {task}: the {paper} paper prints {', '.join(TASKS[paper])} numbers")
    resolve = lambda code: registry().resolve(code).key  # noqa: E731 - the registry's one resolver
    models = read_models(paper)
    scores, unmapped = paper_scores(paper, task, resolve)
    out = Path(args.out) if args.out else None
    if args.plan:
        if args.run or args.aliases:
            raise BabelforgeError("--plan reads no run: leave out --run and --as")
        result = plan(
            models,
            scores,
            unmapped,
            task,
            hub_cached(),
            our_languages(args.languages),
            args.images_per_second,
            args.texts_per_second,
        )
        for line in plan_lines(result):
            print(line)
        if out:
            write_json(json_safe({"paper": paper, **result}), out / "paper_plan.json")
            info(f"eval_paper: plan -> {out / 'paper_plan.json'}")
        return 0
    if not args.run:
        raise BabelforgeError("give --run FILE (a run JSON or results.csv), or --plan")
    rows, records, settings = read_runs(args.run)
    aliases = parse_aliases(args.aliases)
    comparison = compare(rows, scores, models, task, aliases)
    if not comparison:
        ours = sorted({row["model"] for row in rows if row.get("task") == task})
        raise BabelforgeError(
            f"no {task} row of the run pairs with a {paper} model and language (the run's models: "
            f"{', '.join(ours) or 'none'}); pair one by hand with --as SHORT=MODEL"
        )
    profile = run_profile(records)
    setup = setup_differences(rows, comparison, task, profile, settings.get(task), aliases)
    groups = group_averages(comparison, scores, models, group_table()) if task == "zeroshot" else []
    means = summary(comparison)

    print("what differs from the paper's setup:")
    for line in setup:
        print(f"- {line}")
    if unmapped:
        print(f"- the paper's language codes not in the registry (left out): {', '.join(unmapped)}")
    print()
    print(
        format_results(
            means, ("model", "paper_model", "matched_by", "dataset", "prompt_set", "n", "ours", "paper", "diff")
        )
    )
    if groups:
        print()
        shown = [g for g in groups if g["n_languages"]]
        print(format_results(shown, GROUP_ROW_COLUMNS))
    if len(comparison) <= PRINTED_ROWS:
        print()
        print(format_results(comparison, language_columns(task)))
    if out:
        stem = out / f"paper_{task}"
        write_csv(comparison, COLUMNS, Path(f"{stem}.csv"))
        if groups:
            write_csv(groups, GROUP_ROW_COLUMNS, Path(f"{stem}_groups.csv"))
        metric = comparison[0]["metric"] if task != "correlation" else "correlation"
        title = "sample run: not comparable with the paper" if profile == "sample" else None
        figures = plot_comparison(comparison, metric, stem, title)
        document = {
            "paper": paper,
            "task": task,
            "runs": list(args.run),
            "profile": profile,
            "comparable": profile == "full" and not aliases,
            "setup_differences": setup,
            "aliases": aliases,
            "unmapped_codes": unmapped,
            "coverage": coverage(rows, scores, comparison, task),
            "summary": means,
            "groups": groups,
            "files": [f"{stem}.csv", *([f"{stem}_groups.csv"] if groups else []), *map(str, figures)],
        }
        write_json(json_safe(document), Path(f"{stem}.json"))
        info(f"eval_paper: {len(comparison)} rows -> {stem}.csv, {stem}.json, {stem}.png")
    return 0


STAGE = Stage(
    "eval_paper",
    "a run beside the papers' published numbers, or --plan: the paper suite's models, images, GPU-hours",
    run,
    configure=configure,
    tool=True,
    docs="docs/guides/evaluate.md",
)
