"""The audit's HTML in a real headless browser (Debian `chromium`): it renders, every link of the
index resolves to a file of the report, a flagged row is visible on a language page, and the
page's filters and sorting work when driven like a user would (DevTools protocol)."""

import asyncio
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from babelforge.audit.audit_stage import build_audit
from babelforge.core.languages import read_registry
from tests.audit.conftest import audit_config, stub_rank
from tests.browser import chromium_page

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (Debian package `chromium`; scripts/setup.sh installs it)"
)
FLAGGED_BACKGROUND = (0xFF, 0xD6, 0xD6)  # tr.flagged td in builders/audit/assets/report.css


def chromium(tmp: Path, *args: str) -> str:
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        f"--user-data-dir={tmp / 'profile'}",
        *args,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs, self.images = [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])
        if tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])


@pytest.fixture
def report(label_inputs) -> Path:
    build_audit(audit_config(label_inputs), read_registry(label_inputs / "languages.tsv"), rank=stub_rank)
    return label_inputs / "reports" / "audit"


def test_index_renders_and_its_links_resolve(report, tmp_path):
    dom = chromium(tmp_path, "--dump-dom", (report / "index.html").as_uri())
    assert "Babel-ImageNet label audit" in dom
    links = Links()
    links.feed(dom)
    pages = [href for href in links.hrefs if href.endswith(".html")]
    assert len(pages) == 5
    for target in links.hrefs + links.images:
        assert (report / target).is_file(), target
    assert links.images and all(Image.open(report / src).size[0] > 100 for src in links.images)


def test_the_index_opens_on_the_language_ranking(report, tmp_path):
    """The first screen (1280 x 800) shows the ranking's header and first rows, before the score's
    explanation, the inputs and the datasets' overviews."""

    async def first_screen() -> dict:
        async with chromium_page(tmp_path / "profile") as page:
            await page.send(
                "Emulation.setDeviceMetricsOverride", width=1280, height=800, deviceScaleFactor=1, mobile=False
            )
            await page.open((report / "index.html").as_uri())
            return await page.evaluate(
                "({headings: Array.from(document.querySelectorAll('h2'), h => h.textContent),"
                " table: document.querySelector('table').getBoundingClientRect().top,"
                " firstRow: document.querySelector('table tbody tr').getBoundingClientRect().bottom})"
            )

    seen = asyncio.run(first_screen())
    assert seen["headings"][0] == "Languages" and "Inputs" in seen["headings"]
    assert seen["table"] < 400 and seen["firstRow"] < 800, seen


def test_flagged_row_is_visible_on_a_language_page(report, tmp_path):
    page = (report / "fin_Latn.html").as_uri()
    dom = chromium(tmp_path, "--dump-dom", page)
    row = re.search(r'<tr class="flagged" id="class-1"[^>]*>(.*?)</tr>', dom, re.S)
    assert row and "золотая рыбка" in row.group(1) and "script_mismatch" in row.group(1)
    links = Links()
    links.feed(dom)
    assert "index.html" in links.hrefs and all((report / href).is_file() for href in links.hrefs)
    screenshot = tmp_path / "fin_Latn.png"
    chromium(tmp_path, "--hide-scrollbars", "--window-size=1280,1100", f"--screenshot={screenshot}", page)
    pixels = np.asarray(Image.open(screenshot).convert("RGB"))
    flagged_pixels = int((pixels == np.array(FLAGGED_BACKGROUND, dtype=np.uint8)).all(axis=-1).sum())
    # several flagged rows, each a band of cells hundreds of pixels wide, inside the first screen
    assert flagged_pixels > 5_000, f"no flagged row visible in {screenshot}"


ROWS = "#labels tbody tr"


async def drive(page_url: str, profile: Path) -> dict:
    """Open the page, read every row; filter to flagged rows; sort by class, descending."""
    async with chromium_page(profile) as page:
        await page.open(page_url)
        seen = {"all": await page.evaluate(f"Array.from(document.querySelectorAll('{ROWS}'), r => r.id)")}
        await page.evaluate(
            "var s = document.getElementById('filter-flag'); s.value = 'any';s.dispatchEvent(new Event('change'))"
        )
        seen["flagged"] = await page.evaluate(
            f"Array.from(document.querySelectorAll('{ROWS}'), r => [r.id, r.className, !r.hidden])"
        )
        seen["shown"] = await page.evaluate("document.getElementById('shown').textContent")
        seen["hash"] = await page.evaluate("location.hash")
        await page.evaluate("document.querySelector('th[data-key=\"class\"]').click()")
        await page.evaluate("document.querySelector('th[data-key=\"class\"]').click()")
        seen["sorted"] = await page.evaluate(
            f"Array.from(document.querySelectorAll('{ROWS}'), r => r.id).filter((id, i, all) => "
            "!document.getElementById(id).hidden)"
        )
        # a linked view: the fragment sets the filters when the page loads (a fresh load, not a fragment change)
        await page.open("about:blank")
        await page.open(page_url + "#review=unreviewed&flag=none")
        seen["linked"] = await page.evaluate(f"document.querySelectorAll('{ROWS}:not([hidden])').length")
    return seen


def test_every_class_is_listed_and_the_flag_filter_keeps_the_flagged_rows(report, tmp_path):
    record = json.loads((report / "fin_Latn.json").read_text())
    seen = asyncio.run(drive((report / "fin_Latn.html").as_uri(), tmp_path / "profile"))
    classes = {f"class-{idx}" for idx in range(10)}  # every class of the crafted Finnish labels
    assert set(seen["all"]) == classes and len(seen["all"]) == len(classes)
    flagged = {f"class-{idx}" for idx in record["flags"]}
    assert flagged and flagged != classes
    visible = {row_id for row_id, css, shown in seen["flagged"] if shown}
    assert visible == flagged
    assert all(css == "flagged" for row_id, css, shown in seen["flagged"] if shown)
    assert seen["shown"] == f"{len(flagged)} of {len(classes)} classes shown"
    assert seen["hash"] == "#flag=any"
    numbers = [int(row_id.split("-")[1]) for row_id in seen["sorted"]]
    assert numbers == sorted((int(i) for i in record["flags"]), reverse=True)
    assert seen["linked"] == len(classes) - len(flagged)
