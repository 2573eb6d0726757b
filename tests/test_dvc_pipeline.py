"""Commands on a copy of the project. What `dvc repro` reruns and skips (up to date, a params change, a
review, a language added, an experiment undone) is checked on a built copy in tests/test_review_journey.py."""

import subprocess

import pytest
import yaml

from tests.project import REPO, command_env, copy_project, run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(tmp_path_factory, shared_data):
    """A git+DVC copy of the working tree, with params pointing at the mirror."""
    copy = tmp_path_factory.mktemp("project")
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["fetch"]["mirror"] = str(shared_data)
    copy_project(copy)
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    env = command_env(copy)
    return copy, env


def test_full_profile_without_key_fails_at_once_naming_the_variable(project):
    copy, env = project
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["profile"] = "full"
    path = copy / "params-full.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    env = {k: v for k, v in env.items() if k != "BABELNET_KEY"}
    run(["babelforge", "wordnet", "--params", str(path), "--out", "data/wn-full.parquet"], copy, env)
    result = subprocess.run(
        [
            "babelforge",
            "senses",
            "--params",
            str(path),
            "--wordnet",
            "data/wn-full.parquet",
            "--out",
            "data/senses-full",
        ],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "BABELNET_KEY" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (copy / "data" / "senses-full").exists()
