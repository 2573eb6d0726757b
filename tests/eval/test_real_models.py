"""Real checkpoints on a GPU (marked `gpu`; skipped with the reason shown elsewhere).

The model defaults to openai/clip-vit-base-patch32 at a pinned revision; override with
BABELFORGE_GPU_CLIP=<hub id or local dir> and BABELFORGE_GPU_CLIP_REVISION=<sha>.
Needs the checkpoint in the Hugging Face cache or network access to the Hub.
"""

import os

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

MODEL = os.environ.get("BABELFORGE_GPU_CLIP", "openai/clip-vit-base-patch32")
REVISION = os.environ.get("BABELFORGE_GPU_CLIP_REVISION", "3d74acf9a28c67741b2f4f2ea7635f0aaf6f0268")


@pytest.fixture(scope="module")
def real_model():
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU (real CLIP checkpoint in fp16); none on this machine")
    from babelforge.eval.models import load_model

    return load_model(MODEL, REVISION)


def test_fp16_on_gpu_and_normalised_outputs(real_model):
    import torch

    assert real_model.device == "cuda" and real_model.dtype == torch.float16
    texts = real_model.encode_texts(["a photo of a dog.", "ein Foto von einem Hund."])
    assert texts.dtype == np.float32 and np.allclose(np.linalg.norm(texts, axis=1), 1, atol=1e-3)


def test_colour_zero_shot_and_retrieval(real_model):
    from PIL import Image

    from babelforge.eval.retrieval.metric import retrieval_metrics
    from babelforge.eval.zeroshot.metric import zeroshot_metrics

    colours = {"red": (220, 20, 20), "green": (20, 180, 20), "blue": (20, 20, 220), "yellow": (240, 230, 20)}
    images = real_model.encode_images([Image.new("RGB", (224, 224), rgb) for rgb in colours.values()])
    texts = real_model.encode_texts([f"a photo of the colour {name}." for name in colours])
    metrics = zeroshot_metrics(images, [0, 1, 2, 3], texts, [0, 1, 2, 3])
    assert metrics["top1"] >= 0.75
    assert retrieval_metrics(texts, images, [0, 1, 2, 3])["t2i_r@1"] >= 0.75
