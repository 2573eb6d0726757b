"""Publishing a built card folder to the Hugging Face Hub, with receipts.

What is on the Hub is known from the last *receipt* (`releases/<dataset>/NNNN-<version>.json`,
committed to git): the repo, the commit sha, the content hash and every file's size and
sha256. A publish compares the local folder to that receipt and sends only the difference
as one `create_commit` (adds for new/changed files, deletes for files gone). Same content
hash as the last receipt: nothing to do, no commit.

The planning functions are pure; `publish` takes the Hub client as an argument so tests
drive it with a fake. The token is read from the environment by the caller and handed to
the client only; it is never logged nor written.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_json, sha256_file, write_json
from babelforge.publish.card import SAMPLE_TAG, is_sample_build, validate_card

RECEIPT_NAME = re.compile(r"^(\d{4})-(.+)\.json$")


@dataclass(frozen=True)
class Operation:
    kind: str  # "add" or "delete"
    path: str  # path in the repo
    size: int  # bytes (for a delete: the size the receipt recorded)
    sha256: str


def manifest(folder: Path) -> dict[str, dict[str, Any]]:
    """{relative posix path: {size, sha256}} of every file in a built card folder."""

    if not folder.is_dir():
        raise BabelforgeError(f"{folder}: no built card; run `babelforge card <dataset>` (or dvc repro) first")
    files = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        if any(part.startswith(".") for part in relative.split("/")):
            continue  # staging leftovers and editor files are never published
        files[relative] = {"size": path.stat().st_size, "sha256": sha256_file(path)}
    return files


def content_hash(files: Mapping[str, Mapping[str, Any]]) -> str:
    """One sha256 over the sorted (path, sha256) pairs: equal iff the published content is equal."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(f"{path}\0{files[path]['sha256']}\n".encode())
    return digest.hexdigest()


def plan_operations(local: Mapping[str, Mapping[str, Any]], remote: Mapping[str, Mapping[str, Any]]) -> list[Operation]:
    """The commit that turns `remote` (last receipt's files) into `local`, sorted by path."""
    operations = [
        Operation("add", path, int(entry["size"]), entry["sha256"])
        for path, entry in local.items()
        if remote.get(path, {}).get("sha256") != entry["sha256"]
    ]
    operations += [
        Operation("delete", path, int(entry.get("size", 0)), entry.get("sha256", ""))
        for path, entry in remote.items()
        if path not in local
    ]
    return sorted(operations, key=lambda op: (op.path, op.kind))


def receipts(releases: Path, dataset: str) -> list[tuple[int, Path]]:
    folder = releases / dataset
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        match = RECEIPT_NAME.match(path.name)
        if match:
            found.append((int(match.group(1)), path))
    return sorted(found)


def last_receipt(releases: Path, dataset: str, repo: str) -> dict[str, Any] | None:
    """The newest receipt of `dataset` published to `repo`, or None."""

    for _, path in reversed(receipts(releases, dataset)):
        receipt = read_json(path)
        if receipt.get("repo") == repo:
            return receipt
    return None


def version_conflict(releases: Path, dataset: str, repo: str, version: str | None, digest: str) -> str | None:
    """Why `version` cannot be published with content `digest`: an earlier receipt for the
    same repo has that version with other content (a version is never moved). None if fine."""

    if version is None:
        return None
    for _, path in receipts(releases, dataset):
        receipt = read_json(path)
        if receipt.get("repo") == repo and receipt.get("version") == version and receipt.get("content_hash") != digest:
            return (
                f"{repo} already has {dataset} {version} with other content (receipt {path.name}); "
                "publish the change under a new version"
            )
    return None


def format_operations(operations: Sequence[Operation]) -> str:
    if not operations:
        return "nothing to do: the Hub already has this content"
    width = max(len(op.path) for op in operations)
    lines = [f"{op.kind:<6} {op.path:<{width}} {op.size:>12,} B  sha256:{op.sha256}" for op in operations]
    adds = [op for op in operations if op.kind == "add"]
    lines.append(f"{len(adds)} add ({sum(op.size for op in adds):,} B), {len(operations) - len(adds)} delete")
    return "\n".join(lines)


class HubApi(Protocol):
    """The part of `huggingface_hub.HfApi` publishing uses."""

    def create_repo(self, repo_id: str, *, repo_type: str, exist_ok: bool, private: bool) -> Any: ...

    def create_commit(self, repo_id: str, operations: list, *, commit_message: str, repo_type: str) -> Any: ...

    def create_tag(self, repo_id: str, *, tag: str, revision: str, repo_type: str, tag_message: str) -> Any: ...


@dataclass
class PublishResult:
    operations: list[Operation]
    content_hash: str
    receipt: dict[str, Any] | None  # the new receipt; None when nothing was published
    receipt_path: Path | None


def audit_errors(summary_path: Path | None) -> int | None:
    """Error rows the last audit counted for the dataset (its slice, `<paths.audit>/datasets/<name>.json`),
    or None when the audit wrote none."""

    if summary_path is None or not summary_path.exists():
        return None
    return int(read_json(summary_path).get("errors", 0))


