"""Eval results name the build profile: each run JSON's provenance, and the headline eval.json."""

import json

import pytest
import yaml

from babelforge.core.config import load_config
from babelforge.core.provenance import SAMPLE_MODELS
from babelforge.eval.results import write_run


def config_of(repo_root, module, profile, **paths):
    """A stage's Config from the repo's params.yaml under `profile`, its paths under `paths`."""
    import importlib

    params = yaml.safe_load((repo_root / "params.yaml").read_text(encoding="utf-8"))
    params = {**params, "profile": profile, "paths": {**params["paths"], **paths}}
    return load_config(importlib.import_module(module).Config, params)


def retrieval_row(model: str) -> dict:
    return {
        "model": model,
        "revision": "sha256:0",
        "dataset": "xtd",
        "dataset_version": "sha256:1",
        "lang": "deu_Latn",
        "prompt_set": "none",
        "seed": 0,
        "t2i_r@1": 0.5,
        "i2t_r@1": 0.25,
        "mean_recall": 0.5,
    }


@pytest.mark.parametrize(("profile", "build"), [("sample", {"models": SAMPLE_MODELS}), ("full", {})])
def test_a_run_json_records_the_build_profile(tmp_path, repo_root, profile, build):
    config = config_of(repo_root, "babelforge.eval.retrieval.retrieval_stage", profile)
    path = write_run("retrieval", [retrieval_row("m")], config, {"xtd": "sha256:1"}, tmp_path / "retrieval.json")
    assert json.loads(path.read_text())["provenance"]["build"] == {"profile": profile, **build}


@pytest.mark.parametrize("profile", ["sample", "full"])
def test_the_headline_eval_metrics_name_the_profile_of_the_runs(tmp_path, repo_root, profile):
    from babelforge.eval.report.report_stage import run

    reports, metrics = tmp_path / "reports", tmp_path / "metrics"
    runs = config_of(repo_root, "babelforge.eval.retrieval.retrieval_stage", profile)
    write_run("retrieval", [retrieval_row("m")], runs, {"xtd": "sha256:1"}, reports / "retrieval.json")
    config = config_of(
        repo_root,
        "babelforge.eval.report.report_stage",
        profile,
        eval_reports=str(reports),
        metrics=str(metrics),
        languages=str(tmp_path / "absent.parquet"),
    )
    assert run(config) == 0
    headline = json.loads((metrics / "eval.json").read_text())
    assert headline["profile"] == profile and headline["m"]["ret_xtd"]["recall"] == 0.5
