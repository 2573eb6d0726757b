"""The full-profile rehearsal's generated files (tests/standins/files.py) read as the project reads the real
ones: the XM3600 release through `xm3600_fetch` and `xm3600`, the MVL-SIB release's images through the
manifest rows `pins --update` writes, the eval image folders through the eval image readers, the caption
input through the captions reader; and the same arguments give the same bytes."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import fields
from pathlib import Path

import pandas as pd
import pytest

from babelforge.captions.input_config import InputConfig
from babelforge.captions.readers import stream_captions
from babelforge.cli import main
from babelforge.core.bad_rows import BadRowPolicy, Quarantine
from babelforge.core.languages import registry
from babelforge.eval.images import read_caption_images, read_imagenet_folder, screen_images
from babelforge.eval.pins import release_image_rows
from babelforge.mvl_sib.sib200 import TOPICS
from babelforge.xm3600.captions import LANGUAGES
from babelforge.xm3600.fetch_stage import Config as FetchConfig
from tests.standins.files import (
    mvl_sib_release_files,
    write_caption_input,
    write_caption_set_images,
    write_imagenet_val,
    write_xm3600_mirror,
)
from tests.xm3600.release_fixture import write_params

XM3600_IMAGES = 72  # two images per locale


def digests(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def xm3600_built(tmp_path_factory):
    """The generated release fetched from its mirror with its own pins and built by the project's stages."""
    root = tmp_path_factory.mktemp("xm3600")
    mirror = write_xm3600_mirror(root / "mirror", XM3600_IMAGES)
    params = write_params(root, "full", mirror.sha256, root / "mirror")
    assert main(["xm3600_fetch", "--params", str(params)]) == 0
    assert main(["xm3600", "--params", str(params)]) == 0
    return root, mirror


def test_the_xm3600_release_passes_the_projects_fetch_and_build(xm3600_built):
    root, mirror = xm3600_built
    fetched = json.loads((root / "release" / "fetch.json").read_text())
    assert {file["name"]: file["sha256"] for file in fetched["files"]} == mirror.sha256
    assert fetched["images"] == XM3600_IMAGES
    validation = json.loads((root / "xm3600" / "validation.json").read_text())
    assert validation["problems"] == [] and validation["script_mismatches"] == {}
    table = pd.read_parquet(root / "xm3600" / "captions.parquet")
    assert table.groupby(["image_id", "lang"]).ngroups == XM3600_IMAGES * len(LANGUAGES)
    assert len(table) == validation["captions"]
    assert set(table["image_id"]) == set(mirror.keys)
    assert table.drop_duplicates("image_id")["image_locale"].value_counts().eq(2).all()  # 2 images per locale
    per_image = table.groupby(["code", "image_id"]).size()
    assert per_image["bn"].eq(1).all() and per_image["de"].eq(2).all()
    assert 1.0 < per_image["mi"].mean() < 1.7  # Maori about 1.3, as in the release
    assert table["image_author"].notna().all() and table["image_licence"].notna().all()


def test_the_xm3600_pins_name_the_fetch_settings(tmp_path):
    mirror = write_xm3600_mirror(tmp_path, 2)
    settings = {"captions_sha256", "images_sha256", "attributions_sha256"}
    assert set(mirror.pins) == settings and settings <= {field.name for field in fields(FetchConfig)}
    assert sorted(mirror.pins.values()) == sorted(mirror.sha256.values())


def test_the_mvl_sib_release_gives_ten_manifest_rows_per_topic(tmp_path):
    files = mvl_sib_release_files(folder=tmp_path)
    hashes = {path: hashlib.sha256(data).hexdigest() for path, data in files.items()}
    rows = release_image_rows(list(files), "c" * 40, "http://hub", TOPICS, hashes)
    assert len(rows) == 70 and Counter(row["topic"] for row in rows) == {topic: 10 for topic in TOPICS}
    assert len({row["image_id"] for row in rows}) == 70 and len(set(hashes.values())) == 70
    assert digests(tmp_path) == hashes  # the folder holds what the dict does


@pytest.mark.parametrize("caption_set, first", [("xtd", 40), ("xflickrco", None)])
def test_the_images_a_caption_set_names_are_where_the_caption_tasks_look(caption_set, first, shared_data, tmp_path):
    path = shared_data / "xtd" / f"{caption_set}.json"
    names = json.loads(path.read_text(encoding="utf-8"))["images"]
    written = write_caption_set_images(path, tmp_path, first)
    assert written == names[:first]
    image_set = read_caption_images(tmp_path, written)
    assert all(path.is_file() for path in image_set.paths)
    kept, quarantine = screen_images(image_set, BadRowPolicy("fail", 0.0), path)
    assert len(kept.files) == len(names[:first]) and quarantine.bad == []


def test_the_imagenet_folder_has_per_class_images_of_each_wnid(repo_root, tmp_path):
    classes = pd.read_csv(repo_root / "resources" / "imagenet1k_classes.tsv", sep="\t")
    wnids = list(classes["wnid"][:3])
    written = write_imagenet_val(tmp_path, wnids, 4)
    image_set = read_imagenet_folder(tmp_path, dict(zip(classes["wnid"], classes["class_idx"])))
    assert list(image_set.files) == written and len(written) == 12
    assert Counter(image_set.targets) == {0: 4, 1: 4, 2: 4}
    assert written[4] == f"{wnids[1]}/ILSVRC2012_val_00000005.JPEG"


def test_the_caption_input_reads_with_its_rows_and_no_bad_ones(tmp_path):
    path = write_caption_input(tmp_path / "captions.parquet", 3_000)
    quarantine = Quarantine(BadRowPolicy("fail", 0.0), "captions")
    config = InputConfig(format="table", path=str(path))
    tables = list(stream_captions(config, registry(), batch_rows=1_000, quarantine=quarantine))
    captions = [text for table in tables for text in table.column("caption").to_pylist()]
    assert len(captions) == 3_000 and quarantine.bad == [] and quarantine.rows == 3_000
    lengths = Counter(len(text.split()) for text in captions)
    assert min(lengths) == 5 and max(lengths) == 25
    assert len(set(captions)) > 2_900  # captions, not one sentence repeated


def test_the_same_arguments_give_the_same_bytes(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for root in (first, second):
        write_xm3600_mirror(root / "mirror", 6, seed=3)
        write_imagenet_val(root / "imagenet", ["n01440764", "n01443537"], 2, seed=3)
        write_caption_input(root / "captions.parquet", 500, seed=3)
        mvl_sib_release_files(folder=root / "mvl-sib", seed=3)
    assert digests(first) == digests(second)
    assert (
        write_xm3600_mirror(tmp_path / "c", 6, seed=3).sha256 != write_xm3600_mirror(tmp_path / "d", 6, seed=4).sha256
    )
    assert mvl_sib_release_files(seed=3) == mvl_sib_release_files(seed=3) != mvl_sib_release_files(seed=4)
