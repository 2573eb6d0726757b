"""formats/table.py at its edges: the integer range one column can hold, the column names a table may not
use, and the format a packed file is named as."""

from __future__ import annotations

import gzip
import json

import pytest

from babelforge.captions.formats.table import read_caption_table
from babelforge.core.bad_rows import BadRowPolicy, Quarantine
from babelforge.core.errors import BabelforgeError


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_number_column_holds_exactly_the_signed_64_bit_integers(tmp_path, registry):
    """Arrow writes a column of integers as int64: the ends of that range are numbers, one past either
    end is a value no column can hold (the row is quarantined as mixed_types, the rest kept)."""
    scores = [0, -(2**63), 2**63 - 1, 2**63, -(2**63) - 1, 7]
    rows = [
        {"id": f"c{i}", "image": f"{i}.jpg", "caption": f"a dog number {i}", "score": s} for i, s in enumerate(scores)
    ]
    quarantine = Quarantine(BadRowPolicy("skip", 1.0), "captions")
    captions = read_caption_table(write_jsonl(tmp_path / "captions.jsonl", rows), "eng_Latn", registry, quarantine)
    assert [(row["caption_id"], row["score"]) for row in captions.captions] == [
        ("c0", 0),
        ("c1", -(2**63)),
        ("c2", 2**63 - 1),
        ("c5", 7),
    ]
    assert [(row.line, row.reason) for _, row in quarantine.bad] == [(4, "mixed_types"), (5, "mixed_types")]


@pytest.mark.parametrize("column", ["caption_id", "source_lang"])
def test_a_column_named_as_one_the_caption_rows_carry_stops_the_read(tmp_path, registry, column):
    path = tmp_path / "captions.csv"
    path.write_text(f"id,image,caption,{column}\nc1,1.jpg,a dog,x\n", encoding="utf-8")
    with pytest.raises(BabelforgeError, match=rf"captions.csv: column\(s\) {column} are reserved; rename them"):
        read_caption_table(path, "eng_Latn", registry)


# (JSON Lines: test_reader_policy.test_gzip_bytes_named_jsonl_are_named_as_gzip)
@pytest.mark.parametrize("suffix, named", [(".csv", "CSV"), (".tsv", "TSV")])
def test_a_gzip_file_named_as_text_is_refused_naming_the_format_it_claims(tmp_path, registry, suffix, named):
    path = tmp_path / f"captions{suffix}"
    path.write_bytes(gzip.compress(b"id,image,caption\nc1,1.jpg,a dog\n"))
    with pytest.raises(BabelforgeError, match=rf"captions{suffix}: gzip-compressed bytes, not {named}; unpack it"):
        read_caption_table(path, "eng_Latn", registry)
