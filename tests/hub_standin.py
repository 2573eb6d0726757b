"""A loopback stand-in of the Hugging Face Hub's download API, for tests that point `HF_ENDPOINT`
(or an `endpoint=` argument) at it: what huggingface_hub's `hf_hub_download`, `snapshot_download`,
`HfApi.model_info` / `dataset_info` / `list_repo_tree` / `list_repo_refs` ask, answered from
commits a test publishes with `add`.

    with HubStandIn() as hub:
        sha = hub.add("org/tiny", {"config.json": b"{}", "model.safetensors": weights})
        ...  # HF_ENDPOINT=hub.url; hub.requests lists what was asked ("METHOD path", query included)

What it answers, as the Hub does:
- `HEAD`/`GET /{repo_id}/resolve/{revision}/{filename}` (datasets under `/datasets/`, spaces under
  `/spaces/`): the file at a branch or a full commit sha, with `X-Repo-Commit`, an `ETag` and its
  `Content-Length`. A regular file's ETag is its git blob sha1; a large-file (LFS) one — by suffix,
  or 10 MiB and more — answers `302` to `/lfs-objects/{sha256}` on the same host, with
  `X-Linked-Etag` (its sha256) and `X-Linked-Size`. `Range` is honoured.
- `GET /api/{models|datasets|spaces}/{repo_id}[/revision/{revision}]`: JSON with `id`, `sha` and
  `siblings` (`rfilename`, `size`, `blobId`, `lfs`).
- `GET /api/{type}s/{repo_id}/tree/{revision}[/{path}]` (`?recursive=true`) and `/refs`.
- A missing repo, revision or file: `404` with the Hub's `X-Error-Code` (`RepoNotFound`,
  `RevisionNotFound`, `EntryNotFound`; the last with `X-Repo-Commit`, as huggingface_hub caches it).

`fail_with = 503` makes every request answer that status (error modes); the request is still
recorded. Commits are deterministic: the sha is a sha1 of the repo, its parent commit and the files, unless
`add(..., commit=<40 hex>)` names the sha (a real repo's pinned commit: tests/standins/hub_models.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from urllib.parse import parse_qs, unquote, urlsplit

from tests.loopback import LoopbackServer, QuietHandler, ServedStandIn

# What the Hub stores as large files by default (its .gitattributes), besides any file of 10 MiB or more.
LFS_SUFFIXES = (
    ".bin", ".safetensors", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".onnx", ".ot", ".tflite",
    ".model", ".npy", ".npz", ".pkl", ".parquet", ".arrow", ".zip", ".gz", ".tar", ".zst",
)  # fmt: skip
LFS_MIN_SIZE = 10 * 1024 * 1024
REPO_PREFIXES = {"dataset": "datasets/", "space": "spaces/", "model": ""}
COMMIT = re.compile(r"[0-9a-f]{40}")


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def is_lfs(filename: str, data: bytes) -> bool:
    return filename.endswith(LFS_SUFFIXES) or len(data) >= LFS_MIN_SIZE


class HubStandIn(ServedStandIn):
    """One loopback Hub per test; a context manager that serves while it is open."""

    def __init__(self, port: int = 0):
        self.server = LoopbackServer(handler=HubHandler, port=port)  # 0: a free port
        self.server.hub = self
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.requests: list[str] = []
        self.fail_with: int | None = None
        self.lock = self.server.lock
        self._branches: dict[tuple[str, str], dict[str, str]] = {}  # (type, repo) -> branch -> sha
        self._commits: dict[tuple[str, str], dict[str, dict[str, bytes]]] = {}  # (type, repo) -> sha -> files
        self._blobs: dict[str, bytes] = {}  # sha256 -> content of every large file published

    def add(
        self,
        repo_id: str,
        files: dict[str, bytes],
        repo_type: str = "model",
        branch: str = "main",
        commit: str | None = None,
    ) -> str:
        """Publish a commit of these files on `branch`; returns its 40-hex commit sha (deterministic from content).

        `commit`: the sha to publish them under instead (a real repo's pinned commit, for a stand-in of it)."""
        if repo_type not in REPO_PREFIXES:
            raise ValueError(f"repo_type {repo_type!r}: one of {', '.join(REPO_PREFIXES)}")
        if commit is not None and not COMMIT.fullmatch(commit):
            raise ValueError(f"commit {commit!r}: not a full commit sha (40 lowercase hex digits)")
        key = (repo_type, repo_id)
        with self.lock:
            parent = self._branches.get(key, {}).get(branch, "")
            digest = hashlib.sha1(f"{repo_type}\0{repo_id}\0{parent}\0".encode())
            for name in sorted(files):
                digest.update(f"{name}\0{hashlib.sha256(files[name]).hexdigest()}\n".encode())
            sha = commit or digest.hexdigest()
            self._commits.setdefault(key, {})[sha] = {name: bytes(data) for name, data in files.items()}
            self._branches.setdefault(key, {})[branch] = sha
            for name, data in files.items():
                if is_lfs(name, data):
                    self._blobs[hashlib.sha256(data).hexdigest()] = bytes(data)
        return sha

    # ------------------------------------------------------------ what the handler reads

    def lookup(self, repo_type: str, repo_id: str, revision: str) -> tuple[str | None, str | None, dict | None]:
        """(error code, commit sha, files) of a repo at a branch or a full commit sha."""
        key = (repo_type, repo_id)
        with self.lock:
            if key not in self._commits:
                return "RepoNotFound", None, None
            sha = self._branches[key].get(revision) or (revision if revision in self._commits[key] else None)
            if sha is None:
                return "RevisionNotFound", None, None
            return None, sha, self._commits[key][sha]

    def refs(self, repo_type: str, repo_id: str) -> dict[str, str] | None:
        with self.lock:
            return dict(self._branches[(repo_type, repo_id)]) if (repo_type, repo_id) in self._branches else None

    def blob(self, sha256: str) -> bytes | None:
        with self.lock:
            return self._blobs.get(sha256)


def split_repo(path: str) -> tuple[str, str]:
    """(repo type, the rest of the path) of a path without its leading `/`."""
    for repo_type, prefix in REPO_PREFIXES.items():
        if prefix and path.startswith(prefix):
            return repo_type, path[len(prefix) :]
    return "model", path


def sibling(name: str, data: bytes) -> dict:
    entry = {"rfilename": name, "size": len(data), "blobId": git_blob_sha1(data)}
    if is_lfs(name, data):
        entry["lfs"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
    return entry


def tree_entry(name: str, data: bytes) -> dict:
    entry = {"type": "file", "oid": git_blob_sha1(data), "size": len(data), "path": name}
    if is_lfs(name, data):
        entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
    return entry


class HubHandler(QuietHandler):
    server: LoopbackServer

    def do_HEAD(self):
        self.answer()

    def do_GET(self):
        self.answer()

    def answer(self) -> None:
        hub: HubStandIn = self.server.hub
        with hub.lock:
            hub.requests.append(f"{self.command} {self.path}")
            failing = hub.fail_with
        if failing is not None:
            return self.reply(failing, b"the Hub stand-in was told to fail")
        parts = urlsplit(self.path)
        path = parts.path.lstrip("/")
        if path.startswith("api/"):
            return self.api(hub, path[4:], parse_qs(parts.query))
        if path.startswith("lfs-objects/"):
            data = hub.blob(path.removeprefix("lfs-objects/"))
            if data is None:
                return self.reply(404, b"no such object")
            return self.content(data, {"ETag": f'"{hashlib.sha256(data).hexdigest()}"'})
        repo_type, rest = split_repo(path)
        repo_id, marker, tail = rest.partition("/resolve/")
        revision, _, filename = tail.partition("/")
        if not marker or not revision or not filename:
            return self.reply(404, b"not a Hub path", {"X-Error-Code": "RepoNotFound"})
        self.resolve(hub, repo_type, repo_id, unquote(revision), unquote(filename))

    def resolve(self, hub: HubStandIn, repo_type: str, repo_id: str, revision: str, filename: str) -> None:
        error, sha, files = hub.lookup(repo_type, repo_id, revision)
        if error:
            return self.reply(404, error.encode(), {"X-Error-Code": error})
        if filename not in files:
            return self.reply(404, b"EntryNotFound", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": sha})
        data = files[filename]
        if is_lfs(filename, data):
            sha256 = hashlib.sha256(data).hexdigest()
            headers = {
                "X-Repo-Commit": sha,
                "ETag": f'"{sha256}"',
                "X-Linked-Etag": f'"{sha256}"',
                "X-Linked-Size": str(len(data)),
                "Location": f"{hub.url}/lfs-objects/{sha256}",
            }
            return self.reply(302, b"", headers)
        self.content(data, {"X-Repo-Commit": sha, "ETag": f'"{git_blob_sha1(data)}"'})

    def content(self, data: bytes, headers: dict) -> None:
        """The bytes, or the part a `Range: bytes=START-[END]` asks for."""
        wanted = self.headers.get("Range", "")
        if not wanted.startswith("bytes="):
            return self.reply(200, data, {**headers, "Accept-Ranges": "bytes"})
        first, _, last = wanted[6:].partition("-")
        start, end = int(first or 0), min(int(last) if last else len(data) - 1, len(data) - 1)
        if start >= len(data):
            return self.reply(416, b"", {"Content-Range": f"bytes */{len(data)}"})
        headers = {**headers, "Content-Range": f"bytes {start}-{end}/{len(data)}"}
        self.reply(206, data[start : end + 1], headers)

    def api(self, hub: HubStandIn, path: str, query: dict) -> None:
        kind, _, rest = path.partition("/")
        repo_type = {"models": "model", "datasets": "dataset", "spaces": "space"}.get(kind)
        if repo_type is None:
            return self.reply(404, b"unknown API", {"X-Error-Code": "RepoNotFound"})
        for verb in ("/revision/", "/tree/"):
            repo_id, marker, tail = rest.partition(verb)
            if marker:
                break
        else:
            repo_id, marker, tail = rest, "", ""
        if not marker and repo_id.endswith("/refs"):
            return self.git_refs(hub, repo_type, repo_id.removesuffix("/refs"))
        revision, _, subpath = tail.partition("/")
        error, sha, files = hub.lookup(repo_type, repo_id, unquote(revision) if marker else "main")
        if error:
            return self.reply(404, json.dumps({"error": error}).encode(), {"X-Error-Code": error})
        if marker == "/tree/":
            return self.tree(files, unquote(subpath).strip("/"), query.get("recursive", [""])[0].lower() == "true")
        info = {
            "_id": sha[:24],
            "id": repo_id,
            "sha": sha,
            "private": False,
            "disabled": False,
            "gated": False,
            "tags": [],
            "siblings": [sibling(name, files[name]) for name in sorted(files)],
        }
        if repo_type == "model":
            info["modelId"] = repo_id
        self.json(info)

    def tree(self, files: dict, folder: str, recursive: bool) -> None:
        prefix = f"{folder}/" if folder else ""
        entries, folders = [], set()
        for name in sorted(files):
            if not name.startswith(prefix):
                continue
            inner = name[len(prefix) :]
            parts = inner.split("/")
            for depth in range(1, len(parts) if recursive else min(2, len(parts))):
                folders.add(prefix + "/".join(parts[:depth]))
            if recursive or len(parts) == 1:
                entries.append(tree_entry(name, files[name]))
        if folder and not entries and not folders:
            return self.reply(404, b"EntryNotFound", {"X-Error-Code": "EntryNotFound"})
        listed = [
            {"type": "directory", "oid": hashlib.sha1(name.encode()).hexdigest(), "path": name} for name in folders
        ]
        self.json(sorted(listed, key=lambda entry: entry["path"]) + entries)

    def git_refs(self, hub: HubStandIn, repo_type: str, repo_id: str) -> None:
        branches = hub.refs(repo_type, repo_id)
        if branches is None:
            return self.reply(404, b"RepoNotFound", {"X-Error-Code": "RepoNotFound"})
        listed = [
            {"name": name, "ref": f"refs/heads/{name}", "targetCommit": sha} for name, sha in sorted(branches.items())
        ]
        self.json({"branches": listed, "tags": [], "converts": []})

    def json(self, value) -> None:
        self.reply(200, json.dumps(value).encode(), {"Content-Type": "application/json"})
