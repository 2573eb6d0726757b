import json

import pytest

from babelforge.captions.formats.table import read_caption_table
from babelforge.captions.formats.xtd import XTD_LANGUAGE_KEYS, read_xtd
from babelforge.captions.readers import read_captions
from babelforge.core.errors import BabelforgeError


def test_xtd_reader_gives_1000_english_captions_and_ten_reference_languages(xtd, xtd_path):
    raw = json.loads(xtd_path.read_text(encoding="utf-8"))
    assert xtd.source_lang == "eng_Latn"
    assert len(xtd.captions) == len(raw["images"]) == 1000
    first = xtd.captions[0]
    assert first["image"] == raw["images"][0]
    assert first["caption"] == raw["captions"]["en"][0][0]
    assert first["caption_id"] == raw["images"][0].rsplit(".", 1)[0]
    assert len({row["caption_id"] for row in xtd.captions}) == 1000
    langs = {lang for _, lang, _ in xtd.references}
    assert langs == {
        "deu_Latn",
        "spa_Latn",
        "fra_Latn",
        "ita_Latn",
        "jpn_Jpan",
        "kor_Hang",
        "pol_Latn",
        "rus_Cyrl",
        "tur_Latn",
        "zho_Hans",
    }
    japanese = {cid: text for cid, lang, text in xtd.references if lang == "jpn_Jpan"}
    assert japanese[first["caption_id"]] == raw["captions"]["jp"][0][0]


def test_xflickrco_uses_ja_and_id_codes(xtd_path, registry):
    data = read_xtd(xtd_path.parent / "xflickrco.json", "eng_Latn", registry)
    assert len(data.captions) == 2000
    assert {lang for _, lang, _ in data.references} >= {"jpn_Jpan", "ind_Latn", "zho_Hans"}


def test_every_xtd_code_maps_to_a_registry_key(registry):
    for code, key in XTD_LANGUAGE_KEYS.items():
        assert registry.get(key).key == key, code


def test_limit_keeps_references_of_kept_captions_only(xtd):
    small = xtd.limited(5)
    ids = {row["caption_id"] for row in small.captions}
    assert len(ids) == 5
    assert {cid for cid, _, _ in small.references} == ids
    assert len(small.references) == 50


def test_csv_extra_columns_are_carried_through_and_ref_columns_become_references(tmp_path, registry):
    path = tmp_path / "captions.csv"
    path.write_text(
        'id,image,caption,rating,ref_deu_Latn\na1,img1.jpg,"A dog, running",4.5,Ein Hund rennt\na2,img2.jpg,A cat,,\n',
        encoding="utf-8",
    )
    data = read_captions("table", path, "eng_Latn", registry)
    assert data.captions[0] == {
        "caption_id": "a1",
        "image": "img1.jpg",
        "caption": "A dog, running",
        "rating": "4.5",
        "ref_deu_Latn": "Ein Hund rennt",
    }
    assert data.references == [("a1", "deu_Latn", "Ein Hund rennt")]


def test_jsonl_keeps_typed_extra_values(tmp_path, registry):
    path = tmp_path / "captions.jsonl"
    path.write_text('{"id": 7, "image": "x.jpg", "caption": "two birds", "human_scores": [1, 3]}\n\n', encoding="utf-8")
    data = read_caption_table(path, "eng_Latn", registry)
    assert data.captions == [{"caption_id": "7", "image": "x.jpg", "caption": "two birds", "human_scores": [1, 3]}]


@pytest.mark.parametrize(
    "content, message",
    [
        ("id,image\n1,a.jpg\n", "missing column"),
        ("id,image,caption\n1,a.jpg,x\n1,b.jpg,y\n", r"bad.csv:3: an id that an earlier row has .*duplicate_id"),
        ("id,image,caption,ref_xxx_Latn\n1,a.jpg,x,y\n", "xxx_Latn"),
    ],
)
def test_bad_tables_fail_with_a_clear_error(tmp_path, registry, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BabelforgeError, match=message):
        read_captions("table", path, "eng_Latn", registry)


