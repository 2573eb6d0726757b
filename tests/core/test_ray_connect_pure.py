"""ray_connect's pure parts, without Ray or a cluster: the address a stage asks (host and port, the
defaults of each route), whether a token is at hand, the one line a failure gives, and what the
first bytes of an answer say. The real head and the web server are in test_ray_connect.py."""

from __future__ import annotations

import pytest

from babelforge.core.ray_connect import (
    _connection_failure,
    _endpoint,
    _first_line,
    _loopback_hint,
    _server_not_started,
    check_ray_address,
    foreign_answer,
    ray_auth_environment,
    ray_init_options,
)
from babelforge.core.runner_config import RunnerConfig


@pytest.mark.parametrize(
    "address, endpoint",
    [
        ("auto", None),
        ("head:6380", ("head", 6380)),
        ("head", ("head", 6379)),  # a GCS address without a port: the GCS's default
        ("ray://head", ("head", 10001)),  # a client address without one: the client server's
        ("ray://head:10002/namespace", ("head", 10002)),
        ("ray://head:port", ("head:port", 10001)),  # no digits after the colon: no port was given
        ("[::1]:6380", ("::1", 6380)),
    ],
)
def test_an_address_names_the_host_and_port_each_route_asks(address, endpoint):
    assert _endpoint(address) == endpoint


def test_a_token_turns_token_mode_on_from_each_place_ray_reads_it_unless_a_mode_is_set(tmp_path):
    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    nowhere = {"HOME": str(tmp_path / "empty")}
    assert ray_auth_environment(nowhere) == {}
    assert ray_auth_environment({**nowhere, "RAY_AUTH_TOKEN": "t"}) == {"RAY_AUTH_MODE": "token"}
    named = tmp_path / "token"
    assert ray_auth_environment({**nowhere, "RAY_AUTH_TOKEN_PATH": str(named)}) == {}  # named, but absent
    named.write_text("t")
    assert ray_auth_environment({**nowhere, "RAY_AUTH_TOKEN_PATH": str(named)}) == {"RAY_AUTH_MODE": "token"}
    (home / ".ray" / "auth_token").write_text("t")
    assert ray_auth_environment({"HOME": str(home)}) == {"RAY_AUTH_MODE": "token"}
    assert ray_auth_environment({"HOME": str(home), "RAY_AUTH_MODE": "disabled"}) == {}


@pytest.mark.parametrize(
    "mode, problem",
    [
        ("", "wants a token and this client has none"),
        ("TOKEN", "refused this client's token (or it has none)"),
        ("disabled", "wants a token and RAY_AUTH_MODE=disabled here sends none (unset it)"),
    ],
)
def test_a_refused_token_is_one_line_saying_what_this_client_sent(monkeypatch, mode, problem):
    monkeypatch.setenv("RAY_AUTH_MODE", mode)
    error = ConnectionError("Failed to connect")
    error.__context__ = type("AuthenticationError", (Exception,), {})("refused")
    line = _connection_failure("head:6379", error)
    assert line.startswith(f"ray: the cluster at head:6379 {problem}: give it the cluster's token"), line


def test_no_answer_is_one_line_with_the_first_error_s_words_and_a_loop_in_the_chain_ends(monkeypatch):
    monkeypatch.delenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", raising=False)
    first, second = ConnectionError("Timed out\n  after 20 s"), RuntimeError("gRPC")
    first.__cause__, second.__cause__ = second, first  # Ray's chains can loop
    assert _connection_failure("head:6379", first) == (
        "ray: no cluster answered at head:6379 (Timed out after 20 s) (docs/guides/ray-cluster.md)"
    )
    assert "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 here too" in _connection_failure("[::1]:6379", first)


def test_the_loopback_advice_is_for_loopback_hosts_without_the_variable_set(monkeypatch):
    monkeypatch.delenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", raising=False)
    assert all(_loopback_hint(host) for host in ("127.0.0.1", "localhost", "::1"))
    assert _loopback_hint("10.0.0.5") == ""
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    assert _loopback_hint("127.0.0.1") == ""
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "1")
    assert _loopback_hint("127.0.0.1")


def test_a_frame_header_is_nine_bytes_of_type_four_on_stream_zero():
    assert foreign_answer(bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])) is None
    # a SETTINGS frame with one setting, as a gRPC server sends it: its header is still the first nine bytes
    assert foreign_answer(bytes([0, 0, 6, 4, 0, 0, 0, 0, 0]) + bytes([0, 3, 0, 0, 0, 100])) is None
    # anything else is named, its unprintable bytes as `?`
    assert foreign_answer(bytes([0, 0, 0, 4, 0, 0, 0, 0])) == "?" * 8  # one byte short of a header
    assert foreign_answer(bytes([0, 0, 0, 4, 0, 0, 0, 0, 1])) == "?" * 9  # stream 1
    assert foreign_answer(bytes([0, 0, 0, 1, 0, 0, 0, 0, 0])) == "?" * 9  # a HEADERS frame
    assert foreign_answer(b" \r\n") == "3 bytes that are not HTTP/2"  # nothing printable but spaces
    assert foreign_answer(b"x" * 300) == "x" * 100


def test_an_error_s_first_line_is_its_first_non_blank_line_cut_at_300():
    assert _first_line("\n  first line\nsecond") == "first line"
    assert _first_line("") == "" and _first_line(" \n ") == ""
    assert _first_line("y" * 400) == "y" * 300


def test_a_lost_client_server_is_told_apart_from_other_failures():
    assert _server_not_started(RuntimeError("ConnectionError: Initialization failure from server: gone"))
    assert _server_not_started(RuntimeError("Starting Ray client server failed. See ray_client_server.err"))
    assert not _server_not_started(RuntimeError("InvalidAuthToken"))


def test_a_local_ray_or_auto_is_not_asked_before_it_starts(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert check_ray_address(RunnerConfig(runner="ray")) is None
    assert check_ray_address(RunnerConfig(runner="ray", address="auto")) is None
    assert ray_init_options(RunnerConfig(runner="ray", local_cpus=3), environ={})["num_cpus"] == 3
    given = ray_init_options(RunnerConfig(runner="ray", address="head:6379"), environ={"RAY_ADDRESS": "other:6379"})
    assert given["address"] == "head:6379"  # the setting before the variable
