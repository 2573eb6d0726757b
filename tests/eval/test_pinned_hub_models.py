"""A pinned Hub model is read at its commit, every file of it, and a cached one loads without the network.

Tiny real models (tests/eval/tiny_text_only.py, the tiny CLIP) are published on a loopback Hub
(tests/hub_standin.py), a second commit with other weights on `main` after the pinned one. A
`babelforge` process with HF_ENDPOINT pointing there and HF_HUB_OFFLINE unset loads `st:`, `mclip:`
(whose config names its text model by a Hub id, published too) and `hf:` specs: from an empty cache
it fetches the pinned commits (and the text model at `main`), nothing else; from the filled cache it
asks the Hub nothing at all and embeds as the local folders do. A file or a sub-model missing from
the cache is one line naming it, at once, with the Hub unreachable or answering 503.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from babelforge.core.errors import BabelforgeError
from babelforge.eval.models import hub_offline, load_model
from tests.eval.tiny_text_only import build_tiny_mclip, build_tiny_st
from tests.hub_standin import HubStandIn

REPO = Path(__file__).resolve().parents[2]
XLMR, MCLIP, ST, CLIP = (f"babelforge-tests/tiny-{name}" for name in ("xlmr", "mclip", "st", "clip"))
TEXTS = ["a photo of a dog", "ein Hund im Schnee", "犬の写真", "x"]
# Files a pinned commit may hold that no loader here reads: a fetch leaves them out.
UNREAD = {"onnx/model.onnx": b"not read", "tf_model.h5": b"not read", "pytorch_model.bin": b"not read either"}

# What the `babelforge` process runs: each spec loaded and embedded, or its one-line error, timed
# (the libraries imported first: the time is the load's).
LOADS = """
import json, sys, time
import multilingual_clip.pt_multilingual_clip, sentence_transformers, transformers  # imported before the clock
from PIL import Image
from babelforge.core.errors import BabelforgeError
from babelforge.eval.models import load_model
results = []
for spec in json.loads(sys.argv[1]):
    start = time.monotonic()
    try:
        model = load_model(spec, device="cpu")
        texts = model.encode_texts(json.loads(sys.argv[2])).tolist()
        images = model.encode_images([Image.new("RGB", (40, 30), (200, 10, 10))]).tolist()
        results.append({"revision": model.revision, "texts": texts, "images": images})
    except BabelforgeError as error:
        results.append({"error": str(error), "seconds": time.monotonic() - start})
print("RESULTS " + json.dumps(results))
"""


def folder_files(folder: Path, **replace: bytes) -> dict[str, bytes]:
    files = {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}
    return {**files, **replace}


def with_model_base(folder: Path) -> dict[str, bytes]:
    """An M-CLIP folder's files, its config naming its text model by the Hub id XLMR."""
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return folder_files(folder, **{"config.json": json.dumps({**config, "modelBase": XLMR}).encode()})


@pytest.fixture(scope="module")
def hub(tiny_xlmr_dir, tiny_mclip_dir, tiny_st_dir, tiny_clip_dir, tmp_path_factory):
    """The stand-in with the tiny models: {repo: pinned commit}; `main` is a later commit of other weights."""
    from babelforge.eval.sample.tiny_clip_stage import build_tiny_clip

    later = tmp_path_factory.mktemp("later")
    with HubStandIn() as stand_in:
        stand_in.pinned = {
            XLMR: stand_in.add(XLMR, folder_files(tiny_xlmr_dir)),
            MCLIP: stand_in.add(MCLIP, with_model_base(tiny_mclip_dir)),
            ST: stand_in.add(ST, {**folder_files(tiny_st_dir), **UNREAD}),
            CLIP: stand_in.add(CLIP, folder_files(tiny_clip_dir)),
        }
        stand_in.add(MCLIP, with_model_base(build_tiny_mclip(later / "mclip", tiny_xlmr_dir, seed=1)))
        stand_in.add(ST, folder_files(build_tiny_st(later / "st", tiny_xlmr_dir, seed=1)))
        stand_in.add(CLIP, folder_files(build_tiny_clip(later / "clip", seed=1)))
        yield stand_in


def specs(hub) -> list[str]:
    clip = f"hf:{CLIP}@{hub.pinned[CLIP]}"
    return [f"st:{ST}@{hub.pinned[ST]}+{clip}", f"mclip:{MCLIP}@{hub.pinned[MCLIP]}+{clip}", clip]


