"""The source registry (`resources/sources.tsv`): every upstream input with its hashes.

A source is one file or one directory at `path` in the source-mirror layout (the layout
of `../shared/data`, which is also the layout `fetch` writes under `data/raw/`).

- `kind` file: `sha256` is the file's hash; `url` is where it is downloaded from.
- `kind` dir: its files and their hashes are listed in `resources/source_files/<name>.tsv`;
  `sha256` is the manifest hash over that list (`manifest_hash`), so one value pins the
  whole tree; file `f` is downloaded from `url + f`.
- `origin` says how the mirror copy relates to upstream: `verbatim` (byte-identical to the
  pinned upstream URL, so it can be downloaded and verified), `filtered` (upstream files cut
  down, e.g. OMW to the 1,000 ImageNet synsets) or `derived` (reformatted from the upstream
  named in `url`). Only verbatim sources can be fetched from their upstream URL; the others
  come from a mirror (a directory, or an HTTP server with the same layout).

`python -m babelforge.core.sources --mirror ../shared/data` re-records the hashes and file
lists from a mirror, leaving every other column as it is.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_json, sha256_file, write_text
from babelforge.core.resources import resource
from babelforge.core.tsv import SHA256, TsvSpec, one_of, read_tsv

SOURCES_PATH = resource("sources.tsv")
SOURCE_FILES_DIR = resource("source_files")
COLUMNS = ("name", "kind", "path", "origin", "version", "url", "sha256", "licence", "citation")
KINDS = ("file", "dir")
ORIGINS = ("verbatim", "filtered", "derived")
TABLE = TsvSpec(
    COLUMNS,
    required=COLUMNS,
    unique=(("name",),),
    checks={"kind": one_of(*KINDS), "origin": one_of(*ORIGINS), "sha256": SHA256},
)
# What `record_from_mirror` reads: a new row may wait for its hash there.
UNRECORDED_TABLE = replace(TABLE, required=tuple(column for column in COLUMNS if column != "sha256"))
FILE_LIST = TsvSpec(("path", "sha256"), required=("path", "sha256"), unique=(("path",),), checks={"sha256": SHA256})


@dataclass(frozen=True)
class SourceFile:
    path: str  # relative to the source's own path, POSIX separators
    sha256: str


@dataclass(frozen=True)
class Source:
    name: str
    kind: str
    path: str  # in the mirror layout, e.g. `sib-200/annotated`
    origin: str
    version: str
    url: str  # download URL (file) or URL prefix (dir); provenance for derived ones
    sha256: str
    licence: str
    citation: str
    files: tuple[SourceFile, ...]

    def file_path(self, file: SourceFile) -> str:
        """Where `file` lies relative to a mirror root (or to `data/raw`)."""
        return self.path if self.kind == "file" else f"{self.path}/{file.path}"

    def file_url(self, file: SourceFile) -> str:
        return self.url if self.kind == "file" else self.url + file.path


def manifest_hash(files: Iterable[tuple[str, str]]) -> str:
    """One sha256 for a directory: over its sorted `relative path<TAB>file sha256` lines."""
    lines = "".join(f"{path}\t{digest}\n" for path, digest in sorted(files))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def scan_dir(root: str | os.PathLike) -> list[SourceFile]:
    """Every regular file under `root` with its sha256, sorted by relative path."""

    root = Path(root)
    found = [
        SourceFile(path=PurePosixPath(path.relative_to(root)).as_posix(), sha256=sha256_file(path))
        for path in root.rglob("*")
        if path.is_file()
    ]
    return sorted(found, key=lambda file: file.path)


def _read_file_list(name: str, files_dir: Path) -> tuple[SourceFile, ...]:
    path = files_dir / f"{name}.tsv"
    if not path.exists():
        raise BabelforgeError(
            f"source {name}: no file list {path}; record it with "
            f"`python -m babelforge.core.sources --mirror ../shared/data`"
        )
    return tuple(SourceFile(path=row["path"], sha256=row["sha256"]) for _, row in read_tsv(path, FILE_LIST))


def read_sources(
    path: str | os.PathLike = SOURCES_PATH, files_dir: str | os.PathLike | None = None
) -> dict[str, Source]:
    """The registry, checked: known kinds/origins, unique names, no nested paths, hashes agree."""
    path = Path(path)
    files_dir = Path(files_dir) if files_dir is not None else path.parent / SOURCE_FILES_DIR.name
    sources: dict[str, Source] = {}
    for number, row in read_tsv(path, TABLE):
        where = f"{path}:{number}"
        if row["kind"] == "file":
            files = (SourceFile(path=PurePosixPath(row["path"]).name, sha256=row["sha256"]),)
        else:
            files = _read_file_list(row["name"], files_dir)
            recorded = manifest_hash((f.path, f.sha256) for f in files)
            if recorded != row["sha256"]:
                raise BabelforgeError(
                    f"{where}: sha256 of {row['name']} does not match its file list "
                    f"{files_dir / (row['name'] + '.tsv')} (manifest hash {recorded})"
                )
        sources[row["name"]] = Source(**{column: row[column] for column in COLUMNS}, files=files)
    _check_disjoint(sources.values(), path)
    return sources


def _check_disjoint(sources: Iterable[Source], where: Path) -> None:
    # fetch prunes files it does not know inside a dir source, so nothing may nest in one.
    sources = list(sources)
    for outer in sources:
        for inner in sources:
            if outer is not inner and (
                inner.path == outer.path or (outer.kind == "dir" and inner.path.startswith(outer.path + "/"))
            ):
                raise BabelforgeError(f"{where}: source {inner.name} lies inside source {outer.name}")


def select_sources(sources: dict[str, Source], names: str | Iterable[str] | None) -> list[Source]:
    """`names` as a comma list or a list; None, '' or 'all' = every source, in registry order."""
    if isinstance(names, str):
        names = [] if names.strip() in ("", "all") else [n.strip() for n in names.split(",") if n.strip()]
    names = list(names or [])
    unknown = [name for name in names if name not in sources]
    if unknown:
        raise BabelforgeError(
            f"unknown source(s) {', '.join(unknown)}; resources/sources.tsv has: {', '.join(sources)}"
        )
    return [source for name, source in sources.items() if not names or name in names]


def fetched_record(name: str, raw_dir: str | os.PathLike = "data/raw") -> dict:
    """The `fetch` manifest of one source, for the provenance of the artifacts made from it."""

    path = Path(raw_dir) / f"{name}.json"
    if not path.exists():
        raise BabelforgeError(f"{path} is missing: run `babelforge fetch --sources {name}` first")
    manifest = read_json(path)
    return {"version": manifest["version"], "sha256": manifest["sha256"], "licence": manifest["licence"]}


def fetched_source_at(
    path: str | os.PathLike, raw_dir: str | os.PathLike = "data/raw", registry: dict[str, Source] | None = None
) -> str | None:
    """The name of the registered source that `path` is (or lies inside) under `raw_dir`; None elsewhere."""
    relative = Path(os.path.relpath(Path(path).resolve(), Path(raw_dir).resolve())).as_posix()
    if relative == ".." or relative.startswith("../"):
        return None
    for source in (registry if registry is not None else read_sources()).values():
        if relative == source.path or relative.startswith(source.path + "/"):
            return source.name
    return None


def input_record(path: str | os.PathLike, raw_dir: str | os.PathLike = "data/raw", shown: str | None = None) -> dict:
    """The provenance record of an input file or folder a stage reads at `path`.

    A fetched source (`path` is, or lies inside, a registered source under `raw_dir`): its
    name and its fetch manifest's record (`fetched_record`: version, sha256, licence).
    Anything else (a mirror read in place, a user's CSV, a generated manifest): its path
    (`shown` when given, e.g. a path relative to a temporary folder) and its content hash,
    a file's sha256 or a folder's `manifest_hash`, which for an untouched copy of a
    registered folder source is the registry's sha256.
    """
    name = fetched_source_at(path, raw_dir)
    if name is not None:
        return {"source": name, **fetched_record(name, raw_dir)}

    path = Path(path)
    if path.is_file():
        digest = sha256_file(path)
    elif path.is_dir():
        digest = manifest_hash((file.path, file.sha256) for file in scan_dir(path))
    else:
        raise BabelforgeError(f"{path}: no such file or folder to record as an input")
    return {"path": shown if shown is not None else str(path), "sha256": digest}


# --- recording hashes from a mirror (maintenance) -------------------------------------------


def record_from_mirror(mirror: str | os.PathLike, path: str | os.PathLike = SOURCES_PATH) -> list[str]:
    """Rewrite the sha256 column and the file lists from the files in `mirror`."""

    mirror, path = Path(mirror), Path(path)
    files_dir = path.parent / SOURCE_FILES_DIR.name
    rows = [row for _, row in read_tsv(path, UNRECORDED_TABLE)]
    changed = []
    for row in rows:
        location = mirror / row["path"]
        if row["kind"] == "file":
            digest = sha256_file(location)
        else:
            files = scan_dir(location)
            digest = manifest_hash((f.path, f.sha256) for f in files)
            listing = "path\tsha256\n" + "".join(f"{f.path}\t{f.sha256}\n" for f in files)
            write_text(listing, files_dir / f"{row['name']}.tsv")
        if digest != row["sha256"]:
            changed.append(row["name"])
        row["sha256"] = digest
    text = "\t".join(COLUMNS) + "\n" + "".join("\t".join(row[c] for c in COLUMNS) + "\n" for row in rows)
    write_text(text, path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="re-record source hashes from a mirror")
    parser.add_argument("--mirror", required=True, help="mirror root with the sources.tsv layout")
    parser.add_argument("--sources", default=str(SOURCES_PATH))
    args = parser.parse_args(argv)
    changed = record_from_mirror(args.mirror, args.sources)
    read_sources(args.sources)  # the result must load
    print(f"recorded; changed: {', '.join(changed) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
