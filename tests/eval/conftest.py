"""Fixtures for the eval tests: a fake dual encoder that counts its calls, a tiny
real CLIP built once per run (tests/shared.py), and small image sets drawn with PIL."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.registry import write_registry
from tests.shared import built_once

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO / ".." / "shared" / "data"


class CountingEncoder:
    """Texts embed as the one-hot of the first integer they contain (plus a template
    offset); images embed by their file name's leading integer. Counts every call, and (like
    DualEncoder) the texts longer than `max_words` words it would cut."""

    def __init__(self, dim: int = 16, name: str = "fake", revision: str = "r1", max_words: int | None = None):
        self.dim, self.name, self.revision = dim, name, revision
        self.image_calls = 0
        self.text_calls = 0
        self.max_words = max_words
        self.truncated_texts = 0

    def _onehot(self, index: int) -> np.ndarray:
        vector = np.zeros(self.dim, np.float32)
        vector[index % self.dim] = 1.0
        return vector

    def encode_texts(self, texts, batch_size: int = 256, lang=None):
        self.text_calls += 1
        if self.max_words:
            self.truncated_texts += sum(len(text.split()) > self.max_words for text in texts)
        out = []
        for text in texts:
            numbers = [int(n) for n in re.findall(r"\d+", text)]
            vector = self._onehot(numbers[0]) if numbers else np.ones(self.dim, np.float32)
            out.append(vector / np.linalg.norm(vector))
        return np.stack(out) if out else np.zeros((0, self.dim), np.float32)

    def encode_images(self, images, batch_size: int = 64):
        self.image_calls += 1
        return np.stack([self._onehot(int(re.match(r"\d+", Path(p).name).group())) for p in images])


@pytest.fixture
def counting_encoder():
    return CountingEncoder()


@pytest.fixture
def digit_images(tmp_path):
    """An ImageSet of 6 files named by class (0..5), one per class."""
    from babelforge.eval.images import ImageSet

    root = tmp_path / "imgs"
    root.mkdir()
    files = []
    for c in range(6):
        (root / f"{c}.png").write_bytes(f"image {c}".encode())
        files.append(f"{c}.png")
    return ImageSet(root, tuple(files), tuple(range(6)))


@pytest.fixture(scope="session")
def tiny_clip_dir(tmp_path_factory):
    from babelforge.eval.sample.tiny_clip_stage import build_tiny_clip

    return built_once(tmp_path_factory, "tiny-clip", lambda folder: build_tiny_clip(folder / "tiny_clip", seed=0))


# Tiny random models of the other families, each built with its family's own library (built once per run).


@pytest.fixture(scope="session")
def tiny_xlmr_dir(tmp_path_factory):
    from tests.eval.tiny_text_only import build_tiny_xlmr

    return built_once(tmp_path_factory, "tiny-xlmr", lambda folder: build_tiny_xlmr(folder / "xlmr", seed=0))


@pytest.fixture(scope="session")
def tiny_mclip_dir(tmp_path_factory, tiny_xlmr_dir):
    from tests.eval.tiny_text_only import build_tiny_mclip

    return built_once(
        tmp_path_factory, "tiny-mclip", lambda folder: build_tiny_mclip(folder / "mclip", tiny_xlmr_dir, seed=0)
    )


@pytest.fixture(scope="session")
def tiny_st_dir(tmp_path_factory, tiny_xlmr_dir):
    from tests.eval.tiny_text_only import build_tiny_st

    return built_once(tmp_path_factory, "tiny-st", lambda folder: build_tiny_st(folder / "st", tiny_xlmr_dir, seed=0))


@pytest.fixture(scope="session")
def open_clip_bpe_dir(tmp_path_factory):
    from tests.eval.tiny_open_clip import build_clip_bpe

    return built_once(tmp_path_factory, "open-clip-bpe", lambda folder: build_clip_bpe(folder / "clip-bpe", seed=0))


@pytest.fixture(scope="session")
def open_clip_xlmr_dir(tmp_path_factory):
    from tests.eval.tiny_open_clip import build_xlmr_clip

    return built_once(tmp_path_factory, "open-clip-xlmr", lambda folder: build_xlmr_clip(folder / "xlmr-clip", seed=0))


@pytest.fixture(scope="session")
def open_clip_nllb_dir(tmp_path_factory, tiny_nllb):
    from tests.eval.tiny_open_clip import build_nllb_siglip

    return built_once(
        tmp_path_factory,
        "open-clip-nllb-siglip",
        lambda folder: build_nllb_siglip(folder / "nllb-siglip", tiny_nllb / "hf", seed=0),
    )


REGISTRY_ROWS = [
    # key, name, iso639_3, script, scripts, iso639_1, babelnet, omw, nllb, langid, in_xlmr, in_eval_100, in_sib200, in_babel_imagenet
    (
        "eng_Latn",
        "English",
        "eng",
        "Latn",
        "Latn",
        "en",
        "EN",
        "eng",
        "eng_Latn",
        "en",
        "True",
        "False",
        "True",
        "True",
    ),
    ("deu_Latn", "German", "deu", "Latn", "Latn", "de", "DE", "deu", "deu_Latn", "de", "True", "True", "True", "True"),
    (
        "jpn_Jpan",
        "Japanese",
        "jpn",
        "Jpan",
        "Hira,Kana,Hani",
        "ja",
        "JA",
        "jpn",
        "jpn_Jpan",
        "ja",
        "True",
        "True",
        "True",
        "True",
    ),
    ("fry_Latn", "Western Frisian", "fry", "Latn", "Latn", "fy", "FY", "fry", "", "", "True", "True", "False", "True"),
]


def write_sample_project(root: Path) -> Path:
    """A small project: params.yaml (eval group), registry, caption set, labels, prompts,
    languages, MVL-SIB tables; the images and tiny models are built by the CLI itself."""
    import json

    import pandas as pd

    from babelforge.core.io import write_table
    from babelforge.eval.sample.images_stage import draw_image

    write_registry(root / "resources" / "languages.tsv", REGISTRY_ROWS)

    captions = {
        "images": [f"img{i}.jpg" for i in range(6)],
        "captions": {
            "en": [[f"a photo number {i}"] for i in range(6)],
            "de": [[f"ein Foto Nummer {i}"] for i in range(6)],
            "jp": [[f"写真 {i}"] for i in range(6)],
        },
    }
    (root / "captions.json").write_text(json.dumps(captions, ensure_ascii=False), encoding="utf-8")

    mvl = root / "data" / "mvl_sib"
    (mvl / "images").mkdir(parents=True)
    topics = ["science", "sports", "travel", "health"]
    for topic in topics:
        for i in range(5):
            draw_image(f"{topic}_{i}", 32, family=topic).save(mvl / "images" / f"{topic}_{i}.jpg", format="JPEG")
    rows_i2s, rows_s2i = [], []
    for n in range(8):
        topic, label = topics[n % 4], n % 4
        options = [t for t in topics if t != topic]
        options.insert(label, topic)
        rows_i2s.append(
            {
                "instance_id": n,
                "topic": topic,
                "label": label,
                "ref_image_ids": [f"{topic}_{n % 5}"],
                "option_sentences": [f"a sentence about {t}" for t in options],
                "option_topics": options,
            }
        )
        rows_s2i.append(
            {
                "instance_id": n,
                "topic": topic,
                "label": label,
                "ref_sentences": [f"{topic} news {j}" for j in range(3)],
                "option_image_ids": [f"{t}_{(n + 1) % 5}" for t in options],
                "option_topics": options,
            }
        )
    write_table(pd.DataFrame(rows_i2s), mvl / "i2s_k1" / "eng_Latn.parquet")
    write_table(pd.DataFrame(rows_s2i), mvl / "s2i_k3" / "eng_Latn.parquet")

    params = {
        "profile": "sample",
        "eval": {
            "common": {
                "seed": 0,
                "device": "cpu",
                "cache": ".cache/eval",
                "registry": "resources/languages.tsv",
                "models": [{"id": "models/tiny_clip/s0"}, {"id": "models/tiny_clip/s1"}, {"id": "models/tiny_clip/s2"}],
            },
            "tiny_clip": {"seeds": [0, 1, 2], "image_size": 32},
            "images": {
                "n_classes": 12,
                "per_class": 1,
                "caption_sets": ["captions.json"],
                "caption_images": 6,
                "size": 32,
            },
            "zeroshot": {
                "images": "data/eval/images/imagenet",
                "prompt_sets": ["translated"],
                "fallback": "english",
                "max_templates": 2,
                "control_classes": 5,
                "control_repeats": 3,
            },
            "retrieval": {"caption_sets": ["captions.json"], "images": "data/eval/images/captions", "max_images": 6},
            "clipscore": {"caption_sets": ["captions.json"], "images": "data/eval/images/captions", "max_images": 6},
            "mvl_sib": {"images": "images", "languages": ["eng_Latn"]},
            "report": {"min_languages": 3},
        },
    }
    import yaml

    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return root


def write_babel_imagenet_tables(root: Path) -> None:
    """labels / languages / prompts over the classes the `images` task drew."""
    import pandas as pd

    from babelforge.core.io import write_table

    wnids = sorted(p.name for p in (root / "data" / "eval" / "images" / "imagenet").iterdir())
    with (REPO / "resources" / "imagenet1k_classes.tsv").open() as handle:
        index = {line.split("\t")[1]: int(line.split("\t")[0]) for line in handle.read().splitlines()[1:]}
    classes = sorted(index[w] for w in wnids)
    coverage = {"eng_Latn": classes, "deu_Latn": classes[:8], "fry_Latn": classes[::2], "jpn_Jpan": classes[1::2]}
    rows = [
        {
            "class_idx": c,
            "wnid": {v: k for k, v in index.items()}[c],
            "lang": lang,
            "label": f"{lang[:3]} label {c}",
            "source": "test",
            "rank": 0,
            "is_duplicate": False,
        }
        for lang, cs in coverage.items()
        for c in cs
    ]
    base = root / "data" / "babel_imagenet"
    write_table(pd.DataFrame(rows), base / "labels.parquet", sort_by=["lang", "class_idx"])
    write_table(
        pd.DataFrame(
            {
                "lang": list(coverage),
                "n_classes": [len(c) for c in coverage.values()],
                "group": ["high", "mid", "low", "low"],
            }
        ),
        base / "languages.parquet",
    )
    prompts = [
        {"lang": "deu_Latn", "template_id": t, "text": text, "strategy": "test", "fallback": False, "valid": ok}
        for t, (text, ok) in enumerate([("ein Foto von {}.", True), ("kaputt", False), ("{} im Bild.", True)])
    ]
    write_table(pd.DataFrame(prompts), base / "prompts.parquet")


@pytest.fixture(scope="module")
def stage_project(tmp_path_factory):
    """A sample project with the eval image sets drawn and the Babel-ImageNet tables written, the
    working folder inside it for the module's tests: where the eval stages run on a family's model."""
    import os

    from babelforge.cli import main

    root = write_sample_project(tmp_path_factory.mktemp("stages"))
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert main(["eval_images"]) == 0
        write_babel_imagenet_tables(root)
        yield root
    finally:
        os.chdir(cwd)
