"""The audit's HTML in a real headless browser (Debian `chromium`): it renders, every link of the
index resolves to a file of the report, and a flagged row is visible on a language page."""
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from builders.audit.audit_stage import build_audit
from builders.core.languages import read_registry
from tests.audit.conftest import audit_config, stub_rank

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (Debian package `chromium`; scripts/setup.sh installs it)")
FLAGGED_BACKGROUND = (0xFF, 0xD6, 0xD6)   # tr.flagged td in report._STYLE


def chromium(tmp: Path, *args: str) -> str:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--no-first-run", f"--user-data-dir={tmp / 'profile'}", *args]
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


def test_flagged_row_is_visible_on_a_language_page(report, tmp_path):
    page = (report / "fin_Latn.html").as_uri()
    dom = chromium(tmp_path, "--dump-dom", page)
    row = re.search(r'<tr class="flagged" id="class-1">(.*?)</tr>', dom, re.S)
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
