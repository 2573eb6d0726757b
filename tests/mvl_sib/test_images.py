from __future__ import annotations

import hashlib
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from babelforge.cli import main
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_table, sha256_file
from babelforge.mvl_sib.images import fetch_image, generate_sample_set, make_thumbnail, manifest_text, read_manifest
from babelforge.mvl_sib.images_stage import build_images
from babelforge.mvl_sib.sib200 import TOPICS
from tests.loopback import LoopbackServer, serving


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
    vectors = np.stack(
        [
            np.asarray(
                Image.open(folder / e.url).convert("RGB").resize((8, 6), Image.Resampling.BOX), dtype=float
            ).ravel()
            for e in entries
        ]
    )
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


def test_an_image_of_a_pinned_release_that_changed_says_how_to_accept_the_release(sample_set, tmp_path):
    server = LoopbackServer()
    path = f"datasets/WueNLP/mvl-sib/resolve/{'c' * 40}/data/images/travel/1.jpg"
    server.files[path] = b"new bytes"
    _, manifest, entries = sample_set
    with serving(server):
        entry = replace(entries[0], url=server.url + path, line=3)
        with pytest.raises(BabelforgeError) as caught:
            fetch_image(entry, tmp_path / "img", tmp_path, manifest=manifest)
    message = str(caught.value)
    assert f"has sha256 {hashlib.sha256(b'new bytes').hexdigest()}, manifest says {entry.sha256}" in message
    assert message.endswith("`babelforge pins --update --accept hub-dataset:WueNLP/mvl-sib` rewrites the manifest")
    assert not (tmp_path / "img").exists()


# --- the full profile over HTTP: the real babelforge.core.http.download on a loopback server ---


@pytest.fixture(scope="module")
def image_server(sample_set):
    """The generated images served over loopback HTTP, with a manifest of their URLs."""
    folder, _, entries = sample_set
    with serving(LoopbackServer(folder)) as httpd:
        manifest = folder.parent / f"{folder.name}-http" / "manifest.tsv"
        manifest.parent.mkdir()
        manifest.write_text(manifest_text([replace(e, url=httpd.url + e.url) for e in entries]), encoding="utf-8")
        yield httpd, manifest


def _run_full_profile(tmp_path: Path, manifest: Path, out_dir: Path) -> int:
    params = tmp_path / "params.yaml"
    params.write_text(
        yaml.safe_dump(
            {
                "profile": "full",
                "mvl_sib": {"images": {"manifest": str(manifest)}},
                "paths": {"mvl_sib_images": str(out_dir)},
            }
        ),
        encoding="utf-8",
    )
    return main(["mvl_sib_images", "--params", str(params)])


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.fixture(scope="module")
def downloaded(image_server, tmp_path_factory):
    """`babelforge mvl_sib_images` (full profile) over HTTP; the 4th image answers 503 once.

    Returns the output folder, the back-off delays and the requests of this run only: the server
    is shared by the module's tests, which fetch from it too, in whatever order they run."""
    from babelforge.core import http

    httpd, manifest = image_server
    delays: list[float] = []
    folder = tmp_path_factory.mktemp("downloaded")
    with pytest.MonkeyPatch.context() as patch:  # record the back-off instead of sleeping it
        patch.setattr(http, "backoff_delay", lambda retry, policy, rng=None: delays.append(retry) or 0.0)
        httpd.failures["entertainment-03.png"] = ["503"]
        first = len(httpd.requests)
        assert _run_full_profile(folder, manifest, folder / "images") == 0
        requests = list(httpd.requests[first:])
    return folder / "images", delays, requests


def test_full_profile_downloads_through_core_http(downloaded, image_server, sample_set, tmp_path):
    out_dir, delays, requests = downloaded
    httpd, _ = image_server

    def hits(path: str) -> list[dict]:
        return [headers for requested, headers in requests if requested == path]

    _, local_manifest, entries = sample_set
    local = build_images(local_manifest, tmp_path, per_topic=10, thumbnail_px=640, provenance_record={})
    assert sorted(p.name for p in out_dir.iterdir()) == ["images.parquet", "thumbnails"]
    assert _files(out_dir / "thumbnails") == _files(tmp_path / "thumbnails")  # byte-identical to local files
    table = read_table(out_dir / "images.parquet")
    assert table.thumbnail_sha256.tolist() == local.sort_values(["topic", "image_id"]).thumbnail_sha256.tolist()
    assert set(table.url) == {httpd.url + e.url for e in entries}
    # the transient 503 was retried once, every other image fetched in one request
    assert delays == [0] and len(hits("entertainment-03.png")) == 2
    assert all(len(hits(e.url)) == 1 for e in entries if e.image_id != "entertainment-03")
    assert hits(entries[0].url)[0]["User-Agent"].startswith("babelforge/")


def test_full_profile_refuses_other_bytes_and_keeps_the_previous_output(downloaded, image_server, tmp_path, capsys):
    httpd, manifest = image_server
    served = httpd.root / "geography-02.png"
    flipped = hashlib.sha256(bytes(b ^ 0xFF for b in served.read_bytes())).hexdigest()
    out_dir = tmp_path / "images"
    shutil.copytree(downloaded[0], out_dir)
    before = _files(out_dir)
    httpd.failures["geography-02.png"] = ["corrupt"]
    assert _run_full_profile(tmp_path, manifest, out_dir) == 1
    error = capsys.readouterr().err
    assert "manifest.tsv:14: image 'geography-02'" in error and f"has sha256 {flipped}" in error
    assert "refusing it (nothing kept)" in error
    assert _files(out_dir) == before  # the previous output folder, untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["images", "params.yaml"]  # no staging left over


def test_http_failure_names_the_manifest_line(image_server, sample_set, tmp_path):
    httpd, manifest = image_server
    entry = replace(sample_set[2][0], url=httpd.url + "absent.png", line=2)
    with pytest.raises(BabelforgeError, match=r"manifest.tsv:2: image 'entertainment-00': GET .*absent.png: HTTP 404"):
        fetch_image(entry, tmp_path / "x", tmp_path, manifest=manifest)
    assert list(tmp_path.iterdir()) == []


def test_manifest_validation(sample_set, tmp_path):
    _, manifest, entries = sample_set
    lines = manifest.read_text(encoding="utf-8").split("\n")
    cases = {
        "count": (lines[:5] + lines[6:], r"topic 'entertainment' has 9 images, 10 required"),
        "sha": (lines[:3] + [lines[3].rsplit("\t", 1)[0] + "\tABC"] + lines[4:], r"bad.tsv:4: sha256 'ABC'"),
        "dup": (
            lines[:3] + [lines[2]] + lines[4:],
            r"bad.tsv:4: image_id 'entertainment-01' appears twice \(first on line 3\)",
        ),
        "topic": (
            lines[:2] + [lines[2].replace("entertainment", "weather", 1)] + lines[3:],
            r"bad.tsv:3: topic 'weather'",
        ),
        "header": (["topic\tid"] + lines[1:], r"bad.tsv:1: header"),
    }
    for _name, (content, message) in cases.items():
        bad = tmp_path / "bad.tsv"
        bad.write_text("\n".join(content), encoding="utf-8")
        with pytest.raises(BabelforgeError, match=message):
            read_manifest(bad)


def test_shipped_full_manifest_fails_fast_until_curated():
    shipped = Path(__file__).resolve().parents[2] / "resources" / "mvl_sib_images.tsv"
    with pytest.raises(BabelforgeError, match="has 0 images, 10 required"):
        read_manifest(shipped)
