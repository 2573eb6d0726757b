"""The `mclip_legacy` family (M-CLIP's first checkpoints: a transformers BERT and a linear head pickle) on a
tiny random BERT and head built offline (tests/eval/tiny_text_only.py), paired with the tiny CLIP's image
tower: texts embed as multilingual-clip's legacy class and a plain computation embed them, the head is read
as numpy arrays only (a pickle that would run anything is refused before it runs), a Hub id finds its head
beside its snapshot or in $BABELFORGE_MCLIP_HEADS, and what cannot load says so in one line."""

from __future__ import annotations

import builtins
import json
import os
import pickle
import re
import subprocess

import numpy as np
import pytest
from PIL import Image

from babelforge.cli import main
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import directory_hash, sha256_file
from babelforge.eval.families import mclip_legacy, parse_spec
from babelforge.eval.models import load_model
from babelforge.eval.tasks import names
from tests.eval.tiny_text_only import (
    DIM,
    HIDDEN,
    LEGACY_HEAD,
    POSITIONS,
    build_tiny_bert,
    build_tiny_mclip_legacy,
    tiny_legacy_head,
)
from tests.shared import built_once

TEXTS = ["a photo of a dog", "ein foto von einem hund", "犬の写真", "صورة كلب", "x"]
LONG = "a photo of a dog " * POSITIONS  # far more tokens than the tiny BERT reads
HUB_ID = "M-CLIP/M-BERT-Base-ViT-B"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="session")
def legacy_dir(tmp_path_factory):
    return built_once(tmp_path_factory, "tiny-mclip-legacy", lambda folder: build_tiny_mclip_legacy(folder / "legacy"))


def unit(rows) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def reference(folder, texts, max_length=None) -> np.ndarray:
    """The legacy M-CLIP computation written out: the BERT's last hidden state, its mean over the attention
    mask, `pooled @ weight + bias` with the head unpickled plainly (the test's own file), L2-normalised."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    weight, bias = pickle.loads((folder / LEGACY_HEAD).read_bytes())
    model = AutoModel.from_pretrained(folder).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    cut = {"truncation": True, "max_length": max_length} if max_length else {}
    with torch.no_grad():
        batch = tokenizer(texts, padding=True, return_tensors="pt", **cut)
        hidden = model(**batch).last_hidden_state.numpy()
    mask = batch["attention_mask"].numpy()[..., None]
    pooled = (hidden * mask).sum(axis=1) / mask.sum(axis=1)
    return unit(pooled @ weight + bias)


def library_reference(folder, texts) -> np.ndarray:
    """What multilingual-clip's legacy `MultilingualClip` computes, its head file read from the folder."""
    import torch
    from multilingual_clip.legacy_multilingual_clip import MultilingualClip

    model = MultilingualClip(str(folder), str(folder), LEGACY_HEAD, weights_dir=f"{folder}/").eval()
    with torch.no_grad():
        return unit(model(texts).numpy())


# ------------------------------------------------------------------ loading and embedding


def test_detected_from_its_folder_or_named(legacy_dir, tiny_clip_dir, tmp_path):
    detected = parse_spec(f"{legacy_dir}+{tiny_clip_dir}")
    assert detected == parse_spec(f"mclip_legacy:{legacy_dir}+hf:{tiny_clip_dir}")
    assert (detected.family, detected.image.family) == ("mclip_legacy", "hf")
    # a BERT folder without a head is no family's: said while the spec is read, naming its model type
    with pytest.raises(
        BabelforgeError,
        match=r"no family recognises its files \(its config.json is of model_type 'bert', not a dual encoder",
    ):
        parse_spec(str(build_tiny_bert(tmp_path / "bert")))
    model = load_model(f"{legacy_dir}+{tiny_clip_dir}", device="cpu")
    assert model.family == "mclip_legacy" and model.ref == detected and model.embedding_dim == DIM
    assert model.revision == f"sha256:{directory_hash(legacy_dir)}+sha256:{directory_hash(tiny_clip_dir)}"
    assert model.name == f"mclip_legacy:{legacy_dir}+{tiny_clip_dir}"
    worker = load_model(model.ref.absolute().text(), device="cpu")
    assert (worker.name, worker.revision) == (model.name, model.revision)


def test_texts_equal_the_legacy_computation_and_multilingual_clip(legacy_dir, tiny_clip_dir):
    model = load_model(f"{legacy_dir}+{tiny_clip_dir}", device="cpu")
    ours = model.encode_texts(TEXTS, batch_size=2)  # batches padded differently: same vectors
    assert ours.shape == (len(TEXTS), DIM) and ours.dtype == np.float32
    assert np.abs(ours - reference(legacy_dir, TEXTS)).max() <= 1e-6
    assert np.abs(ours - library_reference(legacy_dir, TEXTS)).max() <= 1e-6
    assert model.truncated_texts == 0
    assert not np.allclose(ours[0], ours[1], atol=1e-3)  # the texts do differ


