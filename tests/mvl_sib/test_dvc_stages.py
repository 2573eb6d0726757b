"""`dvc repro` of the three MVL-SIB stages on a copy of the project (3 languages)."""

from __future__ import annotations

import pytest
import yaml

from tests.project import command_env, copy_project, run

pytestmark = pytest.mark.slow


def test_repro_builds_then_skips_then_reruns_only_what_a_param_touches(tmp_path, sib_dir):
    copy = copy_project(tmp_path / "project")
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["mvl_sib"]["sib_dir"] = str(sib_dir)
    params["mvl_sib"]["languages"] = ["eng_Latn", "ace_Arab", "zho_Hans"]
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    env = command_env(copy)

    first = run(["dvc", "repro", "mvl_sib_check"], copy, env)
    for stage in ("mvl_sib_images", "mvl_sib", "mvl_sib_check"):
        assert f"Running stage '{stage}'" in first
    assert "all checks passed" in first
    assert len(list((copy / "data" / "mvl_sib" / "i2s_k3").glob("*.parquet"))) == 3

    assert "Running stage" not in run(["dvc", "repro", "mvl_sib_check"], copy, env)

    params["mvl_sib"]["seed"] = 43
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    third = run(["dvc", "repro", "mvl_sib_check"], copy, env)
    assert "Running stage 'mvl_sib'" in third and "Running stage 'mvl_sib_check'" in third
    assert "Running stage 'mvl_sib_images'" not in third
