"""The bad-row policy in every corner of the caption readers: a systemic cause (a file in Latin-1,
gzip bytes named .jsonl) stops within the first shard with the cause named; JSONL rows without a
key or with a value of another type, an XTD caption that is null, a Parquet file cut off are rows
or one line, never a traceback; a limit counts what it took. Fuzzed per reader: whatever bytes a
row holds, the job finishes and kept + quarantined = read.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from babelforge.captions.formats.xtd import read_xtd
from babelforge.captions.input_config import InputConfig
from babelforge.captions.readers import stream_captions
from babelforge.core import shards
from babelforge.core.bad_rows import BadRowPolicy, Quarantine, text_problem
from babelforge.core.errors import BabelforgeError

from .test_stages import stub_for, translate, write_params

SKIP_ALL = BadRowPolicy("skip", 1.0)
ACCENTED = ["café", "naïve", "jalapeño", "façade", "crème brûlée"]


def read(path: Path, registry, policy=SKIP_ALL, fmt="table", **config):
    """(rows handed on, quarantine) of stream_captions over `path`."""
    quarantine = Quarantine(policy, "captions")
    rows = []
    for table in stream_captions(InputConfig(format=fmt, path=str(path), **config), registry, 1000, quarantine):
        rows += table.select(["caption_id", "image", "caption"]).to_pylist()
    return rows, quarantine


def latin1_csv(path: Path, captions: list[str], rows: int) -> None:
    """`rows` real captions saved as cp1252, two rows in five with an accented word (bytes that are
    not UTF-8): the encoding mistake the issue met (20,207 of 50,000 rows bad)."""
    with path.open("w", encoding="cp1252", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "image", "caption"])
        for n in range(rows):
            caption = captions[n % len(captions)]
            writer.writerow([f"c{n}", f"{n}.jpg", f"{caption} {ACCENTED[n % 5]}" if n % 5 < 2 else caption])


def test_a_latin1_input_stops_within_its_first_shard_naming_the_encoding(tmp_path, registry, xtd):
    path = tmp_path / "captions.csv"
    latin1_csv(path, [row["caption"] for row in xtd.captions], 50_000)
    quarantine = Quarantine(InputConfig().policy, "captions")  # the default: skip, max 0.01
    handed = 0
    with pytest.raises(BabelforgeError) as stop:
        for table in stream_captions(InputConfig(format="table", path=str(path)), registry, 1000, quarantine):
            handed += table.num_rows
    message = str(stop.value)
    assert "\n" not in message and "of the first 1001 captions read are bad (invalid_utf8 " in message
    assert "looks like Latin-1/cp1252" in message and "iconv" in message
    # stopped after the minimum sample: 1,001 of 50,000 rows read, not one shard's worth handed on
    assert handed == 0 and quarantine.rows == 1001


def test_the_early_stop_wants_twice_the_share_from_the_minimum_sample_on():
    """Bad rows clustered near the start (1.5 % of the first 1,000, 0.5 % overall) do not stop a job
    the end-of-input check passes; over twice the share does, as soon as the sample is read."""
    from babelforge.core.bad_rows import BadRow

    def quarantine_with_bad_first(bad: int, rows: int) -> Quarantine:
        quarantine = Quarantine(BadRowPolicy("skip", 0.01), "captions")
        for line in range(rows):
            if line < bad:
                quarantine.add(BadRow("c.csv", line + 2, "", "empty_caption"))
            else:
                quarantine.keep()
        return quarantine

    quarantine_with_bad_first(15, 3000).check_fraction()
    quarantine = Quarantine(BadRowPolicy("skip", 0.01), "captions")
    for _ in range(999):
        quarantine.keep()
    for line in range(20):  # 20 of 1,019: just under twice the share, not yet
        quarantine.add(BadRow("c.csv", line + 1001, "", "empty_caption"))
    with pytest.raises(BabelforgeError, match=r"^21 of the first 1020 captions read are bad"):
        quarantine.add(BadRow("c.csv", 1021, "", "empty_caption"))


def test_the_translate_stage_on_a_latin1_input_writes_no_shard(tmp_path, monkeypatch, xtd, capsys):
    path = tmp_path / "captions.csv"
    latin1_csv(path, [row["caption"] for row in xtd.captions], 50_000)
    # No Kiwi model: the stage stops before anything reads it.
    params = write_params(tmp_path / "params.yaml", path, tmp_path / "no-kiwi", format="table", limit=None)
    data = tmp_path / "captions"
    assert translate(monkeypatch, params, data, stub_for(xtd)) == 1
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("babelforge captions_translate: error: ") and "Latin-1/cp1252" in error
    assert not shards.listed_shards(data / "source")


def test_an_input_with_no_utf8_row_says_so(tmp_path, registry):
    path = tmp_path / "captions.csv"
    path.write_bytes(b"id,image,caption\n" + b"".join(b"%d,%d.jpg,caf\xe9 %d\n" % (n, n, n) for n in range(30)))
    with pytest.raises(BabelforgeError, match=r"^no row is UTF-8 \(30 captions, invalid_utf8 30\): the file looks "):
        read(path, registry, BadRowPolicy())


def test_jsonl_whose_rows_all_lack_the_caption_key_names_the_column(tmp_path, registry):
    path = tmp_path / "captions.jsonl"
    path.write_text("".join(json.dumps({"id": n, "image": f"{n}.jpg", "text": "a dog"}) + "\n" for n in range(8)))
    with pytest.raises(
        BabelforgeError,
        match=r"^every row has no caption text \(8 captions, missing_caption 8\): the caption column is empty or has "
        r"another name \(first: .*captions.jsonl:1: ",
    ):
        read(path, registry, BadRowPolicy())


def test_gzip_bytes_named_jsonl_are_named_as_gzip(tmp_path, registry):
    path = tmp_path / "captions.jsonl"
    path.write_bytes(gzip.compress(b'{"id": "a", "image": "a.jpg", "caption": "a dog"}\n'))
    with pytest.raises(BabelforgeError, match=r"captions.jsonl: gzip-compressed bytes, not JSON Lines; unpack it"):
        read(path, registry)


def test_jsonl_rows_without_a_key_or_of_another_type_are_bad_rows(tmp_path, registry):
    rows = [{"id": f"r{n}", "image": f"{n}.jpg", "caption": f"a dog number {n}", "score": n} for n in range(12)]
    rows[0] = {"image": "0.jpg", "caption": "the first row lacks an id", "score": 0}  # used to stop the job
    rows[2] = {"id": "r2", "caption": "no image", "score": 2}
    rows[4]["image"] = 4  # a number where a file name belongs: used to be an ArrowTypeError
    rows[5]["score"] = "five"  # an extra column of mixed types: idem
    rows[6]["note"] = "a column the other rows lack"
    rows[7]["score"] = 2**70  # no Arrow integer holds it
    rows[8].pop("caption")
    path = tmp_path / "captions.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    kept, quarantine = read(path, registry)
    assert [(row.line, row.reason) for _, row in quarantine.bad] == [
        (1, "missing_id"),
        (3, "missing_image"),
        (5, "bad_image"),
        (6, "mixed_types"),
        (7, "unexpected_column"),
        (8, "mixed_types"),
        (9, "missing_caption"),
    ]
    assert [row["caption_id"] for row in kept] == ["r1", "r3", "r9", "r10", "r11"]


def test_a_tsv_caption_keeps_its_quotes(tmp_path, registry):
    path = tmp_path / "captions.tsv"
    path.write_text('id\timage\tcaption\na\ta.jpg\t"Quoted" title\nb\tb.jpg\tsay "cheese"\n', encoding="utf-8")
    kept, quarantine = read(path, registry)
    assert [row["caption"] for row in kept] == ['"Quoted" title', 'say "cheese"'] and not quarantine.bad


def test_a_parquet_file_cut_in_half_is_one_line(tmp_path, registry):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"id": f"r{n}", "image": f"{n}.jpg", "caption": f"a dog number {n}"} for n in range(500)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "whole.parquet")
    data = (tmp_path / "whole.parquet").read_bytes()
    (tmp_path / "cut.parquet").write_bytes(data[: len(data) // 2])
    with pytest.raises(BabelforgeError, match=r"cut.parquet: not a readable Parquet file .*cut off\? fetch it again$"):
        read(tmp_path / "cut.parquet", registry)


def test_an_xtd_caption_that_is_null_or_a_number_is_a_bad_row_not_a_stop(tmp_path, registry, xtd_path, xtd):
    data = json.loads(xtd_path.read_text(encoding="utf-8"))
    data["captions"]["en"][3] = None
    data["captions"]["en"][5] = 7
    data["captions"]["de"][8] = None  # a reference: no reference, not a bad row
    path = tmp_path / "xtd.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    quarantine = Quarantine(SKIP_ALL, "captions")
    captions = read_xtd(path, "eng_Latn", registry, quarantine)
    assert [(row.line, row.reason) for _, row in quarantine.bad] == [(4, "missing_caption"), (6, "missing_caption")]
    assert captions.captions == [row for i, row in enumerate(xtd.captions) if i not in (3, 5)]  # ids as before
    gone = {xtd.captions[3]["caption_id"], xtd.captions[5]["caption_id"]}  # their references leave with them
    german_8 = (xtd.captions[8]["caption_id"], "deu_Latn")
    assert captions.references == [ref for ref in xtd.references if ref[0] not in gone and ref[:2] != german_8]


@pytest.mark.parametrize(
    "document, expected",
    [
        ('{"images": ["a.jpg", "b.jpg"], "captions": {"en": ["a dog"', r"xtd.json:1:\d+: not JSON \(.*cut off\?"),
        ('{"images": ["a.jpg", "b.jpg"], "captions": {"en": ["a dog"]}}', r"1 en captions for 2 images; a caption set"),
        ('["a.jpg"]', r"not the XTD layout"),
    ],
)
def test_a_broken_xtd_file_is_one_line(tmp_path, registry, document, expected):
    path = tmp_path / "xtd.json"
    path.write_text(document, encoding="utf-8")
    with pytest.raises(BabelforgeError, match=expected):
        read_xtd(path, "eng_Latn", registry)


@pytest.mark.parametrize("fmt", ["table", "xtd"])
def test_a_limit_counts_the_captions_it_took(tmp_path, registry, xtd_path, xtd, fmt):
    """With limit N, N captions are handed on and N are counted kept (it said N + 1)."""
    path = xtd_path
    if fmt == "table":
        path = tmp_path / "captions.csv"
        rows = [["id", "image", "caption"]] + [[r["caption_id"], r["image"], r["caption"]] for r in xtd.captions]
        with path.open("w", encoding="utf-8", newline="") as handle:
            csv.writer(handle).writerows(rows)
    for limit in (1, 20, 999):
        kept, quarantine = read(path, registry, fmt=fmt, limit=limit)
        assert len(kept) == limit and quarantine.kept == limit and quarantine.rows == limit


def test_input_json_counts_the_limit_the_stage_translated(tmp_path, monkeypatch, xtd, capsys):
    """captions.input.limit=N: input.json says N kept, the number translated (it said N + 1)."""
    path = tmp_path / "captions.csv"
    rows = [["id", "image", "caption"]] + [[r["caption_id"], r["image"], r["caption"]] for r in xtd.captions[:40]]
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    params = write_params(tmp_path / "params.yaml", path, tmp_path / "no-kiwi", format="table", limit=20)
    data = tmp_path / "captions"
    assert translate(monkeypatch, params, data, stub_for(xtd)) == 0
    summary = json.loads((data / "input.json").read_text(encoding="utf-8"))
    translated = shards.read(data / "source").num_rows
    assert translated == 20 and (summary["rows"], summary["kept"], summary["quarantined"]) == (20, 20, 0)


# ---------------------------------------------------------------- fuzz: any bytes in a row

GOOD = {"id": "zz-good-final", "image": "good.jpg", "caption": "a good row at the end"}
row_bytes = st.lists(st.binary(max_size=60), max_size=12)


def check_finished(rows, quarantine) -> None:
    assert quarantine.kept == len(rows) and quarantine.rows == quarantine.kept + len(quarantine.bad)
    assert all(text_problem(row["caption"]) is None for row in rows)
    assert GOOD["id"] in {row["caption_id"] for row in rows}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=row_bytes, suffix=st.sampled_from([".csv", ".tsv", ".jsonl"]))
def test_any_bytes_per_row_of_a_text_table_finish_with_every_row_counted(tmp_path_factory, registry, lines, suffix):
    """Rows of arbitrary bytes between a header and a good last row: an unclosed quote, broken
    bytes, a half JSON object are rows, counted; the good row after them is read."""
    path = tmp_path_factory.mktemp("rows") / f"captions{suffix}"
    if suffix == ".jsonl":  # a good first row: the file's first bytes are JSON, whatever follows
        head, last = json.dumps({**GOOD, "id": "zz-good-first"}).encode() + b"\n", json.dumps(GOOD).encode()
    else:
        sep = b"\t" if suffix == ".tsv" else b","
        head, last = sep.join([b"id", b"image", b"caption"]) + b"\n", sep.join(v.encode() for v in GOOD.values())
    path.write_bytes(head + b"\n".join([*lines, last]) + b"\n")
    rows, quarantine = read(path, registry)
    check_finished(rows, quarantine)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.one_of(st.none(), st.binary(max_size=40)), max_size=12))
def test_any_bytes_per_row_of_a_parquet_file_finish_with_every_row_counted(tmp_path_factory, registry, values):
    """A Parquet text column of arbitrary bytes (other writers do not check that text is UTF-8)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    captions = pa.array([*values, GOOD["caption"].encode()], pa.binary()).view(pa.string())
    table = pa.table(
        {
            "id": [f"r{n}" for n in range(len(values))] + [GOOD["id"]],
            "image": ["a.jpg"] * len(captions),
            "caption": captions,
        }
    )
    path = tmp_path_factory.mktemp("parquet") / "captions.parquet"
    pq.write_table(table, path)
    rows, quarantine = read(path, registry)
    check_finished(rows, quarantine)
    assert quarantine.rows == len(values) + 1


