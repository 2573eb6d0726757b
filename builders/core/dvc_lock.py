"""What the last `dvc repro` recorded: the outputs `dvc.lock` pins, their copies in the DVC cache, and
putting them back.

DVC removes a stage's outputs before it runs the stage's command. So a stage that wants to say what
changed since the last build (the languages the labels stage kept) reads the last build's output from the
cache, by the hash `dvc.lock` holds for it; and a stage that fails under `dvc repro` or `dvc exp run` would
leave no output at all: the CLI puts back what `dvc.lock` records for it (`put_back`), from the cache, or
from git for an output DVC does not cache (a metric with `cache: false`).
"""

from __future__ import annotations

import configparser
import dataclasses
import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import yaml

from babelforge.core.errors import listed
from babelforge.core.io import atomic_directory, atomic_path

DVC_CACHE = Path(".dvc") / "cache" / "files" / "md5"  # DVC 3's default cache layout, seen from the project root
_FOLDER = ".dir"  # a folder's hash in dvc.lock ends so; its cache file lists the folder's files
_DIGEST = re.compile(r"[0-9a-f]{32}(\.dir)?")
# libyaml's safe loader where PyYAML has it (the same values): the sample's lock parses in 0.12 s instead
# of 0.73, and the labels stage reads it four times
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _lock_stages(lock_path: str | Path) -> dict:
    lock_path = Path(lock_path)
    if not lock_path.is_file():
        return {}
    try:
        lock = yaml.load(lock_path.read_text(encoding="utf-8"), Loader=_LOADER) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    stages = lock.get("stages") if isinstance(lock, dict) else None
    return stages if isinstance(stages, dict) else {}


def _outs(stage: object) -> dict[str, str]:
    outs = {}
    for out in (stage.get("outs") if isinstance(stage, dict) else None) or []:
        if isinstance(out, dict) and out.get("path") and isinstance(out.get("md5"), str):
            outs[Path(out["path"]).as_posix()] = out["md5"]
    return outs


def inside(path: str) -> bool:
    """A relative path that stays in its folder (no `..`, not absolute): what a lock or a listing may name."""
    parts = PurePosixPath(path).parts
    return bool(parts) and not path.startswith("/") and ".." not in parts and "\\" not in path


def locked_outputs(lock_path: str | Path = "dvc.lock") -> dict[str, str]:
    """Every output `dvc.lock` pins: path (posix, as written there) -> its md5."""
    return {path: digest for stage in _lock_stages(lock_path).values() for path, digest in _outs(stage).items()}


def stage_outputs(stage: str, lock_path: str | Path = "dvc.lock") -> dict[str, str]:
    """The outputs `dvc.lock` records for one stage (`labels`; a foreach item `card@mvl-sib`): path -> md5."""
    return _outs(_lock_stages(lock_path).get(stage))


