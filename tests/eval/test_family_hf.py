"""The `hf` family's text inputs as each architecture was trained on them: SigLIP's texts padded to its
fixed length and read without an attention mask, so the vectors equal SiglipModel's own."""

from __future__ import annotations

import numpy as np

from babelforge.eval.models import load_model
from tests.eval.test_models import save_siglip


def test_siglip_texts_are_padded_to_its_length_and_read_without_a_mask(tiny_clip_dir, tmp_path):
    import torch
    from transformers import AutoTokenizer, SiglipModel

    out = tmp_path / "siglip"
    torch.manual_seed(0)
    save_siglip(out)
    AutoTokenizer.from_pretrained(tiny_clip_dir).save_pretrained(out)
    model = load_model(str(out), device="cpu")
    assert (model.text_padding, model.max_text_length) == ("max_length", 16)

    texts = ["a dog", "ein Foto von"]  # short: most of the 16 positions are padding
    own = SiglipModel.from_pretrained(out).eval()
    tokens = AutoTokenizer.from_pretrained(out)(texts, padding="max_length", max_length=16, return_tensors="pt")
    with torch.inference_mode():
        unmasked = own.get_text_features(input_ids=tokens["input_ids"]).numpy()
        masked = own.get_text_features(**tokens).numpy()
    unmasked /= np.linalg.norm(unmasked, axis=1, keepdims=True)
    masked /= np.linalg.norm(masked, axis=1, keepdims=True)
    ours = model.encode_texts(texts)
    assert np.abs(ours - unmasked).max() < 1e-6
    assert np.abs(ours - masked).max() > 1e-3  # the mask does change what SigLIP computes
