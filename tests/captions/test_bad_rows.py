"""Messy caption inputs: every bad row is quarantined with its reason and place, the good rows
come through as from a clean input, and `fail` / `max_bad_fraction` stop with one line.

The captions are real XTD ones; the broken rows are written the way broken dumps come (bytes
that are not UTF-8, a row cut short, NUL bytes, markup or a URL where a caption belongs).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from babelforge.captions.input_config import InputConfig
from babelforge.captions.readers import stream_captions
from babelforge.cli import main
from babelforge.core import shards
from babelforge.core.bad_rows import REASONS, BadRowPolicy, Quarantine, text_problem
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_json, read_table, sha256_file

from .test_stages import stub_for, translate, write_params

N_CLEAN = 40

# (reason, how the bad row's caption / id / bytes look) for the text formats.
BAD_CAPTIONS = [
    ("empty_caption", "   "),
    ("control_characters", "a dog\x00 on grass"),
    ("control_characters", "bell \x07 here"),
    ("url_only", "https://example.org/img/123.jpg"),
    ("markup_only", "<p><br/></p>"),
]


@pytest.fixture(scope="module")
def clean_rows(xtd) -> list[tuple[str, str, str]]:
    return [(row["caption_id"], row["image"], row["caption"]) for row in xtd.captions[:N_CLEAN]]


def csv_line(fields, delimiter=",") -> str:
    quoted = [
        '"' + field.replace('"', '""') + '"' if any(c in field for c in f'"\n\r{delimiter}') else field
        for field in fields
    ]
    return delimiter.join(quoted) + "\r\n"


def messy_csv(path: Path, clean_rows, delimiter=",") -> dict[int, str]:
    """The clean rows with a bad row of each kind between them; {line: reason} of the bad ones."""
    header = csv_line(["id", "image", "caption"], delimiter)
    lines: list[bytes] = ["\ufeff".encode() + header.encode()]  # a BOM, CRLF line ends
    bad: dict[int, str] = {}
    line = 2
    for index, (caption_id, image, caption) in enumerate(clean_rows):
        lines.append(csv_line([caption_id, image, caption], delimiter).encode())
        line += 1
        if index < len(BAD_CAPTIONS):
            reason, text = BAD_CAPTIONS[index]
            lines.append(csv_line([f"bad{index}", "x.jpg", text], delimiter).encode())
            bad[line] = reason
            line += 1
    extra = [
        ("invalid_utf8", b"badbytes,x.jpg,caf\xe9 au lait\r\n"),
        ("ragged_row", b"short,x.jpg\r\n"),
        ("missing_id", b",x.jpg,a caption without an id\r\n"),
        ("duplicate_id", f"{clean_rows[0][0]},y.jpg,a second row with the first id\r\n".encode()),
    ]
    for reason, raw in extra:
        lines.append(raw.replace(b",", delimiter.encode()))
        bad[line] = reason
        line += 1
    # A quoted CSV caption with a line break is one good row spanning two lines; a TSV has no
    # quoting (a line break cannot be in a field), so its quotes are text.
    if delimiter == ",":
        lines.append(csv_line(["multiline", "m.jpg", "two dogs\nin the snow"], delimiter).encode())
    else:
        lines.append(b'multiline\tm.jpg\t"Quoted" title\r\n')
    path.write_bytes(b"".join(lines))
    return bad


def messy_jsonl(path: Path, clean_rows) -> dict[int, str]:
    lines, bad = [], {}
    for caption_id, image, caption in clean_rows:
        lines.append(json.dumps({"id": caption_id, "image": image, "caption": caption}).encode())
    extra = [
        ("bad_json", b'{"id": "x", "caption": '),
        ("not_an_object", b'["id", "caption"]'),
        ("invalid_utf8", b'{"id": "b", "image": "b.jpg", "caption": "caf\xe9"}'),
        ("bad_id", b'{"id": 1.5, "image": "c.jpg", "caption": "a float id"}'),
        ("bad_id", b'{"id": {"a": 1}, "image": "d.jpg", "caption": "an object id"}'),
        ("missing_caption", b'{"id": "e", "image": "e.jpg", "caption": null}'),
        ("invalid_utf8", b'{"id": "f", "image": "f.jpg", "caption": "lone \\ud800 surrogate"}'),
    ]
    for offset, (_, raw) in enumerate(extra):
        lines.insert(3 + 2 * offset, raw)
    for number, raw in enumerate(lines, start=1):
        for reason, bad_raw in extra:
            if raw == bad_raw:
                bad[number] = reason
    path.write_bytes(b"\n".join(lines) + b"\n")
    return bad


SKIP_ALL = BadRowPolicy("skip", 1.0)


def read_all(path: Path, registry, policy=SKIP_ALL, **config):
    quarantine = Quarantine(policy, "captions")
    input_config = InputConfig(format="table", path=str(path), **config)
    rows = []
    for table in stream_captions(input_config, registry, batch_rows=7, quarantine=quarantine):
        rows += table.select(["caption_id", "image", "caption"]).to_pylist()
    return rows, quarantine


@pytest.mark.parametrize("suffix, delimiter", [(".csv", ","), (".tsv", "\t")])
def test_every_bad_table_row_is_quarantined_with_its_line_and_reason(tmp_path, registry, clean_rows, suffix, delimiter):
    path = tmp_path / f"captions{suffix}"
    bad = messy_csv(path, clean_rows, delimiter)
    rows, quarantine = read_all(path, registry)
    expected = [{"caption_id": i, "image": im, "caption": c} for i, im, c in clean_rows]
    assert rows[:-1] == expected  # the good rows, in order, text as it came (BOM and CRLF gone)
    last = "two dogs\nin the snow" if suffix == ".csv" else '"Quoted" title'
    assert rows[-1] == {"caption_id": "multiline", "image": "m.jpg", "caption": last}
    assert {row.line: row.reason for _, row in quarantine.bad} == bad
    assert all(row.source == str(path) for _, row in quarantine.bad)
    invalid = next(row for _, row in quarantine.bad if row.reason == "invalid_utf8")
    assert "caf\\xe9" in invalid.raw  # the broken byte shown, not replaced
    summary = quarantine.summary()
    assert summary["rows"] == len(clean_rows) + 1 + len(bad) and summary["kept"] == len(clean_rows) + 1
    assert summary["quarantined"] == len(bad) and sum(summary["reasons"].values()) == len(bad)


def test_jsonl_lines_that_are_not_rows_are_quarantined(tmp_path, registry, clean_rows):
    path = tmp_path / "captions.jsonl"
    bad = messy_jsonl(path, clean_rows)
    rows, quarantine = read_all(path, registry)
    assert [row["caption_id"] for row in rows] == [caption_id for caption_id, _, _ in clean_rows]
    assert {row.line: row.reason for _, row in quarantine.bad} == bad


def test_parquet_rows_are_named_by_file_and_row(tmp_path, registry, clean_rows):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"id": i, "image": im, "caption": c} for i, im, c in clean_rows]
    rows.insert(5, {"id": "empty", "image": "e.jpg", "caption": ""})
    rows.insert(9, {"id": None, "image": "n.jpg", "caption": "no id"})
    folder = tmp_path / "shards"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(rows[:20]), folder / "00000.parquet")
    pq.write_table(pa.Table.from_pylist(rows[20:]), folder / "00001.parquet")
    kept, quarantine = read_all(folder, registry)
    assert len(kept) == len(clean_rows)
    assert [(Path(row.source).name, row.line, row.reason) for _, row in quarantine.bad] == [
        ("00000.parquet", 6, "empty_caption"),
        ("00000.parquet", 10, "missing_id"),
    ]


def test_img2dataset_rows_without_an_image_are_counted_not_quarantined(tmp_path, registry):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [
        {"key": f"{k:09d}", "caption": f"caption {k}", "url": f"http://x/{k}.jpg", "status": status}
        for k, status in enumerate(["success", "failed_to_download", "success", "failed_to_resize"])
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "00000.parquet")
    quarantine = Quarantine(BadRowPolicy(), "captions")
    config = InputConfig(format="img2dataset", path=str(tmp_path))
    kept = sum(table.num_rows for table in stream_captions(config, registry, quarantine=quarantine))
    assert kept == 2
    assert quarantine.summary() == {
        "rows": 4,
        "kept": 2,
        "quarantined": 0,
        "reasons": {},
        "excluded": {"not_downloaded": 2},
    }


def test_fail_stops_at_the_first_bad_row_with_its_line(tmp_path, registry, clean_rows):
    path = tmp_path / "captions.csv"
    bad = messy_csv(path, clean_rows)
    first = min(bad)
    with pytest.raises(BabelforgeError, match=rf"captions.csv:{first}: .*\({bad[first]}\).*on_bad_row is fail"):
        read_all(path, registry, BadRowPolicy("fail", 0.0))


def test_too_many_bad_rows_stop_the_job_naming_the_reasons(tmp_path, registry, clean_rows):
    path = tmp_path / "captions.csv"
    bad = messy_csv(path, clean_rows)
    share = len(bad) / (len(clean_rows) + 1 + len(bad))
    with pytest.raises(
        BabelforgeError, match=rf"{len(bad)} of \d+ captions are bad \(invalid_utf8 1, .*max_bad_fraction"
    ):
        read_all(path, registry, BadRowPolicy("skip", share * 0.9))
    rows, _ = read_all(path, registry, BadRowPolicy("skip", share * 1.1))
    assert len(rows) == len(clean_rows) + 1


def test_an_unclosed_quote_is_one_bad_row_and_the_rows_it_swallowed_are_read_again(tmp_path, registry, clean_rows):
    """An unclosed quote at row 1,900 of 2,000 used to swallow the next 99 rows into one caption;
    now its line is a malformed_quote row and every row after it is read."""
    path = tmp_path / "captions.csv"
    rows = [(f"r{n}", f"{n}.jpg", clean_rows[n % len(clean_rows)][2]) for n in range(2000)]
    lines = [csv_line(row) for row in [("id", "image", "caption"), *rows]]
    lines[1900] = f'r1899,1899.jpg,"{rows[1899][2]}\r\n'  # the opening quote is never closed
    lines[1990] = 'r1989,1989.jpg,"A ""Quoted"" title" and more\r\n'  # a quote later on would close it
    path.write_text("".join(lines), encoding="utf-8")
    kept, quarantine = read_all(path, registry)
    assert [(row.line, row.reason) for _, row in quarantine.bad] == [(1901, "malformed_quote")]
    expected = {caption_id: caption for caption_id, _, caption in rows if caption_id != "r1899"}
    expected["r1989"] = 'A "Quoted" title and more'  # CSV's own reading of the quoted-then-text field
    assert {row["caption_id"]: row["caption"] for row in kept} == expected
    # Cut off at the end of the file, the same: the swallowed rest is read again.
    path.write_text('id,image,caption\na,a.jpg,"never closed\nb,b.jpg,a dog\n', encoding="utf-8")
    kept, quarantine = read_all(path, registry)
    assert [row["caption_id"] for row in kept] == ["b"] and quarantine.counts() == {"malformed_quote": 1}


def test_a_field_over_the_csv_limit_is_a_bad_row(tmp_path, registry):
    import csv

    path = tmp_path / "captions.csv"
    path.write_text(
        'id,image,caption\na,a.jpg,"never closed\n' + "x" * (csv.field_size_limit() + 10) + "\nb,b.jpg,a dog\n",
        encoding="utf-8",
    )
    kept, quarantine = read_all(path, registry)
    assert [row["caption_id"] for row in kept] == ["b"]
    assert [(row.line, row.reason) for _, row in quarantine.bad] == [(2, "malformed_quote"), (3, "field_too_long")]


@pytest.mark.parametrize(
    "text, reason",
    [
        ("a dog", None),
        ("two dogs\nin the snow", None),
        ("<b>bold</b> dog", None),
        ("see www.example.org for a dog", None),
        ("", "empty_caption"),
        ("\t \n", "empty_caption"),
        ("www.example.org/a.jpg", "url_only"),
        ("<img src=x>", "markup_only"),
        ("a\x1bdog", "control_characters"),
        ("a\x85dog", "control_characters"),
        (None, "missing_caption"),
        (3, "missing_caption"),
    ],
)
def test_caption_text_problems(text, reason):
    assert text_problem(text) == reason


def test_every_reason_has_words():
    assert all(words and not words.endswith(".") for words in REASONS.values())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.binary(max_size=400), suffix=st.sampled_from([".csv", ".tsv", ".jsonl"]))
def test_any_bytes_give_rows_and_quarantined_rows_or_one_project_error(tmp_path_factory, registry, body, suffix):
    """Whatever the bytes, a reader yields good rows plus quarantined ones, or raises the project's
    one-line error (no columns, an unclosed quote, too many bad rows): never another exception."""
    path = tmp_path_factory.mktemp("bytes") / f"captions{suffix}"
    header = (
        b'{"id": "h", "image": "h.jpg", "caption": "a header row"}\n' if suffix == ".jsonl" else b"id,image,caption\n"
    )
    path.write_bytes(header.replace(b",", b"\t") + body if suffix == ".tsv" else header + body)
    try:
        rows, quarantine = read_all(path, registry, BadRowPolicy("skip", 1.0))
    except BabelforgeError as error:
        assert "\n" not in str(error)
        return
    assert quarantine.kept == len(rows) and quarantine.rows == len(rows) + len(quarantine.bad)
    assert all(text_problem(row["caption"]) is None for row in rows)
    assert len({row["caption_id"] for row in rows}) == len(rows)


def test_the_stage_quarantines_beside_the_output_and_keeps_the_clean_bytes(
    tmp_path, monkeypatch, registry, xtd, xtd_path, tiny_kiwi_dir, clean_rows
):
    """captions_translate on the messy table writes the same source/ and hypotheses/ as on the
    clean one; quarantine/ holds exactly the bad rows, input.json and quality.json count them."""
    outputs = {}
    for name in ("clean", "messy"):
        table = tmp_path / f"{name}.csv"
        if name == "clean":
            table.write_bytes(b"".join(csv_line(r).encode() for r in [("id", "image", "caption"), *clean_rows]))
        else:
            bad = messy_csv(table, clean_rows)
        params = write_params(tmp_path / f"{name}.yaml", xtd_path, tiny_kiwi_dir, format="table", limit=None)
        values = yaml.safe_load(params.read_text())
        values["captions"]["input"].update(path=str(table), max_bad_fraction=0.2)  # 9 of 50 rows are bad
        values["captions"]["runner"]["shard_size"] = 16
        params.write_text(yaml.safe_dump(values))
        data = tmp_path / name
        assert translate(monkeypatch, params, data, stub_for(xtd)) == 0
        if name == "messy":  # tag and select read the same kept rows: run once, for the counts they report
            common = ["--params", str(params), "--out", str(data)]
            assert main(["captions_tag", *common]) == 0
            assert main(["captions_select", *common, "--metrics", str(tmp_path / f"{name}-metrics")]) == 0
        outputs[name] = data
    clean, messy = outputs["clean"], outputs["messy"]
    # Shards 0 and 1 hold the same 32 captions in both: the same bytes. The last one of the messy
    # input also has the multiline caption, which the clean input lacks.
    for directory in ("source", "hypotheses"):
        for index in (0, 1):
            assert sha256_file(shards.parquet_path(clean / directory, index)) == sha256_file(
                shards.parquet_path(messy / directory, index)
            )
    assert shards.read(clean / "hypotheses").to_pylist() == [
        row for row in shards.read(messy / "hypotheses").to_pylist() if row["caption_id"] != "multiline"
    ]
    quarantined = shards.read(messy / "quarantine").to_pylist()
    assert sorted((row["line"], row["reason"]) for row in quarantined) == sorted(bad.items())
    assert len(shards.committed_files(messy / "quarantine")) == len(shards.committed_files(messy / "source"))
    summary = read_json(messy / "input.json")
    assert summary["quarantined"] == len(bad) and summary["kept"] == len(clean_rows) + 1
    assert read_json(messy / "quality.json")["input"] == summary
    assert read_json(tmp_path / "messy-metrics" / "captions.json")["input_quarantined"] == len(bad)
    assert read_json(clean / "input.json")["quarantined"] == 0
    assert read_table(messy / "selected.parquet")["caption_id"].nunique() == len(clean_rows) + 1
