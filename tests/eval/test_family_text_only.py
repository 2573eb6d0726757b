"""The text-only families (`mclip`, `st`) on tiny random checkpoints built offline with their own
libraries (tests/eval/tiny_text_only.py), paired with the tiny CLIP's image tower: texts embed as
the family's library embeds them, images as the image tower alone does, the revision pins both
parts, long texts are cut and counted, and what cannot load says so in one line."""

from __future__ import annotations

import re

import numpy as np
import pytest
from PIL import Image

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import directory_hash
from babelforge.eval.families import parse_spec
from babelforge.eval.models import load_model
from tests.eval.tiny_text_only import DIM, POSITIONS, build_tiny_mclip, build_tiny_st, build_tiny_xlmr

TEXTS = [
    "a photo of a dog",
    "ein Hund im Schnee",  # exactly the 16 tokens the tiny XLM-R reads: not cut
    "犬の写真",
    "صورة كلب",
    "x",
]
LONG = "a photo of a dog " * POSITIONS  # far more tokens than the tiny XLM-R reads


@pytest.fixture(scope="session")
def text_dirs(tiny_mclip_dir, tiny_st_dir):
    return {"mclip": tiny_mclip_dir, "st": tiny_st_dir}


def unit(rows) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def mclip_reference(folder, texts, max_length=None) -> np.ndarray:
    """What multilingual-clip computes by itself: MultilingualCLIP.forward with the plain tokenizer
    (cut at `max_length` when given, as the library's users must)."""
    import torch
    from multilingual_clip.pt_multilingual_clip import MultilingualCLIP
    from transformers import AutoTokenizer

    model = MultilingualCLIP.from_pretrained(folder).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    if max_length:
        plain = tokenizer
        tokenizer = lambda texts, **kwargs: plain(texts, truncation=True, max_length=max_length, **kwargs)  # noqa: E731
    with torch.no_grad():
        return unit(model(texts, tokenizer).numpy())


def st_reference(folder, texts) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), device="cpu")
    return unit(model.encode(texts, convert_to_numpy=True, normalize_embeddings=False))


@pytest.mark.parametrize("family", ["mclip", "st"])
def test_family_detected_from_its_folder_or_named(family, text_dirs, tiny_clip_dir):
    folder = text_dirs[family]
    detected = parse_spec(f"{folder}+{tiny_clip_dir}")
    named = parse_spec(f"{family}:{folder}+hf:{tiny_clip_dir}")
    assert detected == named
    assert (detected.family, detected.image.family) == (family, "hf")
    model = load_model(f"{folder}+{tiny_clip_dir}", device="cpu")
    assert model.family == family and model.ref == detected and model.embedding_dim == DIM
    again = load_model(f"{family}:{folder}+hf:{tiny_clip_dir}", device="cpu")
    assert again.revision == model.revision
    assert np.array_equal(again.encode_texts(TEXTS), model.encode_texts(TEXTS))


def test_mclip_texts_equal_multilingual_clip(tiny_mclip_dir, tiny_clip_dir):
    model = load_model(f"{tiny_mclip_dir}+{tiny_clip_dir}", device="cpu")
    ours = model.encode_texts(TEXTS, batch_size=2)  # batches padded differently: same vectors
    reference = mclip_reference(tiny_mclip_dir, TEXTS)
    assert ours.shape == (len(TEXTS), DIM) and ours.dtype == np.float32
    assert np.abs(ours - reference).max() <= 1e-6
    assert model.truncated_texts == 0
    assert not np.allclose(ours[0], ours[1], atol=1e-3)  # the texts do differ


def test_st_texts_equal_sentence_transformers(tiny_st_dir, tiny_clip_dir):
    model = load_model(f"{tiny_st_dir}+{tiny_clip_dir}", device="cpu")
    ours = model.encode_texts(TEXTS, batch_size=2)
    reference = st_reference(tiny_st_dir, TEXTS)
    assert ours.shape == (len(TEXTS), DIM) and ours.dtype == np.float32
    assert np.abs(ours - reference).max() <= 1e-6
    assert model.truncated_texts == 0
    assert not np.allclose(ours[0], ours[1], atol=1e-3)


@pytest.mark.parametrize("family", ["mclip", "st"])
def test_images_embed_as_the_image_tower_alone(family, text_dirs, tiny_clip_dir):
    paired = load_model(f"{text_dirs[family]}+{tiny_clip_dir}", device="cpu")
    alone = load_model(str(tiny_clip_dir), device="cpu")
    images = [Image.new("RGB", (50, 40), (200, 10, 10)), Image.new("L", (64, 64), 128), Image.new("RGB", (32, 32))]
    assert np.array_equal(paired.encode_images(images, batch_size=2), alone.encode_images(images, batch_size=2))
    assert paired.precision == alone.precision == "float32"  # fp32 on CPU, both parts


