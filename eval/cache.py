"""On-disk cache of image embeddings: one shard directory per (model, revision, precision, image set).

Image encoding dominates evaluation, and every language and prompt set scores the same
images: they are encoded once per model and reused by every language, prompt set, task and
later run. The key is the sha256 of model name + revision + image-set content hash +
precision, so a new checkpoint or a changed image never reuses stale vectors, and a CPU run
(`float32`) never reads vectors a GPU run computed in half precision.

`<cache root>/<key>/` holds the embeddings as shards (`babelforge.core.shards`):
`shard-NNNNN.parquet` with `row` (position in the image set), `file` and `embedding`
(list<float32>), each committed by its manifest, plus `key.json` saying what the key stands
for. The shards are encoded by the `eval.runner` runner (`babelforge.core.runners`: here, or on a
Ray actor pool whose actors load the model once each), written as they finish, so an
encode cut off by a kill or preemption keeps its finished shards and the next run encodes only
the missing, stale or broken ones.
"""

from __future__ import annotations

import gc
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from babelforge.core import shards
from babelforge.core.config import setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.images import READER_VERSION
from babelforge.core.io import read_json, write_json
from babelforge.core.ray_connect import check_ray_address
from babelforge.core.ray_runner import RayPool
from babelforge.core.runner_config import RunnerConfig
from babelforge.core.runners import run_sharded
from babelforge.core.shard_work import slice_reader
from babelforge.core.shards import stable_hash
from babelforge.eval.models import load_model

COLUMNS = ("row", "file", "embedding")


@dataclass(frozen=True)
class EvalRunnerConfig(RunnerConfig):
    """The `eval.runner` group: how the stages that encode images (zero-shot, retrieval, clipscore,
    MVL-SIB) compute the embedding cache's shards; the runner settings with image-sized defaults."""

    shard_size: int = setting(
        {"sample": 256, "full": 8192},
        "images per shard of the embedding cache: the unit written, resumed and redone "
        "(a multiple of batch_size keeps the model's batches whatever the shard size)",
        minimum=1,
    )
    batch_size: int = setting(
        64, "images per encoder call (the model's batch); both runners cut the same batches", minimum=1
    )


def cache_key(model_name: str, revision: str, image_set_hash: str, precision: str | None = None) -> str:
    parts = [model_name, revision, image_set_hash] + ([precision] if precision else [])
    if precision and precision != "float16":
        # CPU vectors depend on the kernels' instruction set too (build.cpu_isa, pinned by the CLI,
        # docs/reproducibility.md): vectors of another level or of an unpinned run are not read back.
        parts.append("cpu:" + os.environ.get("CT2_FORCE_CPU_ISA", "unpinned"))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


# ---------------------------------------------------------------- the worker the runners run


@dataclass(frozen=True)
class ModelSource:
    """What an actor elsewhere needs to load the model a cache key names (a loaded model stays here).

    The actor checks that it loaded the same weights (`revision`, a local directory's content
    hash) in the same precision, so its vectors are the ones the key promises.
    """

    spec: str  # the model spec, its local folders absolute (babelforge.eval.families)
    device: str  # cpu or cuda: the device kind this process resolved
    revision: str  # what the loaded model must report
    precision: str | None
    threads: int | None = None

    def load(self):

        if self.threads:
            import torch

            torch.set_num_threads(self.threads)
        model = load_model(self.spec, None, self.device)
        if model.revision != self.revision or getattr(model, "precision", None) != self.precision:
            raise BabelforgeError(
                f"model {self.spec}: this worker loaded revision {model.revision} in "
                f"{getattr(model, 'precision', None)}, the cache key names {self.revision} in {self.precision}; "
                "every node needs the same model files"
            )
        return model


def model_source(model, threads: int | None = None) -> ModelSource:
    """A loaded `babelforge.eval.models.DualEncoder` as what a Ray actor loads again."""
    device = getattr(model, "device", None)
    ref = getattr(model, "ref", None)
    if device is None or ref is None:
        raise BabelforgeError(
            f"model {model.name}: runner ray needs a model loaded by babelforge.eval.models.load_model"
        )
    return ModelSource(
        spec=ref.absolute().text(),
        device="cuda" if device.startswith("cuda") else device,
        revision=model.revision,
        precision=getattr(model, "precision", None),
        threads=threads,
    )


