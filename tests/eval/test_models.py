"""The model adapter on tiny real models built offline (CLIP and SigLIP architectures)."""

import numpy as np
import pytest
from PIL import Image

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import directory_hash
from babelforge.eval.models import load_model
from babelforge.eval.sample.tiny_clip_stage import build_tiny_clip


def test_tiny_clip_is_deterministic_per_seed(tiny_clip_dir, tmp_path):
    again = build_tiny_clip(tmp_path / "again", seed=0)
    other = build_tiny_clip(tmp_path / "other", seed=1)
    assert directory_hash(again) == directory_hash(tiny_clip_dir)
    assert directory_hash(other) != directory_hash(tiny_clip_dir)


def test_adapter_encodes_any_script_to_unit_vectors(tiny_clip_dir):
    model = load_model(str(tiny_clip_dir), device="cpu")
    assert model.revision == "sha256:" + directory_hash(tiny_clip_dir)
    texts = ["a photo of a goldfish.", "匹兹堡海盗队的球员", "ምስል", "x" * 500]
    tokens = model.tokenizer.tokenize(texts[1])
    assert model.tokenizer.unk_token not in tokens and len(tokens) == len(texts[1].encode("utf-8"))
    emb = model.encode_texts(texts, batch_size=3)
    assert emb.shape == (4, 16) and emb.dtype == np.float32
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(emb[0], emb[1])
    images = [Image.new("RGB", (50, 40), (200, 10, 10)), Image.new("L", (64, 64), 128)]
    image_emb = model.encode_images(images, batch_size=1)
    assert image_emb.shape == (2, 16) and np.allclose(np.linalg.norm(image_emb, axis=1), 1.0, atol=1e-5)
    # batching does not change the vectors
    assert np.allclose(model.encode_texts(texts, batch_size=1), emb, atol=1e-5)


def save_siglip(out, text_projection: int | None = None, vision_hidden: int = 32):
    """A tiny SigLIP: a 32-d text tower (projected to `text_projection` when given) and a
    `vision_hidden`-d image tower, 16 text positions, 32 px images; the caller saves a tokenizer."""
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel

    text = dict(
        vocab_size=514,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        max_position_embeddings=16,
        pad_token_id=513,
        **({"projection_size": text_projection} if text_projection else {}),
    )
    vision = dict(
        hidden_size=vision_hidden,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=32,
        patch_size=8,
    )
    SiglipModel(SiglipConfig(text_config=text, vision_config=vision)).save_pretrained(out)
    SiglipImageProcessor(size={"height": 32, "width": 32}).save_pretrained(out)


def _save_dual_encoder(out):
    from transformers import (
        BertConfig,
        CLIPImageProcessor,
        CLIPVisionConfig,
        VisionTextDualEncoderConfig,
        VisionTextDualEncoderModel,
    )

    VisionTextDualEncoderModel(
        VisionTextDualEncoderConfig.from_vision_text_configs(
            CLIPVisionConfig(
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=1,
                num_attention_heads=2,
                image_size=32,
                patch_size=8,
            ),
            BertConfig(
                vocab_size=514,
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=1,
                num_attention_heads=2,
                max_position_embeddings=16,
                pad_token_id=513,
            ),
            projection_dim=24,
        )
    ).save_pretrained(out)
    CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(out)


@pytest.mark.parametrize(
    "save, padding, dim",
    [(save_siglip, "max_length", 32), (_save_dual_encoder, True, 24)],
    ids=["siglip", "vision-text-dual-encoder"],
)
def test_other_architectures_load_through_the_same_adapter(tiny_clip_dir, tmp_path, save, padding, dim):
    import torch
    from transformers import AutoTokenizer

    out = tmp_path / "model"
    torch.manual_seed(0)
    save(out)
    AutoTokenizer.from_pretrained(tiny_clip_dir).save_pretrained(out)  # the byte-level tokenizer, 514 symbols
    model = load_model(str(out), device="cpu")
    # SigLIP was trained on fixed-length texts; every text tower truncates at its 16 positions
    assert model.text_padding == padding and model.max_text_length == 16
    emb = model.encode_texts(["short", "a text longer than sixteen byte tokens"])
    assert emb.shape == (2, dim) and np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert model.encode_images([Image.new("RGB", (40, 40))]).shape == (1, dim)


