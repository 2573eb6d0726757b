"""What the last `dvc repro` recorded: the outputs `dvc.lock` pins, and their copies in the DVC cache.

DVC removes a stage's outputs before it runs the stage, so a stage that wants to say what changed
since the last build (the languages the labels stage kept) reads the last build's output from the
cache, by the hash `dvc.lock` holds for it.
"""

from __future__ import annotations

from pathlib import Path

import yaml

DVC_CACHE = Path(".dvc") / "cache" / "files" / "md5"  # DVC 3's default cache layout, seen from the project root


def locked_outputs(lock_path: str | Path = "dvc.lock") -> dict[str, str]:
    """Every output `dvc.lock` pins: path (posix, as written there) -> its md5."""
    lock_path = Path(lock_path)
    if not lock_path.is_file():
        return {}
    lock = yaml.safe_load(lock_path.read_text(encoding="utf-8")) or {}
    outs = {}
    for stage in (lock.get("stages") or {}).values():
        for out in stage.get("outs") or []:
            digest = out.get("md5") or out.get("hash")
            if out.get("path") and digest:
                outs[Path(out["path"]).as_posix()] = str(digest)
    return outs


def last_build_copy(path: str | Path, lock_path: str | Path = "dvc.lock", cache: Path = DVC_CACHE) -> Path | None:
    """The file `path` as the last build left it (its copy in the DVC cache), or None when dvc.lock does
    not pin it, it is a folder, or the cache does not hold it (another cache dir, a fresh clone)."""
    digest = locked_outputs(lock_path).get(Path(path).as_posix())
    if digest is None or digest.endswith(".dir"):
        return None
    copy = Path(lock_path).parent / cache / digest[:2] / digest[2:]
    return copy if copy.is_file() else None
