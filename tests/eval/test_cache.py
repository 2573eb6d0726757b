"""The sharded image-embedding cache: resume, broken shards, new languages, local vs Ray."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from babelforge.core import shards
from babelforge.eval.cache import EvalRunnerConfig, ImageEmbeddingCache, read_embeddings
from babelforge.eval.retrieval.rows import retrieval_rows
from babelforge.eval.zeroshot.rows import zeroshot_rows

from .conftest import CountingEncoder

# 6 images, 2 per shard, 2 per encoder call: 3 shards of one call each
SMALL = EvalRunnerConfig(shard_size=2, batch_size=2)
LABELS = {"aaa_Latn": {0: "c0", 1: "c1", 2: "c2"}, "bbb_Latn": {3: "c3", 4: "c4"}}


class PreemptedEncoder(CountingEncoder):
    """Encodes `calls` image batches, then fails as a killed or preempted job would."""

    def __init__(self, calls: int):
        super().__init__()
        self.calls = calls

    def encode_images(self, images, batch_size: int = 64):
        if self.image_calls == self.calls:
            raise RuntimeError("preempted")
        return super().encode_images(images, batch_size)


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def encode(encoder, images, root: Path, runner=SMALL) -> tuple[ImageEmbeddingCache, np.ndarray]:
    cache = ImageEmbeddingCache(root, runner)
    return cache, cache.embeddings(encoder, images)


def test_embeddings_are_shards_under_the_key_folder(counting_encoder, digit_images, tmp_path):
    cache, vectors = encode(counting_encoder, digit_images, tmp_path)
    folder = cache.directory(counting_encoder, digit_images.content_hash())
    assert sorted(shards.listed_shards(folder)) == [0, 1, 2]
    table = shards.read(folder)
    assert table.column_names == ["row", "file", "embedding"]
    assert table.column("file").to_pylist() == list(digit_images.files)
    assert table.schema.field("embedding").type.equals(pa.list_(pa.float32()))
    assert vectors.dtype == np.float32 and vectors.shape == (6, 16)
    assert np.array_equal(vectors.argmax(axis=1), np.arange(6))  # image i embeds as one-hot i
    assert (cache.misses, cache.encoded_shards, cache.encoded_images, counting_encoder.image_calls) == (1, 3, 6, 3)
    # the same call again: from memory; a new cache (a new process): from the shards, nothing encoded
    assert cache.embeddings(counting_encoder, digit_images) is vectors and cache.hits == 1
    again, reread = encode(counting_encoder, digit_images, tmp_path)
    assert np.array_equal(reread, vectors) and (again.hits, again.misses, again.encoded_images) == (1, 0, 0)
    assert counting_encoder.image_calls == 3


def test_an_interrupted_encode_resumes_with_the_shards_it_had_not_written(digit_images, tmp_path):
    preempted = PreemptedEncoder(calls=2)
    with pytest.raises(RuntimeError, match="preempted"):
        encode(preempted, digit_images, tmp_path / "cache")
    folder = ImageEmbeddingCache(tmp_path / "cache").directory(preempted, digit_images.content_hash())
    assert sorted(shards.listed_shards(folder)) == [0, 1]  # the finished shards were kept
    resumed = CountingEncoder()
    cache, vectors = encode(resumed, digit_images, tmp_path / "cache")
    assert (cache.misses, cache.encoded_shards, resumed.image_calls) == (1, 1, 1)
    _, clean = encode(CountingEncoder(), digit_images, tmp_path / "clean")
    assert np.array_equal(vectors, clean)
    assert folder_bytes(folder) == folder_bytes(tmp_path / "clean" / folder.name)


def test_a_missing_shard_is_encoded_and_no_other(counting_encoder, digit_images, tmp_path):
    cache, vectors = encode(counting_encoder, digit_images, tmp_path)
    folder = cache.directory(counting_encoder, digit_images.content_hash())
    before = folder_bytes(folder)
    (folder / "shard-00001.parquet").unlink()
    (folder / "shard-00001.json").unlink()
    fresh = CountingEncoder()
    again, reread = encode(fresh, digit_images, tmp_path)
    assert (again.encoded_shards, again.encoded_images, fresh.image_calls) == (1, 2, 1)
    assert np.array_equal(reread, vectors) and folder_bytes(folder) == before


def test_a_truncated_shard_is_redone(counting_encoder, digit_images, tmp_path):
    cache, vectors = encode(counting_encoder, digit_images, tmp_path)
    folder = cache.directory(counting_encoder, digit_images.content_hash())
    before = folder_bytes(folder)
    broken = folder / "shard-00002.parquet"
    broken.write_bytes(broken.read_bytes()[: broken.stat().st_size // 2])
    fresh = CountingEncoder()
    again, reread = encode(fresh, digit_images, tmp_path)
    assert (again.encoded_shards, fresh.image_calls) == (1, 1)
    assert np.array_equal(reread, vectors) and folder_bytes(folder) == before


def test_another_batch_size_re_encodes_and_another_shard_size_replans(counting_encoder, digit_images, tmp_path):
    cache, vectors = encode(counting_encoder, digit_images, tmp_path)
    folder = cache.directory(counting_encoder, digit_images.content_hash())
    # the batch size can change a real model's last bits: the shards it made are stale
    again, _ = encode(counting_encoder, digit_images, tmp_path, EvalRunnerConfig(shard_size=2, batch_size=1))
    assert again.encoded_shards == 3
    # fewer, larger shards: the old ones are replaced, the vectors are the same
    bigger, reread = encode(counting_encoder, digit_images, tmp_path, EvalRunnerConfig(shard_size=4, batch_size=1))
    assert bigger.encoded_shards == 2 and sorted(shards.listed_shards(folder)) == [0, 1]
    assert np.array_equal(reread, vectors) and np.array_equal(read_embeddings(folder, 6), vectors)


def test_a_new_language_or_prompt_set_never_re_encodes_images(counting_encoder, digit_images, tmp_path):
    first = ImageEmbeddingCache(tmp_path, SMALL)
    zeroshot_rows(counting_encoder, digit_images, first, LABELS, ["a {}"], control_classes=2, control_repeats=1)
    encoded = counting_encoder.image_calls
    assert first.misses == 1 and encoded == 3
    # a later run (new cache object) with one more language and two more prompt sets
    later = ImageEmbeddingCache(tmp_path, SMALL)
    labels = {**LABELS, "ccc_Latn": {5: "c5", 0: "c0"}}
    rows = zeroshot_rows(
        counting_encoder,
        digit_images,
        later,
        labels,
        ["a {}"],
        {"ccc_Latn": ["ein {}"]},
        prompt_sets=["translated", "english", "label"],
        control_classes=2,
        control_repeats=1,
    )
    assert len(rows) == 9 and {r["prompt_set"] for r in rows} == {"translated", "english", "english-fallback", "label"}
    assert counting_encoder.image_calls == encoded
    assert (later.misses, later.encoded_images) == (0, 0) and later.hits == 9
    # retrieval over the same images and a new caption language: still no image encoded
    captions = {"xx": [[f"photo {i}"] for i in range(6)], "yy": [[f"bild {i}"] for i in range(6)]}
    retrieval_rows(counting_encoder, digit_images, ImageEmbeddingCache(tmp_path, SMALL), captions, "set", str)
    assert counting_encoder.image_calls == encoded


@pytest.fixture
def drawn_images(tmp_path):
    """40 drawn pictures of 4 families: a set the tiny CLIP really encodes."""
    from babelforge.eval.images import ImageSet
    from babelforge.eval.sample.images_stage import draw_image

    root = tmp_path / "drawn"
    root.mkdir()
    files = []
    for i in range(40):
        name = f"{i:02d}.png"
        draw_image(name, 32, family=str(i % 4)).save(root / name)
        files.append(name)
    return ImageSet(root, tuple(files))


def test_the_tiny_clip_encodes_the_same_vectors_in_shards_as_in_one_call(tiny_clip_dir, drawn_images, tmp_path):
    from babelforge.eval.models import load_model

    model = load_model(str(tiny_clip_dir), device="cpu")
    cache = ImageEmbeddingCache(tmp_path, EvalRunnerConfig(shard_size=16, batch_size=8))
    sharded = cache.embeddings(model, drawn_images)
    assert cache.encoded_shards == 3
    whole = model.encode_images(drawn_images.paths, batch_size=8)
    assert sharded.tobytes() == np.asarray(whole, np.float32).tobytes()


@pytest.mark.slow
def test_local_and_ray_write_byte_identical_embedding_shards(tiny_clip_dir, drawn_images, tmp_path):
    """A local Ray (2 CPUs, no dashboard), two actors that load the tiny CLIP themselves."""
    pytest.importorskip("ray")
    import torch

    from babelforge.eval.models import load_model

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = load_model(str(tiny_clip_dir), device="cpu")
        local = ImageEmbeddingCache(tmp_path / "local", EvalRunnerConfig(shard_size=16, batch_size=8), threads=1)
        local_vectors = local.embeddings(model, drawn_images)
        ray_runner = EvalRunnerConfig(runner="ray", shard_size=16, batch_size=8, concurrency=2, local_cpus=2)
        with ImageEmbeddingCache(tmp_path / "ray", ray_runner, threads=1) as remote:
            ray_vectors = remote.embeddings(model, drawn_images)
            assert remote.encoded_shards == 3 and remote.pool.starts == 1
    finally:
        torch.set_num_threads(threads)
    import ray

    assert not ray.is_initialized()  # the cache shut down the Ray it started
    folder = local.directory(model, drawn_images.content_hash())
    assert folder_bytes(tmp_path / "ray" / folder.name) == folder_bytes(folder)
    assert ray_vectors.tobytes() == local_vectors.tobytes()
