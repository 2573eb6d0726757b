"""The audit's label precision: a sortable column on the index, a line on each language page."""

import asyncio
import re
import shutil

import pandas as pd
import pytest

from babelforge.audit import report
from babelforge.audit.audit_stage import _label_precisions
from tests.browser import chromium_page

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

ESTIMATED = {
    "precision": 0.6486,
    "low": 0.563,
    "high": 0.7297,
    "basis": "estimated",
    "judged": 0,
    "expected_wrong": 116.3,
    "estimated": 0.6486,
    "by_source": "",
}
MEASURED = {
    "precision": 0.7742,
    "low": 0.6488,
    "high": 0.8797,
    "basis": "measured",
    "judged": 40,
    "expected_wrong": 74.5,
    "estimated": 0.7294,
    "by_source": "omw:msa 20/29 [50.9-83.4]; wikt 10/11 [64.7-99.0]",
}


def _entry(precision=None):
    entry = {
        "name": "Indonesian",
        "group": "mid",
        "classes_kept": 331,
        "errors": 0,
        "warnings": 3,
        "quality_score": 30.1,
        "source_mix": {"omw:msa": 0.6},
    }
    return entry | ({"label_precision": precision} if precision else {})


def _summary(languages):
    return {
        "profile": "sample",
        "total_classes": 1000,
        "severity": {},
        "score_weights": {"duplicate": 0.5},
        "errors": 0,
        "warnings": 3,
        "inputs": {"labels": "built"},
        "languages": languages,
    }


def test_index_has_a_sortable_label_precision_column():
    html = report.render_index(
        _summary({"ind_Latn": _entry(MEASURED), "zsm_Latn": _entry(ESTIMATED), "old_Latn": _entry()})
    )
    headers = re.findall(r'<th data-key="(\d+)"( data-numeric)?[^>]*>([^<]*)</th>', html)
    assert ("8", " data-numeric", "label precision") in headers
    # one line in the cell (figure, interval, basis), the whole statement its title
    assert (
        '<td class="num" data-sort="0.7742" title="77.4 % [64.9-88.0] measured (40 reviewed)">'
        "77.4 % <small>64.9-88.0</small> measured (40)</td>"
    ) in html
    assert (
        '<td class="num" data-sort="0.6486" title="64.9 % [56.3-73.0] estimated">'
        "64.9 % <small>56.3-73.0</small> estimated</td>"
    ) in html
    assert '<td class="num" data-sort="-1"></td>' in html  # a languages.parquet without the figure
    assert report.asset(report.INDEX_SCRIPT_FILE) in html


def test_language_page_states_the_measured_figure_and_the_estimate():
    line = report._precision_line(MEASURED)
    assert "77.4 % [64.9-88.0] measured (40 reviewed)" in line
    assert "72.9 %" in line and "omw:msa 20/29" in line and "about 74 labels expected wrong" in line
    assert "estimate said" not in report._precision_line(ESTIMATED)
    assert report._precision_line(None) == ""


@pytest.mark.slow  # starts a browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (Debian package `chromium`)")
def test_index_sorts_by_label_precision_in_a_browser(tmp_path):
    html = report.render_index(
        _summary({"ind_Latn": _entry(MEASURED), "zsm_Latn": _entry(ESTIMATED), "old_Latn": _entry()})
    )
    (tmp_path / "index.html").write_text(html, encoding="utf-8")

    async def drive():
        async with chromium_page(tmp_path / "profile") as page:
            await page.open((tmp_path / "index.html").as_uri())
            order = "Array.from(document.querySelectorAll('table.sortable tbody tr'), r => r.cells[1].textContent)"
            seen = [await page.evaluate(order)]
            for _ in range(2):  # ascending, then descending
                await page.evaluate("document.querySelector('th[data-key=\"8\"]').click()")
                seen.append(await page.evaluate(order))
            return seen

    ranked, ascending, descending = asyncio.run(drive())
    assert ranked == ["ind_Latn", "old_Latn", "zsm_Latn"]  # equal scores: by name
    assert ascending == ["old_Latn", "zsm_Latn", "ind_Latn"]  # no figure first, then 64.9 %, 77.4 %
    assert descending == ["ind_Latn", "zsm_Latn", "old_Latn"]


def test_audit_reads_the_figures_of_languages_parquet(tmp_path):
    path = tmp_path / "languages.parquet"
    row = {"lang": "ind_Latn", "label_precision": 0.7742, "label_precision_low": 0.6488}
    row |= {"label_precision_high": 0.8797, "label_precision_basis": "measured", "n_judged": 40}
    row |= {"expected_wrong": 74.5, "estimated_precision": 0.7294, "measured_sources": MEASURED["by_source"]}
    pd.DataFrame([row]).to_parquet(path)
    assert _label_precisions(str(path)) == {"ind_Latn": MEASURED}
    pd.DataFrame([{"lang": "ind_Latn"}]).to_parquet(path)  # a languages.parquet before the figures
    assert _label_precisions(str(path)) == {}
