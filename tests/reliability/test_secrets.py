"""Canary secrets: with BABELNET_KEY and HF_TOKEN set to values found nowhere else, the full-profile
senses stage (on the loopback BabelNet API, also under `dvc repro`, also failing) and publish (dry
run through the CLI, a real run on the fake Hub, a Hub error that echoes the token) leave neither
value in any file, cache, dvc.lock, receipt or message."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from babelforge.core.io import read_table, write_table
from tests.lexicon.conftest import API_KEY, SYNSET_IDS, FakeBabelNet
from tests.loopback import serving
from tests.reliability.workspace import REPO, environment

HF_CANARY = f"hf_canary_{secrets.token_hex(8)}"
CANARIES = (API_KEY, HF_CANARY)  # the fake API's key is random per session: it is the BabelNet canary


def canary_env() -> dict[str, str]:
    return {"BABELNET_KEY": API_KEY, "HF_TOKEN": HF_CANARY}


def traces(root: Path) -> list[str]:
    """Files under `root` holding a canary (any encoding that keeps the ASCII bytes)."""
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            found += [f"{path.relative_to(root)}" for canary in CANARIES if canary.encode() in data]
    return found


def full_profile_inputs(workspace, folder: Path, api_url: str) -> None:
    """params.yaml (full profile, the loopback API) and a wordnet artifact cut to the synsets it knows."""
    params = yaml.safe_load((workspace.root / "params.yaml").read_text(encoding="utf-8"))
    params["profile"] = "full"
    params["senses"]["babelnet"].update(base_url=api_url, cache_dir="cache/babelnet")
    (folder / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    wordnet = read_table(workspace.root / "data" / "wordnet" / "imagenet1k.parquet")
    write_table(wordnet[wordnet["synset"].isin(SYNSET_IDS)], folder / "wn.parquet", sort_by=["class_idx"])
    (folder / "resources").symlink_to(workspace.root / "resources")


def senses(folder: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "babelforge.cli",
            "senses",
            "--params",
            "params.yaml",
            "--wordnet",
            "wn.parquet",
            "--out",
            "senses",
            *extra,
        ],
        cwd=folder,
        env=environment(canary_env()),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_babelnet_key_reaches_the_api_and_nothing_else(workspace, tmp_path):
    folder = tmp_path / "full"
    folder.mkdir()
    messages = []
    with serving(FakeBabelNet()) as api:
        full_profile_inputs(workspace, folder, api.url)
        built = senses(folder)
        assert built.returncode == 0, built.stderr[-2000:]
        assert any(query.get("key") == [API_KEY] for _, query in api.requests)  # the canary was really sent
        messages.append(built.stdout + built.stderr)
        # failures print the request: a server that keeps failing, a refused key, with and without --debug
        for plan, quota, extra in ((["503"] * 50, None, ()), ([], 0, ()), ([], 0, ("--debug",))):
            api.plan, api.quota = list(plan), quota
            failed = senses(folder, "--set", f"senses.babelnet.cache_dir=cache/empty{len(messages)}", *extra)
            assert failed.returncode != 0
            messages.append(failed.stdout + failed.stderr)
    assert "key=***: gave up after 2 attempts (last: HTTP 503)" in messages[1]
    assert "BabelNet refused" in messages[2] and "Traceback" in messages[3]
    for text in messages:
        assert not [c for c in CANARIES if c in text], text[-1500:]
    assert (folder / "cache" / "babelnet").is_dir() and (folder / "senses" / "babelnet.parquet").is_file()
    assert traces(folder) == []


@pytest.mark.slow
def test_babelnet_key_is_not_in_dvc_lock(workspace, tmp_path):
    """The senses stage under `dvc repro` in a stand-in DVC project: dvc.lock and .dvc/ stay clean."""
    folder = tmp_path / "dvc"
    folder.mkdir()
    with serving(FakeBabelNet()) as api:
        full_profile_inputs(workspace, folder, api.url)
        (folder / "dvc.yaml").write_text(
            yaml.safe_dump(
                {
                    "stages": {
                        "senses": {
                            "cmd": f"{sys.executable} -m babelforge.cli senses --params params.yaml --wordnet wn.parquet --out senses",
                            "deps": ["wn.parquet"],
                            "params": [{"params.yaml": ["profile", "senses"]}],
                            "outs": ["senses"],
                        }
                    }
                }
            )
        )
        dvc = str(Path(sys.executable).parent / "dvc")
        env = environment(canary_env())
        subprocess.run([dvc, "init", "--no-scm", "-q"], cwd=folder, env=env, check=True, timeout=120)
        result = subprocess.run([dvc, "repro"], cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (folder / "dvc.lock").is_file()
    assert not [c for c in CANARIES if c in result.stdout + result.stderr]
    assert traces(folder) == []


@pytest.mark.slow
def test_hf_token_leaves_no_trace_in_publish(tmp_path, monkeypatch, capsys):
    from huggingface_hub.errors import HfHubHTTPError

    from babelforge.core.errors import BabelforgeError
    from babelforge.publish.publish_stage import run
    from tests.publish.conftest import OMW_DIR
    from tests.publish.test_hub import FakeHub, publish_args

    if not OMW_DIR.is_dir():
        pytest.fail(f"the source mirror is missing: expected OMW data at {OMW_DIR}")
    from babelforge.core.provenance import provenance
    from tests.audit.conftest import write_registry
    from tests.publish.conftest import build, crafted_labels

    record = provenance("labels", {"min_classes": 10}, {"omw": {"version": "1.4", "sha256": "0" * 64}})
    write_table(crafted_labels(), tmp_path / "labels.parquet", sort_by=["lang", "class_idx"], provenance=record)
    write_registry(tmp_path / "languages.tsv")
    build("babel-imagenet", tmp_path)

    # the dry run, through the CLI as a user runs it
    dry = subprocess.run(
        [
            sys.executable,
            "-m",
            "babelforge.cli",
            "publish",
            "babel-imagenet",
            "--repo",
            "org/x",
            "--dry-run",
            "--params",
            str(REPO / "params.yaml"),
            "--hub",
            str(tmp_path / "build" / "hub"),
            "--releases",
            str(tmp_path / "releases"),
            "--audit",
            str(tmp_path / "audit"),
        ],
        cwd=tmp_path,
        env=environment(canary_env()),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert dry.returncode == 0, dry.stderr[-2000:]
    # a real run on the fake Hub (a receipt is written), then a Hub error whose text carries the token
    monkeypatch.setenv("HF_TOKEN", HF_CANARY)
    assert run(publish_args(tmp_path, "--revision-tag", "v1.0"), api=FakeHub()) == 0

    class EchoingHub(FakeHub):
        def create_commit(self, repo_id, operations, **kwargs):
            raise HfHubHTTPError(f"401 Unauthorized: token {HF_CANARY} is not valid\nrequest id 1")

    (tmp_path / "build" / "hub" / "babel-imagenet" / "LICENSES.md").write_text("changed\n")
    with pytest.raises(BabelforgeError) as refused:
        run(publish_args(tmp_path, "--revision-tag", "v1.1"), api=EchoingHub())
    captured = capsys.readouterr()
    receipts = list((tmp_path / "releases").rglob("*.json"))
    assert receipts and json.loads(receipts[0].read_text())["version"] == "v1.0"
    for text in (dry.stdout + dry.stderr, captured.out + captured.err, str(refused.value)):
        assert HF_CANARY not in text
    assert "401 Unauthorized" in str(refused.value)
    assert traces(tmp_path) == []
