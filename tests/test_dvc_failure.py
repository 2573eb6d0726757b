"""A stage that fails under `dvc repro` or `dvc exp run` leaves the last good outputs in place (issue 46):
DVC removes a stage's outputs before it runs the command, and the CLI puts back what dvc.lock records,
from the DVC cache (a metric DVC does not cache, from git). Real `dvc` on a small project whose labels
stage was recorded (`dvc commit`) from outputs written here, so no stage has to be built."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.project import REPO, command_env, run, tree_digests

pytestmark = pytest.mark.slow

PIPELINE = {
    "stages": {
        "labels": {
            "cmd": "babelforge labels",
            "params": ["labels"],
            "outs": [
                "data/babel_imagenet/labels.parquet",
                "data/babel_imagenet/languages.parquet",
                "data/babel_imagenet/candidates.parquet",
                "data/babel_imagenet/reports",
            ],
            "metrics": [{"metrics/labels.json": {"cache": False}}],
        }
    }
}


@pytest.fixture()
def project(tmp_path) -> Path:
    """git + DVC, the project's params.yaml, the labels stage's outputs recorded in dvc.lock and its cache."""
    env = command_env()
    (tmp_path / "params.yaml").write_text((REPO / "params.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump(PIPELINE, sort_keys=False), encoding="utf-8")
    built = tmp_path / "data" / "babel_imagenet"
    (built / "reports" / "by_language").mkdir(parents=True)
    for name in ("labels", "languages", "candidates"):
        (built / f"{name}.parquet").write_bytes(f"the last good {name}\n".encode())
    (built / "reports" / "by_language" / "deu_Latn.json").write_text('{"classes": 512}\n')
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "labels.json").write_text(json.dumps({"languages": 9}) + "\n")
    run(["git", "init", "-q"], tmp_path, env)
    run(["dvc", "init", "-q"], tmp_path, env)
    run(["dvc", "commit", "-f", "-q", "labels"], tmp_path, env)
    run(["git", "add", "-A"], tmp_path, env)
    run(["git", "commit", "-qm", "built"], tmp_path, env)
    return tmp_path


def outputs(root: Path) -> dict[str, str]:
    return {
        f"{folder}/{name}": digest
        for folder in ("data", "metrics")
        for name, digest in tree_digests(root / folder).items()
    }


def failed(command: list[str], root: Path) -> subprocess.CompletedProcess:
    result = subprocess.run(command, cwd=root, env=command_env(), capture_output=True, text=True, timeout=300)
    assert result.returncode != 0, result.stdout + result.stderr
    return result


def test_an_invalid_experiment_parameter_leaves_every_output_and_metric_in_place(project):
    before = outputs(project)
    result = failed(["dvc", "exp", "run", "-S", "labels.min_classes=abc"], project)
    lines = [line for line in result.stderr.splitlines() if line.startswith("babelforge labels: ")]
    assert len(lines) == 2, result.stderr
    assert lines[0] == "babelforge labels: error: params.yaml: labels.min_classes is 'abc' (str); expected an integer"
    assert lines[1].startswith(
        "babelforge labels: DVC removed the stage's outputs before running it: put back the last good ones "
        "dvc.lock records (5: data/babel_imagenet/candidates.parquet, "
    )
    assert lines[1].endswith("`git checkout -- params.yaml` undoes it")
    assert outputs(project) == before
    assert run(["git", "status", "--porcelain", "--", "data", "metrics"], project) == ""
    # what is left is DVC's own doing, seen by git (a same-size value, `10 ` -> `abc`, once looked unchanged to
    # it) and undone as the line says; then the project is as built
    assert "min_classes: abc" in (project / "params.yaml").read_text(encoding="utf-8")
    assert run(["git", "status", "--porcelain"], project) == " M params.yaml\n"
    run(["git", "checkout", "--", "params.yaml"], project)
    assert "Data and pipelines are up to date." in run(["dvc", "status"], project)


def test_a_stage_that_fails_while_it_runs_under_dvc_repro_puts_back_its_outputs(project):
    """`dvc repro -f` reruns it; it stops at its first missing input (no wordnet was built here)."""
    before = outputs(project)
    result = failed(["dvc", "repro", "-f", "labels"], project)
    assert "babelforge labels: error: " in result.stderr
    notice = [line for line in result.stderr.splitlines() if "put back the last good ones" in line]
    assert len(notice) == 1 and "dvc exp run" not in notice[0]
    assert outputs(project) == before
    assert "Data and pipelines are up to date." in run(["dvc", "status"], project)