def test_images_embed_as_the_image_tower_alone(legacy_dir, tiny_clip_dir):
    paired = load_model(f"{legacy_dir}+{tiny_clip_dir}", device="cpu")
    alone = load_model(str(tiny_clip_dir), device="cpu")
    images = [Image.new("RGB", (50, 40), (200, 10, 10)), Image.new("L", (64, 64), 128)]
    assert np.array_equal(paired.encode_images(images), alone.encode_images(images))
    assert paired.precision == "float32"


def test_long_texts_are_cut_and_counted(legacy_dir, tiny_clip_dir):
    model = load_model(f"{legacy_dir}+{tiny_clip_dir}", device="cpu")
    assert model.max_text_length == POSITIONS  # the BERT's position table; the tokenizer states no limit
    texts = ["a dog", LONG, LONG + "in the snow"]
    ours = model.encode_texts(texts)
    assert model.truncated_texts == 2 and model.count_truncated(texts) == 2
    assert np.abs(ours[1] - ours[2]).max() <= 1e-6
    assert np.abs(ours - reference(legacy_dir, texts, max_length=POSITIONS)).max() <= 1e-6


def test_a_hub_id_reads_its_head_from_the_heads_folder(legacy_dir, tiny_clip_dir, tmp_path, monkeypatch):
    """The real repo has the BERT, not the head: the snapshot (here the tiny BERT alone) plus the head
    under multilingual-clip's name in $BABELFORGE_MCLIP_HEADS; the revision pins the head's bytes."""
    bert = build_tiny_bert(tmp_path / "snapshot")
    asked = []

    def snapshot(repo, revision, filename, patterns):
        asked.append((repo, revision, filename, tuple(patterns)))
        return bert

    monkeypatch.setattr(mclip_legacy, "hub_snapshot", snapshot)
    spec = f"mclip_legacy:{HUB_ID}@{COMMIT}+{tiny_clip_dir}"
    monkeypatch.delenv(mclip_legacy.HEADS_ENV, raising=False)
    with pytest.raises(BabelforgeError, match=f"its linear head '{LEGACY_HEAD}' is not on the Hub") as error:
        load_model(spec, device="cpu")
    assert "BABELFORGE_MCLIP_HEADS" in str(error.value) and "\n" not in str(error.value)

    heads = tmp_path / "heads"
    heads.mkdir()
    (heads / LEGACY_HEAD).write_bytes((legacy_dir / LEGACY_HEAD).read_bytes())
    monkeypatch.setenv(mclip_legacy.HEADS_ENV, str(heads))
    model = load_model(spec, device="cpu")
    assert asked[-1][:3] == (HUB_ID, COMMIT, "config.json") and "*Linear Weights.pkl" in asked[-1][3]
    head_digest = sha256_file(heads / LEGACY_HEAD)
    assert model.revision == f"{COMMIT};head=sha256:{head_digest}+sha256:{directory_hash(tiny_clip_dir)}"
    local = load_model(f"{legacy_dir}+{tiny_clip_dir}", device="cpu")
    assert np.abs(model.encode_texts(TEXTS) - local.encode_texts(TEXTS)).max() <= 1e-6

    # a repo (a mirror) that holds the head: read from the snapshot, the heads folder not asked
    (bert / LEGACY_HEAD).write_bytes(pickle.dumps(tiny_legacy_head(seed=1), protocol=4))
    from_repo = load_model(spec, device="cpu")
    assert from_repo.revision.startswith(f"{COMMIT};head=sha256:{sha256_file(bert / LEGACY_HEAD)}+")


def test_uncached_hub_id_offline_fails_at_once(tiny_clip_dir, monkeypatch):
    import socket

    def no_network(*args, **kwargs):
        raise OSError("no route")

    monkeypatch.setattr(socket, "create_connection", no_network)
    hub_id = "babelforge-tests/no-such-mclip-legacy"
    with pytest.raises(BabelforgeError, match=f"model {hub_id}@0+: not in the Hugging Face cache") as error:
        load_model(f"mclip_legacy:{hub_id}@{'0' * 40}+{tiny_clip_dir}", device="cpu")
    assert "\n" not in str(error.value)
    with pytest.raises(BabelforgeError, match="a mclip_legacy checkpoint is a text encoder; name the image tower"):
        load_model(f"mclip_legacy:{hub_id}@{'0' * 40}", device="cpu")
    # the published checkpoint has its paired tower by default (PAIRED_IMAGE_TOWERS): its text model is asked for
    with pytest.raises(BabelforgeError, match=f"model {HUB_ID}@0+: not in the Hugging Face cache"):
        load_model(f"mclip_legacy:{HUB_ID}@{'0' * 40}", device="cpu")