# The model a Ray actor loaded last, by its source: the actor builds a new ImageEncoder for each image
# set of a stage run (ray_runner.RayPool) and loads its model once, not once per set.
_LOADED: dict[ModelSource, object] = {}


def loaded_once(source: ModelSource):
    """`source.load()`, kept for the next encoder of the same model in this process; the model kept
    before is dropped first (one model in memory at a time)."""
    if source not in _LOADED:
        _LOADED.clear()
        gc.collect()
        _LOADED[source] = source.load()
    return _LOADED[source]


def embedding_table(rows, files, vectors: np.ndarray):
    """`row`, `file`, `embedding` (list<float32>, one list per image) as a pyarrow table."""
    import pyarrow as pa

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    count, dim = vectors.shape if vectors.ndim == 2 else (0, 0)
    offsets = pa.array(np.arange(0, count * dim + 1, max(dim, 1), dtype=np.int32)[: count + 1])
    embedding = pa.ListArray.from_arrays(offsets, pa.array(vectors.reshape(-1), pa.float32()))
    return pa.table({"row": pa.array(rows, pa.int64()), "file": pa.array(files, pa.string()), "embedding": embedding})


class ImageEncoder:
    """The runners' worker: `row`, `file` (relative to `root`) in; `row`, `file`, `embedding` out.

    `model` is a loaded model (the local runner shares this process's) or a `ModelSource` (a
    Ray actor loads it once, in its constructor). Each call encodes its chunk in one batch,
    so the chunks the runner cuts (`eval.runner.batch_size`) are the model's batches.
    """

    def __init__(self, model, root: str):
        self.model = loaded_once(model) if isinstance(model, ModelSource) else model
        self.root = Path(root)

    @staticmethod
    def model_paths(model, root: str) -> list[str]:
        """What a Ray actor checks on its node first (ray_runner.ChunkWorker): the image folder, which
        actors open by its absolute path (a volume every node mounts at that path)."""
        return [root]

    def __call__(self, batch):
        rows = batch.column("row").to_pylist()
        files = batch.column("file").to_pylist()
        vectors = self.model.encode_images([self.root / name for name in files], batch_size=max(len(files), 1))
        return embedding_table(rows, files, np.asarray(vectors, dtype=np.float32))


# ---------------------------------------------------------------- reading the shards back


def read_embeddings(directory: Path, n_images: int) -> np.ndarray:
    """The (n_images, d) float32 matrix of a complete shard directory, in image-set order."""
    import pyarrow.compute as pc

    table = shards.read(directory, columns=["row", "embedding"])
    rows = table.column("row").to_numpy()
    if len(rows) != n_images or not np.array_equal(rows, np.arange(n_images)):
        raise BabelforgeError(
            f"{directory}: the shards hold rows other than 0..{n_images - 1}; delete the folder and run again"
        )
    lists = table.column("embedding").combine_chunks()
    lengths = pc.list_value_length(lists)
    dim = pc.min(lengths).as_py() if n_images else 0
    if n_images and pc.max(lengths).as_py() != dim:
        raise BabelforgeError(f"{directory}: embeddings of different lengths; delete the folder and run again")
    # a copy: the caller gets a writable array of its own, not a view of Arrow's buffers
    return np.array(lists.flatten().to_numpy(zero_copy_only=False), dtype=np.float32).reshape(n_images, dim)


# ---------------------------------------------------------------- the cache


