"""The papers' published tables (`resources/papers/`, see its README.md) as plain data.

Scores come out in long form, one dict per number: `paper_model` (the short name of the tables),
`dataset`, `code` (the paper's language code) and `lang` (its registry key, None when the registry
has no such language: `unmapped_codes` lists those), `metric`, `value` (as printed: percent) and,
for zero-shot, `num_classes` and `group` (the paper's resource group). No pandas: small files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from babelforge.core import tsv
from babelforge.core.errors import BabelforgeError
from babelforge.core.resources import resource

PAPERS_DIR = resource("papers")  # the project's resources/papers (babelforge.core.resources)
PAPERS = ("babel-imagenet", "mclipscore")
# The tasks whose numbers each paper prints, and the table files that hold them.
TASKS = {"babel-imagenet": ("zeroshot", "retrieval"), "mclipscore": ("correlation",)}
ZEROSHOT_TABLE = "babel_imagenet_t8_t9_zsic_accuracy.tsv"
GROUPS_TABLE = "babel_imagenet_t2_group_averages.tsv"
# caption set (the dataset name of our retrieval rows: the caption set file's stem) -> its table
RETRIEVAL_TABLES = {
    "xflickrco": "babel_imagenet_t10_xflickrco_t2i_r1.tsv",
    "xm3600": "babel_imagenet_t11_xm3600_t2i_r1.tsv",
    "xtd": "babel_imagenet_t12_xtd_t2i_r1.tsv",
}
MCLIPSCORE_TABLE = "mclipscore_t1_models.tsv"
# The metric of each task's table (its scores' `metric`), the column of our rows compared with it
# (babelforge.eval.paper.compare); mclipscore's table names its own metrics.
METRICS = {"zeroshot": "top1", "retrieval": "t2i_r@1"}
MODELS_TABLE = "models.tsv"
# Table 2's columns, in order, and the `group_paper` value of Tables 8-9 each one averages.
GROUP_COLUMNS = {"very_low": "very-low", "low": "low", "mid": "mid", "high": "high", "en": "en"}
# Cells of a table that are not a language or a model (a column or row of averages).
NOT_LANGUAGES = ("model", "model_short", "average", "lang", "num_classes", "group_paper")


@dataclass(frozen=True)
class PaperModel:
    """One model of a paper (a row of `models.tsv`)."""

    paper: str
    short: str  # the name in the tables' headers (mclipscore: the Hub id)
    table2_name: str
    full_name: str
    spec: str  # babelforge's model spec without the main model's @REVISION
    revision: str  # empty: the commit is not known, the spec needs its revision pinned
    family: str
    params: str
    hub_repos: tuple[str, ...]
    loads: bool
    reason: str

    def spec_text(self) -> str:
        """The spec as `--model` takes it (`@REVISION` after the main model, before any `+IMAGE_SPEC`)."""
        if not self.revision:
            return self.spec
        main, plus, image = self.spec.partition("+")
        return f"{main}@{self.revision}{plus}{image}"


def read_tsv(name: str, folder: Path = PAPERS_DIR) -> list[dict[str, str]]:
    """A hand-transcribed paper table's rows, read by the strict reader of hand-written tables
    (babelforge.core.tsv: a row of too few or too many fields, a line break, control or invisible
    character in a field is one error naming file and line); its own header names the columns."""
    path = folder / name
    if not path.is_file():
        raise BabelforgeError(f"paper table {path} is missing (resources/papers/README.md lists the files)")
    header = path.read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff").split("\n", 1)[0].rstrip("\r")
    return [row for _, row in tsv.read_tsv(path, tsv.TsvSpec(tuple(header.split("\t"))))]


def check_paper(paper: str) -> str:
    if paper not in PAPERS:
        raise BabelforgeError(f"unknown paper {paper!r}; one of {', '.join(PAPERS)}")
    return paper


def read_models(paper: str, folder: Path = PAPERS_DIR) -> list[PaperModel]:
    """The paper's models, in the order of `models.tsv`."""
    check_paper(paper)
    models = []
    for row in read_tsv(MODELS_TABLE, folder):
        if row["paper"] != paper:
            continue
        if row["loads"] not in ("yes", "no"):
            raise BabelforgeError(
                f"{folder / MODELS_TABLE}: model {row['short']!r}: loads is {row['loads']!r}, not yes/no"
            )
        models.append(
            PaperModel(
                paper=row["paper"],
                short=row["short"],
                table2_name=row["table2_name"],
                full_name=row["full_name"],
                spec=row["spec"],
                revision=row["revision"],
                family=row["family"],
                params=row["params"],
                hub_repos=tuple(repo for repo in row["hub_repos"].split(",") if repo),
                loads=row["loads"] == "yes",
                reason=row["reason"],
            )
        )
    return models


