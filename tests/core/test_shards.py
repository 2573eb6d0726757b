"""Shards and runners: planning, manifests, resume, stale and broken shards, local vs Ray."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pads
import pytest

from babelforge.core import shards
from babelforge.core.determinism import cpu_environment
from babelforge.core.errors import BabelforgeError
from babelforge.core.ray_connect import ray_init_options
from babelforge.core.runner_config import RunnerConfig
from babelforge.core.runners import run_sharded
from babelforge.core.shard_work import slice_reader

from .shard_workers import TextStats, kill_after_shards

REPO = Path(__file__).resolve().parents[2]
SHARD_SIZE = 40


@pytest.fixture(scope="module")
def captions(shared_data) -> pa.Table:
    """The English XTD captions with synthetic ids: real texts, 1,000 rows."""
    data = json.loads((shared_data / "xtd" / "xtd.json").read_text(encoding="utf-8"))
    texts = [caption[0] if isinstance(caption, list) else caption for caption in data["captions"]["en"]]
    return pa.table({"id": [f"c{i:06d}" for i in range(len(texts))], "text": texts})


def batches_of(table: pa.Table, size: int):
    return table.to_batches(max_chunksize=size)


def build(directory: Path, table: pa.Table, runner=RunnerConfig(batch_size=16), suffix="", params=None):
    plan = shards.plan_shards(batches_of(table, 37), SHARD_SIZE)
    return run_sharded(
        directory,
        plan,
        slice_reader(table),
        TextStats,
        (suffix,),
        runner,
        params_hash=shards.stable_hash(params or {"suffix": suffix}),
        model_hash="m1",
        sort_by=["id"],
        desc="test",
    )


def directory_bytes(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def test_planning_cuts_fixed_size_shards_whatever_the_input_batches(captions):
    table = captions.slice(0, 130)
    by_37 = shards.plan_shards(batches_of(table, 37), SHARD_SIZE)
    by_1 = shards.plan_shards(batches_of(table, 1), SHARD_SIZE)
    assert by_37 == by_1
    assert [(s.index, s.start, s.stop) for s in by_37] == [(0, 0, 40), (1, 40, 80), (2, 80, 120), (3, 120, 130)]
    assert by_37[0].input_hash == shards.table_hash(table.slice(0, 40))
    assert len({s.input_hash for s in by_37}) == 4
    # one changed row changes its shard's hash and no other
    changed = table.set_column(1, "text", pa.array(["a new caption"] + table.column("text").to_pylist()[1:]))
    replanned = shards.plan_shards(batches_of(changed, 50), SHARD_SIZE)
    assert [a.input_hash == b.input_hash for a, b in zip(by_37, replanned)] == [False, True, True, True]
    with pytest.raises(BabelforgeError):
        shards.plan_shards(batches_of(table, 10), 0)


def test_manifest_commits_a_shard_and_records_what_makes_it_current(tmp_path, captions):
    ((shard, rows),) = list(shards.iter_shards([captions.slice(0, 10)], 10))
    out = TextStats()(rows)
    manifest = shards.write_shard(tmp_path, shard, out, params_hash="p", model_hash="m", sort_by=["id"])
    assert json.loads((tmp_path / "shard-00000.json").read_text()) == {
        "shard": 0,
        "input_rows": 10,
        "input_hash": shard.input_hash,
        "params_hash": "p",
        "model_hash": "m",
        "rows": 10,
        "sha256": manifest.sha256,
    }
    assert shards.is_current(tmp_path, shard, "p", "m")
    assert not shards.is_current(tmp_path, shard, "p2", "m")
    assert not shards.is_current(tmp_path, shard, "p", "m2")
    other = shards.Shard(0, 0, 10, "another input")
    assert not shards.is_current(tmp_path, other, "p", "m")
    # no manifest: not committed, even though the Parquet is there
    (tmp_path / "shard-00000.json").unlink()
    assert not shards.is_current(tmp_path, shard, "p", "m")
    with pytest.raises(BabelforgeError, match="unfinished"):
        shards.committed_files(tmp_path)


def test_a_rerun_does_nothing_and_a_params_change_redoes_every_shard(tmp_path, captions):
    table = captions.slice(0, 130)
    first = build(tmp_path, table)
    assert first.shards == 4 and first.rows_in == 130
    before = directory_bytes(tmp_path)
    assert build(tmp_path, table).shards == 0
    assert directory_bytes(tmp_path) == before
    assert build(tmp_path, table, suffix="!").shards == 4


def test_a_changed_input_row_redoes_its_shard_and_no_other(tmp_path, captions):
    table = captions.slice(0, 130)
    build(tmp_path, table)
    before = directory_bytes(tmp_path)
    texts = table.column("text").to_pylist()
    texts[85] = "a caption that changed"
    stats = build(tmp_path, table.set_column(1, "text", pa.array(texts)))
    assert stats.shards == 1
    after = directory_bytes(tmp_path)
    assert [name for name in after if after[name] != before[name]] == ["shard-00002.json", "shard-00002.parquet"]


def test_a_truncated_shard_is_detected_and_redone(tmp_path, captions):
    table = captions.slice(0, 130)
    build(tmp_path, table)
    before = directory_bytes(tmp_path)
    broken = tmp_path / "shard-00001.parquet"
    broken.write_bytes(broken.read_bytes()[: broken.stat().st_size // 2])
    stats = build(tmp_path, table)
    assert stats.shards == 1
    assert directory_bytes(tmp_path) == before


def test_a_shorter_input_removes_the_shards_it_no_longer_has(tmp_path, captions):
    build(tmp_path, captions.slice(0, 130))
    assert build(tmp_path, captions.slice(0, 80)).shards == 0
    assert sorted(shards.listed_shards(tmp_path)) == [0, 1]


def test_the_directory_reads_as_one_dataset_with_columns_and_filters(tmp_path, captions):
    table = captions.slice(0, 130)
    build(tmp_path, table)
    whole = shards.read(tmp_path)
    assert whole.num_rows == 130 and whole.column_names == ["id", "upper", "words"]
    assert whole.column("id").to_pylist() == table.column("id").to_pylist()
    some = shards.read(tmp_path, columns=["id", "words"], filter=pads.field("words") > 12)
    assert some.column_names == ["id", "words"]
    assert some.num_rows == sum(len(text.split()) > 12 for text in table.column("text").to_pylist())
    assert sum(batch.num_rows for batch in shards.iter_batches(tmp_path, ["id"], batch_size=16)) == 130
    summary = shards.digest(tmp_path)
    assert summary["shards"] == 4 and summary["rows"] == 130
    assert shards.digest(tmp_path) == summary


def test_a_digest_is_the_same_however_the_directory_is_spelled(tmp_path, captions, monkeypatch):
    """A downstream record (captions_select's sources) names the folder, not the path as given."""
    build(tmp_path / "hypotheses", captions.slice(0, 50))
    monkeypatch.chdir(tmp_path)
    absolute, relative = shards.digest(tmp_path / "hypotheses"), shards.digest("hypotheses")
    assert absolute == relative and absolute["name"] == "hypotheses" and absolute["rows"] == 50


KILLED_RUN = textwrap.dedent("""
    import json, sys
    import pyarrow as pa
    from babelforge.core import shards
    from babelforge.core.runner_config import RunnerConfig
    from babelforge.core.runners import run_sharded
    from babelforge.core.shard_work import slice_reader
    from tests.core.shard_workers import TextStats

    directory, source = sys.argv[1], sys.argv[2]
    rows = json.loads(open(source).read())
    table = pa.table({"id": [r[0] for r in rows], "text": [r[1] for r in rows]})
    plan = shards.plan_shards(table.to_batches(max_chunksize=37), 40)
    run_sharded(directory, plan, slice_reader(table), TextStats, ("", 0.15), RunnerConfig(batch_size=16),
                params_hash=shards.stable_hash({"suffix": ""}), model_hash="m1", sort_by=["id"], desc="killed")
""")


@pytest.mark.slow
def test_after_sigkill_a_rerun_redoes_only_the_unfinished_shards(tmp_path, captions):
    """A real subprocess killed with SIGKILL mid-run; the rerun redoes at most the shard that was
    in flight beyond those never started, and ends byte-identical to an uninterrupted build."""
    table = captions.slice(0, 400)  # 10 shards of 3 chunks, 0.45 s a shard
    source = tmp_path / "rows.json"
    source.write_text(json.dumps(list(zip(table.column("id").to_pylist(), table.column("text").to_pylist()))))
    killed = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED_RUN, str(killed), str(source)], env=env, stderr=subprocess.PIPE
    )
    committed = kill_after_shards(process, killed, 3, timeout=60)
    assert 3 <= committed < 10, "the run was not killed in the middle"
    stats = build(killed, table)
    assert stats.shards == 10 - committed
    clean = tmp_path / "clean"
    build(clean, table)
    assert directory_bytes(killed) == directory_bytes(clean)


