"""Connecting to Ray, failing fast in one line: `ray.init`'s options (ray_init_options), the token
a client of an existing cluster needs (ray_auth_environment), and the questions asked before
`ray.init` (check_ray_address): does the address answer (`connect_timeout`), is it Ray (something
else answering there is one line at once) and does it take the token. Ray's own messages go to the
run's log (babelforge.core.ray_log)."""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from babelforge.core.determinism import pinned_now
from babelforge.core.errors import BabelforgeError
from babelforge.core.progress import info
from babelforge.core.ray_log import ray_output_to_log
from babelforge.core.runner_config import RunnerConfig


def ray_init_options(config: RunnerConfig, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`ray.init`'s arguments for `config`: an existing cluster (`config.address`, else
    $RAY_ADDRESS) gets this process's CPU pin (builders/core/determinism.py) as the job's
    environment, for every node's workers, whatever the cluster's own environment is (else a
    cluster gives other bytes than `local`). A local Ray started here inherits this process's
    environment, pin included, so it gets none: a job environment would keep Ray from handing
    the actors the worker processes it starts ahead (measured: actors up 2-3 s later). Its
    address is `local`: a new Ray, never the cluster an earlier `ray start` on this machine left
    as the default (Ray's own default for `ray.init()`, stale once that head is gone)."""

    env = os.environ if environ is None else environ
    options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    address = config.address or env.get("RAY_ADDRESS")
    if not address:
        return {**options, "address": "local", "num_cpus": config.local_cpus, "include_dashboard": False}
    pinned = pinned_now(env)
    return {**options, "address": address, **({"runtime_env": {"env_vars": pinned}} if pinned else {})}


# Ray's token file, under the home folder (where `ray start` and `ray get-auth-token --generate` write it).
RAY_TOKEN_FILE = Path(".ray") / "auth_token"


def ray_auth_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a client of an existing cluster adds to its environment for Ray's token authentication
    (on by default, since Ray 2.59, for the clusters `ray start` starts): `RAY_AUTH_MODE=token` when a
    token is at hand ($RAY_AUTH_TOKEN, the file $RAY_AUTH_TOKEN_PATH names, or ~/.ray/auth_token) and
    the mode is not set. Ray itself does this only for `address=auto`; with an address given it
    connects without the token and the cluster refuses it (`InvalidAuthToken`). Ray reads the token
    itself; it is never read, printed or logged here. A set `RAY_AUTH_MODE` (disabled, token) is kept."""

    env = os.environ if environ is None else environ
    if env.get("RAY_AUTH_MODE"):
        return {}
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    files = [Path(env["RAY_AUTH_TOKEN_PATH"])] if env.get("RAY_AUTH_TOKEN_PATH") else []
    if env.get("RAY_AUTH_TOKEN") or any(path.is_file() for path in [*files, home / RAY_TOKEN_FILE]):
        return {"RAY_AUTH_MODE": "token"}
    return {}


def _use_ray_auth(extra: Mapping[str, str]) -> None:
    """Put `extra` (ray_auth_environment) into this process's environment, where Ray reads it, and
    have Ray read its settings again, as ray.init does when it turns token mode on for a local Ray
    (Ray reads them once, at import: measured, a RAY_AUTH_MODE set after `import ray` alone is not
    seen and the cluster refuses the client)."""
    if not extra:
        return
    os.environ.update(extra)
    try:
        from ray._raylet import Config
    except ImportError:  # a Ray without it: the variable alone, read by a Ray not yet set up
        return
    Config.initialize("")


def _connection_failure(address: str, error: BaseException) -> str:
    """One line on why `ray.init(address=...)` failed: the token, or no cluster answering."""
    chain, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        chain.append(error)
        error = error.__cause__ or error.__context__
    # Ray puts the GCS client's error into its own error's text, not into the chain
    if any(type(item).__name__ == "AuthenticationError" or "InvalidAuthToken" in str(item) for item in chain):
        mode = os.environ.get("RAY_AUTH_MODE", "")
        if mode.lower() == "token":
            problem = "refused this client's token (or it has none)"
        elif mode:
            problem = f"wants a token and RAY_AUTH_MODE={mode} here sends none (unset it)"
        else:
            problem = "wants a token and this client has none"
        return (
            f"ray: the cluster at {address} {problem}: give it the cluster's token (RAY_AUTH_TOKEN, a file "
            "named by RAY_AUTH_TOKEN_PATH, or ~/.ray/auth_token; `ray get-auth-token` on the head prints it) "
            "(docs/guides/ray-cluster.md)"
        )
    text = " ".join(str(chain[0]).split())
    host = address.rsplit(":", 1)[0].removeprefix("ray://").strip("[]")
    return f"ray: no cluster answered at {address} ({text}){_loopback_hint(host)} (docs/guides/ray-cluster.md)"


def _loopback_hint(host: str) -> str:
    """What to set when a loopback head is asked for without the variable its head was started with."""
    if host not in ("127.0.0.1", "localhost", "::1") or os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER") == "0":
        return ""
    return (
        "; Ray reads a loopback address as this machine's network address: a head bound to "
        "127.0.0.1 (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 ray start --head ...) needs "
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 here too"
    )


def _endpoint(address: str) -> tuple[str, int] | None:
    """(host, port) a cluster address names (a Ray client server for `ray://`, else the head's GCS),
    None for `auto` (a cluster of this machine, found by Ray)."""
    if address == "auto":
        return None
    client = address.startswith("ray://")
    rest = address.removeprefix("ray://").split("/", 1)[0]
    host, colon, port = rest.rpartition(":")
    if not colon or not port.isdigit():
        host, port = rest, "10001" if client else "6379"
    return host.strip("[]"), int(port)


def _silence(address: str, host: str, port: int, timeout: float) -> str | None:
    """Why nothing at `address` accepted a connection within `timeout` seconds (None: something did)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as error:
        waited = isinstance(error, TimeoutError)
        reason = f"nothing within {timeout:g} s" if waited else (error.strerror or str(error) or "refused").lower()
    return f"ray: no cluster answered at {address} ({reason}){_loopback_hint(host)} (docs/guides/ray-cluster.md)"


# What a gRPC client (Ray's GCS and client server speak gRPC) sends first: HTTP/2's connection
# preface and an empty SETTINGS frame. A gRPC server answers with its own SETTINGS frame at once.
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
# How long the first bytes of an answer are waited for: a server that is not Ray answers at once; one
# that answers nothing in this time is left to the Ray question (`_token_problem`, connect_timeout).
FIRST_ANSWER_S = 1.0


def foreign_answer(first: bytes) -> str | None:
    """What answered an HTTP/2 preface, when it is not an HTTP/2 (gRPC) server: the start of its
    answer as one printable line (an HTML page's text without its tags); None for an HTTP/2 SETTINGS
    frame (its 9-byte header: length, type 4, flags, stream 0) or for no answer at all (nothing to judge)."""
    if not first or (len(first) >= 9 and first[3] == 4 and first[5:9] == bytes(4)):
        return None
    text = re.sub(r"<[^>]*>", " ", first.decode("latin-1"))
    text = " ".join("".join(char if char.isprintable() or char.isspace() else "?" for char in text).split())
    return text[:100] or f"{len(first)} bytes that are not HTTP/2"


def _not_ray(address: str, host: str, port: int, timeout: float) -> str | None:
    """The one line when what listens at `address` answers a gRPC client's first bytes with
    something else (a web server's `505`): known in milliseconds, where Ray's clients retry until
    `connect_timeout`. Skipped under TLS (RAY_USE_TLS), where the first answer is TLS's."""
    if os.environ.get("RAY_USE_TLS", "").lower() in ("1", "true"):
        return None
    try:
        with socket.create_connection((host, port), timeout=timeout) as connection:
            connection.sendall(HTTP2_PREFACE)
            connection.settimeout(min(timeout, FIRST_ANSWER_S))
            first = connection.recv(1024)
    except OSError:  # no answer in time, or the line dropped: the Ray question decides
        return None
    answer = foreign_answer(first)
    if answer is None:
        return None
    return (
        f"ray: no cluster answered at {address}: something that is not Ray answers there ({answer!r}); "
        "check the address and port (the head's GCS, 6379 by default, or ray://<head>:10001) "
        "(docs/guides/ray-cluster.md)"
    )


def _token_problem(address: str, host: str, port: int, timeout: float) -> str | None:
    """Ask the cluster once whether it takes this client's token (a second, where ray.init retries
    for 20-30 s behind a screen of warnings before it says so); the one line if it does not, or if
    what listens there gives no Ray answer within `timeout` (Ray's own clients retry for 14-42 s:
    the question runs in a thread of its own, left behind when the stage stops)."""
    answer: list[str | None] = []
    asking = threading.Thread(target=lambda: answer.append(_ask_token(address, host, port, timeout)), daemon=True)
    asking.start()
    asking.join(timeout)
    if not answer:
        return (
            f"ray: no cluster answered at {address} within {timeout:g} s (the port is open, but no Ray "
            "answered there) (docs/guides/ray-cluster.md)"
        )
    return answer[0]


def _ask_token(address: str, host: str, port: int, timeout: float) -> str | None:
    try:
        if address.startswith("ray://"):
            # gRPC as Ray's client uses it (ray[client] installs it; named through Ray, which owns it)
            from ray._private.grpc_utils import grpc, init_grpc_channel
            from ray.core.generated import ray_client_pb2, ray_client_pb2_grpc

            channel = init_grpc_channel(f"{host}:{port}", options=[], asynchronous=False)
            try:
                grpc.channel_ready_future(channel).result(timeout=timeout)
                ping = ray_client_pb2.ClusterInfoRequest(type=ray_client_pb2.ClusterInfoType.PING)
                ray_client_pb2_grpc.RayletDriverStub(channel).ClusterInfo(ping, timeout=timeout)
            except grpc.RpcError as error:
                if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                    return _connection_failure(address, RuntimeError("InvalidAuthToken"))
                return f"ray: no Ray client server answered at {address} ({_first_line(error.details() or error.code().name)}) (docs/guides/ray-cluster.md)"
            except grpc.FutureTimeoutError:
                return (
                    f"ray: no Ray client server answered at {address} within {timeout:g} s (docs/guides/ray-cluster.md)"
                )
            finally:
                channel.close()
        else:
            from ray._raylet import GcsClient

            GcsClient(address=f"{host}:{port}").internal_kv_get(b"babelforge-probe", None, timeout=timeout)
    except Exception as error:
        if type(error).__name__ == "AuthenticationError" or "InvalidAuthToken" in str(error):
            return _connection_failure(address, error)
        return f"ray: no cluster answered at {address} ({_first_line(str(error) or type(error).__name__)}) (docs/guides/ray-cluster.md)"
    return None


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:300]


def _no_local_node(address: str) -> str | None:
    """A GCS address (head:6379) makes this process a driver on a node of this machine: the line
    saying so when this machine runs none (Ray would look for one for 60 s)."""
    from ray._private.services import find_node_ids

    if address.startswith("ray://") or find_node_ids():
        return None
    return (
        f"ray: this machine runs no node of the cluster at {address}; from a machine that is not a node connect "
        "through the Ray client (RAY_ADDRESS=ray://<head>:10001) or submit the stage as a Ray job "
        "(docs/guides/ray-cluster.md)"
    )


def check_ray_address(config: RunnerConfig) -> None:
    """Ask the cluster Ray would connect to (`config.address`, else $RAY_ADDRESS; nothing for a local
    Ray) whether it answers, is Ray and takes the token (ray_auth_environment): one line when not.
    connect_ray asks first; a stage that loads a model before its runner connects asks before it
    loads, so a wrong address stops it in seconds, not after the model."""
    address = ray_init_options(config)["address"]
    endpoint = None if address == "local" else _endpoint(address)
    if endpoint is None:
        return
    try:
        import ray  # noqa: F401  (the token question and the node lookup use Ray's own clients)
    except ImportError:
        raise BabelforgeError("runner ray needs Ray: pip install -c constraints.txt '.[ray]'") from None
    with ray_output_to_log():
        _use_ray_auth(ray_auth_environment())
        timeout = config.connect_timeout
        problem = (
            _silence(address, *endpoint, timeout)
            or _not_ray(address, *endpoint, timeout)
            or _token_problem(address, *endpoint, timeout)
            or _no_local_node(address)
        )
    if problem:
        raise BabelforgeError(problem)


def connect_ray(config: RunnerConfig) -> bool:
    """`ray.init` to `config.address` or $RAY_ADDRESS (with the cluster's token, if one is at hand:
    ray_auth_environment), else a local Ray (no dashboard). True when this call started Ray (the
    caller shuts it down again). A cluster is asked first whether it answers (within
    `connect_timeout`) and takes the token, so either failure is one line in seconds; Ray's own
    messages go to ray_log_path()."""
    try:
        import ray
    except ImportError:
        raise BabelforgeError("runner ray needs Ray: pip install -c constraints.txt '.[ray]'") from None
    if ray.is_initialized():
        return False
    options = ray_init_options(config)
    with ray_output_to_log():
        if options["address"] == "local":
            ray.init(**options)
            return True
        check_ray_address(config)
        address = options["address"]
        for attempt in range(1, CLIENT_SERVER_TRIES + 1):
            try:
                ray.init(**options)
                break
            except (ConnectionError, RuntimeError, ray.exceptions.RayError) as error:
                if not (address.startswith("ray://") and _server_not_started(error)) or attempt == CLIENT_SERVER_TRIES:
                    raise BabelforgeError(_connection_failure(address, error)) from None
                ray.shutdown()
                info(
                    f"ray: the head could not start a Ray client server for this stage; trying again ({attempt + 1}/{CLIENT_SERVER_TRIES})"
                )
    return True


# Ray 2.60's client proxy sometimes loses the server it starts for a client (the process dies as it
# forks beside gRPC's threads: seen in 2 of about 10 connections on a busy 2-core machine); the next
# try gets a new one.
CLIENT_SERVER_TRIES = 3


def _server_not_started(error: BaseException) -> bool:
    text = str(error)
    return "Initialization failure from server" in text or "Starting Ray client server failed" in text