def test_a_repeated_id_is_found_blocks_apart_and_named_with_its_row(tmp_path, registry):
    """Ids are checked a block at a time against digests of every earlier block: a repeat
    9,000 rows later (three blocks on) names the id and the row of its second appearance."""
    path = tmp_path / "captions.csv"
    ids = [f"img{i}" for i in range(12000)]
    ids[9000] = "img17"
    path.write_text("id,image,caption\n" + "".join(f"{i},{i}.jpg,a caption\n" for i in ids), encoding="utf-8")
    with pytest.raises(BabelforgeError, match=r"captions.csv:9002: an id that an earlier row has .*'img17'"):
        read_captions("table", path, "eng_Latn", registry)


def test_a_byte_order_mark_opens_a_json_lines_file_only(tmp_path, registry):
    """A BOM before the first line is the file's, not the row's; the same bytes before a later
    line are that row's text, which is no JSON object."""
    from babelforge.captions.formats.jsonl import jsonl_rows

    path = tmp_path / "captions.jsonl"
    rows = [json.dumps({"id": i, "image": f"{i}.jpg", "caption": f"caption {i}"}).encode() for i in (1, 2)]
    path.write_bytes(b"\xef\xbb\xbf" + rows[0] + b"\n" + rows[1] + b"\n")
    assert [row["caption_id"] for row in read_caption_table(path, "eng_Latn", registry).captions] == ["1", "2"]
    path.write_bytes(rows[0] + b"\n\xef\xbb\xbf" + rows[1] + b"\n")
    found = [(number, getattr(row, "reason", "row")) for _, number, row in jsonl_rows(path)]
    assert found == [(1, "row"), (2, "bad_json")]


@pytest.mark.parametrize(
    ("values", "refused"),
    [
        ({"limit": 1, "max_bad_fraction": 1}, None),  # one caption, every row bad: the edges are allowed
        ({"limit": 0}, "captions.input.limit is 0"),
        ({"max_bad_fraction": 1.5}, "captions.input.max_bad_fraction is 1.5"),
    ],
)
def test_the_caption_input_settings_keep_their_ranges(values, refused):
    from babelforge.captions.input_config import InputConfig
    from babelforge.core.config import build

    if refused is None:
        assert build(InputConfig, values, "captions.input").limit == values["limit"]
    else:
        with pytest.raises(BabelforgeError, match=refused):
            build(InputConfig, values, "captions.input")


@pytest.mark.parametrize("image", ["", 5, b"a\xff.jpg"], ids=["empty", "number", "not-utf8"])
def test_an_xtd_image_name_that_is_no_file_name_stops_the_read(tmp_path, registry, image):
    path = tmp_path / "x.json"
    name = b'"a\xff.jpg"' if isinstance(image, bytes) else json.dumps(image).encode()
    path.write_bytes(b'{"images": [' + name + b'], "captions": {"en": [["a dog"]]}}')
    with pytest.raises(BabelforgeError, match="is not a file name"):
        read_xtd(path, "eng_Latn", registry)


def test_seen_ids_agree_with_a_set_over_many_blocks():
    """Every repeat is found (earlier in its block or blocks before), the first of each id kept."""
    import random

    from babelforge.captions.formats.seen_ids import SeenIds

    generator = random.Random(7)
    seen, reference = SeenIds(), set()
    for _ in range(40):
        block = [f"id{generator.randrange(10**9)}" for _ in range(generator.randrange(1, 300))]
        for _ in range(generator.randrange(3)):
            if reference or block:
                block.insert(generator.randrange(len(block) + 1), generator.choice(sorted(reference) or block))
        expected = [i for i, value in enumerate(block) if value in reference or value in block[:i]]
        assert seen.add(block) == expected
        reference.update(block)
    assert sum(len(run) for run in seen.runs) == len(reference)
    assert len(seen.runs) <= len(reference).bit_length()


def test_seen_ids_merge_runs_like_a_binary_counter():
    """Runs merge when one grows as long as the one before: 7 one-id blocks leave runs of 4, 2 and 1,
    the 8th merges them into one (the bound on the runs a lookup searches)."""
    from babelforge.captions.formats.seen_ids import SeenIds

    seen = SeenIds()
    for number in range(7):
        assert seen.add([f"id{number}"]) == []
    assert [len(run) for run in seen.runs] == [4, 2, 1]
    seen.add(["id7"])
    assert [len(run) for run in seen.runs] == [8]


