"""Runs can be compared: headline metrics live in git, everything else a run plots is cached.

`dvc metrics diff main` and `dvc exp show` read a metric at another commit from git (a metric has
`cache: false`), so a metric under a git-ignored folder shows as `!` everywhere but the workspace.
Checked three ways: dvc.yaml's declarations, the headline files' shape, and real `dvc metrics`
commands on a throwaway git + DVC copy of the project.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from babelforge.core.errors import BabelforgeError
from babelforge.core.metrics import check_headline, leaves, write_metrics

REPO = Path(__file__).resolve().parents[1]
DVC = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
PATHS = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))["paths"]

# Stages whose metrics have not moved to `paths.metrics` yet (none now; kept so a stage mid-move can
# be named here rather than the checks loosened).
NOT_YET_CONVERTED: set[str] = set()


def _entries(stage: dict, section: str) -> list[tuple[str, dict]]:
    """(path, options) of each entry of a stage's outs / metrics / plots section."""
    entries = []
    for entry in stage.get(section, []):
        if isinstance(entry, dict):
            entries += [(path, options or {}) for path, options in entry.items()]
        else:
            entries.append((entry, {}))
    return entries


def _resolve(path: str) -> str:
    for name, value in PATHS.items():
        path = path.replace(f"${{paths.{name}}}", str(value))
    return path


def _git_ignored(path: str) -> bool:
    return subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=REPO).returncode == 0


STAGES_WITH_METRICS = sorted(name for name, stage in DVC.items() if stage.get("metrics"))


def test_the_headline_stages_declare_metrics():
    assert {"labels", "mvl_sib_check", "captions_select", "eval_report"} <= set(STAGES_WITH_METRICS)


@pytest.mark.parametrize("name", STAGES_WITH_METRICS)
def test_metrics_are_small_git_tracked_files_under_paths_metrics(name, request):
    if name in NOT_YET_CONVERTED:
        request.applymarker(pytest.mark.xfail(reason="captions stages rewritten on another branch", strict=True))
    for path, options in _entries(DVC[name], "metrics"):
        assert path.startswith("${paths.metrics}/") and path.endswith(".json"), path
        assert options.get("cache") is False, f"{path}: a metric is read from git at other commits"
        assert not _git_ignored(_resolve(path)), f"{_resolve(path)} is git-ignored"


def test_nothing_uncached_lives_in_a_git_ignored_folder():
    """`cache: false` on an ignored path keeps it in no commit and no cache: lost for comparisons."""
    lost = [
        f"{name}: {path}"
        for name, stage in DVC.items()
        if name not in NOT_YET_CONVERTED
        for section in ("outs", "metrics", "plots")
        for path, options in _entries(stage, section)
        if options.get("cache") is False and _git_ignored(_resolve(path))
    ]
    assert lost == []


