"""The CLI stages end to end on three real SIB-200 languages and the generated image set."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from babelforge.cli import main
from babelforge.core.io import read_json, read_table

LANGUAGES = "eng_Latn,ace_Arab,nqo_Nkoo"
CONFIGS = ["i2s_k1", "i2s_k3", "i2s_k5", "s2i_k1", "s2i_k3", "s2i_k5", "s2t_k1", "s2t_k3", "s2t_k5", "t2s_k1"]


def _write_params(folder: Path, sib_dir: Path, **images) -> Path:
    params = {
        "profile": "sample",
        "paths": {
            "mvl_sib": str(folder / "mvl_sib"),
            "mvl_sib_images": str(folder / "images"),
            "mvl_sib_reports": str(folder),
            "metrics": str(folder / "metrics"),
        },
        "mvl_sib": {"sib_dir": str(sib_dir), "languages": LANGUAGES.split(","), "images": images},
    }
    path = folder / "params.yaml"
    path.write_text(yaml.safe_dump(params), encoding="utf-8")
    return path


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory, sib_dir):
    folder = tmp_path_factory.mktemp("build")
    params = _write_params(folder, sib_dir)
    assert main(["mvl_sib_images", "--params", str(params)]) == 0
    assert main(["mvl_sib", "--params", str(params)]) == 0
    return folder, params


def test_images_stage_writes_verified_thumbnails(built):
    folder, _ = built
    images = read_table(folder / "images" / "images.parquet")
    assert len(images) == 70 and images.groupby("topic").size().tolist() == [10] * 7
    assert (images[["width", "height"]].max(axis=1) == 640).all()
    for row in images.itertuples():
        thumbnail = folder / "images" / "thumbnails" / row.file
        assert hashlib.sha256(thumbnail.read_bytes()).hexdigest() == row.thumbnail_sha256
    assert (folder / "images" / "generated" / "manifest.tsv").is_file()
    assert not (folder / "images" / ".fetch").exists()


def test_mvl_sib_stage_writes_every_config_and_language(built):
    folder, _ = built
    out = folder / "mvl_sib"
    assert sorted(p.name for p in out.iterdir() if p.is_dir() and p.name != "images") == CONFIGS
    assert len(list((out / "images").glob("*.jpg"))) == 70
    for config in CONFIGS:
        task = read_json(out / config / "task.json")
        assert task["config"] == config and "science/technology" in task["prompt"]
        for lang in LANGUAGES.split(","):
            table = read_table(out / config / f"{lang}.parquet")
            assert len(table) == 3012
    row = read_table(out / "i2s_k5" / "nqo_Nkoo.parquet").iloc[0]
    assert len(row["ref_image_ids"]) == 5 and len(row["option_sentences"]) == 4
    assert all((out / "images" / f"{image}.jpg").is_file() for image in row["ref_image_ids"])


def test_provenance_records_the_sources(built, sib_dir):
    from babelforge.core.io import read_provenance
    from babelforge.core.sources import read_sources
    from babelforge.mvl_sib.mvl_sib_stage import language_sha256

    folder, _ = built
    registry = read_sources()
    record = read_provenance(folder / "mvl_sib" / "s2t_k3" / "ace_Arab.parquet")
    assert record["build"] == {"profile": "sample", "models": "random tiny models (not for research use)"}
    # SIB-200 read in place from the mirror (not fetched): its path and content hash, which for the
    # untouched mirror is the registry's hash of the source
    assert record["sources"]["sib200"] == {
        "path": str(sib_dir),
        "sha256": registry["sib-200"].sha256,
        "language": "ace_Arab",
        "language_sha256": language_sha256(sib_dir, "ace_Arab"),
    }
    assert record["sources"]["images_manifest"]["path"] == "generated/manifest.tsv"
    shared = read_provenance(folder / "mvl_sib" / "instances.parquet")["sources"]
    assert shared["sib200"] == {"path": str(sib_dir), "sha256": registry["sib-200"].sha256}
    images = read_provenance(folder / "images" / "images.parquet")
    assert images["params"] == {
        "profile": "sample",
        "manifest": "resources/mvl_sib_images.tsv",
        "per_topic": 10,
        "thumbnail_px": 640,
        "sample_seed": 0,
    }


def test_rebuild_is_byte_identical(built, tmp_path, sib_dir):
    folder, _ = built
    params = _write_params(tmp_path, sib_dir)
    assert main(["mvl_sib_images", "--params", str(params)]) == 0
    assert main(["mvl_sib", "--params", str(params)]) == 0
    first, second = _digests(folder / "mvl_sib"), _digests(tmp_path / "mvl_sib")
    assert first.keys() == second.keys() and first == second


def test_check_passes_then_catches_a_damaged_file(built, capsys):
    folder, params = built
    assert main(["mvl_sib_check", "--params", str(params)]) == 0
    output = capsys.readouterr().out
    assert "3 languages × 10 task configs" in output and "753/753/753/753" in output
    report = read_json(folder / "check.json")
    assert report["languages"]["ace_Arab"]["s2i_k3"]["rows"] == 3012
    metrics = read_json(folder / "metrics" / "mvl_sib.json")  # headline only: no per-topic columns
    assert metrics["problems"] == 0 and metrics["languages"] == 3 and "topics_per_language" not in metrics
    assert metrics["profile"] == "sample"  # what the assembled MVL-SIB records

    import pyarrow.parquet as pq

    damaged = folder / "mvl_sib" / "t2s_k1" / "ace_Arab.parquet"
    original = damaged.read_bytes()
    try:
        pq.write_table(pq.read_table(damaged).slice(0, 3000), damaged)
        assert main(["mvl_sib_check", "--params", str(params)]) == 1
        output = capsys.readouterr().out
        assert "t2s_k1/ace_Arab: 3000 rows, expected 3012" in output
        assert "ace_Arab: configs 10" in output  # the language with a problem gets its own line
    finally:
        damaged.write_bytes(original)
    image = folder / "mvl_sib" / "images" / "travel-03.jpg"
    kept = image.read_bytes()
    try:
        image.unlink()
        assert main(["mvl_sib_check", "--params", str(params)]) == 1
        assert "referenced image file(s) missing" in capsys.readouterr().out
    finally:
        image.write_bytes(kept)


def test_checksum_mismatch_stops_the_stage_and_keeps_the_old_output(built, tmp_path, sib_dir, capsys):
    import shutil

    folder, _ = built
    source = tmp_path / "source"
    shutil.copytree(folder / "images" / "generated", source)
    lines = (source / "manifest.tsv").read_text(encoding="utf-8").split("\n")
    fields = lines[7].split("\t")
    fields[5] = "f" * 64  # one image no longer matches its recorded sha256
    lines[7] = "\t".join(fields)
    (source / "manifest.tsv").write_text("\n".join(lines), encoding="utf-8")
    params = _write_params(tmp_path, sib_dir, manifest=str(source / "manifest.tsv"))
    out = tmp_path / "images"
    out.mkdir()
    (out / "previous.txt").write_text("old build", encoding="utf-8")
    capsys.readouterr()
    assert main(["mvl_sib_images", "--params", str(params), "--profile", "full"]) == 1
    assert f"manifest.tsv:8: image '{fields[1]}'" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["previous.txt"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".images.")]  # no temporary left
