"""Retrieval recall on a toy with known ranks; CLIPScore formulas by hand."""

import numpy as np
import pytest

from babelforge.eval.clipscore.metric import clip_score, pairwise_accuracy, ref_clip_score
from babelforge.eval.retrieval.metric import image_to_text_ranks, retrieval_metrics, text_to_image_ranks

E = np.eye(3, dtype=np.float32)
IMAGES = E  # image i = basis vector i
# caption -> image: c0 -> 0 (exact), c1 -> 1 but embedded like image 2, c2 -> 2, c3 -> 0
CAPTIONS = np.stack([E[0], E[2], E[2], E[0]])
CAPTION_IMAGE = [0, 1, 2, 0]


def test_text_to_image_ranks_and_recall():
    # c1 scores 0 on its image 1 and is beaten by image 2 (1) and tied by image 0 (0):
    # ties count against the query -> rank 2.
    assert list(text_to_image_ranks(CAPTIONS, IMAGES, CAPTION_IMAGE)) == [0, 2, 0, 0]
    metrics = retrieval_metrics(CAPTIONS, IMAGES, CAPTION_IMAGE)
    assert metrics["t2i_r@1"] == pytest.approx(0.75)
    assert metrics["t2i_r@5"] == 1.0


def test_image_to_text_uses_best_of_the_images_captions():
    # image 0: c0 and c3 both score 1 -> rank 0; image 1: every caption scores 0, its c1
    # ties with the 3 others -> rank 3; image 2: its c2 ties with c1 (not its caption) -> 1.
    assert list(image_to_text_ranks(CAPTIONS, IMAGES, CAPTION_IMAGE)) == [0, 3, 1]
    metrics = retrieval_metrics(CAPTIONS, IMAGES, CAPTION_IMAGE)
    assert metrics["i2t_r@1"] == pytest.approx(1 / 3)
    assert metrics["i2t_r@5"] == 1.0


def test_chunking_does_not_change_results():
    rng = np.random.default_rng(0)
    images = rng.normal(size=(50, 8)).astype(np.float32)
    captions = images[np.repeat(np.arange(50), 2)] + rng.normal(scale=0.8, size=(100, 8)).astype(np.float32)
    owner = np.repeat(np.arange(50), 2)
    assert retrieval_metrics(captions, images, owner, chunk=7) == retrieval_metrics(captions, images, owner, chunk=4096)


def test_clip_score_formula():
    image = np.array([[1.0, 0.0], [1.0, 0.0]])
    text = np.array([[0.6, 0.8], [-0.6, 0.8]])  # cos 0.6 and -0.6
    assert clip_score(image, text) == pytest.approx([2.5 * 0.6, 0.0])
    assert clip_score(image * 3, text * 7, w=1.0) == pytest.approx([0.6, 0.0])  # scale-free


def test_ref_clip_score_is_harmonic_mean_with_best_reference():
    image = np.array([[1.0, 0.0]])
    text = np.array([[0.6, 0.8]])
    refs = [np.array([[0.0, 1.0], [1.0, 0.0]])]  # cos with the candidate: 0.8 and 0.6 -> best 0.8
    expected = 2 * 1.5 * 0.8 / (1.5 + 0.8)
    assert ref_clip_score(image, text, refs) == pytest.approx([expected])


def test_pairwise_accuracy_ties_lose():
    assert pairwise_accuracy([0.9, 0.5, 0.3, 0.2], [0.1, 0.5, 0.4, 0.1]) == pytest.approx(0.5)
