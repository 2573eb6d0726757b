"""Models are identified by content, never by how their path is spelled (issue 47 item 1): the tiny
NLLB and the tiny COMETKiwi given as a relative path, an absolute path, a symlink and a copy make
byte-identical hypotheses/ and attributes/, and a run with any of them finds every shard current."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from babelforge.captions.qe import load_kiwi
from babelforge.cli import main
from babelforge.core import shards
from babelforge.core.model_identity import content_hash, local_model_record

from .test_sharded_stages import write_captions, write_params


def spellings(root: Path, model: Path, name: str) -> dict[str, str]:
    """The same model as relative (from `root`), absolute, a symlink to it and a copy of it, each
    outside the others' folders, under the same folder name."""
    folder = root / "models" / name
    shutil.copytree(model, folder)
    (root / "linked").mkdir(exist_ok=True)
    (root / "copied").mkdir(exist_ok=True)
    os.symlink(folder, root / "linked" / name)
    shutil.copytree(model, root / "copied" / name)
    return {
        "relative": f"models/{name}",
        "absolute": str(folder),
        "symlink": str(root / "linked" / name),
        "copy": str(root / "copied" / name),
    }


def test_a_folder_has_one_record_however_its_path_is_spelled(tmp_path, monkeypatch, tiny_kiwi_dir):
    monkeypatch.chdir(tmp_path)
    paths = spellings(tmp_path, Path(tiny_kiwi_dir), "kiwi")
    records = {how: local_model_record(path) for how, path in paths.items()}
    assert len({shards.stable_hash(record) for record in records.values()}) == 1, records
    assert records["relative"]["name"] == "kiwi"
    assert records["relative"]["sha256"] == content_hash(tiny_kiwi_dir)


def test_a_changed_file_changes_the_content_hash(tmp_path, tiny_kiwi_dir):
    folder = tmp_path / "kiwi"
    shutil.copytree(tiny_kiwi_dir, folder)
    before = content_hash(folder)
    hparams = folder / "hparams.yaml"
    hparams.write_text(hparams.read_text() + "# edited\n")
    assert content_hash(folder) != before  # the cached hash is not reused for a changed file
    assert local_model_record(tmp_path / "absent") == {"name": "absent", "sha256": None}


def test_kiwi_records_its_weights_and_folder_name_not_its_path(tmp_path, monkeypatch, tiny_kiwi_dir):
    monkeypatch.chdir(tmp_path)
    paths = spellings(tmp_path, Path(tiny_kiwi_dir), "kiwi")
    records = [load_kiwi(path)[1] for path in (paths["relative"], paths["copy"])]
    assert records[0] == records[1]
    assert set(records[0]) == {"name", "weights_sha256"}


def tree_sha256(folder: Path) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(folder.iterdir())}


@pytest.mark.slow
def test_translate_and_tag_make_the_same_bytes_and_keep_shards_current_at_any_model_path(
    tmp_path, monkeypatch, capsys, xtd, tiny_nllb, tiny_kiwi_dir
):
    monkeypatch.chdir(tmp_path)  # relative paths in a params file outside a project resolve from here
    nllb = spellings(tmp_path, Path(tiny_nllb), "nllb")
    kiwi = spellings(tmp_path, Path(tiny_kiwi_dir), "kiwi")
    texts = [row["caption"] for row in xtd.captions][:12]
    settings = dict(beam_size=2, num_hypotheses=2, max_decoding_length=8)

    def build(out: str, how: str) -> tuple[dict[str, dict[str, str]], str]:
        root = tmp_path / out
        root.mkdir(exist_ok=True)
        captions = write_captions(root / "captions.csv", texts)
        params = write_params(root, captions, kiwi[how], nllb_dir=nllb[how], shard_size=6, **settings)
        capsys.readouterr()
        assert main(["captions_translate", "--params", str(params)]) == 0
        assert main(["captions_tag", "--params", str(params)]) == 0
        built = {name: tree_sha256(root / "data" / name) for name in ("hypotheses", "attributes")}
        return built, capsys.readouterr().err

    relative, _ = build("a", "relative")
    for how in ("absolute", "symlink", "copy"):
        again, log = build("a", how)  # the same output folder: nothing is stale
        assert again == relative, how
        assert "captions_translate: 2 shards, 2 current, 0 to do" in log, how
        assert "captions_tag: 2 shards, 2 current, 0 to do" in log, how
    fresh, log = build("b", "copy")  # a fresh build from the copy: the same bytes
    assert "2 shards, 0 current, 2 to do" in log
    assert fresh == relative
