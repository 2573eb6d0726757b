"""A caption stage that fails leaves what it had written before byte for byte (babelforge.core.io.OutputGuard);
a selection over shard folders made from different inputs stops with one line; the plan's estimate
follows the settings, not a run made with others."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from babelforge.cli import main
from babelforge.core.output_guard import OutputGuard
from babelforge.core.rates import RATES_DIR
from tests.project import tree_digests
from tests.reliability.workspace import leftovers

from .conftest import StubTranslator
from .test_sharded_stages import write_captions, write_params

pytestmark = pytest.mark.slow  # each runs captions_translate (a stub translator) in this process

GOOD = [f"a photo of dog number {i}" for i in range(40)]
# half the rows are empty captions: far more than max_bad_fraction, found after source/ shards were cut
BAD = [("" if i % 2 else f"another caption {i}") for i in range(40)]


@pytest.fixture()
def translated(tmp_path, monkeypatch):
    """A project folder with captions_translate run once on 40 good captions (4 shards, stub translator)."""
    from babelforge.captions import translate_worker

    monkeypatch.setattr(translate_worker, "make_translator", lambda config: StubTranslator(num_hypotheses=2))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kiwi").mkdir()
    captions = write_captions(tmp_path / "captions.csv", GOOD)
    params = write_params(tmp_path, captions, tmp_path / "kiwi", shard_size=10, num_hypotheses=2, beam_size=2)
    assert main(["captions_translate", "--params", str(params)]) == 0
    return tmp_path, params


def test_a_translate_stopped_by_its_input_leaves_its_tracked_outputs_byte_identical(translated, capsys):
    root, params = translated
    before = tree_digests(root / "data")
    write_captions(root / "captions.csv", BAD)
    capsys.readouterr()
    assert main(["captions_translate", "--params", str(params)]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if ": error: " in line]
    assert len(errors) == 1 and "20 of 40 captions are bad" in errors[0]
    assert tree_digests(root / "data") == before  # source/ and references/ were rewritten before the guard
    assert leftovers(root) == []


def test_the_guard_keeps_the_first_version_a_second_success_replaces(translated):
    root, params = translated
    write_captions(root / "captions.csv", GOOD[:25])
    assert main(["captions_translate", "--params", str(params)]) == 0
    assert sorted(path.name for path in (root / "data" / "source").glob("*.parquet")) == [
        "shard-00000.parquet",
        "shard-00001.parquet",
        "shard-00002.parquet",
    ]
    assert leftovers(root) == []


def test_select_over_source_and_hypotheses_of_different_inputs_fails_with_one_line(translated, monkeypatch, capsys):
    """The state a failed translate left before outputs were guarded (its guard taken away here): source/
    of the bad input, hypotheses/ of the good one. The selection used to exit 0 with 0 of N translated."""
    root, params = translated
    monkeypatch.setattr("babelforge.cli.OutputGuard", NoGuard)
    write_captions(root / "captions.csv", BAD)
    assert main(["captions_translate", "--params", str(params)]) == 1
    data = root / "data"
    shutil.copytree(data / "hypotheses", data / "attributes")  # committed shards: the check comes first
    capsys.readouterr()
    assert main(["captions_select", "--params", str(params)]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if ": error: " in line]
    assert len(errors) == 1
    assert "shard-00000 of hypotheses/ and source/ was made from other input rows" in errors[0]
    assert "rerun `babelforge captions_translate`" in errors[0]
    assert not (data / "selected.parquet").exists()


class NoGuard(OutputGuard):
    """The guard as it was before: the outputs stay as the stage left them."""

    def __exit__(self, kind, error, trace) -> None:
        self._discard()


def test_the_plan_estimates_from_the_settings_not_from_a_run_with_other_settings(translated, monkeypatch, capsys):
    """A run with 2 targets x 2 hypotheses recorded its rate; planned with the same settings the plan
    uses it, with 1 target and 1 hypothesis it measures a warm-up (it used to say 4 per pair)."""
    from babelforge.captions import plan_stage, translate_worker

    root, params = translated
    rates = root / "data" / RATES_DIR
    recorded = json.loads((rates / "captions_translate.json").read_text())
    assert recorded["rows_out_per_input_row"] == 4.0  # 2 targets x 2 hypotheses
    tag_rate = {**recorded, "stage": "captions_tag", "unit": "hypotheses", "rows_out_per_input_row": 1.0}
    (rates / "captions_tag.json").write_text(json.dumps(tag_rate))
    monkeypatch.setattr(plan_stage, "TagWorker", StubTagger)

    assert main(["captions_plan", "--params", str(params)]) == 0
    out = capsys.readouterr().out
    assert "(2.00 per pair, num_hypotheses 2)" in out and "measured by the last local run" in out

    values = yaml.safe_load(params.read_text())
    values["captions"]["input"]["targets"] = ["deu_Latn"]
    values["captions"]["translate"]["num_hypotheses"] = 1
    values["captions"]["plan"] = {"warmup": 4}
    params.write_text(yaml.safe_dump(values, sort_keys=False))
    monkeypatch.setattr(translate_worker, "make_translator", lambda config: StubTranslator(num_hypotheses=1))
    assert main(["captions_plan", "--params", str(params)]) == 0
    out = capsys.readouterr().out
    assert "hypotheses      40 (1.00 per pair, num_hypotheses 1)" in out
    assert "a warm-up of 4 captions" in out


class StubTagger:
    """TagWorker's interface without a Kiwi model: one attribute row per hypothesis."""

    def __init__(self, config, in_play):
        pass

    def __call__(self, inputs):
        import pyarrow as pa

        return pa.table({"caption_id": inputs.column("caption_id"), "kiwi_v1__score": [0.5] * inputs.num_rows})
