"""The rules of babelforge.core.io that a reader of its output relies on and the older tests did not pin
(found by the mutation check of io.py): file modes, the metadata kept, row groups, one-line OS errors."""

from __future__ import annotations

import errno
import stat

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import (
    PROVENANCE_KEY,
    atomic_directory,
    atomic_path,
    os_error_text,
    read_provenance,
    sha256_file,
    sha256_text,
    write_table,
    write_table_parts,
)

ROW_GROUP = 1 << 20  # rows per Parquet row group: part of the file's bytes, so of every artifact's hash


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_written_files_and_folders_are_readable_by_all_and_writable_by_the_owner(tmp_path):
    with atomic_path(tmp_path / "a.txt") as tmp:
        tmp.write_text("x")
    with atomic_directory(tmp_path / "out") as folder:
        (folder / "sub").mkdir()
        (folder / "sub" / "f.txt").write_text("y")
    assert _mode(tmp_path / "a.txt") == 0o644  # a temporary file is created private (0600)
    assert [_mode(p) for p in (tmp_path / "out", tmp_path / "out" / "sub", tmp_path / "out" / "sub" / "f.txt")] == [
        0o755,
        0o755,
        0o644,
    ]


def test_a_table_keeps_its_own_metadata_and_provenance_but_not_pandas(tmp_path):
    frame = pd.DataFrame({"lang": ["deu_Latn"], "n": [1]})
    write_table(frame, tmp_path / "a.parquet", provenance={"stage": "x"})
    assert set(pq.read_schema(tmp_path / "a.parquet").metadata) == {PROVENANCE_KEY}
    table = pa.table({"n": [1, 2]}).replace_schema_metadata({b"source": b"kept", b"pandas": b"{}"})
    write_table(table, tmp_path / "b.parquet")
    assert pq.read_schema(tmp_path / "b.parquet").metadata == {b"source": b"kept"}
    schema = pa.schema([("n", pa.int64())], metadata={b"source": b"kept", b"pandas": b"{}"})
    write_table_parts([pa.table({"n": [1]})], tmp_path / "c.parquet", schema, provenance={"stage": "y"})
    assert set(pq.read_schema(tmp_path / "c.parquet").metadata) == {b"source", PROVENANCE_KEY}
    assert read_provenance(tmp_path / "c.parquet") == {"stage": "y"}


def test_row_groups_hold_a_fixed_number_of_rows_and_one_part_is_the_same_file(tmp_path):
    table = pa.table({"n": pa.array([1] * (ROW_GROUP + 1), type=pa.int8())})
    write_table(table, tmp_path / "a.parquet", provenance={"stage": "x"})
    write_table_parts([table], tmp_path / "b.parquet", table.schema, provenance={"stage": "x"})
    groups = pq.ParquetFile(tmp_path / "a.parquet").metadata
    assert [groups.row_group(i).num_rows for i in range(groups.num_row_groups)] == [ROW_GROUP, 1]
    # the writer of a table too big for memory gives the same bytes (compression, level, row groups)
    assert sha256_file(tmp_path / "a.parquet") == sha256_file(tmp_path / "b.parquet")
    # on text that compresses differently at each zstd level, too
    text = pa.table({"text": [sha256_text(str(i)) * (i % 5 + 1) for i in range(20_000)]})
    write_table(text, tmp_path / "c.parquet")
    write_table_parts([text], tmp_path / "d.parquet", text.schema)
    assert sha256_file(tmp_path / "c.parquet") == sha256_file(tmp_path / "d.parquet")


def test_an_os_error_is_a_short_phrase_with_a_hint_for_a_full_disk():
    assert os_error_text(OSError(errno.ENOSPC, "No space left on device")) == (
        "No space left on device (disk full or a file-size limit)"
    )
    assert os_error_text(OSError(errno.EACCES, "Permission denied")) == "Permission denied"
    assert os_error_text(OSError("no errno here")) == "no errno here"


def test_a_failed_write_names_the_target_not_our_temp_and_no_missing_file(tmp_path):
    target = tmp_path / "t.txt"
    with pytest.raises(BabelforgeError) as full:
        with atomic_path(target) as tmp:
            raise OSError(errno.EFBIG, "File too large", str(tmp))  # about our own temp file
    assert (
        str(full.value)
        == f"cannot write {target}: File too large (disk full or a file-size limit); nothing was replaced"
    )
    with pytest.raises(BabelforgeError) as nameless:
        with atomic_path(target):
            raise OSError(errno.EIO, "Input/output error")  # no file named
    assert str(nameless.value) == f"cannot write {target}: Input/output error; nothing was replaced"


def test_a_folder_that_cannot_be_made_says_why(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(BabelforgeError, match=r"file is a file, not a folder$"):
        with atomic_path(tmp_path / "file" / "a.txt"):
            pass
    too_long = tmp_path / ("n" * 300) / "a.txt"  # the folder above exists and is a folder: the OS says why
    with pytest.raises(BabelforgeError, match=r": File name too long$") as refused:
        with atomic_path(too_long):
            pass
    assert "is a file" not in str(refused.value)
