import os
import signal
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from builders.core.io import atomic_path, read_provenance, read_table, write_json, write_table


def test_write_table_is_sorted_and_byte_identical(tmp_path):
    frame = pd.DataFrame({"lang": ["fra_Latn", "deu_Latn", "deu_Latn"], "class_idx": [2, 5, 1], "label": ["a", "b", "c"]})
    first = write_table(frame, tmp_path / "a.parquet", sort_by=["lang", "class_idx"], provenance={"stage": "x"})
    shuffled = frame.sample(frac=1, random_state=3)
    second = write_table(shuffled, tmp_path / "b.parquet", sort_by=["lang", "class_idx"], provenance={"stage": "x"})
    assert first.read_bytes() == second.read_bytes()
    back = read_table(first)
    assert back["class_idx"].tolist() == [1, 5, 2]
    assert read_provenance(first) == {"stage": "x"}


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
        from builders.core.io import atomic_path
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