def _number(text: str) -> float | None:
    text = (text or "").strip()
    return float(text) if text else None


def language_keys(codes, resolve: Callable[[str], str]) -> tuple[dict[str, str], list[str]]:
    """({paper code: registry key}, [codes the registry does not know]), through `resolve` (the
    registry's: ISO 639-1, 639-3, the caption sets' `jp`)."""
    keys, unmapped = {}, []
    for code in dict.fromkeys(codes):
        try:
            keys[code] = resolve(code)
        except BabelforgeError:
            unmapped.append(code)
    return keys, unmapped


def zeroshot_scores(resolve: Callable[[str], str], folder: Path = PAPERS_DIR) -> tuple[list[dict], list[str]]:
    """Tables 8-9: (one score per language and model, the unmapped language codes)."""
    rows = read_tsv(ZEROSHOT_TABLE, folder)
    keys, unmapped = language_keys([row["lang"] for row in rows], resolve)
    scores = []
    for row in rows:
        for model, cell in row.items():
            if model in NOT_LANGUAGES:
                continue
            scores.append(
                {
                    "paper_model": model,
                    "dataset": "babel_imagenet",
                    "code": row["lang"],
                    "lang": keys.get(row["lang"]),
                    "metric": METRICS["zeroshot"],
                    "value": _number(cell),
                    "num_classes": int(row["num_classes"]),
                    "group": row["group_paper"],
                }
            )
    return scores, unmapped


def retrieval_scores(resolve: Callable[[str], str], folder: Path = PAPERS_DIR) -> tuple[list[dict], list[str]]:
    """Tables 10-12 (text-to-image R@1): (one score per caption set, language and model, the
    unmapped codes). The tables' `average` cells are left out (`table_averages` has them)."""
    scores, codes = [], []
    for dataset, name in RETRIEVAL_TABLES.items():
        for row in read_tsv(name, folder):
            if "lang" in row:  # languages down, models across (XM3600)
                if row["lang"] == "average":
                    continue
                cells = [(model, row["lang"], value) for model, value in row.items() if model not in NOT_LANGUAGES]
            else:  # models down, languages across (xFlickrCO, XTD)
                cells = [(row["model_short"], code, value) for code, value in row.items() if code not in NOT_LANGUAGES]
            for model, code, value in cells:
                codes.append(code)
                scores.append(
                    {
                        "paper_model": model,
                        "dataset": dataset,
                        "code": code,
                        "metric": METRICS["retrieval"],
                        "value": _number(value),
                    }
                )
    keys, unmapped = language_keys(codes, resolve)
    for score in scores:
        score["lang"] = keys.get(score["code"])
    return scores, unmapped


def table_averages(folder: Path = PAPERS_DIR) -> dict[tuple[str, str], float]:
    """{(caption set, model short): the `average` the retrieval table prints}."""
    found = {}
    for dataset, name in RETRIEVAL_TABLES.items():
        for row in read_tsv(name, folder):
            if "lang" in row:
                if row["lang"] == "average":
                    found |= {(dataset, m): float(v) for m, v in row.items() if m not in NOT_LANGUAGES}
            else:
                found[(dataset, row["model_short"])] = float(row["average"])
    return found


def mclipscore_scores(folder: Path = PAPERS_DIR) -> list[dict]:
    """Table 1 of multilingual CLIPScore: one score per model and correlation (`vicr_tau_b`, ...)."""
    scores = []
    for row in read_tsv(MCLIPSCORE_TABLE, folder):
        for metric, value in row.items():
            if metric == "model":
                continue
            scores.append(
                {"paper_model": row["model"], "dataset": "human_ratings", "code": None, "lang": None}
                | {"metric": metric, "value": _number(value)}
            )
    return scores


def paper_scores(
    paper: str, task: str, resolve: Callable[[str], str], folder: Path = PAPERS_DIR
) -> tuple[list[dict], list[str]]:
    """The scores of `paper` for `task` and the language codes left unmapped."""
    check_paper(paper)
    if task not in TASKS[paper]:
        raise BabelforgeError(f"paper {paper} prints no {task} numbers; its tasks: {', '.join(TASKS[paper])}")
    if task == "zeroshot":
        return zeroshot_scores(resolve, folder)
    if task == "retrieval":
        return retrieval_scores(resolve, folder)
    return mclipscore_scores(folder), []


def group_table(folder: Path = PAPERS_DIR) -> dict[str, dict[str, float]]:
    """Table 2: {model (Table 2's name): {group column: value}}, with `params`."""
    table = {}
    for row in read_tsv(GROUPS_TABLE, folder):
        table[row["model"]] = {column: float(row[column]) for column in GROUP_COLUMNS} | {"params": row["params"]}
    return table