@pytest.mark.slow
@pytest.mark.local_ray
def test_local_and_ray_write_byte_identical_shards(tmp_path, captions):
    """A local Ray (2 CPUs, no dashboard), two actors: the same bytes as the local runner."""
    pytest.importorskip("ray")
    table = captions.slice(0, 130)
    build(tmp_path / "local", table)
    stats = build(tmp_path / "ray", table, RunnerConfig(runner="ray", concurrency=2, batch_size=16, local_cpus=2))
    assert stats.shards == 4 and stats.rows_out == 130
    assert directory_bytes(tmp_path / "ray") == directory_bytes(tmp_path / "local")


def test_a_local_ray_inherits_the_pin_and_a_cluster_gets_it_as_the_job_environment():
    """Ray started here spawns its workers with this process's environment (no job environment,
    so Ray can hand the actors the workers it started ahead); a cluster gets the pin explicitly."""
    pin = cpu_environment("AVX2")
    local = ray_init_options(RunnerConfig(runner="ray", local_cpus=2), environ=pin)
    assert local["num_cpus"] == 2 and not local["include_dashboard"]
    assert "runtime_env" not in local
    assert local["address"] == "local"  # a new Ray, never the default address an earlier `ray start` left
    cluster = ray_init_options(RunnerConfig(runner="ray"), environ={**pin, "RAY_ADDRESS": "ray://head:10001"})
    assert cluster["address"] == "ray://head:10001" and cluster["runtime_env"] == {"env_vars": pin}
    named = ray_init_options(RunnerConfig(runner="ray", address="auto"), environ={"PATH": "/bin"})
    assert named["address"] == "auto" and "runtime_env" not in named  # nothing pinned, nothing sent


