"""A minimal client of basedpyright's language server (the engine of Pylance), over stdio JSON-RPC.

What an editor asks when a contributor presses go-to-definition or find-all-references: the answers
are the paths the editor would open. tests/test_static_imports.py uses it to check that both work from
the real files in builders/ and eval/; run it by hand to see the answers:

    python -m tests.language_server builders/cli.py load_config builders/core/config.py load_config
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

REPO = Path(__file__).resolve().parents[1]
FOUND_FILES = re.compile(r"Found (\d+) source files?")


def uri(path: Path) -> str:
    return path.resolve().as_uri()


def path_of(file_uri: str) -> Path:
    return Path(unquote(urlparse(file_uri).path))


class LanguageServer:
    """One basedpyright-langserver process rooted at `root`; requests answer synchronously."""

    def __init__(self, root: Path, server: Path, env: dict[str, str] | None = None, timeout: float = 240.0):
        self.root = root
        self.timeout = timeout
        self.process = subprocess.Popen(
            [str(server), "--stdio"],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next_id = 0
        self.source_files: int | None = None  # what the server logs once it has listed the project
        self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": uri(root),
                "workspaceFolders": [{"uri": uri(root), "name": root.name}],
                "capabilities": {"workspace": {"configuration": True, "workspaceFolders": True}},
            },
        )
        self.notify("initialized", {})

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def receive(self) -> dict:
        assert self.process.stdout is not None
        length = 0
        while line := self.process.stdout.readline().strip():
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        if not length:
            raise RuntimeError("basedpyright-langserver closed its output")
        return json.loads(self.process.stdout.read(length))

    def notify(self, method: str, params: dict) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: dict):
        """The result of one request."""
        self.next_id += 1
        wanted = self.next_id
        self.send({"id": wanted, "method": method, "params": params})
        message = self.pump(lambda message: message.get("id") == wanted and "method" not in message, method)
        if "error" in message:
            raise RuntimeError(f"{method}: {message['error']}")
        return message.get("result")

    def pump(self, until, what: str) -> dict:
        """Read messages until one satisfies `until`, and return it. The server's own requests meanwhile
        get empty answers (no client settings: the project's configuration file decides), and the
        files it finds are counted."""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            message = self.receive()
            if "method" in message and "id" in message:  # a request from the server
                items = message.get("params", {}).get("items", [])
                result = [None] * len(items) if message["method"] == "workspace/configuration" else None
                self.send({"id": message["id"], "result": result})
            elif message.get("method") == "window/logMessage":
                if found := FOUND_FILES.match(message["params"]["message"]):
                    self.source_files = int(found.group(1))
            if until(message):
                return message
        raise TimeoutError(f"{what}: no answer in {self.timeout} s")

    def wait_for_workspace(self) -> int:
        """Wait until the server has listed the project's source files (a references request before it
        searches the open files only); the number of files it found."""
        if self.source_files is None:
            self.pump(lambda message: self.source_files is not None, "listing the source files")
        return self.source_files

    def open(self, path: Path) -> str:
        text = path.read_text(encoding="utf-8")
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri(path), "languageId": "python", "version": 1, "text": text}},
        )
        return text

    def close(self) -> None:
        try:
            self.request("shutdown", {})
            self.notify("exit", {})
            self.process.wait(timeout=10)
        except Exception:
            self.process.kill()
            self.process.wait()


def position_of(text: str, name: str, prefix: str = "") -> dict:
    """The LSP position of the first word `name` that follows `prefix` (e.g. "def ") on a line."""
    pattern = re.compile(rf"{re.escape(prefix)}\b({re.escape(name)})\b")
    for number, line in enumerate(text.splitlines()):
        if found := pattern.search(line):
            return {"line": number, "character": found.start(1)}
    raise ValueError(f"{name!r} (after {prefix!r}) is not in the text")


def locations(result) -> list[tuple[Path, int]]:
    """(file, 1-based line) of each location or location link an answer holds."""
    found = []
    for item in result or []:
        target = item.get("targetUri", item.get("uri"))
        span = item.get("targetSelectionRange", item.get("range"))
        found.append((path_of(target), span["start"]["line"] + 1))
    return found


def definition(server: LanguageServer, path: Path, name: str) -> list[tuple[Path, int]]:
    """Where go-to-definition on the first `name` in `path` (its import, usually) leads."""
    text = server.open(path)
    position = position_of(text, name)
    document = {"uri": uri(path)}
    return locations(server.request("textDocument/definition", {"textDocument": document, "position": position}))


def references(server: LanguageServer, path: Path, name: str) -> list[tuple[Path, int]]:
    """Find-all-references on the definition of `name` (a `def` or `class`) in `path`."""
    server.wait_for_workspace()
    text = server.open(path)
    prefix = "class " if f"class {name}" in text else "def "
    params = {
        "textDocument": {"uri": uri(path)},
        "position": position_of(text, name, prefix=prefix),
        "context": {"includeDeclaration": False},
    }
    return locations(server.request("textDocument/references", params))


def main(argv: list[str]) -> None:
    use, used, defined, name = argv
    server = LanguageServer(REPO, Path(sys.executable).parent / "basedpyright-langserver")
    try:
        started = time.monotonic()
        print("definition:", definition(server, REPO / use, used), f"{time.monotonic() - started:.1f} s")
        started = time.monotonic()
        found = references(server, REPO / defined, name)
        files = sorted({str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path) for path, _ in found})
        print(f"references: {len(found)} in {len(files)} files, {time.monotonic() - started:.1f} s")
        print("\n".join(files))
    finally:
        server.close()


if __name__ == "__main__":
    main(sys.argv[1:])