def test_seen_ids_find_a_repeat_of_every_position_in_a_run():
    """A repeat is found wherever its digest sorts in an earlier run, the largest included."""
    from babelforge.captions.formats.seen_ids import SeenIds

    ids = [f"caption-{number}" for number in range(5)]
    seen = SeenIds()
    seen.add(ids)
    by_digest = [ids[i] for i in sorted(range(5), key=lambda i: SeenIds.digests([ids[i]])[0])]
    for value in by_digest:
        assert seen.add([value, "new-" + value]) == [0], value


def test_unknown_xtd_code_and_missing_source_language_are_errors(tmp_path, registry):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"images": ["a.jpg"], "captions": {"en": [["hi"]], "xx": [["?"]]}}))
    with pytest.raises(BabelforgeError, match="'xx'"):
        read_xtd(path, "eng_Latn", registry)
    path.write_text(json.dumps({"images": ["a.jpg"], "captions": {"de": [["hallo"]]}}))
    with pytest.raises(BabelforgeError, match="no captions in eng_Latn"):
        read_xtd(path, "eng_Latn", registry)


def test_xtd_keys_exist_in_the_project_registry():
    from babelforge.core.languages import registry

    project = registry()
    for code, key in XTD_LANGUAGE_KEYS.items():
        language = project.get(key)
        assert language.nllb and language.langid and language.scripts, (code, key)


def test_img2dataset_parquet_folders_stream_in_batches_and_skip_failed_downloads(tmp_path, registry, xtd):
    """img2dataset's layout (`key, caption, url, status`, one Parquet file per shard) read as a
    stream of bounded batches: ids from `key`, image from `url`, failed downloads left out."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from babelforge.captions.formats.caption_set import REFERENCES_COLUMN
    from babelforge.captions.input_config import InputConfig
    from babelforge.captions.readers import stream_captions

    texts = [row["caption"] for row in xtd.captions[:50]]
    folder = tmp_path / "cc3m"
    folder.mkdir()
    for part in range(2):
        rows = range(part * 25, part * 25 + 25)
        pq.write_table(
            pa.table(
                {
                    "key": [f"{i:09d}" for i in rows],
                    "caption": [texts[i] for i in rows],
                    "url": [f"https://images.example/{i}.jpg" for i in rows],
                    "status": ["failed_to_download" if i % 10 == 3 else "success" for i in rows],
                    "width": [256] * 25,
                }
            ),
            folder / f"{part:05d}.parquet",
        )
    config = InputConfig(format="img2dataset", path=str(folder), targets=["deu_Latn"])
    batches = list(stream_captions(config, registry, batch_rows=8))
    assert [batch.num_rows for batch in batches] == [8, 8, 8, 8, 8, 5]
    table = pa.concat_tables(batches)
    assert table.column_names == ["caption_id", "image", "caption", "status", "width", REFERENCES_COLUMN]
    assert table.column("caption_id").to_pylist()[:3] == ["000000000", "000000001", "000000002"]
    assert "000000003" not in table.column("caption_id").to_pylist()
    assert table.column("image")[0].as_py() == "https://images.example/0.jpg"
    limited = pa.concat_tables(
        stream_captions(InputConfig(format="img2dataset", path=str(folder), limit=12), registry, batch_rows=5)
    )
    assert limited.num_rows == 12


def test_streamed_tables_carry_their_references(tmp_path, registry, xtd, xtd_path):
    from babelforge.captions.formats.caption_set import REFERENCES_COLUMN
    from babelforge.captions.input_config import InputConfig
    from babelforge.captions.readers import stream_captions

    batches = list(stream_captions(InputConfig(path=str(xtd_path), limit=30), registry, batch_rows=16))
    assert [batch.num_rows for batch in batches] == [16, 14]
    first = batches[0].to_pylist()[0]
    expected = sorted((lang, text) for cid, lang, text in xtd.references if cid == first["caption_id"])
    assert sorted((ref["lang"], ref["text"]) for ref in first[REFERENCES_COLUMN]) == expected
