"""The questions check_ray_address asks a cluster before `ray.init`, and connect_ray's tries (issue 49
item 1): the token question on both routes against real gRPC servers on loopback (one refusing every
call as unauthenticated, as a head in token mode refuses a client without its token; one serving
nothing, as a port where no Ray service runs), the line a refused connection gives when the error
has no errno text, the node check of a GCS address, and the tries of `ray.init` when a head's Ray
client server is lost as it starts (Ray's init stood in for: that loss is a race seen in about 2 of
10 connections on a busy machine, not something a test can cause)."""

from __future__ import annotations

from concurrent import futures

import pytest

from babelforge.core import ray_connect
from babelforge.core.errors import BabelforgeError
from babelforge.core.ray_connect import _ask_token, _no_local_node, _silence, _token_problem, connect_ray
from babelforge.core.runner_config import RunnerConfig

grpc = pytest.importorskip("grpc")
pytest.importorskip("ray")

TOKEN_LINE = "wants a token and this client has none: give it the cluster's token"


class RefuseEveryCall(grpc.GenericRpcHandler):
    """Every method of every service answered UNAUTHENTICATED, with a message that names no token."""

    def service(self, handler_call_details):
        def refuse(request, context):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "the call carries no valid credentials")

        return grpc.unary_unary_rpc_method_handler(refuse)


@pytest.fixture(params=["refusing", "serving nothing"])
def grpc_server(request):
    """A gRPC server on 127.0.0.1 (HTTP/2, as Ray's GCS and client server are): (kind, port)."""
    handlers = [RefuseEveryCall()] if request.param == "refusing" else []
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=handlers)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield request.param, port
    finally:
        server.stop(grace=None)


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_the_token_question_names_the_token_only_when_the_server_refuses_the_client(grpc_server, scheme, monkeypatch):
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    monkeypatch.delenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", raising=False)
    kind, port = grpc_server
    address = f"{scheme}127.0.0.1:{port}"
    line = _ask_token(address, "127.0.0.1", port, 10.0)
    if kind == "refusing":  # Ray's GCS client raises AuthenticationError, whose text names no InvalidAuthToken
        assert line.startswith(f"ray: the cluster at {address} {TOKEN_LINE}"), line
    else:  # gRPC's UNIMPLEMENTED: something speaks gRPC there, but not Ray
        what = "Ray client server" if scheme else "cluster"
        assert line.startswith(f"ray: no {what} answered at {address} ("), line
        assert "token" not in line and line.endswith("(docs/guides/ray-cluster.md)"), line
        # something answered: the error's first line, without the advice for a loopback head that did not
        assert "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER" not in line, line
    # the same answer through the question's own thread
    assert _token_problem(address, "127.0.0.1", port, 10.0) == line


def test_the_token_question_passes_on_no_problem_and_waits_no_longer_than_its_timeout(monkeypatch):
    monkeypatch.setattr(ray_connect, "_ask_token", lambda *args: None)
    assert _token_problem("head:6379", "head", 6379, 5.0) is None
    monkeypatch.setattr(ray_connect, "_ask_token", lambda address, *args: f"ray: a problem at {address}")
    assert _token_problem("head:6379", "head", 6379, 5.0) == "ray: a problem at head:6379"


def test_a_refusal_without_errno_text_is_named_by_the_error_s_own_words(monkeypatch):
    """socket.create_connection raises a bare OSError when the name resolves to no address at all:
    no strerror, only its message."""

    def no_address(*args, **kwargs):
        raise OSError("getaddrinfo returns an empty list")

    monkeypatch.setattr(ray_connect.socket, "create_connection", no_address)
    monkeypatch.delenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", raising=False)
    assert _silence("head:6379", "head", 6379, 2.0) == (
        "ray: no cluster answered at head:6379 (getaddrinfo returns an empty list) (docs/guides/ray-cluster.md)"
    )

    def bare(*args, **kwargs):
        raise OSError()

    monkeypatch.setattr(ray_connect.socket, "create_connection", bare)
    assert _silence("head:6379", "head", 6379, 2.0).startswith("ray: no cluster answered at head:6379 (refused)")


def test_only_a_gcs_address_needs_a_node_on_this_machine(monkeypatch):
    from ray._private import services

    monkeypatch.setattr(services, "find_node_ids", lambda *args, **kwargs: [])
    assert _no_local_node("ray://head:10001") is None  # the Ray client needs no node here
    line = _no_local_node("head:6379")
    assert line.startswith("ray: this machine runs no node of the cluster at head:6379; "), line
    monkeypatch.setattr(services, "find_node_ids", lambda *args, **kwargs: ["a node id"])
    assert _no_local_node("head:6379") is None


class FakeRay:
    """`ray.init` failing with each error of `errors` in turn (then connecting), and what was asked."""

    def __init__(self, monkeypatch, errors: list[BaseException]):
        import ray

        self.errors, self.inits, self.shutdowns, self.said = list(errors), 0, 0, []
        monkeypatch.setattr(ray, "is_initialized", lambda: False)
        monkeypatch.setattr(ray, "init", self.init)
        monkeypatch.setattr(ray, "shutdown", self.shutdown)
        monkeypatch.setattr(ray_connect, "check_ray_address", lambda config: None)
        monkeypatch.setattr(ray_connect, "info", self.said.append)
        monkeypatch.delenv("RAY_AUTH_MODE", raising=False)

    def init(self, **options):
        self.inits += 1
        if self.errors:
            raise self.errors.pop(0)

    def shutdown(self):
        self.shutdowns += 1


LOST = "ConnectionError: Initialization failure from server: the server process exited"
TRYING = "ray: the head could not start a Ray client server for this stage; trying again"


def test_a_client_server_lost_as_it_starts_is_tried_three_times_in_all(monkeypatch):
    fake = FakeRay(monkeypatch, [RuntimeError(LOST)] * 2)
    assert connect_ray(RunnerConfig(runner="ray", address="ray://127.0.0.1:10001")) is True
    assert (fake.inits, fake.shutdowns) == (3, 2)
    assert fake.said == [f"{TRYING} (2/3)", f"{TRYING} (3/3)"]

    fake = FakeRay(monkeypatch, [RuntimeError(LOST)] * 3)
    with pytest.raises(BabelforgeError) as raised:
        connect_ray(RunnerConfig(runner="ray", address="ray://127.0.0.1:10001"))
    assert str(raised.value).startswith("ray: no cluster answered at ray://127.0.0.1:10001 (ConnectionError: ")
    assert (fake.inits, fake.shutdowns) == (3, 2)
    assert fake.said == [f"{TRYING} (2/3)", f"{TRYING} (3/3)"]


@pytest.mark.parametrize(
    "address, error",
    [
        ("ray://127.0.0.1:10001", ConnectionError("InvalidAuthToken: the token was refused")),  # not a lost server
        ("127.0.0.1:6379", RuntimeError(LOST)),  # a GCS address: no client server to lose
    ],
)
def test_any_other_failure_stops_at_the_first_try(monkeypatch, address, error):
    fake = FakeRay(monkeypatch, [error])
    with pytest.raises(BabelforgeError) as raised:
        connect_ray(RunnerConfig(runner="ray", address=address))
    assert str(raised.value).startswith("ray: ") and "\n" not in str(raised.value)
    assert (fake.inits, fake.shutdowns, fake.said) == (1, 0, [])
