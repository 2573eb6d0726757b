"""XM3600: the caption file's parser and checks, the fetch (plan, pins, mirror, sample skip), the build,
the card with its Croissant metadata (eval_retrieval on the built caption set: tests/eval/test_retrieval_xm3600.py).

The fixture is written by the tests (tests/xm3600/release_fixture.py), in the published format of captions.jsonl (one JSON object per line:
`image/key`, `image/locale`, and per language code an object of three parallel lists `caption`,
`caption/tokenized`, `caption/tokenized/lowercase`), packed as the release packs it (captions.zip,
images.tgz of `<key>.jpg`), beside image_attributions.csv with the published header. Nothing of it is
shipped as data; its sha256 are its own, so the tests pin them in their params.yaml.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

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
    AUTHORS,
    CC_BY_2,
    KEYS,
    TITLES,
    attribution_row,
    attributions_text,
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
        "image locales that are no XM3600 language: 'xx'",
        "captions in languages that are no XM3600 language: 'yy'",
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
    assert [(f["name"], f["sha256"]) for f in release["files"]] == list(pins.items())
    assert [f["name"] for f in release["files"]] == ["captions.zip", "images.tgz", "image_attributions.csv"]
    assert release["images"] == 4
    # the attributions are kept as published, beside the unpacked archives
    assert (root / "release" / "image_attributions.csv").read_bytes() == (
        root / "mirror" / "xm3600" / "image_attributions.csv"
    ).read_bytes()
    table = pd.read_parquet(root / "xm3600" / "captions.parquet")
    assert len(table) == 4 * 71 and table["lang"].nunique() == 36 and table["image_id"].nunique() == 4
    record = read_provenance(root / "xm3600" / "captions.parquet")
    assert record["stage"] == "xm3600" and record["build"]["profile"] == "full"
    assert [f["sha256"] for f in record["sources"]["xm3600"]["files"]] == list(pins.values())
    # each caption row carries its image's attribution, from the release's image_attributions.csv
    assert list(table.columns) == [
        "image_id", "image_locale", "code", "lang", "caption_index", "caption", "caption_tokenized",
        "image_author", "image_licence", "image_landing_url", "image_title",
    ]  # fmt: skip
    per_image = table.drop_duplicates("image_id").set_index("image_id")
    for index, key in enumerate(KEYS):
        row = attribution_row(index, key)
        assert per_image.loc[key, "image_author"] == AUTHORS[index] == row["Author"]
        assert per_image.loc[key, "image_licence"] == CC_BY_2
        assert per_image.loc[key, "image_landing_url"] == row["OriginalLandingURL"]
        assert per_image.loc[key, "image_title"] == TITLES[index]
    assert table.groupby("image_id")["image_author"].nunique().eq(1).all()
    assert table["image_author"].notna().all() and table["image_licence"].notna().all()
    validation = read_json(root / "xm3600" / "validation.json")
    assert (validation["images"], validation["captions"], validation["problems"]) == (4, 284, [])
    data = read_json(root / "xm3600" / "xm3600.json")
    assert data["images"] == [key + ".jpg" for key in KEYS]
    assert all((root / "release" / "images" / name).is_file() for name in data["images"])


def test_a_rerun_fetches_nothing_and_a_changed_archive_is_refused(built, tmp_path, capsys):
    root, params, pins = built
    assert main(["xm3600_fetch", "--params", str(params)]) == 0
    assert "(0 fetched, 3 unchanged)" in capsys.readouterr().err
    (root / "release" / "image_attributions.csv").unlink()
    assert main(["xm3600_fetch", "--params", str(params)]) == 0
    assert "(1 fetched, 2 unchanged)" in capsys.readouterr().err
    other = write_params(tmp_path, "full", {**pins, "images.tgz": "0" * 64}, root / "mirror")
    assert main(["xm3600_fetch", "--params", str(other)]) == 1
    assert (
        f"xm3600/images.tgz: sha256 {pins['images.tgz']} from {root / 'mirror' / 'xm3600' / 'images.tgz'}, but "
        f"params.yaml xm3600_fetch.images_sha256 pins {'0' * 64}; nothing was kept" in capsys.readouterr().err
    )
    assert not (tmp_path / "release" / "images.tgz").exists() and not (tmp_path / "release" / "fetch.json").exists()


def test_unknown_pins_are_planned_plainly_and_refused(tmp_path, capsys):
    params = write_params(tmp_path, "full", {"captions.zip": None, "images.tgz": None})
    assert main(["xm3600_fetch", "--params", str(params), "--plan"]) == 0
    plan = capsys.readouterr().out
    assert "captions.zip             17 MB  sha256 UNKNOWN (not pinned: set xm3600_fetch.captions_sha256)" in plan
    assert "images.tgz              302 MB  sha256 UNKNOWN (not pinned: set xm3600_fetch.images_sha256)" in plan
    assert f"image_attributions.csv  1.3 MB  sha256 {ATTRIBUTIONS_SHA256}" in plan
    assert "  1 of 3 pinned (the official page publishes no checksums; " in plan
    assert "2 of 3 pins UNKNOWN" in plan and "(xm3600_fetch.captions_sha256, xm3600_fetch.images_sha256)" in plan
    assert "from https://open-images-dataset.s3.amazonaws.com/crossmodal-3600/images.tgz" in plan
    assert main(["xm3600_fetch", "--params", str(params)]) == 1
    assert "captions.zip, images.tgz not pinned" in capsys.readouterr().err
    assert not (tmp_path / "release").exists()


# The three pins as a public repository that downloads and verifies the release publishes them.
REAL_PINS = {
    "captions.zip": "7964f969d39319a96769499b199042015754f8d5607b6aad2d1c2c2e55f5e562",
    "images.tgz": "ba57c58d7f7a35d95315157b609ca280d55ba10a107026f67d2e98371e221188",
    "image_attributions.csv": "288de413d25e9c70dadfd42ee59256aa1082673e615d0eda02c3875fe2b36ecd",
}
ATTRIBUTIONS_SHA256 = REAL_PINS["image_attributions.csv"]


@pytest.mark.parametrize("params_file", ["fixture", "project"])
def test_the_default_params_pin_all_three_files(params_file, tmp_path, capsys):
    """No --set: the settings' defaults (a params.yaml without the keys) and the project's generated
    params.yaml both pin the three files to the published digests."""
    if params_file == "fixture":
        params = write_params(tmp_path, "sample")
    else:
        params = tmp_path / "params.yaml"
        params.write_text((Path(__file__).parents[2] / "params.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["xm3600_fetch", "--plan", "--profile", "full", "--params", str(params)]) == 0
    plan = capsys.readouterr().out
    assert plan.startswith("xm3600_fetch plan: 3 files of the official XM3600 release\n")
    for name, sha in REAL_PINS.items():
        assert f"{name:<22} " in plan and f"sha256 {sha}\n" in plan
    assert "  3 of 3 pinned (" in plan and "UNKNOWN" not in plan
    assert "from https://google.github.io/crossmodal-3600/web-data/image_attributions.csv" in plan
    assert not (tmp_path / "release").exists()


def tampered_line(name: str, pinned: str, actual: str, origin: str) -> str:
    """The one line a refused file gets, written out here (not built by the code under test)."""
    key = {"captions.zip": "captions", "images.tgz": "images", "image_attributions.csv": "attributions"}[name]
    return (
        f"babelforge xm3600_fetch: error: xm3600/{name}: sha256 {actual} from {origin}, but params.yaml "
        f"xm3600_fetch.{key}_sha256 pins {pinned}; nothing was kept (upstream changed or the copy is corrupt): "
        f"check the new file, then accept it with `babelforge pins --update --accept xm3600/{name}`"
    )


@pytest.mark.parametrize("name", ["captions.zip", "images.tgz", "image_attributions.csv"])
@pytest.mark.parametrize("route", ["mirror", "mirror_url"])
def test_a_tampered_file_on_a_mirror_is_refused_in_one_line(name, route, tmp_path, capsys):
    from tests.loopback import LoopbackServer, serving

    records = [fixture_record(i) for i in range(2)]
    pins = write_mirror(tmp_path / "mirror", records)
    tampered = tmp_path / "mirror" / "xm3600" / name
    tampered.write_bytes(tampered.read_bytes() + b"\0")
    actual = hashlib.sha256(tampered.read_bytes()).hexdigest()
    with serving(LoopbackServer(tmp_path / "mirror")) as server:
        if route == "mirror":
            params, origin = write_params(tmp_path, "full", pins, tmp_path / "mirror"), str(tampered)
        else:
            # mirror_url wins over a local mirror (here one that has no copy at all)
            params = write_params(tmp_path, "full", pins, tmp_path / "elsewhere", mirror_url=server.url)
            origin = f"{server.url}xm3600/{name}"
        assert main(["xm3600_fetch", "--params", str(params)]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert errors == [tampered_line(name, pins[name], actual, origin)]
    release = tmp_path / "release"
    assert not (release / name).exists() and not (release / f"{name}.part").exists()
    assert not (release / "fetch.json").exists() and not (release / "captions.jsonl").exists()
    assert not (release / "images").exists()


def test_a_refused_file_leaves_a_built_release_as_it_was(tmp_path):
    """Run as a user would (a subprocess): a release fetched before, then a pin whose file the mirror does not
    have (a changed upstream): refused in one line, and the last good release is left byte for byte."""
    import subprocess
    import sys

    params, pins = build_release(tmp_path, images=2)
    release = tmp_path / "release"

    def snapshot() -> dict[str, bytes]:
        return {str(path.relative_to(release)): path.read_bytes() for path in release.rglob("*") if path.is_file()}

    before = snapshot()
    assert "fetch.json" in before and "image_attributions.csv" in before
    changed = tmp_path / "mirror" / "xm3600" / "image_attributions.csv"
    changed.write_text(changed.read_text(encoding="utf-8").replace("Ana ", "Ann "), encoding="utf-8")
    new_pin = hashlib.sha256(b"the bytes someone checked").hexdigest()
    params = write_params(tmp_path, "full", {**pins, "image_attributions.csv": new_pin}, tmp_path / "mirror")
    done = subprocess.run(
        [sys.executable, "-m", "babelforge.cli", "xm3600_fetch", "--params", str(params)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    actual = hashlib.sha256(changed.read_bytes()).hexdigest()
    line = tampered_line("image_attributions.csv", new_pin, actual, str(changed))
    assert done.stderr.strip().splitlines() == [line]
    assert snapshot() == before  # the stage's outputs are put back: the last good release, its fetch.json


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


def fetched(tmp_path, attributions: str, images: int = 2):
    """A release whose image_attributions.csv is `attributions`, fetched with its pins: params.yaml."""
    pins = write_mirror(tmp_path / "mirror", [fixture_record(i) for i in range(images)], attributions)
    params = write_params(tmp_path, "full", pins, tmp_path / "mirror")
    assert main(["xm3600_fetch", "--params", str(params)]) == 0
    return params


def build_error(params, capsys) -> str:
    """The one line `babelforge xm3600` stops with (and that it wrote nothing)."""
    capsys.readouterr()
    assert main(["xm3600", "--params", str(params)]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("babelforge xm3600: error: ")
    assert not (Path(params).parent / "xm3600").exists()
    return lines[0].removeprefix("babelforge xm3600: error: ")


def test_an_image_without_an_attribution_row_stops_the_build_naming_it(tmp_path, capsys):
    rows = [attribution_row(0, KEYS[0]), attribution_row(2, KEYS[2])]  # none for KEYS[1]
    params = fetched(tmp_path, attributions_text(rows))
    path = tmp_path / "release" / "image_attributions.csv"
    assert build_error(params, capsys) == (
        f"xm3600: image {KEYS[1]} has no row in {path}: its author and licence, which CC BY 2.0 requires "
        "to be given with it, are unknown; nothing was written"
    )


def test_every_image_without_an_attribution_row_is_counted(tmp_path, capsys):
    params = fetched(tmp_path, attributions_text([attribution_row(0, KEYS[0])]), images=3)
    assert build_error(params, capsys).startswith(f"xm3600: image {KEYS[1]} (and 1 more) has no row in ")


def test_a_pin_that_is_no_sha256_is_refused_naming_its_setting(tmp_path, capsys):
    params = write_params(tmp_path, "full", {"images.tgz": "ba57c58d"}, tmp_path / "mirror")
    assert main(["xm3600_fetch", "--params", str(params)]) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        "babelforge xm3600_fetch: error: xm3600_fetch: xm3600_fetch.images_sha256 is 'ba57c58d', not a sha256 "
        "(64 lower-case hex digits)"
    ]
    assert not (tmp_path / "release").exists()


def test_the_attributions_header_is_read_tolerantly_and_its_required_columns_checked(tmp_path, capsys):
    rows = [attribution_row(i, KEYS[i]) for i in range(2)]
    lower = [{key.lower(): value for key, value in row.items()} for row in rows]
    # other letter case, another column order, no optional columns, an extra one: read all the same
    header = ("license", "author", "extra", "imageid")
    params = fetched(tmp_path / "a", attributions_text(lower, header))
    assert main(["xm3600", "--params", str(params)]) == 0
    table = pd.read_parquet(tmp_path / "a" / "xm3600" / "captions.parquet")
    first = table[table["image_id"] == KEYS[1]].iloc[0]
    assert (first["image_author"], first["image_licence"]) == (AUTHORS[1], CC_BY_2)
    assert first["image_landing_url"] is None and first["image_title"] is None
    # without an Author column nothing can be attributed
    params = fetched(tmp_path / "b", attributions_text(rows, ("ImageID", "License", "Title")))
    path = tmp_path / "b" / "release" / "image_attributions.csv"
    assert build_error(params, capsys) == (
        f"{path}:1: no Author column (the header has ImageID, License, Title); ImageID, Author, License are required"
    )


@pytest.mark.parametrize(
    "author, problem",
    [
        ("Ana\x00Tuiasosopo", "holds the control character U+0000"),
        ("Ana \u202eosoposaiuT", "holds the bidirectional control U+202E"),
        ("Ana\nTuiasosopo", "holds a line break (U+000A)"),
        ("", "empty Author"),
        ("A" * 501, "Author 'AAAA"),
    ],
)
def test_an_attribution_field_the_typed_text_rule_refuses_stops_the_build(author, problem, tmp_path, capsys):
    rows = [attribution_row(i, KEYS[i]) for i in range(2)]
    rows[1]["Author"] = author
    params = fetched(tmp_path, attributions_text(rows))
    path = tmp_path / "release" / "image_attributions.csv"
    line = build_error(params, capsys)
    assert line.startswith(f"{path}:3: ") and problem in line and f"(image {KEYS[1]})" in line
    if len(author) > 500:
        assert "has 501 characters; at most 500" in line


def test_a_field_of_500_characters_is_kept(tmp_path):
    rows = [attribution_row(i, KEYS[i]) for i in range(2)]
    rows[0]["Title"] = "T" * 500
    params = fetched(tmp_path, attributions_text(rows))
    assert main(["xm3600", "--params", str(params)]) == 0
    table = pd.read_parquet(tmp_path / "xm3600" / "captions.parquet")
    assert table.loc[table["image_id"] == KEYS[0], "image_title"].iloc[0] == "T" * 500


def test_an_image_given_twice_in_the_attributions_stops_the_build(tmp_path, capsys):
    rows = [attribution_row(0, KEYS[0]), attribution_row(1, KEYS[1]), attribution_row(2, KEYS[1])]
    params = fetched(tmp_path, attributions_text(rows))
    path = tmp_path / "release" / "image_attributions.csv"
    assert build_error(params, capsys) == f"{path}:4: image {KEYS[1]} has a row already (line 3)"


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
    # how attribution is given: in the licences table, the summary and the limitations
    assert "each row gives its image's author, licence and page" in readme
    assert "`image_author`, `image_licence` (a licence URL, CC BY 2.0)" in readme
    assert "each row carries its image's author and licence (`image_author`, `image_licence`" in readme
    assert "Crossmodal-3600: A Massively Multilingual Multimodal Evaluation Dataset" in readme
    german = pd.read_parquet(folder / "data" / "deu_Latn" / "test.parquet")
    assert list(german.columns) == [
        "image_id", "image_locale", "captions", "captions_tokenized",
        "image_author", "image_licence", "image_landing_url", "image_title",
    ]  # fmt: skip
    assert len(german) == 4 and list(german.loc[0, "captions"]) == ["Bild 0 0", "Bild 0 1"]
    # each image's author and licence beside its id, in every language's config
    for config in ("deu_Latn", "jpn_Jpan", "quz_Latn"):
        rows = pd.read_parquet(folder / "data" / config / "test.parquet")
        assert list(zip(rows["image_id"], rows["image_author"], rows["image_licence"])) == [
            (key, AUTHORS[index], CC_BY_2) for index, key in enumerate(KEYS)
        ]
    assert german.loc[1, "image_author"] == 'Zoë "Z" Müller, Jr.' and german.loc[2, "image_title"] == "さくら"
    croissant = json.loads((folder / "croissant.json").read_text(encoding="utf-8"))
    assert "captions: CC BY 4.0" in croissant["rai:dataCollectionRawData"]
    assert "images: CC BY 2.0" in croissant["rai:dataCollectionRawData"]
    assert croissant["rai:dataCollection"].startswith("Human-written captions of 3,600")
    assert any("images are not part of this dataset" in item for item in croissant["rai:dataLimitations"])
    assert "@inproceedings{thapliyal-etal-2022-xm3600" in croissant["citeAs"]
    fields = {field["name"] for records in croissant["recordSet"] for field in records.get("field", [])}
    assert {"image_id", "image_author", "image_licence", "image_landing_url"} <= fields
    import mlcroissant as mlc

    loaded = mlc.Dataset(jsonld=str(folder / "croissant.json"))  # raises on a validation error
    assert not loaded.metadata.ctx.issues.errors


def test_a_card_made_from_captions_without_attributions_says_so(built, tmp_path):
    """captions.parquet built before the rows carried attributions: the card says they are missing."""
    import shutil

    from babelforge.core.io import write_table
    from babelforge.core.stages import Paths
    from babelforge.publish.card_stage import build_card

    root, _, _ = built
    shutil.copytree(root / "xm3600", tmp_path / "xm3600")
    path = tmp_path / "xm3600" / "captions.parquet"
    old = pd.read_parquet(path).drop(columns=["image_author", "image_licence", "image_landing_url", "image_title"])
    write_table(old, path, provenance=read_provenance(path))
    paths = Paths(xm3600=str(tmp_path / "xm3600"), hub=str(tmp_path / "hub"), audit=str(tmp_path / "audit"))
    readme = (build_card(spec("xm3600"), paths, registry()) / "README.md").read_text(encoding="utf-8")
    assert (
        "This build's rows carry no image_author, image_licence, image_landing_url, image_title "
        f"({path} was built before"
    ) in readme
    paths = Paths(xm3600=str(root / "xm3600"), hub=str(tmp_path / "hub2"), audit=str(tmp_path / "audit"))
    readme = (build_card(spec("xm3600"), paths, registry()) / "README.md").read_text(encoding="utf-8")
    assert "This build's rows carry no" not in readme  # the fixture's rows carry them


def test_a_language_at_exactly_the_script_mismatch_limit_passes():
    """2 of 8 Russian captions (25 %) in Latin letters: within a 25 % limit, past a 24 % one."""
    records = [fixture_record(i) for i in range(4)]
    records[2]["ru"]["caption"] = ["a photo in Latin letters", "another one"]
    records[2]["ru"]["caption/tokenized"] = records[2]["ru"]["caption"]
    parsed = parse_lines(fixture_text(records).splitlines())
    at_limit = validate(parsed, scripts(), max_script_mismatch=0.25)
    assert at_limit.script_mismatches == {"ru": 2} and at_limit.captions_per_language["ru"] == 8
    assert at_limit.problems == []
    assert validate(parsed, scripts(), max_script_mismatch=0.24).problems == [
        "2 of 8 ru captions are mostly in a script the language is not written in (more than 24%)"
    ]
