"""Loopback HTTP servers for tests: a quiet handler base and a context manager that serves.

Shared by the test areas that fake a web service (tests/core: the source mirror;
tests/lexicon: the BabelNet API). Servers bind 127.0.0.1 on a free port.
"""
from __future__ import annotations

import contextlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator, TypeVar

Server = TypeVar("Server", bound=ThreadingHTTPServer)


class QuietHandler(BaseHTTPRequestHandler):
    """A handler that logs nothing and answers with one call."""

    def log_message(self, *args):
        pass

    def reply(self, status: int, body: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def serving(httpd: Server) -> Iterator[Server]:
    """Run `httpd` in a daemon thread; shut it down and close its socket afterwards."""
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
