"""Fixtures for the Babel-ImageNet tests: the wordnet -> senses -> labels chain of the sample profile
on the real OMW mirror, through the CLI, built once per run (tests/shared.py) and copied per module."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from babelforge.cli import main as cli
from tests.shared import built_once


def build_chain(tmp: Path, repo_root: Path, shared_data: Path, nltk_data: Path, extra_params=None) -> Path:
    """wordnet, senses and labels into `tmp` (wn.parquet, senses/, bi/, metrics/) with the repo's
    params for the sample profile, the mirror's OMW and `extra_params` ({group: {key: value}})."""
    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    params["profile"] = "sample"
    params["senses"]["omw_dir"] = str(shared_data / "omw")
    params["wordnet"]["nltk_data"] = str(nltk_data)
    params["paths"]["metrics"] = str(tmp / "metrics")
    for group, values in (extra_params or {}).items():
        params[group].update(values)
    tmp.mkdir(parents=True, exist_ok=True)
    p = tmp / "params.yaml"
    p.write_text(yaml.safe_dump(params))
    assert cli(["wordnet", "--params", str(p), "--out", str(tmp / "wn.parquet")]) == 0
    assert cli(["senses", "--params", str(p), "--wordnet", str(tmp / "wn.parquet"), "--out", str(tmp / "senses")]) == 0
    assert run_labels(p, tmp, tmp / "bi") == 0
    return tmp


def run_labels(params: Path, chain: Path, out: Path, *overrides: str) -> int:
    """`babelforge labels` over a chain's wordnet and senses into `out` (labels, languages and
    candidates Parquet), with `--set` overrides; returns the exit code."""
    sets = [arg for override in overrides for arg in ("--set", override)]
    return cli(
        [
            "labels",
            *("--params", str(params), "--wordnet", str(chain / "wn.parquet"), "--senses", str(chain / "senses")),
            *("--out", str(out / "labels.parquet"), "--languages", str(out / "languages.parquet")),
            *("--candidates", str(out / "candidates.parquet"), *sets),
        ]
    )


@pytest.fixture(scope="session")
def sample_chain(tmp_path_factory, repo_root, shared_data) -> Path:
    """The chain with the repo's params, built once per run for every worker: read it, never write
    into it (copy_chain gives a folder to run stages over)."""
    return built_once(
        tmp_path_factory,
        "sample-labels-chain",
        lambda folder: build_chain(folder, repo_root, shared_data, folder / "nltk"),
    )


def copy_chain(chain: Path, dest: Path) -> Path:
    """A copy of a built chain whose params.yaml sends the headline metrics into the copy, so a
    stage run with it writes nothing into the shared build (the nltk cache stays where it is)."""
    shutil.copytree(chain, dest, ignore=shutil.ignore_patterns("nltk"))
    params = yaml.safe_load((dest / "params.yaml").read_text())
    params["paths"]["metrics"] = str(dest / "metrics")
    (dest / "params.yaml").write_text(yaml.safe_dump(params))
    return dest
