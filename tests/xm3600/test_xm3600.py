"""XM3600: the caption file's parser and checks, the fetch (plan, pins, mirror, sample skip), the build,
the card with its Croissant metadata (eval_retrieval on the built caption set: tests/eval/test_retrieval_xm3600.py).

The fixture is written by the tests (tests/xm3600/release_fixture.py), in the published format of captions.jsonl (one JSON object per line:
`image/key`, `image/locale`, and per language code an object of three parallel lists `caption`,
`caption/tokenized`, `caption/tokenized/lowercase`), packed as the release packs it (captions.zip,
images.tgz of `<key>.jpg`). Nothing of it is shipped as data.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from babelforge.cli import main
from babelforge.core.datasets import spec
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_json, read_provenance
from babelforge.core.languages import registry
from babelforge.xm3600.captions import LANGUAGES, caption_rows, caption_set, parse_line, parse_lines, validate
from tests.xm3600.release_fixture import (
    KEYS,
    build_release,
    fixture_record,
    fixture_text,
    write_mirror,
    write_params,
)


def scripts() -> dict[str, tuple[str, ...]]:
    return {code: registry().resolve(code).expected_scripts for code in LANGUAGES}


def test_a_line_of_the_published_format_parses():
    record = parse_line(json.dumps(fixture_record(1), ensure_ascii=False), 7)
    assert (record.key, record.locale, record.line) == (KEYS[1], "fil", 7)
    assert sorted(record.captions) == sorted(LANGUAGES)
    assert record.captions["bn"] == ("ছবি 1 0",)
    assert record.captions["de"] == ("Bild 1 0", "Bild 1 1")
    assert record.tokenized["de"] == ("Bild 1 0", "Bild 1 1")


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", r"f\.jsonl:3: not JSON"),
        ("[1, 2]", r"f\.jsonl:3: not a JSON object"),
        ('{"image/locale": "de"}', r"f\.jsonl:3: no image/key"),
        ('{"image/key": "a1"}', r"f\.jsonl:3: image a1: no image/locale"),
        ('{"image/key": "a1", "image/locale": "de", "de": ["x"]}', r"language 'de': not an object with a 'caption'"),
        ('{"image/key": "a1", "image/locale": "de", "de": {"caption": "x"}}', r"'caption' is not a list of strings"),
        (
            '{"image/key": "a1", "image/locale": "de", "de": {"caption": ["x", "y"], "caption/tokenized": ["x"]}}',
            r"2 captions but 1 tokenized",
        ),
    ],
)
def test_a_line_of_another_shape_stops_naming_file_and_line(line, message):
    with pytest.raises(BabelforgeError, match=message):
        parse_line(line, 3, "f.jsonl")


def test_the_fixture_validates_with_its_counts():
    records = parse_lines(fixture_text([fixture_record(i) for i in range(4)]).splitlines())
    found = validate(records, scripts())
    assert found.problems == []
    assert (found.images, len(found.languages), found.captions) == (4, 36, 4 * (35 * 2 + 1))
    assert found.captions_per_language["bn"] == 4 and found.captions_per_language["zh"] == 8
    assert found.images_missing_language == {} and found.script_mismatches == {} and found.duplicate_ids == []


def test_validation_counts_each_kind_of_problem():
    records = [fixture_record(i) for i in range(4)]
    del records[0]["mi"]  # an image without Maori captions
    records[1]["sw"]["caption"] = ["", "picha"]  # an empty caption
    records[1]["sw"]["caption/tokenized"] = ["", "picha"]
    records[2]["ru"]["caption"] = ["a photo in Latin letters", "another one"]  # Russian not in Cyrillic
    records[2]["ru"]["caption/tokenized"] = records[2]["ru"]["caption"]
    records[3]["image/key"] = KEYS[2]  # a duplicate id
    records[3]["image/locale"] = "xx"
    records[3]["yy"] = {"caption": ["?"]}
    found = validate(parse_lines(fixture_text(records).splitlines()), scripts(), max_script_mismatch=0.3)
    assert found.images_missing_language == {"mi": 1}
    assert found.empty_captions == 1
    assert found.script_mismatches == {"ru": 2}
    assert found.duplicate_ids == [KEYS[2]]
    assert (found.unknown_locales, found.unknown_languages) == (["xx"], ["yy"])
    assert found.problems == [
        f"1 image ids appear twice (first: {KEYS[2]})",
        "image locales that are no XM3600 language: xx",
        "captions in languages that are no XM3600 language: yy",
        "1 images have no mi caption",
        "1 captions are empty",
    ]  # 2 of 8 Russian captions (25 %) are within the allowed 30 %
    assert validate(parse_lines(fixture_text(records[2:3]).splitlines()), scripts()).problems == [
        "2 of 2 ru captions are mostly in a script the language is not written in (more than 5%)"
    ]


def test_rows_and_caption_set_of_the_fixture():
    records = parse_lines(fixture_text([fixture_record(i) for i in (2, 0)]).splitlines())
    rows = caption_rows(records, lambda code: registry().resolve(code).key)
    assert len(rows) == 2 * 71
    assert {row["lang"] for row in rows if row["code"] in ("fil", "quz", "no", "zh")} == {
        "fil_Latn",
        "quz_Latn",
        "nob_Latn",
        "zho_Hans",
    }
    first = next(row for row in rows if row["code"] == "ja" and row["image_id"] == KEYS[2])
    assert first == {
        "image_id": KEYS[2],
        "image_locale": "ja",
        "code": "ja",
        "lang": "jpn_Jpan",
        "caption_index": 0,
        "caption": "しゃしん写真 2 0",
        "caption_tokenized": "しゃしん写真 2 0",
    }
    data = caption_set(records)
    assert data["images"] == [KEYS[0] + ".jpg", KEYS[2] + ".jpg"]  # by key, not file order
    assert data["captions"]["bn"] == [["ছবি 0 0"], ["ছবি 2 0"]]
    assert list(data["captions"]) == list(LANGUAGES)


# --- the stages on the fixture ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The fixture fetched from a local mirror with its pins and built: (root, params, pins)."""
    root = tmp_path_factory.mktemp("xm3600")
    params, pins = build_release(root)
    return root, params, pins