def cache_folder(root: str | Path = ".") -> Path:
    """Where the project's DVC 3 cache keeps files by md5: `cache.dir` of `.dvc/config.local`, else of
    `.dvc/config` (a relative one from `.dvc/`), else `.dvc/cache`; then `files/md5`."""
    dvc = Path(root) / ".dvc"
    for name in ("config.local", "config"):
        config = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            config.read(dvc / name, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        if config.has_option("cache", "dir"):
            return dvc / config.get("cache", "dir") / "files" / "md5"
    return dvc / "cache" / "files" / "md5"


def cached(digest: str, cache: Path) -> Path | None:
    """The cache's copy of the file (or folder listing) with this md5, or None (none there, or no md5)."""
    if not _DIGEST.fullmatch(digest):
        return None
    copy = cache / digest[:2] / digest[2:]
    return copy if copy.is_file() else None


def last_build_copy(path: str | Path, lock_path: str | Path = "dvc.lock", cache: Path | None = None) -> Path | None:
    """The file `path` as the last build left it (its copy in the DVC cache), or None when dvc.lock does
    not pin it, it is a folder, or the cache does not hold it (another cache dir, a fresh clone)."""
    digest = locked_outputs(lock_path).get(Path(path).as_posix())
    if digest is None or digest.endswith(_FOLDER):
        return None
    return cached(digest, cache if cache is not None else cache_folder(Path(lock_path).parent))


def md5_file(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def folder_members(listing: Path) -> list[tuple[str, str]] | None:
    """(relative path, md5) of each file a folder's cache listing (`<md5>.dir`, JSON) names; None when it
    is not one or names a path outside the folder (absolute, `..`): nothing is written from it."""
    try:
        entries = json.loads(listing.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(entries, list):
        return None
    members = []
    for entry in entries:
        relpath = entry.get("relpath") if isinstance(entry, dict) else None
        digest = entry.get("md5") if isinstance(entry, dict) else None
        if not isinstance(relpath, str) or not isinstance(digest, str) or not inside(relpath):
            return None
        members.append((relpath, digest))
    return members


def git_copy(path: str, digest: str, root: Path) -> bytes | None:
    """The bytes git holds for `path` (the index, then HEAD) when their md5 is `digest`: a metric DVC does
    not cache (`cache: false`) but git tracks."""
    for revision in (f":{path}", f"HEAD:{path}"):
        try:
            shown = subprocess.run(["git", "-C", str(root), "show", revision], capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if shown.returncode == 0 and hashlib.md5(shown.stdout, usedforsecurity=False).hexdigest() == digest:
            return shown.stdout
    return None


@dataclasses.dataclass
class PutBack:
    """What `put_back` did: outputs written again, outputs already as recorded, outputs it could not find."""

    restored: list[str] = dataclasses.field(default_factory=list)
    in_place: list[str] = dataclasses.field(default_factory=list)
    missing: list[str] = dataclasses.field(default_factory=list)


def put_back(stage: str, root: str | Path = ".") -> PutBack:
    """Put each output `dvc.lock` (in `root`) records for `stage` back as recorded: a file from the DVC
    cache, or from git when DVC does not cache it; a folder from its cache listing, whole or not at all.
    An output already as recorded is left alone; whatever else is at an output's place (what a failed run
    left) is replaced, atomically (babelforge.core.io)."""
    root = Path(root)
    cache = cache_folder(root)
    done = PutBack()
    for path, digest in sorted(stage_outputs(stage, root / "dvc.lock").items()):
        target = root / path
        if not inside(path):  # a lock naming a place outside the project: nothing is written there
            outcome = "missing"
        elif digest.endswith(_FOLDER):
            outcome = _put_back_folder(target, digest, cache)
        else:
            outcome = _put_back_file(target, path, digest, cache, root)
        getattr(done, outcome).append(path)
    return done


def _put_back_file(target: Path, path: str, digest: str, cache: Path, root: Path) -> str:
    if target.is_file() and not target.is_symlink() and md5_file(target) == digest:
        return "in_place"
    copy = cached(digest, cache)
    data = None if copy is not None else git_copy(path, digest, root)
    if copy is None and data is None:
        return "missing"
    if target.is_symlink() or target.is_dir():  # what a failed run left where the file goes
        _remove(target)
    with atomic_path(target) as tmp:
        if copy is not None:
            shutil.copyfile(copy, tmp)
        else:
            tmp.write_bytes(data)
    return "restored"


def _put_back_folder(target: Path, digest: str, cache: Path) -> str:
    listing = cached(digest, cache)
    members = folder_members(listing) if listing is not None else None
    copies = [(relpath, cached(md5, cache)) for relpath, md5 in members or []]
    if members is None or any(copy is None for _, copy in copies):
        return "missing"
    if target.is_symlink() or target.is_file():  # what a failed run left where the folder goes
        _remove(target)
    with atomic_directory(target) as tmp:
        for relpath, copy in copies:
            (tmp / relpath).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(copy, tmp / relpath)
    return "restored"


def _remove(target: Path) -> None:
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    else:
        target.unlink()


def put_back_line(stage: str, done: PutBack, in_experiment: bool = False) -> str | None:
    """The one line a failed stage under DVC says about `put_back` (None when it did nothing and nothing
    is missing); under `dvc exp run`, how to undo what `-S` wrote into params.yaml (DVC wrote it, before
    the stage ran, and leaves it)."""
    if not done.restored and not done.missing:
        return None
    parts = []
    if done.restored:
        parts.append(
            f"DVC removed the stage's outputs before running it: put back the last good ones dvc.lock records "
            f"({len(done.restored)}: {listed(done.restored)})"
        )
    if done.missing:
        parts.append(
            f"not in the DVC cache nor in git, so not put back: {listed(done.missing)} "
            f"(`dvc pull` then `dvc checkout {stage}` brings them back)"
        )
    if in_experiment:
        parts.append(
            "params.yaml keeps what `dvc exp run -S` set (DVC's doing): `git diff params.yaml` shows it, "
            "`git checkout -- params.yaml` undoes it"
        )
    return f"babelforge {stage}: " + "; ".join(parts)
