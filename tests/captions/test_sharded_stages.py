"""The caption stages as shards: streamed input, resume after SIGKILL, stale shards redone and no
other, bounded memory, and the plan printed before any work."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from babelforge.cli import main
from babelforge.core import shards
from tests.core.shard_workers import kill_after_shards

from .conftest import REPO, StubTranslator

TARGETS = ["deu_Latn", "rus_Cyrl"]


def write_captions(path: Path, texts: list[str]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "image", "caption"])
        for i, text in enumerate(texts):
            writer.writerow([f"c{i:06d}", f"{i}.jpg", text])
    return path


def write_params(
    root: Path, captions: Path, kiwi_dir, nllb_dir: Path | None = None, shard_size: int = 10, **translate
) -> Path:
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    params["profile"] = "sample"
    params["paths"]["captions"] = str(root / "data")
    params["paths"]["metrics"] = str(root / "metrics")
    if nllb_dir is None:  # the stub translator needs no model, only the folder the stage checks
        nllb_dir = root / "nllb-stub"
        nllb_dir.mkdir(exist_ok=True)
    params["paths"]["nllb_model"] = str(nllb_dir)
    params["captions"]["input"].update(format="table", path=str(captions), targets=TARGETS, limit=None)
    params["captions"]["runner"].update(shard_size=shard_size, batch_size=4)
    params["captions"]["translate"].update(translate)
    params["captions"]["tag"].update(kiwi_model=str(kiwi_dir), batch_size=64)
    path = root / "params.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return path


def stage(monkeypatch, name: str, params: Path, translator=None) -> int:
    if translator is not None:
        from babelforge.captions import translate_worker

        monkeypatch.setattr(translate_worker, "make_translator", lambda config: translator)
    return main([name, "--params", str(params)])


def manifests(directory: Path) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(directory.glob("shard-*.json"))}


def changed(before: dict, after: dict) -> list[str]:
    return sorted(name for name in after if before.get(name) != after[name])


@pytest.fixture()
def xtd_texts(xtd) -> list[str]:
    return [row["caption"] for row in xtd.captions]


def test_a_changed_caption_redoes_its_shard_in_both_stages_and_a_params_change_only_its_stage(
    tmp_path, monkeypatch, xtd_texts, tiny_kiwi_dir
):
    captions = write_captions(tmp_path / "captions.csv", xtd_texts[:30])
    params = write_params(tmp_path, captions, tiny_kiwi_dir)
    data = tmp_path / "data"
    stub = StubTranslator(num_hypotheses=3)
    assert stage(monkeypatch, "captions_translate", params, stub) == 0
    assert stage(monkeypatch, "captions_tag", params) == 0
    assert stage(monkeypatch, "captions_select", params) == 0
    assert sorted(shards.listed_shards(data / "hypotheses")) == [0, 1, 2]
    before = {name: manifests(data / name) for name in ("source", "hypotheses", "attributes")}
    selected = (data / "selected.parquet").read_bytes()

    # a rerun redoes nothing and writes the same bytes
    calls = len(stub.calls)
    assert stage(monkeypatch, "captions_translate", params, stub) == 0
    assert len(stub.calls) == calls
    assert stage(monkeypatch, "captions_tag", params) == 0
    assert stage(monkeypatch, "captions_select", params) == 0
    assert {name: manifests(data / name) for name in before} == before
    assert (data / "selected.parquet").read_bytes() == selected

    # one caption of the second shard changes: shard 1 is redone, and no other
    texts = xtd_texts[:30]
    texts[14] = "a red bicycle leaning on a wall"
    write_captions(captions, texts)
    assert stage(monkeypatch, "captions_translate", params, stub) == 0
    sent = {text for texts_sent, _, _ in stub.calls[calls:] for text in texts_sent}
    assert sent == set(texts[10:20])
    assert stage(monkeypatch, "captions_tag", params) == 0
    for name in before:
        assert changed(before[name], manifests(data / name)) == ["shard-00001.json"], name

    # a tag setting changes: every attributes shard is redone, no hypotheses shard
    hypotheses = manifests(data / "hypotheses")
    attributes = manifests(data / "attributes")
    values = yaml.safe_load(params.read_text())
    values["captions"]["tag"]["repeat_max_n"] = 3
    params.write_text(yaml.safe_dump(values, sort_keys=False))
    assert stage(monkeypatch, "captions_tag", params) == 0
    assert manifests(data / "hypotheses") == hypotheses
    assert changed(attributes, manifests(data / "attributes")) == [f"shard-0000{i}.json" for i in range(3)]


def test_selection_over_shards_equals_selection_over_the_same_rows_in_one_shard(
    tmp_path, monkeypatch, xtd_texts, tiny_kiwi_dir
):
    """Choices are made shard by shard, percentiles and chrF over all shards: the same rows
    gathered into one shard give the same selected.parquet rows and quality.json, the file
    written a row group per shard."""
    import pandas as pd

    captions = write_captions(tmp_path / "captions.csv", xtd_texts[:25])
    params = write_params(tmp_path, captions, tiny_kiwi_dir, shard_size=7)
    assert stage(monkeypatch, "captions_translate", params, StubTranslator(num_hypotheses=3)) == 0
    assert stage(monkeypatch, "captions_tag", params) == 0
    assert stage(monkeypatch, "captions_select", params) == 0
    data, whole = tmp_path / "data", tmp_path / "whole"
    assert len(shards.listed_shards(data / "attributes")) == 4
    # one input shard: every folder's shard 0 records the same input rows, as captions_translate writes them
    input_hash = shards.table_hash(shards.read(data / "source"))
    for name, key in (
        ("source", ["caption_id"]),
        ("references", ["caption_id", "lang"]),
        ("hypotheses", ["caption_id", "lang", "hyp_rank"]),
        ("attributes", ["caption_id", "lang", "hyp_rank"]),
    ):
        table = shards.read(data / name)
        one = shards.Shard(0, 0, table.num_rows, input_hash)
        shards.write_shard(whole / name, one, table, "p", "m", sort_by=key)
    shutil.copyfile(data / "input.json", whole / "input.json")
    values = yaml.safe_load(params.read_text())
    values["paths"]["captions"] = str(whole)
    params.write_text(yaml.safe_dump(values, sort_keys=False))
    assert stage(monkeypatch, "captions_select", params) == 0
    assert (whole / "quality.json").read_text() == (data / "quality.json").read_text()

    def rows(path):  # a row group per shard: rows in shard order, then language and caption id
        return pd.read_parquet(path).sort_values(["lang", "caption_id"]).reset_index(drop=True)

    assert rows(whole / "selected.parquet").equals(rows(data / "selected.parquet"))
    import pyarrow.parquet as pq

    assert pq.ParquetFile(data / "selected.parquet").metadata.num_row_groups == 4


KILLED_TRANSLATE = "import sys; from babelforge.cli import main; sys.exit(main(sys.argv[1:]))"
TRANSLATE_THEN_TAG = (
    "import sys; from babelforge.cli import main\n"
    "for stage in ('captions_translate', 'captions_tag'):\n"
    "    if main([stage, '--params', sys.argv[1]]):\n"
    "        sys.exit(stage + ' failed')\n"
)


@pytest.mark.slow
def test_translate_killed_with_sigkill_resumes_and_ends_byte_identical(tmp_path, xtd_texts, tiny_nllb, tiny_kiwi_dir):
    """The real stage with the tiny NLLB in a subprocess, SIGKILLed after two shards: the rerun
    redoes only the shards without a manifest, and hypotheses/ equals an uninterrupted run's."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    texts = xtd_texts[:48]
    settings = dict(beam_size=2, num_hypotheses=2, max_decoding_length=12)
    runs = {}
    for name in ("killed", "clean"):
        root = tmp_path / name
        root.mkdir()
        params = write_params(
            root,
            write_captions(root / "captions.csv", texts),
            tiny_kiwi_dir,
            nllb_dir=Path(tiny_nllb),
            shard_size=6,
            **settings,
        )
        runs[name] = (root, params)
    root, params = runs["killed"]
    command = [sys.executable, "-c", KILLED_TRANSLATE, "captions_translate", "--params", str(params)]
    process = subprocess.Popen(command, env=env, cwd=root, stderr=subprocess.DEVNULL)
    hypotheses = root / "data" / "hypotheses"
    committed = kill_after_shards(process, hypotheses, 2, timeout=240)
    assert 2 <= committed < 8, "not killed in the middle of the run"
    rerun = subprocess.run(command, env=env, cwd=root, capture_output=True, text=True, check=True)
    assert f"{committed} current, {8 - committed} to do" in rerun.stderr
    clean_root, clean_params = runs["clean"]
    subprocess.run(
        [sys.executable, "-c", KILLED_TRANSLATE, "captions_translate", "--params", str(clean_params)],
        env=env,
        cwd=clean_root,
        capture_output=True,
        check=True,
    )
    for name in ("source", "references", "hypotheses"):
        killed = {p.name: p.read_bytes() for p in sorted((root / "data" / name).iterdir())}
        clean = {p.name: p.read_bytes() for p in sorted((clean_root / "data" / name).iterdir())}
        assert killed == clean, name