def test_a_cluster_client_turns_token_auth_on_when_it_has_a_token(tmp_path):
    """Ray connects to a given address without the token unless RAY_AUTH_MODE=token: the runner
    sets it when a token is at hand (variable, file, ~/.ray/auth_token), never reading it."""
    from babelforge.core.ray_connect import ray_auth_environment

    home = tmp_path / "home"
    home.mkdir()
    assert ray_auth_environment({"HOME": str(home)}) == {}
    assert ray_auth_environment({"HOME": str(home), "RAY_AUTH_TOKEN": "x"}) == {"RAY_AUTH_MODE": "token"}
    token = tmp_path / "token"
    assert ray_auth_environment({"HOME": str(home), "RAY_AUTH_TOKEN_PATH": str(token)}) == {}
    token.write_text("x")
    assert ray_auth_environment({"HOME": str(home), "RAY_AUTH_TOKEN_PATH": str(token)}) == {"RAY_AUTH_MODE": "token"}
    (home / ".ray").mkdir()
    (home / ".ray" / "auth_token").write_text("x")
    assert ray_auth_environment({"HOME": str(home)}) == {"RAY_AUTH_MODE": "token"}
    assert ray_auth_environment({"HOME": str(home), "RAY_AUTH_MODE": "disabled"}) == {}  # the user's choice


def test_a_failed_connection_is_one_line_saying_what_to_do(monkeypatch):
    from babelforge.core.ray_connect import _connection_failure

    def failure(text: str) -> ConnectionError:
        try:
            try:
                raise RuntimeError(text)
            except RuntimeError as inner:
                raise ConnectionError("Failed to connect to Ray cluster at 192.0.2.2:6390") from inner
        except ConnectionError as error:
            return error

    refused = failure("Failed to connect to GCS. Last connection error: ... RPC error: InvalidAuthToken: ...")
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    assert "wants a token and this client has none: give it" in _connection_failure("127.0.0.1:6390", refused)
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    assert "RAY_AUTH_MODE=disabled here sends none (unset it)" in _connection_failure("head:6379", refused)
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    message = _connection_failure("head:6379", refused)
    assert message.startswith("ray: the cluster at head:6379 refused this client's token (or it has none): give it")
    monkeypatch.delenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", raising=False)
    silent = _connection_failure("127.0.0.1:6390", failure("Failed to connect to GCS. Timed out"))
    assert silent.startswith("ray: no cluster answered at 127.0.0.1:6390 (Failed to connect to Ray cluster at 192.0")
    assert "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 here too" in silent
    assert "\n" not in message + silent
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # already set: no advice to set it
    assert "RAY_ENABLE" not in _connection_failure("127.0.0.1:6390", failure("Failed to connect to GCS. Timed out"))