def _save_altclip(out, tokenizer_source):
    """A tiny AltCLIP (XLM-R-style text tower: positions numbered after the padding id, so its
    18-row table holds 16 tokens) with the tiny CLIP's byte-level tokenizer."""
    from transformers import AltCLIPConfig, AltCLIPModel, AutoTokenizer, CLIPImageProcessor

    text = dict(
        vocab_size=514,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        max_position_embeddings=18,
        pad_token_id=1,
        project_dim=24,
    )
    vision = dict(
        hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, image_size=32, patch_size=8
    )
    AltCLIPModel(AltCLIPConfig(text_config=text, vision_config=vision, projection_dim=24)).save_pretrained(out)
    CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(out)
    AutoTokenizer.from_pretrained(tokenizer_source).save_pretrained(out)


def test_altclip_loads_and_equals_transformers_own_features(tiny_clip_dir, tmp_path):
    """AltCLIP (the Babel-ImageNet paper's AC L-14) through the hf family: the vectors are what
    AltCLIPModel itself computes, and its RoBERTa-style position table sets the text limit."""
    import torch
    from transformers import AltCLIPModel, AutoTokenizer, CLIPImageProcessor

    out = tmp_path / "altclip"
    torch.manual_seed(0)
    _save_altclip(out, tiny_clip_dir)
    model = load_model(str(out), device="cpu")
    assert (model.family, model.name, model.max_text_length) == ("hf", str(out), 16)
    assert model.revision == "sha256:" + directory_hash(out)

    own = AltCLIPModel.from_pretrained(out).eval()
    tokenizer, processor = AutoTokenizer.from_pretrained(out), CLIPImageProcessor.from_pretrained(out)
    texts = ["a goldfish", "ein Foto"]  # within the 16 tokens: the reference is not cut
    images = [Image.new("RGB", (48, 40), (200, 10, 10)), Image.new("RGB", (32, 32), (10, 10, 200))]
    with torch.inference_mode():
        tokens = tokenizer(texts, padding=True, return_tensors="pt")
        text_own = own.get_text_features(**tokens).numpy()
        image_own = own.get_image_features(**processor(images=images, return_tensors="pt")).numpy()
    text_own /= np.linalg.norm(text_own, axis=1, keepdims=True)
    image_own /= np.linalg.norm(image_own, axis=1, keepdims=True)
    assert np.abs(model.encode_texts(texts) - text_own).max() < 1e-6
    assert np.abs(model.encode_images(images) - image_own).max() < 1e-6
    # a text of 40 bytes is 42 tokens: cut to the 16 the table holds (not the 18 rows), and counted
    assert model.encode_texts(["x" * 40, "short"]).shape == (2, 24) and model.truncated_texts == 1


def test_uncached_hub_model_offline_fails_at_once(monkeypatch):
    import socket

    def no_network(*args, **kwargs):
        raise OSError("no route")

    monkeypatch.setattr(socket, "create_connection", no_network)
    with pytest.raises(BabelforgeError, match="not in the Hugging Face cache and .* is unreachable"):
        load_model("babelforge-tests/no-such-model", revision="0" * 40)


def test_model_errors_are_actionable(tmp_path):
    with pytest.raises(BabelforgeError, match="not a model directory"):
        load_model("models/tiny_clip/missing")
    with pytest.raises(BabelforgeError, match="no revision pinned"):
        load_model("openai/clip-vit-base-patch32")
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(BabelforgeError, match="not a dual encoder"):
        load_model(str(tmp_path))


def test_fp16_on_gpu_fp32_on_cpu(tiny_clip_dir):
    import torch

    from babelforge.eval.models import dtype_for

    assert dtype_for("cuda") == dtype_for("cuda:1") == torch.float16
    assert dtype_for("cpu") == torch.float32
    model = load_model(str(tiny_clip_dir), device="cpu")
    assert model.dtype == torch.float32 and model.precision == "float32"


def test_texts_longer_than_the_text_encoder_reads_are_cut_and_counted(tiny_clip_dir, capsys):
    """The limit comes from the model (its position table and tokenizer); a cut text is counted
    and logged, not silently scored on its first tokens."""
    model = load_model(str(tiny_clip_dir), device="cpu")
    limit = model.max_text_length
    assert limit == model.model.config.text_config.max_position_embeddings
    long_caption = "a dog " * limit
    emb = model.encode_texts(["a dog", long_caption, long_caption + "in the snow"])
    assert emb.shape[0] == 3 and model.truncated_texts == 2
    # cut: the long caption and the longer one read the same first tokens
    assert np.allclose(emb[1], emb[2], atol=1e-6)
    assert f"2 of 3 texts cut to the text encoder's {limit} tokens" in capsys.readouterr().err
