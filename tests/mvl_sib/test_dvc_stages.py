"""`dvc repro` of the three MVL-SIB stages on a copy of the project (3 languages)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow


def _run(cmd, cwd, env):
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(cmd)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


def test_repro_builds_then_skips_then_reruns_only_what_a_param_touches(tmp_path, sib_dir):
    repo = Path(__file__).resolve().parents[2]
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=repo,
                           capture_output=True, text=True, check=True).stdout.split()
    copy = tmp_path / "project"
    for name in files:
        source = repo / name
        if source.is_file() and not source.is_symlink():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["mvl_sib"]["sib_dir"] = str(sib_dir)
    params["mvl_sib"]["languages"] = ["eng_Latn", "ace_Arab", "zho_Hans"]
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    env = {**os.environ, "DVC_NO_ANALYTICS": "1", "PYTHONPATH": str(copy),
           "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    _run(["git", "init", "-q"], copy, env)
    if not (copy / ".dvc").is_dir():
        _run(["dvc", "init", "-q"], copy, env)
    _run(["git", "add", "-A"], copy, env)
    _run(["git", "commit", "-qm", "copy"], copy, env)

    first = _run(["dvc", "repro", "mvl_sib_check"], copy, env)
    for stage in ("mvl_sib_images", "mvl_sib", "mvl_sib_check"):
        assert f"Running stage '{stage}'" in first
    assert "all checks passed" in first
    assert len(list((copy / "data" / "mvl_sib" / "i2s_k3").glob("*.parquet"))) == 3

    assert "Running stage" not in _run(["dvc", "repro", "mvl_sib_check"], copy, env)

    params["mvl_sib"]["seed"] = 43
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    third = _run(["dvc", "repro", "mvl_sib_check"], copy, env)
    assert "Running stage 'mvl_sib'" in third and "Running stage 'mvl_sib_check'" in third
    assert "Running stage 'mvl_sib_images'" not in third