def run_loads(endpoint: str, home: Path, spec_list: list[str]) -> tuple[list[dict], list[str]]:
    """(each spec's result, the lines the process printed) of a `babelforge` process with HF_ENDPOINT
    at `endpoint`, HF_HOME at `home` and HF_HUB_OFFLINE unset."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(HF_ENDPOINT=endpoint, HF_HOME=str(home), HF_HUB_DISABLE_PROGRESS_BARS="1")
    result = subprocess.run(
        [sys.executable, "-c", LOADS, json.dumps(spec_list), json.dumps(TEXTS)],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = (result.stdout + result.stderr).strip().splitlines()
    return json.loads(lines[-1].removeprefix("RESULTS ")), lines[:-1]


@pytest.fixture(scope="module")
def filled(hub, tmp_path_factory):
    """An HF_HOME filled by loading the specs from an empty cache: (home, results, requests)."""
    home = tmp_path_factory.mktemp("hf-filled")
    hub.requests.clear()
    results, _ = run_loads(hub.url, home, specs(hub))
    return home, results, list(hub.requests)


@pytest.fixture(scope="module")
def local_vectors(tiny_mclip_dir, tiny_st_dir, tiny_clip_dir) -> list[tuple[np.ndarray, np.ndarray]]:
    """(texts, images) of the same models loaded from their local folders, in `specs` order."""
    image = [Image.new("RGB", (40, 30), (200, 10, 10))]
    models = [f"{tiny_st_dir}+{tiny_clip_dir}", f"{tiny_mclip_dir}+{tiny_clip_dir}", str(tiny_clip_dir)]
    return [(m.encode_texts(TEXTS), m.encode_images(image)) for m in (load_model(s, device="cpu") for s in models)]


def assert_loaded_as_local(hub, results, local_vectors) -> None:
    clip = hub.pinned[CLIP]
    assert [result.get("revision") for result in results] == [
        f"{hub.pinned[ST]}+{clip}",  # the pinned commits, not a path
        f"{hub.pinned[MCLIP]}+{clip}",
        clip,
    ]
    for result, (texts, images) in zip(results, local_vectors):
        assert np.abs(np.array(result["texts"]) - texts).max() <= 1e-6
        assert np.abs(np.array(result["images"]) - images).max() <= 1e-6


def copy_home(filled, tmp_path) -> Path:
    home = tmp_path / "hf"
    shutil.copytree(filled[0], home, symlinks=True)
    return home


def test_an_empty_cache_fetches_the_pinned_commits_only(hub, filled, local_vectors):
    home, results, requests = filled
    assert_loaded_as_local(hub, results, local_vectors)
    resolved = [request.split()[1] for request in requests if "/resolve/" in request]
    for repo in (ST, MCLIP, CLIP):
        asked = [path for path in resolved if path.startswith(f"/{repo}/")]
        assert asked and all(path.startswith(f"/{repo}/resolve/{hub.pinned[repo]}/") for path in asked), asked
    # the text model M-CLIP names by its id alone is read at `main` (its only commit), as the library reads it
    assert f"GET /api/models/{XLMR}/revision/main" in requests
    assert any(path.startswith(f"/{XLMR}/resolve/{hub.pinned[XLMR]}/") for path in resolved)
    snapshot = home / "hub" / f"models--{ST.replace('/', '--')}" / "snapshots" / hub.pinned[ST]
    assert (snapshot / "modules.json").is_file() and (snapshot / "2_Dense" / "model.safetensors").is_file()
    assert not any((snapshot / name).exists() for name in UNREAD)  # other formats, pickles beside safetensors
    assert not any(name in path for path in resolved for name in UNREAD)


def test_a_filled_cache_asks_the_hub_nothing(hub, filled, local_vectors, tmp_path):
    home = copy_home(filled, tmp_path)
    hub.requests.clear()
    results, printed = run_loads(hub.url, home, specs(hub))
    assert hub.requests == []
    assert not [line for line in printed if "Retry" in line or "127.0.0.1" in line], printed
    assert_loaded_as_local(hub, results, local_vectors)


def closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


@pytest.mark.parametrize("hub_state", ["unreachable", "answers 503"])
def test_what_the_cache_lacks_is_one_line_at_once(hub_state, hub, filled, tiny_clip_dir, tmp_path):
    home = copy_home(filled, tmp_path)
    cache = home / "hub"
    snapshot = cache / f"models--{ST.replace('/', '--')}" / "snapshots" / hub.pinned[ST]
    (snapshot / "2_Dense" / "model.safetensors").unlink()  # a file of a pinned snapshot
    shutil.rmtree(cache / f"models--{XLMR.replace('/', '--')}")  # the text model M-CLIP names
    shutil.rmtree(cache / f"models--{CLIP.replace('/', '--')}")  # a whole pinned model
    spec_list = [
        f"st:{ST}@{hub.pinned[ST]}+{tiny_clip_dir}",
        f"mclip:{MCLIP}@{hub.pinned[MCLIP]}+{tiny_clip_dir}",
        f"hf:{CLIP}@{hub.pinned[CLIP]}",
    ]
    hub.requests.clear()
    hub.fail_with = 503 if hub_state == "answers 503" else None
    try:
        results, printed = run_loads(closed_port() if hub_state == "unreachable" else hub.url, home, spec_list)
    finally:
        hub.fail_with = None
    errors = [result.get("error", "") for result in results]
    assert all(error and "\n" not in error for error in errors), results
    assert all(result["seconds"] < 5 for result in results), results
    assert not [line for line in printed if "Retry" in line], printed
    st_line, mclip_line, clip_line = errors
    assert f"{ST}" in st_line and "'model.safetensors'" in st_line, st_line
    assert f"{XLMR} (config.json modelBase): its config.json is not in the Hugging Face cache" in mclip_line
    assert clip_line.startswith(f"model {CLIP}@{hub.pinned[CLIP]}: not in the Hugging Face cache and ")
    if hub_state == "answers 503":
        for line in errors:
            assert "cannot list it (503" in line, line
        assert len(hub.requests) == 3, hub.requests  # one question each, no retries
    else:
        assert all("127.0.0.1 is unreachable" in line for line in errors[1:]), errors
        assert hub.requests == []


def test_hub_offline_restores_what_it_switched(monkeypatch):
    import huggingface_hub
    import transformers.utils.hub as transformers_hub
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(transformers_hub, "_is_offline_mode", False)
    with hub_offline():
        assert constants.HF_HUB_OFFLINE and transformers_hub.is_offline_mode()
        with pytest.raises(huggingface_hub.errors.OfflineModeIsEnabled):
            huggingface_hub.utils.get_session().get(closed_port(), timeout=1)  # at once, no connection tried
    assert not constants.HF_HUB_OFFLINE and not transformers_hub.is_offline_mode()
    with pytest.raises(BabelforgeError), hub_offline():
        raise BabelforgeError("a failed load")
    assert not constants.HF_HUB_OFFLINE and not transformers_hub.is_offline_mode()
