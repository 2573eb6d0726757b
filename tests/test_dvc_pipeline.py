"""`dvc repro` on a copy of the project: up-to-date stages are skipped, a params change reruns only its stage."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow


def run(cmd, cwd, env):
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(cmd)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def project(tmp_path_factory, repo_root, shared_data):
    """A git+DVC copy of the working tree, with params pointing at the mirror."""
    copy = tmp_path_factory.mktemp("project")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=repo_root,
                           capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        source = repo_root / name
        if source.is_file() and not source.is_symlink():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["fetch"]["mirror"] = str(shared_data)
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    env = {**os.environ, "DVC_NO_ANALYTICS": "1", "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    run(["git", "init", "-q"], copy, env)
    run(["git", "add", "-A"], copy, env)
    run(["git", "commit", "-qm", "copy"], copy, env)
    return copy, env


def test_repro_twice_then_params_change_reruns_only_labels(project):
    copy, env = project
    first = run(["dvc", "repro", "labels"], copy, env)
    assert "Running stage 'labels'" in first and "Running stage 'senses'" in first
    assert (copy / "data" / "babel_imagenet" / "labels.parquet").exists()
    second = run(["dvc", "repro", "labels"], copy, env)
    assert "Running stage" not in second
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["labels"]["min_classes"] = 50
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    third = run(["dvc", "repro", "labels"], copy, env)
    assert "Running stage 'labels'" in third
    assert "Running stage 'senses'" not in third and "Running stage 'wordnet'" not in third


def test_full_profile_without_key_fails_at_once_naming_the_variable(project):
    copy, env = project
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["profile"] = "full"
    path = copy / "params-full.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    env = {k: v for k, v in env.items() if k != "BABELNET_KEY"}
    run(["babelforge", "wordnet", "--params", str(path), "--out", "data/wn-full.parquet"], copy, env)
    result = subprocess.run(["babelforge", "senses", "--params", str(path), "--wordnet", "data/wn-full.parquet",
                             "--out-dir", "data/senses-full"],
                            cwd=copy, env=env, capture_output=True, text=True)
    assert result.returncode == 1
    assert "BABELNET_KEY" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (copy / "data" / "senses-full").exists()
