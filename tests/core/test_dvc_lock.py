"""The last build's outputs as dvc.lock pins them, read back from the DVC cache, and put back after a stage
fails under DVC (babelforge.core.dvc_lock)."""

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
import yaml

from babelforge.core.dvc_lock import (
    DVC_CACHE,
    PutBack,
    cache_folder,
    last_build_copy,
    locked_outputs,
    put_back,
    put_back_line,
)
from babelforge.core.io import write_text
from tests.project import tree_digests
from tests.reliability.workspace import leftovers


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


def cache_put(cache, data: bytes) -> str:
    """`data` stored in a DVC cache folder as DVC 3 stores it (read-only, by md5); its md5."""
    digest = hashlib.md5(data).hexdigest()
    path = cache / digest[:2] / digest[2:]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(0o444)
    return digest


def cache_listing(cache, entries: list) -> str:
    """A folder's listing stored as DVC 3 stores it (`<md5>.dir`); its hash as dvc.lock writes it."""
    data = json.dumps(entries).encode()
    digest = hashlib.md5(data).hexdigest()
    (cache / digest[:2]).mkdir(parents=True, exist_ok=True)
    (cache / digest[:2] / f"{digest[2:]}.dir").write_bytes(data)
    return f"{digest}.dir"


@pytest.fixture()
def built(tmp_path):
    """A project whose dvc.lock records, for `labels`, a cached file, a cached folder, a metric DVC does not
    cache (git tracks it), one file the cache lost; and another stage's output."""
    cache = tmp_path / DVC_CACHE
    listing = [
        {"md5": cache_put(cache, b"omw\n"), "relpath": "omw.parquet"},
        {"md5": cache_put(cache, b"deep\n"), "relpath": "sub/deep.parquet"},
    ]
    folder = cache_listing(cache, listing)
    metric = b'{"languages": 9}\n'
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "labels.json").write_bytes(metric)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "metrics"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "metrics"], cwd=tmp_path, check=True)
    outs = [
        {"path": "data/labels.parquet", "md5": cache_put(cache, b"labels\n")},
        {"path": "data/senses", "md5": folder},
        {"path": "metrics/labels.json", "md5": hashlib.md5(metric).hexdigest()},
        {"path": "data/lost.parquet", "md5": hashlib.md5(b"lost\n").hexdigest()},
    ]
    other = [{"path": "data/other.parquet", "md5": cache_put(cache, b"other\n")}]
    lock = {"schema": "2.0", "stages": {"labels": {"outs": outs}, "other": {"outs": other}}}
    (tmp_path / "dvc.lock").write_text(yaml.safe_dump(lock))
    return tmp_path


def test_put_back_restores_what_dvc_removed_from_the_cache_and_git(built):
    (built / "metrics" / "labels.json").unlink()  # DVC removed every output before the stage ran
    write_text("half\n", built / "data" / "senses" / "shard-1.parquet")  # what the failed run left
    done = put_back("labels", built)
    assert done.restored == ["data/labels.parquet", "data/senses", "metrics/labels.json"]
    assert done.missing == ["data/lost.parquet"] and done.in_place == []
    assert (built / "data" / "labels.parquet").read_bytes() == b"labels\n"
    assert tree_digests(built / "data" / "senses") == {
        "omw.parquet": hashlib.sha256(b"omw\n").hexdigest(),
        "sub/deep.parquet": hashlib.sha256(b"deep\n").hexdigest(),
    }
    assert (built / "metrics" / "labels.json").read_bytes() == b'{"languages": 9}\n'
    assert oct((built / "data" / "labels.parquet").stat().st_mode & 0o777) == "0o644"  # not the cache's 444
    assert not (built / "data" / "other.parquet").exists()  # another stage's output is not this one's
    assert leftovers(built) == []
    again = put_back("labels", built)
    assert again.in_place == ["data/labels.parquet", "metrics/labels.json"] and again.restored == ["data/senses"]


def test_put_back_writes_nothing_a_lock_or_listing_places_outside_the_project(built):
    cache = built / DVC_CACHE
    escaping = [{"md5": cache_put(cache, b"x\n"), "relpath": "../../escaped.txt"}]
    listing = cache_listing(cache, escaping)
    lock = {
        "stages": {
            "bad": {
                "outs": [
                    {"path": "../outside.parquet", "md5": cache_put(cache, b"labels\n")},
                    {"path": "data/escaping", "md5": listing},
                    {"path": "data/odd.parquet", "md5": "../../../etc/passwd"},
                ]
            }
        }
    }
    (built / "dvc.lock").write_text(yaml.safe_dump(lock))
    done = put_back("bad", built)
    assert done.missing == ["../outside.parquet", "data/escaping", "data/odd.parquet"] and done.restored == []
    assert not (built.parent / "outside.parquet").exists() and not (built.parent / "escaped.txt").exists()
    assert not (built / "data").exists()