@pytest.mark.parametrize("family", ["mclip", "st"])
def test_revision_and_name_pin_both_parts(family, text_dirs, tiny_clip_dir, tmp_path):
    from babelforge.eval.sample.tiny_clip_stage import build_tiny_clip

    folder = text_dirs[family]
    model = load_model(f"{folder}+{tiny_clip_dir}", device="cpu")
    image_revision = "sha256:" + directory_hash(tiny_clip_dir)
    assert model.revision == f"sha256:{directory_hash(folder)}+{image_revision}"
    assert model.name == f"{family}:{folder}+{tiny_clip_dir}"
    # another image tower of the same dim: another model, another revision
    other_clip = build_tiny_clip(tmp_path / "clip1", seed=1)
    other = load_model(f"{folder}+{other_clip}", device="cpu")
    assert other.revision.split("+")[0] == model.revision.split("+")[0]
    assert other.revision != model.revision and other.name != model.name
    # what a worker elsewhere loads from the model's ref is the same model
    worker = load_model(model.ref.absolute().text(), device="cpu")
    assert (worker.name, worker.revision) == (model.name, model.revision)


def test_mclip_long_texts_are_cut_and_counted(tiny_mclip_dir, tiny_clip_dir):
    model = load_model(f"{tiny_mclip_dir}+{tiny_clip_dir}", device="cpu")
    # the XLM-R position table holds POSITIONS + 2 (RoBERTa positions start after <pad>); the tokenizer states no limit
    assert model.max_text_length == POSITIONS
    assert model.token_lengths([LONG])[0] > POSITIONS
    texts = ["a dog", LONG, LONG + "in the snow"]
    ours = model.encode_texts(texts)
    assert model.truncated_texts == 2 and model.count_truncated(texts) == 2
    assert np.abs(ours[1] - ours[2]).max() <= 1e-6  # both read the same first tokens
    assert np.abs(ours - mclip_reference(tiny_mclip_dir, texts, max_length=POSITIONS)).max() <= 1e-6
    with pytest.raises((IndexError, RuntimeError)):  # the library alone does not cut: past the position table
        mclip_reference(tiny_mclip_dir, [LONG])


def test_st_long_texts_are_cut_and_counted(tiny_st_dir, tiny_clip_dir):
    model = load_model(f"{tiny_st_dir}+{tiny_clip_dir}", device="cpu")
    assert model.max_text_length == POSITIONS == model.model.max_seq_length
    texts = ["a dog", LONG, LONG + "in the snow"]
    ours = model.encode_texts(texts)
    assert model.truncated_texts == 2
    assert np.abs(ours[1] - ours[2]).max() <= 1e-6
    assert np.abs(ours - st_reference(tiny_st_dir, texts)).max() <= 1e-6  # it cuts at its max_seq_length


@pytest.mark.parametrize("family", ["mclip", "st"])
def test_a_text_encoder_without_its_image_tower_is_one_line(family, text_dirs):
    with pytest.raises(
        BabelforgeError, match=f"a {family} checkpoint is a text encoder; name the image tower"
    ) as error:
        load_model(str(text_dirs[family]), device="cpu")
    assert "\n" not in str(error.value)
    with pytest.raises(BabelforgeError, match="name the image tower"):
        load_model(f"{family}:babelforge-tests/unknown-text-encoder@{'0' * 40}", device="cpu")


@pytest.mark.parametrize("build", [build_tiny_mclip, build_tiny_st], ids=["mclip", "st"])
def test_mismatched_dims_are_one_line(build, tiny_xlmr_dir, tiny_clip_dir, tmp_path):
    folder = build(tmp_path / "text8", tiny_xlmr_dir, seed=0, dim=8)
    with pytest.raises(
        BabelforgeError, match=rf"gives 8-d embeddings, its image tower {re.escape(str(tiny_clip_dir))} gives {DIM}-d"
    ) as error:
        load_model(f"{folder}+{tiny_clip_dir}", device="cpu")
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("family", ["mclip", "st"])
@pytest.mark.parametrize("offline", ["no network", "HF_HUB_OFFLINE"])
def test_uncached_hub_text_encoder_offline_fails_at_once(family, offline, tiny_clip_dir, monkeypatch):
    import socket

    from huggingface_hub import constants

    def no_network(*args, **kwargs):
        raise OSError("no route")

    monkeypatch.setattr(socket, "create_connection", no_network)
    if offline == "HF_HUB_OFFLINE":
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    hub_id = f"babelforge-tests/no-such-{family}"
    with pytest.raises(BabelforgeError, match=f"model {hub_id}@0+: not in the Hugging Face cache") as error:
        load_model(f"{family}:{hub_id}@{'0' * 40}+{tiny_clip_dir}", device="cpu")
    assert "\n" not in str(error.value)
    # a published checkpoint with its default image tower: the text encoder's line comes first
    published = {
        "mclip": "M-CLIP/XLM-Roberta-Large-Vit-B-32",
        "st": "sentence-transformers/clip-ViT-B-32-multilingual-v1",
    }
    with pytest.raises(BabelforgeError, match=f"model {published[family]}@0+: not in the Hugging Face cache"):
        load_model(f"{family}:{published[family]}@{'0' * 40}", device="cpu")


