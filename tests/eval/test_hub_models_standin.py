"""The full profile's Hub models stood in by tiny ones (tests/standins/hub_models.py): with HF_ENDPOINT at the loopback
Hub and an empty HF_HOME, the project's own loaders read each at the commit params.yaml pins, and nothing leaves
127.0.0.1: the nllb stage (`--set profile=full`) downloads facebook/nllb-200-distilled-1.3B and converts it with
CTranslate2, `kiwi_scorer` loads Unbabel/wmt22-cometkiwi-da (its encoder by name) and scores two pairs as the
local tiny checkpoint does, `load_model` loads openai/clip-vit-base-patch32 as the eval specs name it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from babelforge.eval.pins import KIWI_ENCODER
from tests.hub_standin import HubStandIn
from tests.shared import built_once
from tests.standins.hub_models import build_tiny_models, full_profile_models, publish_full_profile_models

pytestmark = pytest.mark.slow  # builds three tiny models (about 10 s) and loads them in a subprocess

REPO = Path(__file__).resolve().parents[2]
PAIRS = (["a dog runs on the beach", "two cats"], ["ein Hund rennt am Strand", "deux chats"])
TEXTS = ["a photo of a dog", "犬の写真"]

# What the subprocess runs: every socket it opens or name it resolves is recorded (an audit hook), then each loader.
LOADS = """
import json, sys
hosts = []
def audit(event, args):
    if event == "socket.connect" and isinstance(args[1], tuple):
        hosts.append(str(args[1][0]))
    elif event == "socket.getaddrinfo":
        hosts.append(str(args[0]))
sys.addaudithook(audit)
nllb_out, kiwi, kiwi_revision, kiwi_local, clip, clip_revision, clip_local, pairs, texts = json.loads(sys.argv[1])
from PIL import Image
from babelforge.captions.qe import kiwi_scorer
from babelforge.cli import main
from babelforge.eval.models import load_model
result = {"nllb": main(["nllb", "--set", "profile=full", "--out", nllb_out])}
scorer, record = kiwi_scorer(kiwi, kiwi_revision, batch_size=2, device="cpu")
local, _ = kiwi_scorer(kiwi_local, None, batch_size=2, device="cpu")
result["kiwi"] = {"record": record, "scores": scorer.score(*pairs), "local": local.score(*pairs)}
image = [Image.new("RGB", (40, 30), (200, 10, 10))]
vectors = {}
for name, spec, revision in (("hub", clip, clip_revision), ("local", clip_local, None)):
    model = load_model(spec, revision, device="cpu")
    vectors[name] = [model.revision, model.encode_texts(texts).tolist(), model.encode_images(image).tolist()]
result["clip"] = vectors
result["hosts"] = sorted(set(hosts))
print("RESULT " + json.dumps(result))
"""


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> Path:
    """The work folder the tiny models are built in, once per test run."""
    return built_once(tmp_path_factory, "full-hub-models", lambda folder: build_tiny_models(folder) and folder)


def test_the_project_loads_each_model_at_its_pinned_commit_from_loopback_only(models, tmp_path):
    pinned = {model.repo_id: model for model in full_profile_models()}
    roles = {model.role: model.repo_id for model in pinned.values()}
    assert set(roles) == {"nllb", "kiwi", "kiwi-encoder", "clip"} and roles["kiwi-encoder"] == KIWI_ENCODER
    assert roles["nllb"] == "facebook/nllb-200-distilled-1.3B" and roles["clip"] == "openai/clip-vit-base-patch32"
    with HubStandIn() as hub:
        commits = publish_full_profile_models(hub, models)
        assert {repo: commit for repo, commit in commits.items() if pinned[repo].commit} == {
            repo: model.commit for repo, model in pinned.items() if model.commit
        }
        kiwi, clip = pinned[roles["kiwi"]], pinned[roles["clip"]]
        arguments = [
            str(tmp_path / "nllb-ct2"),
            kiwi.repo_id,
            kiwi.commit,
            str(build_tiny_models(models).kiwi_local),
            clip.repo_id,
            clip.commit,
            str(build_tiny_models(models).clip),
            PAIRS,
            TEXTS,
        ]
        env = {key: value for key, value in os.environ.items() if not key.startswith(("HF_", "TRANSFORMERS_"))}
        env.update(
            HF_ENDPOINT=hub.url,
            HF_HOME=str(tmp_path / "hf-home"),  # empty: everything comes from the stand-in
            HF_HUB_DISABLE_TELEMETRY="1",
            HF_HUB_DISABLE_PROGRESS_BARS="1",
        )
        done = subprocess.run(
            [sys.executable, "-c", LOADS, json.dumps(arguments)],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=400,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads(done.stdout.strip().splitlines()[-1].removeprefix("RESULT "))
        requests = list(hub.requests)

    assert result["hosts"] == ["127.0.0.1"], result["hosts"]  # nothing else was resolved or connected to
    resolved = [request.split()[1] for request in requests if "/resolve/" in request]
    for repo, commit in commits.items():
        asked = [path for path in resolved if path.startswith(f"/{repo}/resolve/")]
        # a pinned repo at its commit; the unpinned ones (the encoder COMET reads by name, Kiwi while
        # captions.tag.kiwi_revision is unset) at main or the commit main resolved to
        revisions = [pinned[repo].commit] if pinned[repo].commit else ["main", commit]
        assert asked and all(path.split("/")[4] in revisions for path in asked), (repo, asked)

    assert result["nllb"] == 0
    metadata = json.loads((tmp_path / "nllb-ct2" / "babelforge_model.json").read_text(encoding="utf-8"))
    assert (metadata["model_id"], metadata["revision"]) == (roles["nllb"], pinned[roles["nllb"]].commit)
    assert (tmp_path / "nllb-ct2" / "model.bin").is_file()

    scores = result["kiwi"]
    assert scores["record"]["id"] == kiwi.repo_id and scores["record"]["revision"] == commits[kiwi.repo_id]
    assert len(scores["scores"]) == 2 and scores["scores"] == scores["local"]  # the same model as the local one

    (hub_revision, *hub_vectors), (_, *local_vectors) = result["clip"]["hub"], result["clip"]["local"]
    assert hub_revision == clip.commit and hub_vectors == local_vectors


def test_a_second_call_reads_the_built_models(models):
    start = time.perf_counter()
    with HubStandIn() as first, HubStandIn() as second:
        assert publish_full_profile_models(first, models) == publish_full_profile_models(second, models)
    assert time.perf_counter() - start < 10
