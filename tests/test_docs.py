"""The docs site (docs/, mkdocs.yml): it builds with --strict (no broken link or anchor, no page outside
the nav), its generated reference equals what scripts/docs_reference.py writes from the code now, and
every command in a code block of a page names a real stage, real flags and real files."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.browser import CHROMIUM, chromium_page
from tests.test_readme import command_problems, missing_references

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = sorted(DOCS.rglob("*.md"))


def nav_pages(node) -> list[str]:
    """Every page the nav of mkdocs.yml names."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [page for value in node.values() for page in nav_pages(value)]
    return [page for item in node for page in nav_pages(item)]


def mkdocs_config() -> dict:
    class Loader(yaml.SafeLoader):
        pass

    # the mermaid fence's !!python/name tag: a name, not something to import here
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: suffix)
    return yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """`mkdocs build --strict`: a broken link or anchor, or a page outside the nav, is an error."""
    folder = tmp_path_factory.mktemp("site") / "site"
    result = subprocess.run(
        [str(Path(sys.executable).with_name("mkdocs")), "build", "--strict", "--site-dir", str(folder)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, "\n".join(
        line for line in result.stderr.splitlines() if line.startswith(("WARNING", "ERROR", "Aborted"))
    )
    return folder


@pytest.mark.slow
def test_the_site_builds_strict(site):
    assert (site / "guides" / "evaluate" / "index.html").is_file()


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/setup.sh installs it)")
def test_the_settings_reference_reads_on_one_screen_in_a_browser(site, tmp_path):
    """In headless Chromium at 1280 x 800: the first table starts on the first screen, no key cell breaks
    (every key's cell is one line high), and a folded default opens on a click."""

    async def look() -> dict:
        async with chromium_page(tmp_path / "profile") as page:
            await page.send(
                "Emulation.setDeviceMetricsOverride", width=1280, height=800, deviceScaleFactor=1, mobile=False
            )
            await page.open((site / "reference" / "settings" / "index.html").as_uri())
            return await page.evaluate(
                "(() => { const cells = Array.from(document.querySelectorAll('table td:first-child code'));"
                " const line = parseFloat(getComputedStyle(cells[0]).lineHeight) || 20;"
                " const folded = document.querySelector('table details');"
                " const closed = folded.getBoundingClientRect().height; folded.open = true;"
                " return {first: document.querySelector('table').getBoundingClientRect().top, keys: cells.length,"
                " broken: cells.filter(c => c.getBoundingClientRect().height > 1.6 * line).map(c => c.textContent),"
                " opened: folded.getBoundingClientRect().height > closed}; })()"
            )

    seen = asyncio.run(look())
    assert seen["first"] < 800 and seen["keys"] > 150, seen
    assert seen["broken"] == [] and seen["opened"], seen


SETTINGS_AT_A_WIDTH = """(() => {
  const rows = Array.from(document.querySelectorAll('article table tbody tr'));
  const help = rows.map(r => { const cell = r.lastElementChild.getBoundingClientRect();
    const frame = r.closest('table').parentElement.getBoundingClientRect();
    return {key: r.firstElementChild.textContent, right: cell.right, width: cell.width,
            cut: cell.right > Math.min(frame.right, innerWidth) + 1}; });
  return {rows: rows.length, cut: help.filter(h => h.cut).map(h => h.key),
          narrowest: Math.min(...help.map(h => h.width)),
          helps: rows.map(r => r.lastElementChild.textContent),
          readers: Array.from(document.querySelectorAll('article p'), p => p.textContent).filter(t => t.startsWith('Read by')),
          summaries: Array.from(document.querySelectorAll('table details summary'), s => s.textContent)};
})()"""


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/setup.sh installs it)")
@pytest.mark.parametrize("width", [1280, 1900])
def test_the_settings_reference_shows_every_help_text_whole(site, tmp_path, width):
    """At 1280 and 1900 px (issue 50: the help column was cut off at both), every row's help cell lies
    within the screen and its table, at least 200 px wide; every `<placeholder>` of a help text is shown
    (unescaped, Markdown passed it on as an unknown tag and the browser showed nothing); a folded
    default's summary ends in a character, not half an HTML entity; each group names each reader once."""
    from babelforge.core.config import settings
    from babelforge.core.stage_settings import params_groups

    async def look() -> dict:
        async with chromium_page(tmp_path / "profile", width=width, height=800) as page:
            await page.send(
                "Emulation.setDeviceMetricsOverride", width=width, height=800, deviceScaleFactor=1, mobile=False
            )
            await page.open((site / "reference" / "settings" / "index.html").as_uri())
            return await page.evaluate(SETTINGS_AT_A_WIDTH)

    seen = asyncio.run(look())
    assert seen["rows"] > 150 and seen["cut"] == [] and seen["narrowest"] >= 200, {**seen, "helps": "..."}
    placeholders = {
        found
        for name, (config, _) in params_groups().items()
        for item in settings(config, name)
        for found in re.findall(r"<[^<>`]+>", item.help[:150])
    }
    shown = " ".join(seen["helps"])
    assert len(placeholders) > 10 and [p for p in placeholders if p not in shown] == []
    assert seen["summaries"] and [s for s in seen["summaries"] if re.search(r"&[#\w]*…$", s)] == []
    assert seen["readers"] and all(
        len(names) == len(set(names)) for names in (re.findall(r"(\w+)[,(]", t) for t in seen["readers"])
    )


