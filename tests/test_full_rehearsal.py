"""The full-profile rehearsal's pure parts (benchmarks/full_rehearsal.py, benchmarks/rehearsal_report.py):
what each scale builds, how a run in parts is merged, how growth is read and reported. The rehearsal
itself runs for minutes to hours and is a benchmark, not a test; its stand-ins have tests of their own
(tests/test_standin_files.py, tests/lexicon/test_babelnet_standin.py, tests/eval/test_hub_models_standin.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import full_rehearsal  # noqa: E402
import rehearsal_report  # noqa: E402


def test_each_scale_is_its_share_of_the_full_build_with_floors_a_stage_needs():
    assert full_rehearsal.sizes_for(1.0) == full_rehearsal.FULL
    tenth = full_rehearsal.sizes_for(0.1)
    assert (tenth.classes, tenth.languages, tenth.mvl_sib_languages, tenth.captions, tenth.xm3600_images) == (
        100, 30, 20, 20_000, 360,
    )  # fmt: skip
    hundredth = full_rehearsal.sizes_for(0.01)
    assert (hundredth.classes, hundredth.languages, hundredth.mvl_sib_languages) == (10, 3, 2)
    assert hundredth.xm3600_images == 36 and hundredth.captions == 2000
    assert full_rehearsal.sizes_for(0.0001).captions == 100  # the floor, not 20


def test_evenly_spreads_keeps_both_ends_and_order():
    items = list(range(10))
    assert full_rehearsal.evenly(items, 3) == [0, 4, 9]  # round(4.5) is 4
    assert full_rehearsal.evenly(items, 10) == items and full_rehearsal.evenly(items, 12) == items
    assert full_rehearsal.evenly(items, 1) == [0]
    picked = full_rehearsal.evenly(list(range(298)), 30)
    assert len(set(picked)) == 30 and picked == sorted(picked) and picked[-1] == 297


def row(stage: str, seconds: float, status: int = 0) -> dict:
    return {
        "stage": stage, "seconds": seconds, "peak_rss_mb": 100.0, "out_mb": 1.0, "out_files": 2,
        "requests": {"babelnet": 0, "hub": 3, "mirror": 0}, "ran": True, "status": status,
    }  # fmt: skip


def test_a_later_part_replaces_its_stages_and_keeps_the_earlier_parts():
    sizes = {"classes": 1000}
    earlier = {"sizes": sizes, "stages": [row("fetch", 4.0), row("senses", 100.0, status=1)]}
    later = {"sizes": sizes, "stages": [row("senses", 300.0), row("labels", 20.0)], "seconds": 320.0}
    merged = full_rehearsal.merged(earlier, later)
    assert [(r["stage"], r["seconds"], r["status"]) for r in merged["stages"]] == [
        ("fetch", 4.0, 0), ("senses", 300.0, 0), ("labels", 20.0, 0),
    ]  # fmt: skip
    assert merged["seconds"] == 324.0
    other = full_rehearsal.merged({"sizes": {"classes": 10}, "stages": [row("fetch", 4.0)]}, later)
    assert [r["stage"] for r in other["stages"]] == ["senses", "labels"]  # another size is not merged
    assert full_rehearsal.merged(None, later)["seconds"] == 320.0
    skipped = {**row("fetch", 1.5), "ran": False}  # up to date when the later part began: the first run's row stays
    kept = full_rehearsal.merged(earlier, {**later, "stages": [skipped, row("labels", 20.0)]})
    assert [(r["stage"], r["seconds"]) for r in kept["stages"]] == [("fetch", 4.0), ("senses", 100.0), ("labels", 20.0)]


def test_growth_is_the_exponent_between_the_two_largest_scales():
    linear = {"1x": row("s", 2.0), "10x": row("s", 20.0), "full": row("s", 200.0)}
    assert rehearsal_report.growth(linear) == pytest.approx(1.0)
    quadratic = {"1x": row("s", 1.0), "10x": row("s", 3.0), "full": row("s", 300.0)}
    assert rehearsal_report.growth(quadratic) == pytest.approx(2.0)
    assert rehearsal_report.growth({"10x": row("s", 3.0)}) is None
    assert rehearsal_report.growth({"1x": row("s", 0.2), "10x": row("s", 0.9)}) is None  # too small to say
    failed = {"1x": row("s", 2.0), "10x": row("s", 20.0), "full": row("s", 5.0, status=1)}
    assert rehearsal_report.growth(failed) == pytest.approx(1.0)  # a failed run says nothing


def test_the_table_has_a_row_per_stage_in_pipeline_order_and_marks_failures():
    results = {
        "1x": {"scale": "1x", "seconds": 6.0, "stages": [row("fetch", 2.0), row("senses", 4.0)]},
        "10x": {"scale": "10x", "seconds": 45.0, "stages": [row("fetch", 5.0), row("senses", 40.0, status=2)]},
    }
    lines = rehearsal_report.stage_table(results)
    assert lines[0].startswith("| stage | time s 1x | time s 10x | peak RSS MB 1x | peak RSS MB 10x |")
    body = lines[2:]
    assert body[0].startswith("| `fetch` | 2.0 | 5.0 |") and body[0].endswith("| hub 3 | 0.40 |")
    assert body[1].startswith("| `senses` | 4.0 | failed |")
    assert body[-1].startswith("| **all** | 6 | 45 |")
    assert all(line.count("|") == lines[0].count("|") for line in lines)


def test_the_report_block_is_replaced_between_its_markers_and_nothing_else_moves():
    text = f"head\n{rehearsal_report.START}\nold\n{rehearsal_report.END}\ntail\n"
    assert rehearsal_report.replace_block(text, ["new"]) == (
        f"head\n{rehearsal_report.START}\nnew\n{rehearsal_report.END}\ntail\n"
    )
    appended = rehearsal_report.replace_block("head\n", ["new"])
    assert appended == f"head\n\n{rehearsal_report.START}\nnew\n{rehearsal_report.END}\n"


def test_the_frozen_package_is_the_copys_code_laid_out_as_the_installed_package(tmp_path):
    # a copy holds files only (tests/project.py skips links), so the package's links are followed
    # into the copy's own folders: what runs is the copy's code, not the working tree's
    copy = tmp_path / "copy"
    for folder in ("builders/core", "eval", "resources"):
        (copy / folder).mkdir(parents=True)
    (copy / "builders" / "__init__.py").write_text("COPY = True\n")
    (copy / "builders" / "core" / "progress.py").write_text("FROZEN = 'copy'\n")
    (copy / "eval" / "__init__.py").write_text("")
    (copy / "resources" / "languages.tsv").write_text("lang\n")
    repo = tmp_path / "repo"
    package = repo / ".static-imports" / "babelforge"
    package.mkdir(parents=True)
    for name, target in {
        "__init__.py": "builders/__init__.py",
        "core": "builders/core",
        "eval": "eval",
        "resources": "resources",
    }.items():
        (repo / target).parent.mkdir(parents=True, exist_ok=True)
        (repo / target).mkdir() if (copy / target).is_dir() else (repo / target).write_text("the working tree's\n")
        (package / name).symlink_to(Path("../..") / target)

    full_rehearsal.freeze_package(copy, repo)

    frozen = copy / "babelforge"
    assert sorted(path.name for path in frozen.iterdir()) == ["__init__.py", "core", "eval", "resources"]
    assert (frozen / "__init__.py").read_text() == "COPY = True\n"
    assert (frozen / "core" / "progress.py").read_text() == "FROZEN = 'copy'\n"
    assert not (frozen / "core").is_symlink()  # a copy: later edits of the copy's builders/ do not reach it
    assert (frozen / "resources").is_symlink() and (frozen / "resources" / "languages.tsv").read_text() == "lang\n"


def test_the_repositorys_package_links_all_resolve_inside_it():
    # freeze_package maps each link to a path of the copy: one pointing outside the repository has none
    package = full_rehearsal.REPO / ".static-imports" / "babelforge"
    entries = sorted(package.iterdir())
    assert len(entries) >= 10
    for entry in entries:
        assert entry.is_symlink(), entry
        entry.resolve().relative_to(full_rehearsal.REPO.resolve())


def test_a_resumed_run_imports_its_copys_frozen_package_first(tmp_path):
    # the driver serves the stand-ins, which import babelforge: resumed, it must take the copy's code
    project = tmp_path / "full" / "project"
    assert full_rehearsal.frozen_package_env(tmp_path, ["full"], {"PYTHONPATH": "/elsewhere"}) is None  # no copy yet
    (project / "babelforge").mkdir(parents=True)
    env = full_rehearsal.frozen_package_env(tmp_path, ["full"], {"PYTHONPATH": "/elsewhere", "HOME": "/h"})
    assert env == {"PYTHONPATH": f"{project}:/elsewhere", "HOME": "/h"}
    assert full_rehearsal.frozen_package_env(tmp_path, ["full"], {})["PYTHONPATH"] == str(project)
    assert full_rehearsal.frozen_package_env(tmp_path, ["full"], env) is None  # first already: no second start
    assert full_rehearsal.frozen_package_env(tmp_path, ["full", "10x"], {}) is None  # two copies: none is first
    assert full_rehearsal.frozen_package_env(tmp_path, ["10x"], {}) is None  # that scale's copy is not frozen