def test_heads_that_do_not_fit_are_one_line(tiny_clip_dir, tmp_path):
    narrow = build_tiny_mclip_legacy(tmp_path / "dim8", dim=8)
    with pytest.raises(BabelforgeError, match=rf"gives 8-d embeddings, its image tower .* gives {DIM}-d") as error:
        load_model(f"{narrow}+{tiny_clip_dir}", device="cpu")
    assert "\n" not in str(error.value)
    wide = build_tiny_bert(tmp_path / "wide")
    (wide / LEGACY_HEAD).write_bytes(pickle.dumps(tiny_legacy_head(hidden=HIDDEN + 1), protocol=3))
    with pytest.raises(BabelforgeError, match=f"maps {HIDDEN + 1}-d inputs, its text model gives {HIDDEN}-d"):
        load_model(f"{wide}+{tiny_clip_dir}", device="cpu")
    (wide / "Other Linear Weights.pkl").write_bytes(b"")
    with pytest.raises(BabelforgeError, match="2 heads .* keep one"):
        load_model(f"mclip_legacy:{wide}+{tiny_clip_dir}", device="cpu")


def test_tiny_builder_is_deterministic(legacy_dir, tmp_path):
    assert directory_hash(build_tiny_mclip_legacy(tmp_path / "again")) == directory_hash(legacy_dir)


def test_fp16_on_gpu(legacy_dir, tiny_clip_dir):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    cpu = load_model(f"{legacy_dir}+{tiny_clip_dir}", device="cpu")
    gpu = load_model(f"{legacy_dir}+{tiny_clip_dir}", device="cuda")
    assert gpu.precision == "float16" and next(gpu.model.parameters()).dtype == torch.float16
    texts = [*TEXTS, LONG]
    assert np.abs(gpu.encode_texts(texts) - cpu.encode_texts(texts)).max() < 1e-2
    images = [Image.new("RGB", (50, 40), (200, 10, 10))]
    assert np.abs(gpu.encode_images(images) - cpu.encode_images(images)).max() < 1e-2


# ------------------------------------------------------------------ the head pickle, read safely


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_head_pickled_from_numpy_arrays_reads_back_equal(protocol, tmp_path):
    weight, bias = tiny_legacy_head()
    for container in (list, tuple):
        path = tmp_path / f"{container.__name__} Linear Weights.pkl"
        path.write_bytes(pickle.dumps(container([weight, bias]), protocol=protocol))
        read_weight, read_bias = mclip_legacy.read_head(path)
        assert np.array_equal(read_weight, weight) and np.array_equal(read_bias, bias)
        assert read_weight.dtype == np.float32 and read_weight.shape == (HIDDEN, DIM)
    # a float64 and a Fortran-ordered weight also rebuild as they were
    path = tmp_path / "f64 Linear Weights.pkl"
    path.write_bytes(pickle.dumps([weight.astype(np.float64), bias], protocol=protocol))
    assert np.array_equal(mclip_legacy.read_head(path)[0], weight.astype(np.float64))
    fortran = np.asfortranarray(weight)
    path.write_bytes(pickle.dumps([fortran, bias], protocol=protocol))
    assert np.array_equal(mclip_legacy.read_head(path)[0], weight)


class Payload:
    """A pickled object whose unpickling calls `call(*args)` (what a malicious head would hold)."""

    def __init__(self, call, *args):
        self.call, self.args = call, args

    def __reduce__(self):
        return self.call, self.args


def payloads(marker):
    """Pickles that would each create `marker` when unpickled: through os.system, builtins.exec,
    subprocess, and hidden inside a head that looks right ([weight, bias] with the call in between)."""
    weight, bias = tiny_legacy_head()
    shell = f"touch {marker}"
    return {
        "os.system": Payload(os.system, shell),
        "builtins.exec": Payload(builtins.exec, f"open({str(marker)!r}, 'w').close()"),
        "builtins.eval": Payload(builtins.eval, f"open({str(marker)!r}, 'w').close()"),
        "subprocess.call": Payload(subprocess.call, ["touch", str(marker)]),
        "subprocess.Popen": Payload(subprocess.Popen, ["touch", str(marker)]),
        "inside a head": [weight, Payload(os.system, shell), bias],
        "as the bias": [weight, Payload(builtins.exec, f"open({str(marker)!r}, 'w').close()")],
    }


