"""The release flow on a throwaway repo: dvc.lock + git tag per version, `dvc push` to a local
directory remote, `dvc pull` of a tag in a fresh clone gives identical files, and
`babelforge diff --rev` reads two tagged versions through DVC."""

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from babelforge.cli import main as cli
from babelforge.core.io import sha256_file
from tests.project import command_env, run

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

# A one-stage pipeline writing a labels table from params.yaml: the shape of the real one.
MAKE_LABELS = """
import sys, yaml, pandas as pd
from babelforge.core.io import write_table
labels = yaml.safe_load(open("params.yaml"))["labels"]
rows = [{"lang": lang, "class_idx": int(idx), "label": label, "source": "wikt"}
        for lang, per_class in labels.items() for idx, label in per_class.items()]
write_table(pd.DataFrame(rows), "data/babel_imagenet/labels.parquet", sort_by=["lang", "class_idx"])
"""
DVC_YAML = f"""stages:
  labels:
    cmd: {sys.executable} make_labels.py
    deps: [make_labels.py]
    params: [labels]
    outs: [data/babel_imagenet/labels.parquet]
"""


RELEASE = Path(__file__).resolve().parents[2] / "scripts" / "release.sh"


def sh(cwd: Path, *command: str) -> str:
    return run(list(command), cwd, command_env(), timeout=180)


def release(repo: Path, labels: dict, tag: str) -> str:
    """One dataset version: params change, repro, commit dvc.lock, tag, push the data."""
    (repo / "params.yaml").write_text(json.dumps({"profile": "sample", "labels": labels}, ensure_ascii=False))
    sh(repo, "dvc", "repro", "-q")
    sh(
        repo,
        "git",
        "add",
        "params.yaml",
        "dvc.lock",
        "dvc.yaml",
        "make_labels.py",
        ".gitignore",
        "data/babel_imagenet/.gitignore",
    )
    sh(repo, "git", "commit", "-qm", f"labels {tag}")
    sh(repo, str(RELEASE), "babel-imagenet", tag)  # git tag babel-imagenet/<tag> + dvc push
    return sha256_file(repo / "data" / "babel_imagenet" / "labels.parquet")


@pytest.mark.slow
def test_push_pull_round_trip_and_diff_between_tags(tmp_path, capsys):
    repo, remote, clone = tmp_path / "repo", tmp_path / "remote", tmp_path / "clone"
    repo.mkdir()
    sh(repo, "git", "init", "-q")
    sh(repo, "dvc", "init", "-q")
    sh(repo, "dvc", "remote", "add", "-d", "local", str(remote))  # S3/GCS: same command, s3:// or gs:// URL
    (repo / "make_labels.py").write_text(MAKE_LABELS)
    (repo / "dvc.yaml").write_text(DVC_YAML)
    (repo / ".gitignore").write_text("")
    sh(repo, "git", "add", ".dvc", ".gitignore", "dvc.yaml", "make_labels.py")
    sh(repo, "git", "commit", "-qm", "pipeline")
    v1 = release(repo, {"fin_Latn": {"0": "suutari", "1": "kultakala"}, "rus_Cyrl": {"0": "линь"}}, "v1.0")
    v2 = release(repo, {"fin_Latn": {"0": "suutari", "1": "Kultakala", "2": "hai"}}, "v1.1")
    assert v1 != v2 and (remote / "files" / "md5").is_dir()
    # a version is never moved, and a dirty tree is not released
    (repo / "params.yaml").write_text("{}")
    with pytest.raises(AssertionError, match="uncommitted changes"):
        sh(repo, str(RELEASE), "babel-imagenet", "v1.2")
    sh(repo, "git", "checkout", "-q", "params.yaml")
    with pytest.raises(AssertionError, match="exists already"):
        sh(repo, str(RELEASE), "babel-imagenet", "v1.1")

    # a fresh clone at the old tag pulls exactly the v1.0 bytes from the remote
    sh(tmp_path, "git", "clone", "-q", str(repo), str(clone))
    sh(clone, "git", "checkout", "-q", "babel-imagenet/v1.0")
    sh(clone, "dvc", "pull", "-q")
    assert sha256_file(clone / "data" / "babel_imagenet" / "labels.parquet") == v1
    sh(clone, "dvc", "status", "-q")  # exit 0: workspace matches dvc.lock of v1.0

    # the changelog between the two tags, read through DVC (clone has only v1.0 in its cache)
    here = os.getcwd()
    os.chdir(clone)
    try:
        assert (
            cli(
                [
                    "diff",
                    "--rev",
                    "babel-imagenet/v1.0",
                    "--rev",
                    "babel-imagenet/v1.1",
                    "--format",
                    "json",
                    "--out",
                    str(tmp_path / "changes.json"),
                ]
            )
            == 0
        )
    finally:
        os.chdir(here)
    changes = json.loads((tmp_path / "changes.json").read_text())
    assert changes["summary"]["languages_removed"] == ["rus_Cyrl"]
    fin = changes["languages"]["fin_Latn"]
    # no review files in either version: every change is the rules'
    assert fin["added"] == [{"class_idx": 2, "label": "hai", "by": "rules"}]
    assert fin["relabelled"] == [{"class_idx": 1, "old": "kultakala", "new": "Kultakala", "by": "rules"}]
    assert cli(["diff", "--rev", "babel-imagenet/v1.0", "--rev", "v9.9", "--repo", str(clone)]) == 1
    assert "v9.9" in capsys.readouterr().err

    # one revision: against what the workspace holds (the clone is at v1.0, so v1.1 -> v1.0)
    assert cli(["diff", "--rev", "babel-imagenet/v1.1", "--repo", str(clone), "--format", "json"]) == 0
    back = json.loads(capsys.readouterr().out)
    assert back["new"] == "data/babel_imagenet/labels.parquet (workspace)"
    assert back["languages"]["fin_Latn"]["removed"] == [{"class_idx": 2, "label": "hai", "by": "rules"}]
    assert back["summary"]["languages_added"] == ["rus_Cyrl"]


def test_a_failed_push_leaves_no_tag(tmp_path):
    import subprocess

    repo = tmp_path / "repo"
    repo.mkdir()
    sh(repo, "git", "init", "-q")
    (repo / "dvc.lock").write_text("schema: '2.0'\n")
    sh(repo, "git", "add", "dvc.lock")
    sh(repo, "git", "commit", "-qm", "lock")
    fake_dvc = tmp_path / "fake-dvc"  # pipeline up to date, remote unreachable
    fake_dvc.write_text('#!/bin/sh\n[ "$1" = push ] && { echo "ERROR: remote unreachable" >&2; exit 1; }\nexit 0\n')
    fake_dvc.chmod(0o755)
    env = {**command_env(), "DVC": str(fake_dvc)}
    result = subprocess.run([str(RELEASE), "babel-imagenet", "v1.0"], cwd=repo, env=env, capture_output=True, text=True)
    assert result.returncode != 0 and "remote unreachable" in result.stderr
    assert sh(repo, "git", "tag", "--list").strip() == ""  # a rerun is not refused as "exists already"
    result = subprocess.run([str(RELEASE), "Bad Name", "v1.0"], cwd=repo, env=env, capture_output=True, text=True)
    assert result.returncode == 1 and "dataset must be" in result.stderr
