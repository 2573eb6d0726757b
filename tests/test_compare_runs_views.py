"""The views of runs that docs/guides/compare-runs.md and README.md print, run verbatim on a git + DVC copy
of the project whose workspace holds an experiment's result: each fits in under 120 columns, and the view
of everything that differs lists every metric that moved.

Issue 50: `dvc exp show --md --only-changed --drop '.*/.*'` dropped `metrics/labels.json:languages`
(DVC names a metric by its file where two files share the name, and the pattern meant for dependency
paths matches that `/`) and was 538 columns wide; README's `dvc exp show --md --only-changed` 953.
The experiment's result here is written, not run: `labels.min_classes=20` set the way `dvc exp run -S`
sets it, and the committed headline files changed the way it changes them (fewer languages, a higher
class minimum, every zero-shot mean over fewer languages).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from dvc.utils.hydra import apply_overrides

from tests.project import command_env, copy_project, guide_block, run

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
WIDTH = 120


def leaves(node, prefix: str = "") -> dict[str, object]:
    """A metrics file's figures by their dotted name, as DVC names them."""
    if isinstance(node, dict):
        return {key: value for name, child in node.items() for key, value in leaves(child, f"{prefix}{name}.").items()}
    return {prefix.removesuffix("."): node}


def experiment_result(copy: Path) -> None:
    """What `dvc exp run -S labels.min_classes=20` leaves in the workspace's params and headline files."""
    apply_overrides(copy / "params.yaml", ["labels.min_classes=20"])
    labels = json.loads((copy / "metrics" / "labels.json").read_text())
    labels["languages"] -= 33
    labels["classes_per_language"]["min"] = 20
    (copy / "metrics" / "labels.json").write_text(json.dumps(labels, indent=2))
    evaluation = json.loads((copy / "metrics" / "eval.json").read_text())
    for groups in (value for value in evaluation.values() if isinstance(value, dict)):
        for name, figures in groups.items():
            if name.startswith("zs_") and figures.get("langs", 0) > 1:
                for key in figures:
                    figures[key] = figures[key] - 33 if key == "langs" else round(figures[key] * 0.9 + 0.001, 6)
    (copy / "metrics" / "eval.json").write_text(json.dumps(evaluation, indent=2))


def view_commands() -> list[str]:
    """The guide's worked example's `dvc exp show` / `dvc exp diff` / `dvc metrics diff` lines and the
    README's comparison recipe (after its `dvc exp run`), comments cut."""
    guide = [line.split("   #")[0].strip() for line in guide_block("compare-runs.md", "Worked example").splitlines()]
    readme = next(line for line in (REPO / "README.md").read_text().splitlines() if "labels.min_classes=20" in line)
    recipe = [part.split("   #")[0].strip() for part in readme.split("&&")[1:]]
    return [line for line in guide + recipe if re.match(r"dvc (exp show|exp diff|metrics diff)", line)]


def test_every_documented_view_fits_and_the_diff_lists_every_metric_that_moved(tmp_path):
    copy = copy_project(tmp_path / "project")
    env = command_env(copy)
    run(["git", "branch", "-M", "main"], copy, env)  # the guide compares against `main`, the project's branch
    committed = {path.name: leaves(json.loads(path.read_text())) for path in (copy / "metrics").glob("*.json")}
    experiment_result(copy)
    moved = {
        (name, key)
        for path in (copy / "metrics").glob("*.json")
        for name in [path.name]
        for key, value in leaves(json.loads(path.read_text())).items()
        if committed[name].get(key) != value
    }
    assert ("labels.json", "languages") in moved and len(moved) > 10

    commands = view_commands()
    assert "dvc exp diff --md" in commands and any(c.startswith("dvc exp show") for c in commands), commands
    widths = {}
    for command in commands:
        shown = subprocess.run(["bash", "-c", command], cwd=copy, env=env, capture_output=True, text=True, timeout=300)
        assert shown.returncode == 0, f"{command}: {shown.stderr[-2000:]}"
        widths[command] = max(map(len, shown.stdout.splitlines()))
        if command == "dvc exp diff --md":
            cells = [line.split("|") for line in shown.stdout.splitlines() if line.startswith("|")]
            rows = {(cell[1].strip(), cell[2].strip()) for cell in cells}
            listed = {(Path(path).name, key) for path, key in rows if path.startswith("metrics/")}
            assert listed == moved, sorted(moved ^ listed)
            assert ("params.yaml", "labels.min_classes") in rows
    assert all(width < WIDTH for width in widths.values()), widths
