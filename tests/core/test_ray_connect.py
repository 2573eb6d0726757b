"""Connect checks that answer at once (issue 47 item 3): a port where something that is not Ray
answers (a web server replying 505 to gRPC's first bytes) stops the stage in about a second with
one line, not after `connect_timeout`; captions_tag asks the address before it loads COMETKiwi;
a real Ray head's GCS and client server pass the check."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from babelforge.cli import main
from babelforge.core.errors import BabelforgeError
from babelforge.core.ray_connect import HTTP2_PREFACE, check_ray_address, foreign_answer
from babelforge.core.runner_config import RunnerConfig
from tests.loopback import LoopbackServer, serving

from .ray_cluster import loopback_cluster

SETTINGS_FRAME = bytes([0, 0, 6, 4, 0, 0, 0, 0, 0]) + bytes([0, 3, 0, 0, 0, 100])  # what a gRPC server sends first


def test_an_http2_settings_frame_is_ray_and_anything_else_is_named():
    assert foreign_answer(SETTINGS_FRAME) is None
    assert foreign_answer(b"") is None  # nothing answered: the Ray question decides
    assert foreign_answer(b"HTTP/1.0 505 HTTP Version Not Supported\r\nServer: x\r\n") == (
        "HTTP/1.0 505 HTTP Version Not Supported Server: x"
    )
    page = b"<html>\n <title>Error response</title>\n <p>Error code: 505</p>\n</html>"
    assert foreign_answer(page) == "Error response Error code: 505"  # an HTML page's text, one line
    assert foreign_answer(b"\x15\x03\x01\x00\x02\x02\x46") == "??????F"  # a TLS alert, made printable
    assert foreign_answer(HTTP2_PREFACE[-9:]) is None  # a SETTINGS frame of no settings


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_a_web_server_on_the_port_is_one_line_in_about_a_second(scheme):
    pytest.importorskip("ray")
    with serving(LoopbackServer()) as server:
        address = f"{scheme}127.0.0.1:{server.server_address[1]}"
        began = time.monotonic()
        with pytest.raises(BabelforgeError) as raised:
            check_ray_address(RunnerConfig(runner="ray", address=address, connect_timeout=20))
        seconds = time.monotonic() - began
    message = str(raised.value)
    assert message.startswith(f"ray: no cluster answered at {address}: something that is not Ray answers there")
    assert "505" in message and "\n" not in message
    assert seconds < 2, seconds  # Ray's clients would retry for the whole connect_timeout (20 s)


def test_captions_tag_asks_the_cluster_before_it_loads_cometkiwi(tmp_path, monkeypatch, capsys):
    pytest.importorskip("ray")
    from babelforge.captions import tag_stage

    loaded = []
    monkeypatch.setattr(tag_stage, "kiwi_scorer", lambda *args: loaded.append(args))
    with serving(LoopbackServer()) as server:
        address = f"127.0.0.1:{server.server_address[1]}"
        began = time.monotonic()
        code = main(
            ["captions_tag", "--set", "captions.runner.runner=ray", "--set", f"captions.runner.address={address}"]
            + ["--out", str(tmp_path / "data")]
        )
        seconds = time.monotonic() - began
    assert code == 1 and not loaded
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert errors == [errors[0]] and errors[0].startswith(
        f"babelforge captions_tag: error: ray: no cluster answered at {address}"
    )
    assert seconds < 5, seconds


@pytest.mark.slow
def test_a_real_head_passes_the_check_by_both_routes():
    """The GCS (head:port) and the Ray client server (ray://) of a real head answer gRPC's first
    bytes with HTTP/2: the check lets them through (and asks the token, which this client has).
    The driver is a process of its own: Ray reads its auth settings once per process, so a test
    process that imported Ray before could not take the cluster's token mode from its environment."""
    pytest.importorskip("ray")
    cluster = loopback_cluster()
    try:
        cluster.start(client=True)
        driver = cluster.root / "driver"
        driver.mkdir(exist_ok=True)
        check = (
            "import sys, time\n"
            "from babelforge.core.errors import BabelforgeError\n"
            "from babelforge.core.ray_connect import check_ray_address\n"
            "from babelforge.core.runner_config import RunnerConfig\n"
            "began = time.monotonic()\n"
            "check_ray_address(RunnerConfig(runner='ray', address=sys.argv[1], connect_timeout=20))\n"
            "print(f'client {time.monotonic() - began:.2f}')\n"
            "try:\n"
            "    check_ray_address(RunnerConfig(runner='ray', address=sys.argv[2], connect_timeout=20))\n"
            "    print('gcs passed')\n"
            "except BabelforgeError as error:\n"
            "    print('gcs', error)\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", check, cluster.client_address, cluster.address],
            env=cluster.environment(driver),
            cwd=driver,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr[-2000:]
        client, gcs = result.stdout.splitlines()[-2:]
        assert float(client.split()[1]) < 5
        # a GCS address: the answer is Ray's; only the node check may refuse a driver on no node
        assert gcs == "gcs passed" or "this machine runs no node" in gcs, gcs
    finally:
        cluster.stop()


@pytest.mark.slow
@pytest.mark.local_ray
def test_the_ray_log_is_named_once_per_run_not_once_per_image_set(tmp_path, monkeypatch, capsys):
    """Two sharded runs in one process (an eval stage's image sets): the log line once."""
    pytest.importorskip("ray")
    import pyarrow as pa

    from babelforge.core import ray_log, shards
    from babelforge.core.runners import run_sharded
    from babelforge.core.shard_work import slice_reader

    from .shard_workers import TextStats

    monkeypatch.setattr(ray_log, "_log_announced", set())
    table = pa.table({"id": [f"c{i:03d}" for i in range(20)], "text": ["a red bicycle"] * 20})
    for image_set in ("first", "second"):
        run_sharded(
            tmp_path / image_set,
            shards.plan_shards([table], 10),
            slice_reader(table),
            TextStats,
            ("",),
            RunnerConfig(runner="ray", concurrency=1, batch_size=10, local_cpus=2),
            params_hash="p",
            model_hash="m",
            sort_by=["id"],
            desc=f"image embeddings {image_set}",
        )
    err = capsys.readouterr().err
    assert err.count("Ray's own messages go to") == 1, err
    assert f"image embeddings first: Ray's own messages go to {ray_log.ray_log_path()}" in err


def test_the_token_is_found_in_a_cause_set_without_a_context(monkeypatch):
    """Ray attaches the GCS client's error as the cause of its own (`raise ... from`, or set after
    the fact): the line names the token whichever link of the chain carries it."""
    from babelforge.core.ray_connect import _connection_failure

    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    error = ConnectionError("Failed to connect to Ray cluster at head:6379")
    error.__cause__ = RuntimeError("RPC error: InvalidAuthToken")
    assert error.__context__ is None
    assert _connection_failure("head:6379", error).startswith("ray: the cluster at head:6379 wants a token")


def test_a_loopback_client_address_gets_the_loopback_advice(monkeypatch):
    from babelforge.core.ray_connect import _connection_failure

    monkeypatch.delenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", raising=False)
    line = _connection_failure("ray://127.0.0.1:10001", ConnectionError("Timed out"))
    assert "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 here too" in line


def test_an_ipv6_address_without_a_port_asks_the_default_port():
    from babelforge.core.ray_connect import _endpoint

    assert _endpoint("[::1]") == ("::1", 6379)
    assert _endpoint("ray://[::1]") == ("::1", 10001)


def test_a_closed_port_is_named_as_refused_in_one_line():
    import socket

    from babelforge.core.ray_connect import _silence

    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    line = _silence(f"127.0.0.1:{port}", "127.0.0.1", port, 2.0)
    assert line.startswith(f"ray: no cluster answered at 127.0.0.1:{port} (connection refused)"), line


def test_the_first_bytes_are_http2s_preface_and_an_empty_settings_frame():
    """RFC 9113 3.4 and 6.5: the client preface, then a SETTINGS frame (type 4) with no flags (not an
    acknowledgement), on stream 0, with no settings (length 0): what a gRPC client sends first."""
    preface, frame = HTTP2_PREFACE[:24], HTTP2_PREFACE[24:]
    assert preface == b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    length, kind, flags, stream = int.from_bytes(frame[:3], "big"), frame[3], frame[4], frame[5:9]
    assert (len(frame), length, kind, flags, stream) == (9, 0, 4, 0, bytes(4))