PEAK_RSS = textwrap.dedent("""
    import resource, sys
    from babelforge.captions import translate_worker
    from babelforge.cli import main
    from tests.captions.conftest import StubTranslator
    translate_worker.make_translator = lambda config: StubTranslator(num_hypotheses=4)
    assert main(["captions_translate", "--params", sys.argv[1]]) == 0
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


@pytest.mark.slow
def test_peak_memory_stays_flat_when_the_input_grows_ten_times(tmp_path, xtd_texts, tiny_kiwi_dir):
    """The translate stage (stub translator) over 2,000 and 20,000 generated captions: the
    peak RSS of the process grows by less than 30 % (shards of 500 captions)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    peaks = []
    for n in (2000, 20000):
        root = tmp_path / str(n)
        root.mkdir()
        texts = [f"{xtd_texts[i % len(xtd_texts)]} ({i})" for i in range(n)]
        params = write_params(root, write_captions(root / "captions.csv", texts), tiny_kiwi_dir, shard_size=500)
        result = subprocess.run(
            [sys.executable, "-c", PEAK_RSS, str(params)], env=env, cwd=root, capture_output=True, text=True, check=True
        )
        peaks.append(int(result.stdout.split()[-1]))
        assert shards.digest(root / "data" / "hypotheses")["rows"] == n * len(TARGETS) * 4
    assert peaks[1] <= 1.3 * peaks[0], peaks


def test_the_plan_is_printed_before_any_work(tmp_path, monkeypatch, capsys, xtd_texts, tiny_nllb, tiny_kiwi_dir):
    captions = write_captions(tmp_path / "captions.csv", xtd_texts[:35])
    params = write_params(
        tmp_path,
        captions,
        tiny_kiwi_dir,
        nllb_dir=Path(tiny_nllb),
        beam_size=2,
        num_hypotheses=2,
        max_decoding_length=8,
    )
    values = yaml.safe_load(params.read_text())
    values["captions"]["plan"] = {"warmup": 4}
    values["captions"]["input"]["max_bad_fraction"] = 0.05
    params.write_text(yaml.safe_dump(values, sort_keys=False))
    with captions.open("a", encoding="utf-8") as handle:
        handle.write("blank,blank.jpg,   \n")  # a bad row: counted in the plan, not a caption
    monkeypatch.chdir(tmp_path)  # no run recorded a rate: the plan measures a warm-up
    assert main(["captions_plan", "--params", str(params)]) == 0
    out = capsys.readouterr().out
    assert "captions        35" in out
    assert "input rows      36 rows read, 35 kept, 1 quarantined (empty_caption 1) (on_bad_row skip)" in out
    assert "shards          4 of up to 10 captions (0 current, 4 to translate)" in out
    assert "pairs           70 (2 target languages)" in out
    assert "a warm-up of 4 captions" in out
    assert not (tmp_path / "data").exists()


@pytest.mark.slow
def test_translate_and_tag_on_ray_write_the_bytes_of_the_local_runner(tmp_path, xtd_texts, tiny_nllb, tiny_kiwi_dir):
    """The real stages (tiny NLLB, tiny COMETKiwi) on a local Ray, two actors each loading its
    model once, shards read as the actors take them: hypotheses/ and attributes/ byte-identical
    to the local runner's (the actors run under the stage's CPU pin, passed to Ray's workers)."""
    pytest.importorskip("ray")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    texts = xtd_texts[:12]
    built = {}
    for runner in ("local", "ray"):
        root = tmp_path / runner
        root.mkdir()
        params = write_params(
            root,
            write_captions(root / "captions.csv", texts),
            tiny_kiwi_dir,
            nllb_dir=Path(tiny_nllb),
            shard_size=6,
            beam_size=2,
            num_hypotheses=2,
            max_decoding_length=10,
        )
        values = yaml.safe_load(params.read_text())
        values["captions"]["runner"].update(runner=runner, concurrency=2, local_cpus=2)
        params.write_text(yaml.safe_dump(values, sort_keys=False))
        # Both stages in one process, as the CLI runs them: the CPU pinned before torch loads, the
        # second stage finding the same pin (and the libraries the first one loaded).
        subprocess.run(
            [sys.executable, "-c", TRANSLATE_THEN_TAG, str(params)], env=env, cwd=root, capture_output=True, check=True
        )
        built[runner] = {
            f"{name}/{path.name}": path.read_bytes()
            for name in ("hypotheses", "attributes")
            for path in sorted((root / "data" / name).iterdir())
        }
    assert len(built["ray"]) == 2 * 2 * 2  # two directories of two shards, a Parquet and a manifest each
    assert built["ray"] == built["local"]