def test_a_cluster_address_names_the_port_asked_first_and_a_model_path_is_made_absolute(tmp_path, monkeypatch):
    from babelforge.core.ray_connect import _endpoint
    from babelforge.core.ray_runner import model_path

    assert _endpoint("ray://head:10001") == ("head", 10001)
    assert _endpoint("ray://head") == ("head", 10001)  # Ray client's default port
    assert _endpoint("head:6379") == ("head", 6379)
    assert _endpoint("[::1]:6379") == ("::1", 6379)
    assert _endpoint("auto") is None  # a cluster of this machine, found by Ray
    (tmp_path / "models" / "nllb").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert model_path("models/nllb") == str(tmp_path / "models" / "nllb")
    assert model_path("Unbabel/wmt22-cometkiwi-da") == "Unbabel/wmt22-cometkiwi-da"  # a Hub id, fetched by each node


@pytest.mark.slow
def test_ray_actors_run_under_the_stages_cpu_pin(captions, monkeypatch):
    """What makes `local` and `ray` write the same bytes: every actor's process has the pin."""
    pytest.importorskip("ray")
    from babelforge.core.runners import run_shards

    from .shard_workers import PinReport

    pin = cpu_environment("AVX2")
    for name, value in pin.items():
        monkeypatch.setenv(name, value)
    table = captions.slice(0, 120)
    reader = slice_reader(table)
    outputs = []
    run_shards(
        [(shard, reader(shard)) for shard in shards.plan_shards([table], SHARD_SIZE)],
        PinReport,
        (),
        RunnerConfig(runner="ray", concurrency=2, batch_size=16, local_cpus=2),
        lambda shard, output: outputs.append(output),
    )
    reported = {value for output in outputs for value in output.column("pin").to_pylist()}
    assert sum(output.num_rows for output in outputs) == 120
    assert [json.loads(value) for value in reported] == [pin]


@pytest.mark.parametrize("runner", ["local", pytest.param("ray", marks=[pytest.mark.slow, pytest.mark.local_ray])])
def test_each_shard_logs_a_line_with_the_workers_time_on_it(tmp_path, captions, capsys, runner):
    """One line per shard written, with the time the worker spent on it: under Ray the actors'
    time, measured where the work ran (the chunks arrive here all at once, so the driver's
    clock would say 0.0 s)."""
    import re

    if runner == "ray":
        pytest.importorskip("ray")
    table = captions.slice(0, 120)
    plan = shards.plan_shards([table], SHARD_SIZE)
    delay = 0.2  # per chunk: three chunks of at most 16 rows a shard, 0.6 s (the line rounds to 0.1 s)
    run_sharded(
        tmp_path,
        plan,
        slice_reader(table),
        TextStats,
        ("", delay),
        RunnerConfig(runner=runner, concurrency=2, batch_size=16, local_cpus=2),
        params_hash="p",
        model_hash="m",
        sort_by=["id"],
        desc="test",
    )
    lines = re.findall(
        r"^test: (shard-\d+) done \((\d)/3\), 40 rows in ([\d.]+) s, [\d,]+ rows/s, ETA .+$",
        capsys.readouterr().err,
        flags=re.M,
    )
    assert sorted(name for name, _, _ in lines) == ["shard-00000", "shard-00001", "shard-00002"]
    assert [done for _, done, _ in lines] == ["1", "2", "3"]
    assert all(float(seconds) >= 3 * delay - 0.05 for _, _, seconds in lines), lines


