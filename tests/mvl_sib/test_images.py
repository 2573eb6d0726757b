from __future__ import annotations

import sys
import types
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from builders.core.errors import BabelforgeError
from builders.core.io import sha256_file
from builders.mvl_sib.images import (
    ImageEntry, fetch_image, generate_sample_set, make_thumbnail, manifest_text, read_manifest,
)
from builders.mvl_sib.sib200 import TOPICS


@pytest.fixture(scope="module")
def sample_set(tmp_path_factory):
    folder = tmp_path_factory.mktemp("generated")
    entries = generate_sample_set(folder)
    manifest = folder / "manifest.tsv"
    manifest.write_text(manifest_text(entries), encoding="utf-8")
    return folder, manifest, entries


def test_generated_set_has_ten_verified_images_per_topic(sample_set):
    folder, manifest, entries = sample_set
    read_back = read_manifest(manifest)
    assert [(e.topic, e.image_id, e.sha256) for e in read_back] == [(e.topic, e.image_id, e.sha256) for e in entries]
    for topic in TOPICS:
        assert sum(e.topic == topic for e in read_back) == 10
    for entry in read_back:
        assert sha256_file(folder / entry.url) == entry.sha256


def test_generated_set_is_byte_identical_on_rerun(sample_set, tmp_path):
    _, _, entries = sample_set
    again = generate_sample_set(tmp_path / "again")
    assert [e.sha256 for e in again] == [e.sha256 for e in entries]


def test_generated_topics_are_visually_distinct(sample_set):
    """Nearest topic centroid (leave-one-out) on 8×6 thumbnails recovers every image's topic."""
    folder, _, entries = sample_set
    vectors = np.stack([
        np.asarray(Image.open(folder / e.url).convert("RGB").resize((8, 6), Image.Resampling.BOX), dtype=float).ravel()
        for e in entries
    ])
    topics = np.array([e.topic for e in entries])
    for i in range(len(entries)):
        keep = np.arange(len(entries)) != i
        centroids = {t: vectors[keep & (topics == t)].mean(axis=0) for t in TOPICS}
        nearest = min(centroids, key=lambda t: np.linalg.norm(vectors[i] - centroids[t]))
        assert nearest == topics[i], entries[i].image_id


def test_thumbnail_long_side_and_determinism(sample_set, tmp_path):
    folder, _, entries = sample_set
    source = folder / entries[0].url
    first, second = tmp_path / "a.jpg", tmp_path / "b.jpg"
    assert make_thumbnail(source, first, 640) == (640, 480)
    make_thumbnail(source, second, 640)
    assert first.read_bytes() == second.read_bytes()
    tall = tmp_path / "tall.png"
    Image.new("RGB", (300, 1000), (10, 20, 30)).save(tall)
    assert make_thumbnail(tall, tmp_path / "tall.jpg", 640) == (192, 640)
    small = tmp_path / "small.png"
    Image.new("RGB", (200, 100), (10, 20, 30)).save(small)
    assert make_thumbnail(small, tmp_path / "small.jpg", 640) == (200, 100)  # never enlarged
    with Image.open(first) as image:
        assert image.format == "JPEG" and not image.info.get("exif")


def test_checksum_mismatch_is_refused_and_nothing_kept(sample_set, tmp_path):
    folder, manifest, entries = sample_set
    wrong = replace(entries[3], sha256="0" * 64, line=5)
    dest = tmp_path / "fetched"
    with pytest.raises(BabelforgeError, match=r"manifest.tsv:5: image 'entertainment-03' .* refusing it"):
        fetch_image(wrong, dest, folder, manifest=manifest)
    assert not dest.exists()
    fetch_image(entries[3], dest, folder, manifest=manifest)
    assert sha256_file(dest) == entries[3].sha256


def test_download_goes_through_core_http_and_is_verified(monkeypatch, tmp_path):
    calls = []

    def fake_download(url, dest, sha256):  # a server that returns other bytes than promised
        calls.append((url, sha256))
        dest.write_bytes(b"not the image")

    monkeypatch.setitem(sys.modules, "builders.core.http", types.SimpleNamespace(download=fake_download))
    entry = ImageEntry("sports", "sports-00", "https://example.org/a.jpg", "CC-BY-4.0", "someone", "a" * 64, 2)
    with pytest.raises(BabelforgeError, match="refusing it"):
        fetch_image(entry, tmp_path / "x", tmp_path)
    assert calls == [("https://example.org/a.jpg", "a" * 64)]
    assert not (tmp_path / "x").exists()


def test_manifest_validation(sample_set, tmp_path):
    _, manifest, entries = sample_set
    lines = manifest.read_text(encoding="utf-8").split("\n")
    cases = {
        "count": (lines[:5] + lines[6:], r"topic 'entertainment' has 9 images, 10 required"),
        "sha": (lines[:3] + [lines[3].rsplit("\t", 1)[0] + "\tABC"] + lines[4:], r"bad.tsv:4: sha256 'ABC'"),
        "dup": (lines[:3] + [lines[2]] + lines[4:], r"bad.tsv:4: image_id 'entertainment-01' already on line 3"),
        "topic": (lines[:2] + [lines[2].replace("entertainment", "weather", 1)] + lines[3:], r"bad.tsv:3: topic 'weather'"),
        "header": (["topic\tid"] + lines[1:], r"bad.tsv:1: header"),
    }
    for name, (content, message) in cases.items():
        bad = tmp_path / "bad.tsv"
        bad.write_text("\n".join(content), encoding="utf-8")
        with pytest.raises(BabelforgeError, match=message):
            read_manifest(bad)


def test_shipped_full_manifest_fails_fast_until_curated():
    shipped = Path(__file__).resolve().parents[2] / "resources" / "mvl_sib_images.tsv"
    with pytest.raises(BabelforgeError, match="has 0 images, 10 required"):
        read_manifest(shipped)
