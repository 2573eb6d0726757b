import os
import signal
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import (
    atomic_path,
    read_arrow,
    read_provenance,
    read_schema,
    read_table,
    value_counts,
    write_json,
    write_table,
    write_table_parts,
)


def test_write_table_is_sorted_and_byte_identical(tmp_path):
    frame = pd.DataFrame(
        {"lang": ["fra_Latn", "deu_Latn", "deu_Latn"], "class_idx": [2, 5, 1], "label": ["a", "b", "c"]}
    )
    first = write_table(frame, tmp_path / "a.parquet", sort_by=["lang", "class_idx"], provenance={"stage": "x"})
    shuffled = frame.sample(frac=1, random_state=3)
    second = write_table(shuffled, tmp_path / "b.parquet", sort_by=["lang", "class_idx"], provenance={"stage": "x"})
    assert first.read_bytes() == second.read_bytes()
    back = read_table(first)
    assert back["class_idx"].tolist() == [1, 5, 2]
    assert read_provenance(first) == {"stage": "x"}


def test_a_table_written_in_parts_is_one_file_of_one_schema(tmp_path):
    """One part: the bytes `write_table` gives; several: a row group each, every part cast to
    the schema (a part whose column is all null still gets the column's type)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([("lang", pa.large_string()), ("score", pa.float64()), ("reason", pa.large_string())])
    frame = pd.DataFrame({"lang": ["deu_Latn", "fra_Latn"], "score": [0.5, None], "reason": [None, "empty"]})
    whole = write_table(
        pa.Table.from_pandas(frame, preserve_index=False).cast(schema),
        tmp_path / "whole.parquet",
        provenance={"stage": "x"},
    )
    one = write_table_parts(
        [pa.Table.from_pandas(frame, preserve_index=False)], tmp_path / "one.parquet", schema, provenance={"stage": "x"}
    )
    assert one.read_bytes() == whole.read_bytes()
    parts = [pa.Table.from_pylist([row]) for row in frame.astype(object).where(frame.notna(), None).to_dict("records")]
    assert parts[0].schema.field("reason").type == pa.null()
    split = write_table_parts(parts, tmp_path / "split.parquet", schema, provenance={"stage": "x"})
    assert pq.ParquetFile(split).metadata.num_row_groups == 2
    assert pq.read_table(split).equals(pq.read_table(whole))
    assert read_provenance(split) == {"stage": "x"}


def test_one_languages_rows_and_the_counts_per_language_of_a_file_in_row_groups(tmp_path):
    """A row filter keeps exactly the matching rows of every row group, in file order; the
    counts come from the one column; a missing filter column or a truncated file is one line."""
    import pyarrow as pa

    schema = pa.schema([("caption_id", pa.large_string()), ("lang", pa.large_string()), ("score", pa.float64())])
    langs = ["deu_Latn", "fra_Latn", "deu_Latn", "jpn_Jpan"]
    parts = [
        pa.table(
            {
                "caption_id": [f"c{part}-{i}" for i in range(4)],
                "lang": langs,
                "score": [part + i / 10 for i in range(4)],
            },
            schema=schema,
        )
        for part in range(3)
    ]
    path = write_table_parts(parts, tmp_path / "selected.parquet", schema, provenance={"stage": "x"})
    german = read_arrow(path, ["caption_id", "score"], ("lang", "deu_Latn"))
    assert german.column_names == ["caption_id", "score"]
    assert german.column("caption_id").to_pylist() == ["c0-0", "c0-2", "c1-0", "c1-2", "c2-0", "c2-2"]
    assert read_table(path, ["score"], where=("lang", "jpn_Jpan"))["score"].tolist() == [0.3, 1.3, 2.3]
    assert read_arrow(path, None, ("lang", "ell_Grek")).num_rows == 0
    assert value_counts(path, "lang", batch_size=5) == {"deu_Latn": 6, "fra_Latn": 3, "jpn_Jpan": 3}
    with pytest.raises(BabelforgeError, match="no column 'language'"):
        read_arrow(path, ["score"], ("language", "deu_Latn"))
    truncated = tmp_path / "truncated.parquet"
    truncated.write_bytes(path.read_bytes()[:-40])
    for read in (
        lambda: read_arrow(truncated, None, ("lang", "deu_Latn")),
        lambda: value_counts(truncated, "lang"),
        lambda: read_schema(truncated),
        lambda: read_provenance(truncated),
    ):
        with pytest.raises(BabelforgeError, match="truncated.parquet: not a readable Parquet file"):
            read()


def test_failed_write_keeps_previous_artifact(tmp_path):
    target = tmp_path / "out.json"
    write_json({"v": 1}, target)
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert target.read_text() == '{\n  "v": 1\n}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_process_killed_mid_write_leaves_old_artifact(tmp_path):
    target = tmp_path / "labels.parquet"
    write_table(pd.DataFrame({"x": [1]}), target)
    before = target.read_bytes()
    # A writer that dies (SIGKILL, no cleanup) halfway through writing the new version.
    script = textwrap.dedent(f"""
        import os, signal
        from babelforge.core.io import atomic_path
        with atomic_path({str(target)!r}) as tmp:
            with open(tmp, "wb") as handle:
                handle.write(b"PAR1 half a parquet file")
                handle.flush()
                os.kill(os.getpid(), signal.SIGKILL)
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=os.getcwd())
    assert result.returncode == -signal.SIGKILL
    assert target.read_bytes() == before
    assert read_table(target)["x"].tolist() == [1]