def test_dvc_plots_folder_is_ignored_and_metrics_folder_is_not():
    lines = (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "/dvc_plots/" in lines
    assert _git_ignored("dvc_plots/index.html")
    assert PATHS["metrics"] == "metrics" and not _git_ignored("metrics/eval.json")


def test_a_headline_file_holds_numbers_nested_at_most_three_deep(tmp_path):
    figures = {"m": {"zs_tr": {"top1": 0.5, "langs": 3}}}
    write_metrics(figures, tmp_path, "eval", profile="sample")
    assert json.loads((tmp_path / "eval.json").read_text()) == {"profile": "sample", **figures}
    with pytest.raises(BabelforgeError, match="build profile"):
        write_metrics({"profile": 1}, tmp_path, "labels", profile="full")
    with pytest.raises(BabelforgeError, match="nested deeper"):
        check_headline({"m": {"t": {"lang": {"deu_Latn": 0.5}}}}, "eval")
    with pytest.raises(BabelforgeError, match="topics is list, not a number"):
        check_headline({"topics": [1, 2]}, "mvl_sib")
    with pytest.raises(BabelforgeError, match="write null"):
        check_headline({"kiwi_mean": float("nan")}, "captions")
    assert not (tmp_path / "mvl_sib.json").exists()


def test_the_headlines_leave_per_language_detail_out():
    from babelforge.captions.select import headline as captions_headline
    from babelforge.mvl_sib.check_stage import headline as mvl_sib_headline

    quality = {
        lang: {
            "n_captions": 10,
            "n_selected": kept,
            "n_without_translation": 10 - kept,
            "rejections": {"copy": 10 - kept},
            "kiwi_mean": kiwi,
            "n_with_reference": 10,
            "chrf_corpus": chrf,
            "chrf_corpus_top_hypothesis": 30.0,
            "n_kiwi_truncated": 3,
            "n_selected_kiwi_truncated": 1,
        }
        for lang, kept, kiwi, chrf in (("deu_Latn", 9, 0.5, 40.0), ("fin_Latn", 7, None, 20.0))
    }
    captions = captions_headline(
        quality, {"rows": 21, "kept": 20, "quarantined": 1, "reasons": {}, "excluded": {}, "truncated": 2}
    )
    check_headline(captions, "captions")
    assert captions["input_rows"] == 21 and captions["input_quarantined"] == 1 and captions["input_truncated"] == 2
    assert captions["captions"] == 20 and captions["selected"] == 16 and captions["without_translation"] == 4
    assert captions["kiwi_mean"] == 0.5 and captions["chrf_corpus_mean"] == 30.0  # a missing figure is skipped
    assert captions["kiwi_truncated"] == 6  # summed over the languages
    assert not any("deu_Latn" in ".".join(path) for path in leaves(captions))
    summary = {
        "languages": 3,
        "configs": 10,
        "rows_total": 90,
        "topics_per_language": {"science": 3},
        "label_position_min": 1,
        "label_position_max": 2,
        "problems": 0,
    }
    assert "topics_per_language" not in mvl_sib_headline(summary)
    check_headline(mvl_sib_headline(summary), "mvl_sib")


def _metric_files() -> list[str]:
    return sorted(
        _resolve(path)
        for name in STAGES_WITH_METRICS
        if name not in NOT_YET_CONVERTED
        for path, _ in _entries(DVC[name], "metrics")
    )


@pytest.mark.slow
def test_dvc_metrics_diff_reads_the_committed_headline(tmp_path):
    """In a git + DVC copy: commit every headline file, change one, and `dvc metrics diff HEAD`
    shows the committed value beside the new one; `dvc exp show` has the commit's numbers."""
    from tests.project import command_env, copy_project, run

    copy = copy_project(tmp_path / "project")
    env = command_env(copy)
    files = _metric_files()
    for number, path in enumerate(files):
        write_metrics(
            {"figure": number, "group": {"mean": 0.25}}, copy / Path(path).parent, Path(path).stem, profile="sample"
        )
    run(["git", "add", *files], copy, env)  # git add refuses an ignored path: they are tracked
    run(["git", "commit", "-qm", "headline metrics"], copy, env)
    write_metrics(
        {"figure": 99, "group": {"mean": 0.5}}, copy / Path(files[0]).parent, Path(files[0]).stem, profile="sample"
    )
    # the build profile is a string: listed old -> new when it changes, with no numeric diff
    write_metrics(
        {"figure": 1, "group": {"mean": 0.25}}, copy / Path(files[1]).parent, Path(files[1]).stem, profile="full"
    )

    shown = json.loads(run(["dvc", "metrics", "show", "--json"], copy, env).split("\n", 1)[0])[""]["data"]
    assert all(shown[path]["data"]["group"]["mean"] in (0.25, 0.5) for path in files), shown
    profiles = [shown[path]["data"]["profile"] for path in files]  # a string metric is shown as is
    assert profiles == ["sample", "full", *["sample"] * (len(files) - 2)]
    diff = json.loads(run(["dvc", "metrics", "diff", "HEAD", "--json"], copy, env).split("\n", 1)[0])
    assert diff == {
        files[0]: {"figure": {"old": 0, "new": 99, "diff": 99}, "group.mean": {"old": 0.25, "new": 0.5, "diff": 0.25}},
        files[1]: {"profile": {"old": "sample", "new": "full"}},
    }
    table = json.loads(run(["dvc", "exp", "show", "--json"], copy, env).split("\n", 1)[0])
    committed = next(row for row in table if row["rev"] != "workspace")["data"]["metrics"]
    assert all(committed[path]["data"]["figure"] == number for number, path in enumerate(files))