def test_tiny_builders_are_deterministic(tiny_xlmr_dir, tiny_mclip_dir, tiny_st_dir, tmp_path):
    assert directory_hash(build_tiny_xlmr(tmp_path / "xlmr", seed=0)) == directory_hash(tiny_xlmr_dir)
    mclip = build_tiny_mclip(tmp_path / "mclip", tiny_xlmr_dir, seed=0)
    st = build_tiny_st(tmp_path / "st", tiny_xlmr_dir, seed=0)
    assert directory_hash(mclip) == directory_hash(tiny_mclip_dir)
    assert directory_hash(st) == directory_hash(tiny_st_dir)


def test_fp16_on_gpu(text_dirs, tiny_clip_dir):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    for family, folder in text_dirs.items():
        cpu = load_model(f"{folder}+{tiny_clip_dir}", device="cpu")
        gpu = load_model(f"{folder}+{tiny_clip_dir}", device="cuda")
        assert gpu.precision == "float16" and next(gpu.model.parameters()).dtype == torch.float16, family
        texts = [*TEXTS, LONG]
        assert np.abs(gpu.encode_texts(texts) - cpu.encode_texts(texts)).max() < 1e-2, family
        images = [Image.new("RGB", (50, 40), (200, 10, 10))]
        assert np.abs(gpu.encode_images(images) - cpu.encode_images(images)).max() < 1e-2, family


def with_settings(folder, copy, file, **settings):
    """A copy of the checkpoint `folder` at `copy` with `settings` written into its JSON `file`."""
    import json
    import shutil

    shutil.copytree(folder, copy)
    path = copy / file
    path.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8")) | settings), encoding="utf-8")
    return copy


def test_mclip_counts_cut_texts_when_its_tokenizer_states_the_limit(tiny_mclip_dir, tiny_clip_dir, tmp_path):
    """Real XLM-R tokenizers state 512 tokens (model_max_length): a text past it is still counted as
    cut, and the vectors are the library's with the texts cut at that limit."""
    stated = with_settings(tiny_mclip_dir, tmp_path / "mclip", "tokenizer_config.json", model_max_length=POSITIONS)
    model = load_model(f"{stated}+{tiny_clip_dir}", device="cpu")
    assert model.max_text_length == POSITIONS and model.tokenizer.model_max_length == POSITIONS
    texts = ["a dog", LONG]
    assert model.token_lengths(texts)[1] > POSITIONS
    ours = model.encode_texts(texts)
    assert model.truncated_texts == 1 and model.count_truncated(texts) == 1
    assert np.abs(ours - mclip_reference(stated, texts, max_length=POSITIONS)).max() <= 1e-6


def test_st_counts_tokens_of_the_lower_cased_text_its_model_reads(tiny_st_dir, tiny_clip_dir, tmp_path):
    """A sentence-transformers model saved with do_lower_case reads "UNE PHOTO D'UN CHAT NOIR" as "une
    photo d'un chat noir": 16 tokens, all it reads, so not cut (the upper-case spelling would be 18).
    The counts are of what it reads, and the vectors are the library's own."""
    lower = with_settings(tiny_st_dir, tmp_path / "st", "sentence_bert_config.json", do_lower_case=True)
    model = load_model(f"{lower}+{tiny_clip_dir}", device="cpu")
    assert model.model[0].do_lower_case
    texts = ["UNE PHOTO D'UN CHAT NOIR", "A PHOTO OF A DOG " * POSITIONS]
    assert model.token_lengths(texts) == model.token_lengths([text.lower() for text in texts])
    assert model.token_lengths(texts)[0] == POSITIONS
    ours = model.encode_texts(texts)
    assert model.truncated_texts == 1
    assert np.abs(ours - st_reference(lower, texts)).max() <= 1e-6
    assert np.abs(ours - st_reference(lower, [text.lower() for text in texts])).max() <= 1e-6