def params_keys(node, prefix: str = "") -> list[str]:
    """Every leaf key of params.yaml, dotted (an empty mapping is a leaf)."""
    if isinstance(node, dict) and node:
        return [key for name, value in node.items() for key in params_keys(value, f"{prefix}{name}.")]
    return [prefix.removesuffix(".")]


def test_the_settings_reference_has_a_row_for_every_key_of_params_yaml():
    page = (DOCS / "reference" / "settings.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([^`]+)` \|", page, flags=re.MULTILINE))
    keys = params_keys(yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8")))
    # a row covers its key and what lies under it (a mapping's entries, a value's {sample, full} choice)
    missing = [key for key in keys if not any(key == row or key.startswith(row + ".") for row in rows)]
    assert missing == [], f"params.yaml keys without a row in docs/reference/settings.md: {missing}"
    assert {"profile", "paths.labels", "eval.common.on_bad_row", "captions.input.max_bad_fraction"} <= rows
    # a long default is folded (its summary shown, the whole on a click), so no value cell runs on for lines
    # (one value cell: the value once when the profiles agree, else a `<br>`-separated line per profile)
    values = [line.split(" | ")[2] for line in page.splitlines() if line.startswith("| `")]
    shown = [
        re.sub(r"<[^>]+>|&\w+;|&#\w+;", "x", re.sub(r"<details><summary>(.*?)</summary>.*?</details>", r"\1", part))
        for cell in values
        for part in cell.split("<br>")
    ]
    assert max(map(len, shown)) <= 60 and any("<details>" in cell for cell in values)


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    listed = nav_pages(mkdocs_config()["nav"])
    present = [page.relative_to(DOCS).as_posix() for page in PAGES]
    assert sorted(listed) == sorted(present)


@pytest.mark.slow
def test_the_generated_reference_is_current():
    """scripts/docs_reference.py --check: a page (or a generated region of a page, or of README.md) that
    differs from what the code gives now fails, naming the page."""
    result = subprocess.run(
        [sys.executable, "scripts/docs_reference.py", "--check"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr + result.stdout


def hypothetical(text: str) -> set[str]:
    """Names a walkthrough creates (its new stage, its new files), declared in the page as
    `<!-- hypothetical: NAME ... -->`: they do not exist until a reader follows it."""
    return {name for match in re.findall(r"<!-- hypothetical: ([^>]*) -->", text) for name in match.split()}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(DOCS).as_posix())
def test_every_command_in_a_page_names_a_real_stage_and_real_flags(page):
    text = page.read_text(encoding="utf-8")
    declared = hypothetical(text)
    assert [problem for problem in command_problems(text) if problem.split(":")[0] not in declared] == []
    assert [path for path in missing_references(text) if path not in declared] == []


def test_the_docs_check_catches_a_wrong_flag_and_a_wrong_stage():
    text = "```bash\nbabelforge labels --no-such-flag\nbabelforge no_such_stage\ndvc repro no_such_stage\n```\n"
    assert command_problems(text) == [
        "babelforge labels --no-such-flag: no such flag",
        "no_such_stage: no such stage (babelforge no_such_stage)",
        "dvc repro no_such_stage: no such stage in dvc.yaml",
    ]


def test_the_guides_start_from_a_built_checkout_and_show_a_command():
    """Each guide of the issue's list is a page with at least one command in a code block."""
    guides = {page.stem: page.read_text(encoding="utf-8") for page in (DOCS / "guides").glob("*.md")}
    expected = {"evaluate", "review-labels", "compare-runs", "publish", "full-profile", "ray-cluster", "add-a-language"}
    assert expected <= set(guides)
    for name in expected:
        assert re.search(r"```bash\n(?:.*\n)*?.*(?:babelforge|dvc|python|export)\b", guides[name]), name
