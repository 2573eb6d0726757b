"""The last build's outputs as dvc.lock pins them, read back from the DVC cache (babelforge.core.dvc_lock)."""

import hashlib

import yaml

from babelforge.core.dvc_lock import DVC_CACHE, last_build_copy, locked_outputs


def test_the_last_builds_copy_is_found_by_its_locked_hash(tmp_path):
    data = b"lang\ndeu_Latn\n"
    digest = hashlib.md5(data).hexdigest()
    lock = {
        "schema": "2.0",
        "stages": {
            "labels": {
                "outs": [
                    {"path": "data/languages.parquet", "md5": digest, "size": len(data)},
                    {"path": "data/senses", "md5": "0" * 32 + ".dir"},
                    {"path": "data/pending"},  # an out without a hash yet: nothing to read back
                ]
            }
        },
    }
    (tmp_path / "dvc.lock").write_text(yaml.safe_dump(lock))
    assert locked_outputs(tmp_path / "dvc.lock") == {"data/languages.parquet": digest, "data/senses": "0" * 32 + ".dir"}
    lock_path = tmp_path / "dvc.lock"
    assert last_build_copy("data/languages.parquet", lock_path) is None  # not in the cache (a fresh clone)
    cached = tmp_path / DVC_CACHE / digest[:2] / digest[2:]
    cached.parent.mkdir(parents=True)
    cached.write_bytes(data)
    assert last_build_copy("data/languages.parquet", lock_path) == cached
    assert last_build_copy("data/senses", lock_path) is None  # a folder: no single file
    assert last_build_copy("data/other.parquet", lock_path) is None
    assert locked_outputs(tmp_path / "none.lock") == {}
