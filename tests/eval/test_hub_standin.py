"""The loopback Hub stand-in (tests/hub_standin.py) answers huggingface_hub itself: model and dataset
info, single files (regular and large, through the redirect), whole snapshots at a branch or a commit,
trees and refs, the Hub's error codes, and a failure mode; in this process (`endpoint=`) and in a
subprocess that reads HF_ENDPOINT as a user's run does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hub_standin import HubStandIn, git_blob_sha1

REPO = Path(__file__).resolve().parents[2]
FILES = {
    "config.json": b'{"model_type": "tiny"}',
    "model.safetensors": bytes(range(256)) * 8,  # a large (LFS) file: served through the redirect
    "tokenizer/vocab.txt": b"a\nb\nc\n",
}


@pytest.fixture
def hub():
    with HubStandIn() as stand_in:
        yield stand_in


def test_commits_are_deterministic_and_branches_move(hub):
    first = hub.add("org/tiny", FILES)
    assert len(first) == 40 and int(first, 16) >= 0
    with HubStandIn() as other:
        assert other.add("org/tiny", FILES) == first  # same repo, same files: same commit
        assert other.add("org/other", FILES) != first
    second = hub.add("org/tiny", {**FILES, "config.json": b"{}"})
    assert second != first
    assert hub.url.startswith("http://127.0.0.1:") and hub.server.server_address[0] == "127.0.0.1"


def test_huggingface_hub_reads_it_in_this_process(hub, tmp_path):
    from huggingface_hub import HfApi, hf_hub_download, snapshot_download
    from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError

    first = hub.add("org/tiny", FILES)
    second = hub.add("org/tiny", {"config.json": b"{}"})
    api = HfApi(endpoint=hub.url)
    assert api.model_info("org/tiny", revision="main").sha == second
    info = api.model_info("org/tiny", revision=first)
    assert info.sha == first and sorted(s.rfilename for s in info.siblings) == sorted(FILES)
    assert [ref.target_commit for ref in api.list_repo_refs("org/tiny").branches] == [second]
    tree = {entry.path for entry in api.list_repo_tree("org/tiny", revision=first, recursive=True)}
    assert tree == {*FILES, "tokenizer"}
    cache = tmp_path / "cache"
    weights = hf_hub_download("org/tiny", "model.safetensors", revision=first, endpoint=hub.url, cache_dir=cache)
    assert Path(weights).read_bytes() == FILES["model.safetensors"]
    folder = Path(snapshot_download("org/tiny", revision=first, endpoint=hub.url, cache_dir=cache))
    assert folder.name == first
    assert {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()} == FILES
    main = hf_hub_download("org/tiny", "config.json", endpoint=hub.url, cache_dir=cache)
    assert Path(main).read_bytes() == b"{}" and f"/snapshots/{second}/" in main
    assert f"HEAD /org/tiny/resolve/{first}/model.safetensors" in hub.requests
    assert any(request.startswith("GET /lfs-objects/") for request in hub.requests)  # the redirect was followed
    for call, error in (
        (lambda: hf_hub_download("org/tiny", "nope.json", revision=first, endpoint=hub.url, cache_dir=cache), EntryNotFoundError),
        (lambda: hf_hub_download("org/none", "config.json", endpoint=hub.url, cache_dir=cache), RepositoryNotFoundError),
        (lambda: api.model_info("org/tiny", revision="f" * 40), RevisionNotFoundError),
    ):  # fmt: skip
        with pytest.raises(error):
            call()


def test_a_regular_file_has_its_git_etag_and_ranges_are_honoured(hub):
    import requests

    sha = hub.add("org/tiny", FILES)
    url = f"{hub.url}/org/tiny/resolve/{sha}/config.json"
    head = requests.head(url, timeout=5)
    assert head.status_code == 200 and head.headers["X-Repo-Commit"] == sha
    assert head.headers["ETag"] == f'"{git_blob_sha1(FILES["config.json"])}"'
    assert int(head.headers["Content-Length"]) == len(FILES["config.json"]) and not head.content
    part = requests.get(url, headers={"Range": "bytes=2-"}, timeout=5)
    assert part.status_code == 206 and part.content == FILES["config.json"][2:]
    large = requests.head(f"{hub.url}/org/tiny/resolve/main/model.safetensors", timeout=5)
    assert large.status_code == 302 and int(large.headers["X-Linked-Size"]) == len(FILES["model.safetensors"])


def test_datasets_and_the_failure_mode(hub, tmp_path):
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError

    sha = hub.add("org/cards", {"README.md": b"# card", "data/en.parquet": b"PAR1"}, repo_type="dataset")
    api = HfApi(endpoint=hub.url)
    assert api.dataset_info("org/cards").sha == sha
    path = hf_hub_download("org/cards", "README.md", repo_type="dataset", endpoint=hub.url, cache_dir=tmp_path)
    assert Path(path).read_bytes() == b"# card"
    assert "GET /datasets/org/cards/resolve/main/README.md" in hub.requests
    with pytest.raises(HfHubHTTPError):
        api.model_info("org/cards")  # a dataset is no model
    hub.requests.clear()
    hub.fail_with = 503
    with pytest.raises(HfHubHTTPError, match="503"):
        api.dataset_info("org/cards")  # no retries in an info call: one request
    assert hub.requests == ["GET /api/datasets/org/cards"]


def test_a_subprocess_reads_it_through_hf_endpoint(hub, tmp_path):
    sha = hub.add("org/tiny", FILES)
    code = (
        "import json\n"
        "from huggingface_hub import HfApi, hf_hub_download, snapshot_download\n"
        "print(json.dumps([HfApi().model_info('org/tiny', revision='main').sha,\n"
        "    open(hf_hub_download('org/tiny', 'config.json'), 'rb').read().decode(),\n"
        "    snapshot_download('org/tiny', revision=HfApi().model_info('org/tiny').sha)]))\n"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith("HF_")}
    env.update(HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf"), HF_HUB_DISABLE_PROGRESS_BARS="1")
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    main, config, folder = json.loads(result.stdout.strip().splitlines()[-1])
    assert main == sha and config == FILES["config.json"].decode()
    assert folder == str(tmp_path / "hf" / "hub" / "models--org--tiny" / "snapshots" / sha)
    assert (Path(folder) / "tokenizer" / "vocab.txt").read_bytes() == FILES["tokenizer/vocab.txt"]
    assert "GET /api/models/org/tiny/revision/main" in hub.requests
