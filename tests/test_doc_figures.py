"""Figures the docs state about the project's own files are checked against those files.

A figure such as "524 registry rows" or "80 templates" is a fact of resources/, not a measurement, so a
page that states it must agree with the file it counts; dated measurements (docs/benchmarks.md's tables)
are results and are left alone.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
DATED_RESULTS = {REPO / "docs" / "benchmarks.md"}


def registry_rows() -> list[dict[str, str]]:
    with open(REPO / "resources" / "languages.tsv", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def count_flag(column: str) -> int:
    return sum(row[column] == "True" for row in registry_rows())


def non_empty_lines(path: str) -> int:
    return sum(1 for line in (REPO / path).read_text(encoding="utf-8").splitlines() if line.strip())


def imagenet_classes() -> int:
    with open(REPO / "resources" / "imagenet1k_classes.tsv", encoding="utf-8", newline="") as handle:
        return sum(1 for _ in csv.DictReader(handle, delimiter="\t"))


# Each phrase, wherever a page states it with a number before it, must give the number the file holds.
FIGURES = {
    "registry rows": lambda: len(registry_rows()),
    "Babel-ImageNet languages": lambda: count_flag("in_babel_imagenet"),
    "SIB-200 codes": lambda: count_flag("in_sib200"),
    "SIB-200 languages": lambda: count_flag("in_sib200"),
    "templates": lambda: non_empty_lines("resources/clip_templates_en.txt"),
    "ImageNet classes": imagenet_classes,
}


def stated_figures(text: str, phrase: str) -> list[int]:
    """Every number written right before `phrase` ("1,000 ImageNet classes" -> 1000)."""
    pattern = rf"(?<![\w.,])(\d{{1,3}}(?:,\d{{3}})+|\d+)\s+(?:{re.escape(phrase)})\b"
    return [int(match.replace(",", "")) for match in re.findall(pattern, text)]


def test_stated_figures_reads_numbers_with_thousands_separators():
    text = "all 1,000 ImageNet classes, then 20 ImageNet classes; not 3.5 ImageNet classes"
    assert stated_figures(text, "ImageNet classes") == [1000, 20]


@pytest.mark.parametrize("phrase", sorted(FIGURES))
def test_every_page_states_the_figure_the_file_holds(phrase):
    expected = FIGURES[phrase]()
    wrong = [
        f"{page.relative_to(REPO)}: {number} {phrase} (the file holds {expected})"
        for page in PAGES
        if page not in DATED_RESULTS
        for number in stated_figures(page.read_text(encoding="utf-8"), phrase)
        if number != expected
    ]
    assert not wrong, "\n".join(wrong)


def test_the_language_page_states_the_registry_rows():
    text = (REPO / "docs" / "architecture" / "languages.md").read_text(encoding="utf-8")
    assert stated_figures(text, "registry rows") == [len(registry_rows())]
    assert stated_figures(text, "Babel-ImageNet languages") == [count_flag("in_babel_imagenet")]
    assert stated_figures(text, "SIB-200 codes") == [count_flag("in_sib200")]