def test_the_build_writes_versioned_rows_and_the_caption_set(built):
    root, _, pins = built
    release = read_json(root / "release" / "fetch.json")
    assert [(f["name"], f["sha256"]) for f in release["files"]] == sorted(pins.items())
    assert release["images"] == 4
    table = pd.read_parquet(root / "xm3600" / "captions.parquet")
    assert len(table) == 4 * 71 and table["lang"].nunique() == 36 and table["image_id"].nunique() == 4
    record = read_provenance(root / "xm3600" / "captions.parquet")
    assert record["stage"] == "xm3600" and record["build"]["profile"] == "full"
    assert [f["sha256"] for f in record["sources"]["xm3600"]["files"]] == [pins["captions.zip"], pins["images.tgz"]]
    validation = read_json(root / "xm3600" / "validation.json")
    assert (validation["images"], validation["captions"], validation["problems"]) == (4, 284, [])
    data = read_json(root / "xm3600" / "xm3600.json")
    assert data["images"] == [key + ".jpg" for key in KEYS]
    assert all((root / "release" / "images" / name).is_file() for name in data["images"])


def test_a_rerun_fetches_nothing_and_a_changed_archive_is_refused(built, tmp_path, capsys):
    root, params, pins = built
    assert main(["xm3600_fetch", "--params", str(params)]) == 0
    assert "(0 fetched, 2 unchanged)" in capsys.readouterr().err
    other = write_params(tmp_path, "full", {**pins, "images.tgz": "0" * 64}, root / "mirror")
    assert main(["xm3600_fetch", "--params", str(other)]) == 1
    assert (
        f"has sha256 {pins['images.tgz']}, expected {'0' * 64}; not the pinned release file; nothing kept"
        in capsys.readouterr().err
    )
    assert not (tmp_path / "release" / "images.tgz").exists() and not (tmp_path / "release" / "fetch.json").exists()


