"""Fixtures for the core tests: the mirror's language lists and a loopback HTTP server.

`shared_data` (the source mirror) comes from tests/conftest.py. The loopback server serves the mirror's files (or extra in-memory files) on 127.0.0.1
and can be told, per path, to fail in order: `503`, `429:<Retry-After value>`,
`truncate` (sends half the body, then closes), `corrupt` (flips the bytes), `404`.
It records every request (path + headers), honours `Range` unless told not to, and
gzips a body when asked to and the client accepts it.
"""
from __future__ import annotations

import csv
import gzip
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.loopback import QuietHandler, serving


@pytest.fixture(scope="session")
def babel_languages(shared_data) -> list[dict[str, str]]:
    path = shared_data / "languages" / "babel_imagenet_languages.tsv"
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


@pytest.fixture(scope="session")
def sib_codes(shared_data) -> list[str]:
    return (shared_data / "languages" / "flores200_sib_codes.txt").read_text(encoding="utf-8").split()


@pytest.fixture(scope="session")
def mirror(shared_data) -> Path:
    return shared_data


class MirrorHandler(QuietHandler):
    server: "LoopbackServer"

    def do_GET(self):
        server = self.server
        path = unquote(urlsplit(self.path).path).lstrip("/")
        with server.lock:
            server.requests.append((path, dict(self.headers)))
            plan = server.failures.get(path) or []
            mode = plan.pop(0) if plan else None
        if mode == "404" or (path not in server.files and not (server.root and (server.root / path).is_file())):
            return self.reply(404, b"not found")
        if mode == "503":
            return self.reply(503, b"busy")
        if mode and mode.startswith("429"):
            return self.reply(429, b"slow down", {"Retry-After": mode.partition(":")[2]})
        body = server.files[path] if path in server.files else (server.root / path).read_bytes()
        if mode == "corrupt":
            body = bytes(b ^ 0xFF for b in body)
        headers, status = {}, 200
        wanted = self.headers.get("Range", "")
        if server.range_support and wanted.startswith("bytes="):
            start = int(wanted[6:].split("-")[0])
            if start >= len(body):
                return self.reply(416, b"", {"Content-Range": f"bytes */{len(body)}"})
            headers["Content-Range"] = f"bytes {start}-{len(body) - 1}/{len(body)}"
            body, status = body[start:], 206
        if server.gzip_json and path.endswith(".json") and "gzip" in self.headers.get("Accept-Encoding", ""):
            body, headers["Content-Encoding"] = gzip.compress(body), "gzip"
        if mode == "truncate":
            self.send_response(status)
            for name, value in {**headers, "Content-Length": str(len(body))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        return self.reply(status, body, headers)


class LoopbackServer(ThreadingHTTPServer):
    def __init__(self, root: Path | None):
        super().__init__(("127.0.0.1", 0), MirrorHandler)
        self.root = root
        self.files: dict[str, bytes] = {}
        self.failures: dict[str, list[str]] = {}
        self.requests: list[tuple[str, dict]] = []
        self.range_support = True
        self.gzip_json = False
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def hits(self, path: str) -> list[dict]:
        return [headers for requested, headers in self.requests if requested == path]


@pytest.fixture
def server(mirror):
    """A loopback HTTP server over the real mirror, shut down after the test."""
    with serving(LoopbackServer(mirror)) as httpd:
        yield httpd


@pytest.fixture
def fast_policy():
    """Retries with millisecond back-off and short timeouts, so failure tests run fast."""
    from builders.core.http import RetryPolicy

    return RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.01, max_retry_after=30, timeout=5)


@pytest.fixture
def sleeps():
    """A recording stand-in for time.sleep: the test sees each delay without waiting."""
    recorded: list[float] = []
    recorded_sleep = recorded.append
    return recorded, recorded_sleep