@pytest.mark.parametrize("protocol", [0, 2, 4, 5])
@pytest.mark.parametrize("name", list(payloads("m")))
def test_a_head_that_would_run_code_is_refused_and_never_runs(name, protocol, tmp_path):
    marker = tmp_path / "pwned"
    data = pickle.dumps(payloads(marker)[name], protocol=protocol)
    head = tmp_path / f"{name} Linear Weights.pkl"
    head.write_bytes(data)
    with pytest.raises(BabelforgeError, match=rf"M-CLIP head {re.escape(str(head))}: refused") as error:
        mclip_legacy.read_head(head)
    assert "\n" not in str(error.value) and "it would call" in str(error.value)
    assert not marker.exists()
    # the payload is live: unpickled plainly, it does create the file (then it is gone again)
    result = pickle.loads(data)
    if isinstance(result, subprocess.Popen):
        result.wait()
    assert marker.exists()


def test_a_call_named_through_the_extension_registry_is_refused_too(tmp_path):
    """Protocol 2's EXT opcodes name a global by a number copyreg maps: the reader still refuses it."""
    import copyreg

    marker = tmp_path / "pwned"
    copyreg.add_extension(os.system.__module__, "system", 0x7FF0)
    try:
        data = pickle.dumps(Payload(os.system, f"touch {marker}"), protocol=2)
        assert os.system.__module__.encode() not in data  # named by its code only
        head = tmp_path / "ext Linear Weights.pkl"
        head.write_bytes(data)
        with pytest.raises(BabelforgeError, match=f"refused.*it would call {os.system.__module__}.system"):
            mclip_legacy.read_head(head)
    finally:
        copyreg.remove_extension(os.system.__module__, "system", 0x7FF0)
    assert not marker.exists()


def test_a_legacy_folder_with_a_malicious_head_does_not_load(tiny_clip_dir, tmp_path):
    marker = tmp_path / "pwned"
    folder = build_tiny_bert(tmp_path / "evil")
    (folder / LEGACY_HEAD).write_bytes(pickle.dumps(payloads(marker)["inside a head"], protocol=3))
    with pytest.raises(BabelforgeError, match=r"M-CLIP head .*M-BERT-Base-69-ViT Linear Weights\.pkl: refused"):
        load_model(f"{folder}+{tiny_clip_dir}", device="cpu")
    assert not marker.exists()


@pytest.mark.parametrize(
    "contents, message",
    [
        ({"weight": 1}, "it holds a dict"),
        ([np.zeros((3, 2), np.float32)], "it holds a list of 1"),
        ([np.zeros((3, 2), np.float32)] * 3, "it holds a list of 3"),
        ([np.zeros((3, 2), np.int64), np.zeros(2, np.int64)], "not \\[weight, bias\\]"),
        ([np.array([1, "a"], dtype=object), np.zeros(2)], "not \\[weight, bias\\]"),
        ([np.zeros((3, 2), np.float32), np.zeros(3, np.float32)], "do not make a linear map"),
        ([np.zeros(3, np.float32), np.zeros(3, np.float32)], "do not make a linear map"),
    ],
)
def test_a_head_that_is_not_weight_and_bias_is_one_line(contents, message, tmp_path):
    head = tmp_path / "x Linear Weights.pkl"
    head.write_bytes(pickle.dumps(contents, protocol=4))
    with pytest.raises(BabelforgeError, match=message) as error:
        mclip_legacy.read_head(head)
    assert str(head) in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not a pickle",
        pickle.dumps(tiny_legacy_head(), protocol=4)[:-40],
        b"\x80\x04P0\n.",
        b"\x80\x02c_codecs\nencode\nX\x01\x00\x00\x00xX\x05\x00\x00\x00rot13\x86R.",  # not latin-1 bytes
    ],
    ids=["empty", "text", "cut short", "persistent id", "codec other than latin-1"],
)
def test_a_broken_head_is_one_line(data, tmp_path):
    head = tmp_path / "x Linear Weights.pkl"
    head.write_bytes(data)
    with pytest.raises(BabelforgeError, match=f"M-CLIP head {re.escape(str(head))}: refused") as error:
        mclip_legacy.read_head(head)
    assert "\n" not in str(error.value)


# ------------------------------------------------------------------ through the eval stages


@pytest.fixture(scope="module")
def project(stage_project):
    return stage_project


def test_every_eval_task_runs_on_the_family(project, legacy_dir, tiny_clip_dir):
    """As tests/eval/test_families_in_stages.py runs the other families: every task by the CLI, the rows
    named by the spec and pinned by both parts' content hashes."""
    spec = f"{legacy_dir}+{tiny_clip_dir}"
    ref = parse_spec(spec)
    for task in names():
        out = project / "runs" / "mclip_legacy" / f"{task}.json"
        assert main([f"eval_{task}", "--model", spec, "--out", str(out)]) == 0, task
        document = json.loads(out.read_text(encoding="utf-8"))
        assert document["rows"] and {row["model"] for row in document["rows"]} == {ref.name}, task
        (revision,) = {row["revision"] for row in document["rows"]}
        assert revision.count("sha256:") == 2 and document["provenance"]["models"] == {ref.name: revision}, task