def reads_ahead_of_writes(tmp_path, runner: RunnerConfig, n_shards: int) -> list[int]:
    """Run `n_shards` one-chunk shards, each read by a reader that logs its read; for each shard
    written, how many shards had been read but not yet written at that moment."""
    import functools

    from babelforge.core.runners import run_shards

    from .shard_workers import logged_read

    log = tmp_path / "reads.log"
    log.write_text("")
    table = pa.table({"id": [f"c{i:05d}" for i in range(n_shards * 40)], "text": ["one two three"] * (n_shards * 40)})
    plan = shards.plan_shards([table], 40)
    reader = slice_reader(table)
    ahead: list[int] = []

    def write(shard, output):
        assert output.num_rows == 40
        ahead.append(len(log.read_text().splitlines()) - len(ahead) - 1)

    run_shards(
        [(shard, functools.partial(logged_read, str(log), reader(shard))) for shard in plan],
        TextStats,
        ("", 0.05),
        runner,
        write,
    )
    assert len(ahead) == n_shards
    return ahead


def test_the_local_runner_reads_a_shard_only_when_it_works_on_it(tmp_path):
    assert set(reads_ahead_of_writes(tmp_path, RunnerConfig(batch_size=40), 6)) == {0}


@pytest.mark.slow
@pytest.mark.local_ray
def test_ray_reads_the_input_as_the_actors_take_it_not_all_at_once(tmp_path):
    """The driver reads the pending shards as the actors take them: the input never sits whole in
    the object store. 96 shards, 2 slow actors: at any write, at most AHEAD_PER_ACTOR shards per
    actor have been read ahead (a runner that read everything first would have read 95)."""
    pytest.importorskip("ray")
    from babelforge.core.ray_runner import AHEAD_PER_ACTOR

    ahead = reads_ahead_of_writes(tmp_path, RunnerConfig(runner="ray", concurrency=2, batch_size=40, local_cpus=2), 96)
    assert max(ahead) <= 2 * AHEAD_PER_ACTOR, ahead


@pytest.mark.parametrize("runner", ["local", pytest.param("ray", marks=[pytest.mark.slow, pytest.mark.local_ray])])
def test_a_reader_giving_other_rows_than_planned_stops_the_run(tmp_path, captions, runner):
    """An input that changed since planning: one error naming the shard (under Ray too, out of
    the read task that found it), and no shard written for it."""
    if runner == "ray":
        pytest.importorskip("ray")
    table = captions.slice(0, 80)
    plan = shards.plan_shards([table], SHARD_SIZE)
    shorter = slice_reader(captions.slice(0, 70))
    with pytest.raises(BabelforgeError, match="^the input of shard-00001 has 30 rows, the plan 40"):
        run_sharded(
            tmp_path,
            plan,
            shorter,
            TextStats,
            (),
            RunnerConfig(runner=runner, batch_size=16, local_cpus=2),
            params_hash="p",
            model_hash="m",
            sort_by=["id"],
            desc="test",
        )
    assert 1 not in shards.listed_shards(tmp_path)


@pytest.mark.slow
@pytest.mark.local_ray
def test_an_actor_killed_mid_shard_is_restarted_and_its_shard_retried(tmp_path, captions, capsys):
    """An actor's process SIGKILLs itself in the middle of shard 2 (once: a file remembers): Ray
    restarts the actor and retries the chunk, the stage log counts the restart, and the shards
    are byte-identical to the local runner's."""
    pytest.importorskip("ray")
    from .shard_workers import Fragile

    table = captions.slice(0, 160)
    plan = shards.plan_shards([table], SHARD_SIZE)
    log = tmp_path / "calls.log"
    victim = table.column("id")[2 * SHARD_SIZE + 20].as_py()  # shard 2, in its second chunk of 16 rows
    outputs = {}
    for runner, worker, args in [("local", TextStats, ("", 0.05)), ("ray", Fragile, (str(log), victim, 0.05, 1, 2))]:
        run_sharded(
            tmp_path / runner,
            plan,
            slice_reader(table),
            worker,
            args,
            # a retried chunk that never comes back fails in 2 minutes, not the default 15 (seen once under load)
            RunnerConfig(
                runner=runner,
                concurrency=2,
                batch_size=16,
                local_cpus=2,
                max_restarts=1,
                max_task_retries=1,
                stall_floor=120,
            ),
            params_hash="p",
            model_hash="m",
            sort_by=["id"],
            desc="test",
        )
        outputs[runner] = directory_bytes(tmp_path / runner)
    assert len((tmp_path / "calls.log.died").read_text().splitlines()) == 1, "the actor did not die"
    assert outputs["ray"] == outputs["local"]
    assert "test: ray restarted 1 actor(s) whose process died" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.local_ray