def sample_refusal(folder: Path, allow_sample: bool) -> str | None:
    """Why the card in `folder` may not be published: it is a build of the `sample` profile (random
    tiny models, tagged SAMPLE_TAG) and `allow_sample` is not set. None when it may."""

    if allow_sample or not is_sample_build(folder):
        return None
    return (
        f"{folder} is a SAMPLE build (tag {SAMPLE_TAG}: random tiny models, not the benchmark); "
        "rebuild with `profile: full`, or pass --allow-sample to publish it as a sample"
    )


def refuse_sample(folder: Path, allow_sample: bool) -> None:
    """One line, as an error, when `sample_refusal` says no."""

    refusal = sample_refusal(folder, allow_sample)
    if refusal:
        raise BabelforgeError(f"publish: {refusal}")


def sample_line(folder: Path, allow_sample: bool) -> str:
    """The dry run's line on the build profile: what a real run does with this card."""

    if not is_sample_build(folder):
        return f"build: not a sample build (no {SAMPLE_TAG} tag)"
    if allow_sample:
        return f"build: SAMPLE (tag {SAMPLE_TAG}, random tiny models); published as a sample (--allow-sample)"
    return f"build: {sample_refusal(folder, allow_sample)} (a real run refuses)"


def publish(
    api: HubApi,
    folder: Path,
    dataset: str,
    repo: str,
    releases: Path,
    version: str | None,
    audit_summary: Path | None,
    force: bool = False,
    private: bool = False,
    allow_sample: bool = False,
) -> PublishResult:
    """Commit the difference between `folder` and the last receipt to `repo`; write a receipt.

    Refuses (BabelforgeError) when the card is invalid, a sample build and not `allow_sample`,
    or the audit has errors and not `force`. Returns without any Hub call when the content hash
    equals the last receipt's.
    """

    problems = validate_card(folder)
    if problems:
        raise BabelforgeError(f"publish: card is invalid: {problems[0]}")
    refuse_sample(folder, allow_sample)
    errors = audit_errors(audit_summary)
    if errors and not force:
        raise BabelforgeError(f"publish: the audit ({audit_summary}) has {errors} error rows; fix them or pass --force")
    local = manifest(folder)
    digest = content_hash(local)
    previous = last_receipt(releases, dataset, repo)
    if (
        previous is not None
        and previous.get("content_hash") == digest
        and (version is None or previous.get("version") == version)
    ):
        return PublishResult([], digest, None, None)
    conflict = version_conflict(releases, dataset, repo, version, digest)
    if conflict:
        raise BabelforgeError(f"publish: {conflict}")
    operations = plan_operations(local, previous.get("files", {}) if previous else {})

    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    hub_operations = [
        CommitOperationAdd(path_in_repo=op.path, path_or_fileobj=str(folder / op.path))
        if op.kind == "add"
        else CommitOperationDelete(path_in_repo=op.path)
        for op in operations
    ]
    api.create_repo(repo, repo_type="dataset", exist_ok=True, private=private)
    commit_sha = previous.get("commit") if previous and not hub_operations else None
    if hub_operations:
        info = api.create_commit(
            repo,
            hub_operations,
            repo_type="dataset",
            commit_message=f"{dataset} {version or 'update'} (content {digest[:12]})",
        )
        commit_sha = getattr(info, "oid", None) or str(info)
    if version:
        try:
            api.create_tag(
                repo, tag=version, revision=commit_sha, repo_type="dataset", tag_message=f"{dataset} {version}"
            )
        except Exception:
            if hub_operations:
                # The commit is on the Hub: record it (untagged), so a rerun only adds the tag.
                _write_receipt(releases, dataset, repo, commit_sha, None, digest, errors, force, local)
            raise
    receipt, path = _write_receipt(releases, dataset, repo, commit_sha, version, digest, errors, force, local)
    return PublishResult(operations, digest, receipt, path)


def _write_receipt(
    releases: Path,
    dataset: str,
    repo: str,
    commit_sha: str | None,
    version: str | None,
    digest: str,
    errors: int | None,
    force: bool,
    local: Mapping[str, Any],
):
    """The next numbered receipt `releases/<dataset>/NNNN-<version>.json`; returns (receipt, path)."""

    receipt = {
        "dataset": dataset,
        "repo": repo,
        "repo_type": "dataset",
        "commit": commit_sha,
        "version": version,
        "content_hash": digest,
        "project_commit": _project_commit(),
        "audit_errors": errors,
        "forced": bool(force and errors),
        "files": dict(local),
    }
    existing = receipts(releases, dataset)
    number = existing[-1][0] + 1 if existing else 1
    path = releases / dataset / f"{number:04d}-{version or 'unversioned'}.json"
    write_json(receipt, path)
    return receipt, path


def _project_commit() -> str | None:
    """The babelforge git commit the data was built from, when run inside its checkout."""

    try:
        result = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None
