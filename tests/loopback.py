"""Loopback HTTP servers for tests: a quiet handler base, a context manager that serves,
and a file server that fails on request.

Shared by the test areas that fake a web service (tests/core: the source mirror;
tests/mvl_sib: the topic images; tests/lexicon: the BabelNet API; tests/hub_standin.py: the
Hugging Face Hub). Servers bind 127.0.0.1 on a free port.

`LoopbackServer` serves the files under a folder (or extra in-memory `files`) and can be
told, per path, to fail in order (`failures[path] = [...]`): `500`, `503`, `429:<Retry-After value>`,
`truncate` (sends half the body, then closes), `corrupt` (flips the bytes), `404`, `hang` (accepts,
then answers nothing for `hang_seconds`). A mode ending in `*` is never used up (`500*`: 500 forever).
It records every request (path + headers), honours `Range` unless told not to, and
gzips a `.json` body when asked to and the client accepts it.
"""

from __future__ import annotations

import contextlib
import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TypeVar
from urllib.parse import unquote, urlsplit

Server = TypeVar("Server", bound=ThreadingHTTPServer)


class QuietHandler(BaseHTTPRequestHandler):
    """A handler that logs nothing and answers with one call."""

    def log_message(self, *args):
        pass

    def reply(self, status: int, body: bytes, headers: dict | None = None) -> None:
        """The answer, its Content-Length the body's; a HEAD request gets the headers alone."""
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
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


class ServedStandIn:
    """A service's stand-in that serves its `server` while it is open (`with StandIn() as service:`)."""

    server: ThreadingHTTPServer
    _stack: contextlib.ExitStack | None = None

    def __enter__(self):
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(serving(self.server))
        return self

    def __exit__(self, *exc) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None


class MirrorHandler(QuietHandler):
    server: LoopbackServer

    def do_GET(self):
        server = self.server
        path = unquote(urlsplit(self.path).path).lstrip("/")
        with server.lock:
            server.requests.append((path, dict(self.headers)))
            plan = server.failures.get(path) or []
            mode = (plan[0] if plan[0].endswith("*") else plan.pop(0)) if plan else None
            mode = mode.rstrip("*") if mode else None
        if mode == "hang":
            server.hung.wait(server.hang_seconds)
            return
        if mode == "404" or (path not in server.files and not (server.root and (server.root / path).is_file())):
            return self.reply(404, b"not found")
        if mode in ("500", "503"):
            return self.reply(int(mode), b"busy")
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
    """`handler` answers its requests: the file server's own by default; another service's handler
    (tests/hub_standin.py) reuses the rest: a free port on 127.0.0.1, the lock, the close."""

    def __init__(self, root: Path | None = None, handler: type[BaseHTTPRequestHandler] = MirrorHandler, port: int = 0):
        super().__init__(("127.0.0.1", port), handler)  # port 0: a free one (a rehearsal fixes it across runs)
        self.root = root
        self.files: dict[str, bytes] = {}
        self.failures: dict[str, list[str]] = {}
        self.requests: list[tuple[str, dict]] = []
        self.range_support = True
        self.gzip_json = False
        self.lock = threading.Lock()
        self.hang_seconds = 30.0
        self.hung = threading.Event()  # set it to release hanging requests at once

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def server_close(self):
        self.hung.set()
        super().server_close()

    def hits(self, path: str) -> list[dict]:
        return [headers for requested, headers in self.requests if requested == path]
