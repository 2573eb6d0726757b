"""The throughput a sharded run records for `babelforge captions_plan` (babelforge.core.rates.record_rate):
rates in input rows, so a stage that writes more rows than it reads (translations: hypotheses per
caption) is not planned as faster than it ran."""

from __future__ import annotations

import pyarrow as pa

from babelforge.core import shards
from babelforge.core.rates import RATES_DIR, measured_rate, record_rate
from babelforge.core.runner_config import RunnerConfig
from babelforge.core.runners import run_sharded
from babelforge.core.shard_work import RunStats, slice_reader


class TwoPerRow:
    """A worker writing two rows per input row, as captions_translate writes hypotheses per caption."""

    def __call__(self, batch):
        ids = batch.column("id").to_pylist()
        return pa.table({"id": [2 * i + k for i in ids for k in (0, 1)]})


def test_the_recorded_rate_counts_input_rows_and_the_rows_written_per_input_row(tmp_path):
    table = pa.table({"id": list(range(120)), "text": [f"caption {i}" for i in range(120)]})
    runner = RunnerConfig(batch_size=16)
    stats = run_sharded(
        tmp_path,
        shards.plan_shards([table], 40),
        slice_reader(table),
        TwoPerRow,
        (),
        runner,
        params_hash="p",
        model_hash="m",
        sort_by=["id"],
        desc="rate",
    )
    assert (stats.shards, stats.rows_in, stats.rows_out) == (3, 120, 240) and stats.seconds > 0
    record_rate(tmp_path, "captions_translate", stats, runner, unit="hypotheses", params_hash="p")
    rate = measured_rate(tmp_path, "captions_translate")
    assert (tmp_path / RATES_DIR / "captions_translate.json").is_file()
    assert (rate["runner"], rate["concurrency"], rate["unit"]) == ("local", 1, "hypotheses")
    assert (rate["rows_in"], rate["rows_out"], rate["rows_out_per_input_row"]) == (120, 240, 2.0)
    assert rate["rows_in_per_second"] == 120 / stats.seconds
    assert rate["steady_rows_in_per_second"] == stats.steady_rate()
    assert rate["seconds"] == round(stats.seconds, 3)
    assert measured_rate(tmp_path, "captions_tag") is None


def test_a_run_with_no_input_rows_or_no_time_records_no_rate(tmp_path):
    """A rate of nothing (no rows, or a clock that did not move) would divide by zero: none is kept."""
    runner = RunnerConfig()
    for stats in (RunStats(rows_in=0, rows_out=0, seconds=2.0), RunStats(rows_in=40, rows_out=80, seconds=0.0)):
        record_rate(tmp_path, "captions_translate", stats, runner, unit="hypotheses")
    assert measured_rate(tmp_path, "captions_translate") is None