def test_unknown_pins_are_planned_plainly_and_refused(tmp_path, capsys):
    params = write_params(tmp_path, "full")
    assert main(["xm3600_fetch", "--params", str(params), "--plan"]) == 0
    plan = capsys.readouterr().out
    assert "captions.zip    17 MB  sha256 UNKNOWN (not pinned: set xm3600_fetch.captions_sha256)" in plan
    assert "images.tgz     302 MB  sha256 UNKNOWN (not pinned: set xm3600_fetch.images_sha256)" in plan
    assert "from https://open-images-dataset.s3.amazonaws.com/crossmodal-3600/images.tgz" in plan
    assert main(["xm3600_fetch", "--params", str(params)]) == 1
    assert "captions.zip, images.tgz not pinned" in capsys.readouterr().err
    assert not (tmp_path / "release").exists()


def test_the_sample_profile_skips_with_one_line_each(tmp_path, capsys):
    params = write_params(tmp_path, "sample")
    assert main(["xm3600_fetch", "--params", str(params)]) == 0
    assert main(["xm3600", "--params", str(params)]) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("xm3600_fetch: skipped (sample profile): the source mirror")
    assert lines[1].startswith("xm3600: skipped (sample profile): nothing fetched")
    assert sorted(p.name for p in (tmp_path / "xm3600").iterdir()) == ["skipped.json"]
    # its card says so, and publish refuses it
    assert main(["card", "xm3600", "--params", str(params)]) == 0
    assert sorted(p.name for p in (tmp_path / "hub" / "xm3600").iterdir()) == ["SKIPPED.md"]
    assert main(["publish", "xm3600", "--repo", "org/xm3600", "--dry-run", "--params", str(params)]) == 1


def test_a_missing_language_stops_the_build_writing_nothing(tmp_path, capsys):
    records = [fixture_record(i) for i in range(2)]
    del records[1]["te"]
    pins = write_mirror(tmp_path / "mirror", records)
    params = write_params(tmp_path, "full", pins, tmp_path / "mirror")
    assert main(["xm3600_fetch", "--params", str(params)]) == 0
    assert main(["xm3600", "--params", str(params)]) == 1
    assert "1 images have no te caption" in capsys.readouterr().err
    assert not (tmp_path / "xm3600").exists()


def test_the_card_has_a_config_per_language_both_licences_and_valid_croissant(built):
    from babelforge.core.stages import Paths
    from babelforge.publish.card import validate_card
    from babelforge.publish.card_stage import build_card

    root, _, _ = built
    paths = Paths(xm3600=str(root / "xm3600"), hub=str(root / "hub"), audit=str(root / "audit"))
    folder = build_card(spec("xm3600"), paths, registry())
    assert validate_card(folder) == []
    readme = (folder / "README.md").read_text(encoding="utf-8")
    metadata = yaml.safe_load(readme.split("---")[1])
    configs = {config["config_name"] for config in metadata["configs"]}
    assert len(configs) == 36 and {"fil_Latn", "quz_Latn", "zho_Hans"} <= configs
    assert "CC BY 4.0 (captions, by Google LLC)" in readme and "CC BY 2.0 (Open Images photographs" in readme
    assert "Crossmodal-3600: A Massively Multilingual Multimodal Evaluation Dataset" in readme
    german = pd.read_parquet(folder / "data" / "deu_Latn" / "test.parquet")
    assert list(german.columns) == ["image_id", "image_locale", "captions", "captions_tokenized"]
    assert len(german) == 4 and list(german.loc[0, "captions"]) == ["Bild 0 0", "Bild 0 1"]
    croissant = json.loads((folder / "croissant.json").read_text(encoding="utf-8"))
    assert "captions: CC BY 4.0" in croissant["rai:dataCollectionRawData"]
    assert "images: CC BY 2.0" in croissant["rai:dataCollectionRawData"]
    assert croissant["rai:dataCollection"].startswith("Human-written captions of 3,600")
    assert any("images are not part of this dataset" in item for item in croissant["rai:dataLimitations"])
    assert "@inproceedings{thapliyal-etal-2022-xm3600" in croissant["citeAs"]
    import mlcroissant as mlc

    loaded = mlc.Dataset(jsonld=str(folder / "croissant.json"))  # raises on a validation error
    assert not loaded.metadata.ctx.issues.errors