def test_the_cache_is_where_the_projects_dvc_config_puts_it(tmp_path):
    assert cache_folder(tmp_path) == tmp_path / DVC_CACHE
    (tmp_path / ".dvc").mkdir()
    (tmp_path / ".dvc" / "config").write_text(
        "[core]\n    remote = store\n['remote \"store\"']\n    url = /x\n[cache]\n    dir = ../../shared-cache\n"
    )
    assert cache_folder(tmp_path) == tmp_path / ".dvc" / ".." / ".." / "shared-cache" / "files" / "md5"
    (tmp_path / ".dvc" / "config.local").write_text("[cache]\n    dir = /srv/dvc-cache\n")
    assert cache_folder(tmp_path) == Path("/srv/dvc-cache/files/md5")  # the local config wins


def test_the_put_back_line_says_what_came_back_what_did_not_and_how_to_undo_an_experiment():
    done = PutBack(restored=["a", "b", "c", "d"], missing=["m"])
    line = put_back_line("labels", done, in_experiment=True)
    assert line == (
        "babelforge labels: DVC removed the stage's outputs before running it: put back the last good ones "
        "dvc.lock records (4: a, b, c and 1 more); not in the DVC cache nor in git, so not put back: m "
        "(`dvc pull` then `dvc checkout labels` brings them back); params.yaml keeps what `dvc exp run -S` set "
        "(DVC's doing): `git diff params.yaml` shows it, `git checkout -- params.yaml` undoes it"
    )
    assert "\n" not in line
    assert put_back_line("labels", PutBack(in_place=["a"])) is None  # a first build, or nothing removed


def test_put_back_replaces_what_a_failed_run_left_in_an_outputs_place_and_never_writes_through_a_link(
    built, tmp_path_factory
):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "keep.txt").write_text("not the project's\n")
    (built / "data").mkdir()
    (built / "data" / "labels.parquet").mkdir()  # a folder where the file goes
    (built / "data" / "labels.parquet" / "part-0").write_text("half\n")
    (built / "data" / "senses").write_text("a file where the folder goes\n")
    (built / "metrics" / "labels.json").unlink()
    (built / "metrics" / "labels.json").symlink_to(elsewhere)  # a link to a folder where the metric goes
    done = put_back("labels", built)
    assert done.restored == ["data/labels.parquet", "data/senses", "metrics/labels.json"]
    assert (built / "data" / "labels.parquet").read_bytes() == b"labels\n"
    assert sorted(tree_digests(built / "data" / "senses")) == ["omw.parquet", "sub/deep.parquet"]
    metric = built / "metrics" / "labels.json"
    assert not metric.is_symlink() and metric.read_bytes() == b'{"languages": 9}\n'
    assert [p.name for p in elsewhere.iterdir()] == ["keep.txt"]  # the link's target is left as it was


def test_a_dangling_link_where_a_folder_goes_is_replaced(built):
    """A link whose target is gone (a failed run's, or a moved cache) is removed, not followed: the
    folder takes its place."""
    (built / "data").mkdir()
    (built / "data" / "senses").symlink_to(built / "gone")
    done = put_back("labels", built)
    assert "data/senses" in done.restored
    senses = built / "data" / "senses"
    assert not senses.is_symlink() and sorted(tree_digests(senses)) == ["omw.parquet", "sub/deep.parquet"]
    assert not (built / "gone").exists()


def test_a_listing_entry_without_a_string_hash_and_a_git_copy_of_other_bytes_are_not_put_back(built):
    cache = built / DVC_CACHE
    listing = cache_listing(cache, [{"md5": 12345, "relpath": "omw.parquet"}])  # a path, no usable hash
    # git's copy of the metric is not the bytes dvc.lock records (its md5 differs): not written
    lock = {
        "stages": {
            "labels": {
                "outs": [
                    {"path": "data/senses", "md5": listing},
                    {"path": "metrics/labels.json", "md5": hashlib.md5(b'{"languages": 10}\n').hexdigest()},
                ]
            }
        }
    }
    (built / "dvc.lock").write_text(yaml.safe_dump(lock))
    (built / "metrics" / "labels.json").unlink()
    done = put_back("labels", built)
    assert done.missing == ["data/senses", "metrics/labels.json"] and done.restored == []
    assert not (built / "metrics" / "labels.json").exists() and not (built / "data" / "senses").exists()


def test_a_put_back_with_nothing_missing_is_still_said():
    line = put_back_line("senses", PutBack(restored=["data/senses"]))
    assert line == (
        "babelforge senses: DVC removed the stage's outputs before running it: put back the last good ones "
        "dvc.lock records (1: data/senses)"
    )
    assert put_back_line("senses", PutBack(missing=["data/senses"])).startswith(
        "babelforge senses: not in the DVC cache nor in git, so not put back: data/senses"
    )