class ImageEmbeddingCache:
    """Image embeddings per key, from memory, from the shard directory, or encoded into it.

    `hits` / `misses` count `embeddings` calls answered without / with encoding;
    `encoded_shards` / `encoded_images` what the misses encoded. Under the ray runner the cache is the
    stage run's one RayPool (Ray connects and its actors start at the first miss; every model and image
    set after it shares them); entered, it asks the cluster's address first (check_ray_address: before
    the stage loads a model), and its end frees the actors and shuts down a Ray it started.
    """

    def __init__(self, root: str | Path, runner: EvalRunnerConfig | None = None, threads: int | None = None):
        self.root = Path(root)
        self.runner = runner or EvalRunnerConfig()
        self.shard_size = self.runner.shard_size
        self.threads = threads
        self._memory: dict[str, np.ndarray] = {}
        self.pool = RayPool(self.runner) if self.runner.runner == "ray" else None
        self.hits = 0
        self.misses = 0
        self.encoded_shards = 0
        self.encoded_images = 0

    def __enter__(self) -> ImageEmbeddingCache:
        if self.pool is not None:  # a wrong address is one line in seconds, before any model loads
            check_ray_address(self.runner)
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()

    def directory(self, model, image_set_hash: str) -> Path:
        return self.root / cache_key(model.name, model.revision, image_set_hash, getattr(model, "precision", None))

    def embeddings(self, model, image_set, image_set_hash: str | None = None) -> np.ndarray:
        """The image set's embeddings under `model`, encoding only the shards not yet on disk.

        The vectors are those of the model's image tower (`image_encoder`): the text-only families'
        models paired with one tower (M-CLIP B-32 and the multilingual sentence-transformers CLIP both
        pair OpenAI's ViT-B/32) share its cached embeddings instead of encoding the images again."""
        model = getattr(model, "image_encoder", model)  # an encoder without a paired tower encodes its own
        image_set_hash = image_set_hash or image_set.content_hash()
        directory = self.directory(model, image_set_hash)
        key = directory.name
        if key in self._memory:
            self.hits += 1
            return self._memory[key]
        n_images = len(image_set.files)
        if n_images == 0:
            return np.zeros((0, getattr(model, "embedding_dim", 0)), np.float32)
        encoded = self._bring_up_to_date(model, image_set, image_set_hash, directory)
        if encoded:
            self.misses += 1
        else:
            self.hits += 1
        array = read_embeddings(directory, n_images)
        self._memory[key] = array
        return array

    def _bring_up_to_date(self, model, image_set, image_set_hash: str, directory: Path) -> int:
        """Encode the missing or stale shards of `directory`; the number encoded."""
        import pyarrow as pa

        precision = getattr(model, "precision", None)
        described = {
            "model": model.name,
            "revision": model.revision,
            "precision": precision,
            "image_set": "sha256:" + image_set_hash,
            "n_images": len(image_set.files),
        }
        if not (directory / "key.json").is_file() or read_json(directory / "key.json") != described:
            write_json(described, directory / "key.json")
        listing = pa.table(
            {
                "row": pa.array(range(len(image_set.files)), pa.int64()),
                "file": pa.array(list(image_set.files), pa.string()),
            }
        )
        plan = shards.plan_shards([listing], self.shard_size)

        params_hash, model_hash = self._hashes(model, image_set_hash)
        worker_model = model  # the local runner shares the loaded model; Ray actors load their own
        if self.pool is not None:
            worker_model = model_source(model, self.threads)
        stats = run_sharded(
            directory,
            plan,
            slice_reader(listing),
            ImageEncoder,
            (worker_model, str(Path(image_set.root).resolve())),
            self.runner,
            params_hash=params_hash,
            model_hash=model_hash,
            sort_by=["row"],
            desc=f"image embeddings {model.name}",
            provenance=described,
            pool=self.pool,
        )
        self.encoded_shards += stats.shards
        self.encoded_images += stats.rows_in
        return stats.shards

    def _hashes(self, model, image_set_hash: str) -> tuple[str, str]:
        """(params hash, model hash) of the manifests: the batch size is part of what made the
        vectors (a model's batch can change their last bits), and so is the image reader's version
        (the pixels it makes of a file); the key parts are the rest."""

        params = {"image_set": image_set_hash, "batch_size": self.runner.batch_size, "reader": READER_VERSION}
        identity = {"model": model.name, "revision": model.revision, "precision": getattr(model, "precision", None)}
        return stable_hash(params), stable_hash(identity)