def json_string_of(raw: bytes) -> bytes:
    """`raw` as a JSON string of the bytes themselves: quotes, backslashes and controls escaped,
    every other byte (broken UTF-8 included) left as it is."""
    out = bytearray(b'"')
    for byte in raw:
        out += b"\\u%04x" % byte if byte < 0x20 or byte in b'"\\' else bytes([byte])
    return bytes(out + b'"')


xtd_entries = st.lists(
    st.one_of(
        st.binary(max_size=40).map(json_string_of),
        st.sampled_from([b"null", b"7", b"[]", b"true", b'{"a": 1}']),
        st.lists(st.binary(max_size=20).map(json_string_of), max_size=3).map(
            lambda items: b"[" + b", ".join(items) + b"]"
        ),
    ),
    max_size=10,
)


def xtd_document(path: Path, entries: list[bytes]) -> None:
    """A caption set of the entries as raw JSON (in English), and a good last image."""
    images = [f"{n}.jpg" for n in range(len(entries) + 1)]
    captions = b"[" + b", ".join([*entries, json.dumps(GOOD["caption"]).encode()]) + b"]"
    path.write_bytes(b'{"images": ' + json.dumps(images).encode() + b', "captions": {"en": ' + captions + b"}}")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=xtd_entries)
def test_any_bytes_per_caption_of_an_xtd_file_finish_with_every_caption_counted(tmp_path_factory, registry, entries):
    path = tmp_path_factory.mktemp("xtd") / "xtd.json"
    xtd_document(path, entries)
    quarantine = Quarantine(SKIP_ALL, "captions")
    captions = read_xtd(path, "eng_Latn", registry, quarantine).captions
    assert quarantine.kept == len(captions) and quarantine.rows == quarantine.kept + len(quarantine.bad)
    assert captions[-1]["caption"] == GOOD["caption"]
    assert all(text_problem(row["caption"]) is None for row in captions)