def test_an_actor_that_dies_beyond_its_restarts_stops_the_run_with_one_line(tmp_path, captions, capsys):
    """A chunk that kills every process it meets, with no restart and no retry allowed: one error
    line naming the limits and where Ray's messages are, and the shards written before it kept."""
    pytest.importorskip("ray")
    from babelforge.core.ray_log import ray_log_path

    from .shard_workers import Fragile

    table = captions.slice(0, 160)
    victim = table.column("id")[3 * SHARD_SIZE + 20].as_py()  # in the last shard, its second chunk
    config = RunnerConfig(runner="ray", concurrency=1, batch_size=16, local_cpus=2, max_restarts=0, max_task_retries=0)
    with pytest.raises(BabelforgeError) as raised:
        run_sharded(
            tmp_path / "out",
            shards.plan_shards([table], SHARD_SIZE),
            slice_reader(table),
            Fragile,
            # each chunk takes a moment: what an actor has returned reaches the driver before it dies
            (str(tmp_path / "calls.log"), victim, 0.2, 99),
            config,
            params_hash="p",
            model_hash="m",
            sort_by=["id"],
            desc="test",
        )
    assert str(raised.value) == (
        "ray: a worker process died more often than max_restarts=0 and max_task_retries=0 allow (a lost node, "
        f"a chunk that kills its process every time, or memory: Ray's messages are in {ray_log_path()}); "
        "the shards written are kept"
    )
    assert sorted(shards.listed_shards(tmp_path / "out")) == [0, 1, 2]  # one actor: shard order


@pytest.mark.slow
@pytest.mark.local_ray
def test_a_worker_error_stops_the_run_with_its_own_line_not_rays_traceback(tmp_path, captions):
    """Ray raises a worker's BabelforgeError as its own subclass of it, whose text is the remote
    traceback: the stage's line is the worker's message."""
    pytest.importorskip("ray")
    from .shard_workers import NodeModel

    table = captions.slice(0, 80)
    with pytest.raises(BabelforgeError) as raised:
        run_sharded(
            tmp_path / "out",
            shards.plan_shards([table], SHARD_SIZE),
            slice_reader(table),
            NodeModel,
            ("no-such-model-here",),
            RunnerConfig(runner="ray", concurrency=1, batch_size=16, local_cpus=2),
            params_hash="p",
            model_hash="m",
            sort_by=["id"],
            desc="test",
        )
    assert type(raised.value) is BabelforgeError
    assert str(raised.value).startswith("ray: node ") and str(raised.value).endswith(
        "no-such-model-here: not on this node; every node needs the models at the same absolute path "
        "(a shared volume or the nodes' image)"
    )


@pytest.mark.slow
@pytest.mark.local_ray
def test_a_failed_run_still_receives_the_results_already_back_in_submission_order():
    """Results that came back before the stop are received (a shard they complete is written), in
    the order they were sent; one that failed too, or is not back in time, is left."""
    pytest.importorskip("ray")
    import ray

    from babelforge.core import ray_runner

    @ray.remote
    def chunk(value):
        if value == "lost":
            raise RuntimeError("its actor died")
        if value == "late":
            time.sleep(ray_runner.LAST_RESULTS_WAIT_S + 3)
        return value

    sent = ["a", "lost", "b", "late", "c"]
    in_flight = {chunk.remote(value): value for value in sent}
    ray.wait([ref for ref, value in in_flight.items() if value != "late"], num_returns=4)  # all but late back
    accepted = []

    def accept(result, value):
        in_flight.pop(result)
        accepted.append(value)

    started = time.monotonic()
    ray_runner._keep_what_came_back(in_flight, accept)
    assert accepted == ["a", "b", "c"]
    assert sorted(in_flight.values()) == ["late", "lost"]  # neither accepted: their shards stay to do
    assert time.monotonic() - started < ray_runner.LAST_RESULTS_WAIT_S + 2
