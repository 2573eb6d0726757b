"""Deterministic, atomic artifact writes, and one writer per output.

Every artifact is written to a temporary file in the target directory and renamed
into place, so a killed stage leaves the previous artifact or none, never half of one.
Temporary names carry the writer's pid (`.<name>.<pid>.<random>.tmp`), so a later run
can tell a dead writer's leftovers from a live one's and removes them. Tables are sorted
and written with fixed Parquet settings and no timestamps, so the same inputs give
byte-identical files. `stage_lock` lets one process at a time write an output.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from babelforge.core.errors import BabelforgeError

PROVENANCE_KEY = b"babelforge.provenance"
# what a writer leaves beside its target while it works: `.<name>.<pid>.<random>.tmp|old`
_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[^.]+\.(?:tmp|old)$")
_LEGACY_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9_]{8}\.(?:tmp|old)$")  # before pids were in the name


def os_error_text(error: OSError) -> str:
    """An OSError as a short phrase (`File too large`, `Not a directory`), with a hint for a full disk."""
    text = error.strerror or str(error)
    if error.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        text += " (disk full or a file-size limit)"
    return text


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_stale_leftover(path: Path) -> bool:
    """A temp file or folder of a writer that is gone (its pid is not running), or from before pids."""
    match = _LEFTOVER.match(path.name)
    if match:
        return not _pid_alive(int(match["pid"]))
    return bool(_LEGACY_LEFTOVER.match(path.name))


def clear_leftovers(path: str | os.PathLike, recursive: bool = False) -> int:
    """Remove dead writers' temp files beside `path` (and inside it, when it is a folder and
    `recursive`); count them. Live writers' temps are left alone."""
    target = Path(path)
    candidates = list(target.parent.glob(f".{_glob_escape(target.name)}.*")) if target.parent.is_dir() else []
    if recursive and target.is_dir():
        candidates += [item for item in target.rglob(".*") if item.name.endswith((".tmp", ".old"))]
    stale = [item for item in candidates if is_stale_leftover(item)]
    for item in stale:
        _remove_leftover(item)
    return len(stale)


def _remove_leftover(item: Path) -> None:
    if item.is_dir() and not item.is_symlink():
        shutil.rmtree(item, ignore_errors=True)
    else:
        item.unlink(missing_ok=True)


_CLEARED_FOLDERS: set[str] = set()  # folders this process has cleared of dead writers' leftovers


def clear_folder_leftovers_once(folder: Path) -> None:
    """Remove dead writers' temp files and folders in `folder`, once per process: they are left by a
    process that is gone, and a folder scanned at each write made a stage writing 100,000 files into one
    folder quadratic (the BabelNet cache of the full profile: 91 % of the `senses` stage's time)."""
    key = os.path.abspath(folder)
    if key in _CLEARED_FOLDERS or not os.path.isdir(key):
        return
    with os.scandir(key) as entries:
        stale = [
            Path(entry.path) for entry in entries if entry.name.startswith(".") and is_stale_leftover(Path(entry.path))
        ]
    for item in stale:
        _remove_leftover(item)
    _CLEARED_FOLDERS.add(key)


def _glob_escape(name: str) -> str:
    """`name` with glob's special characters taken literally."""
    return re.sub(r"([*?\[])", r"[\1]", name)


def _make_parent(target: Path) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        blocking = next((p for p in target.parents if p.exists()), None)
        reason = (
            f"{blocking} is a file, not a folder"
            if blocking is not None and not blocking.is_dir()
            else os_error_text(error)
        )
        raise BabelforgeError(f"cannot create the folder {target.parent}: {reason}") from None


def _temp_prefix(target: Path) -> str:
    return f".{target.name}.{os.getpid()}."


@contextlib.contextmanager
def _write_errors(target: Path) -> Iterator[None]:
    """An OSError while writing `target` becomes one line naming it (a full disk, a read-only folder)."""
    try:
        yield
    except OSError as error:
        # name another file the error is about (not our own temp file): a read inside the write block
        other = error.filename and not Path(str(error.filename)).name.startswith(f".{target.name}.")
        detail = f"{error.filename}: " if other and str(error.filename) != str(target) else ""
        raise BabelforgeError(f"cannot write {target}: {detail}{os_error_text(error)}; nothing was replaced") from None


@contextlib.contextmanager
def _named_as(tmp: Path, target: Path) -> Iterator[None]:
    """A failed write inside a temporary folder is reported at the folder's final place."""
    try:
        yield
    except BabelforgeError as error:
        raise BabelforgeError(str(error).replace(str(tmp), str(target))) from None


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it onto `path` only on success."""
    target = Path(path)
    _make_parent(target)
    clear_folder_leftovers_once(target.parent)
    with _write_errors(target):
        fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(target), suffix=".tmp", dir=target.parent)
        os.close(fd)
    tmp_path = Path(tmp)
    try:
        with _write_errors(target):
            yield tmp_path
            os.chmod(tmp_path, 0o644)
            os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty temporary folder beside `path`; swap it in for `path` only on success.

    A failed or killed stage leaves the previous folder (or none), never a mix. Permissions
    are normalised (folders 755, files 644): a temporary folder is created private.
    """
    target = Path(path)
    _make_parent(target)
    clear_folder_leftovers_once(target.parent)
    with _write_errors(target):
        tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(target), suffix=".tmp", dir=target.parent))
    try:
        with _write_errors(target), _named_as(tmp, target):
            yield tmp
            for item in [tmp, *tmp.rglob("*")]:
                os.chmod(item, 0o755 if item.is_dir() else 0o644)
            old = None
            if target.exists():
                old = Path(tempfile.mkdtemp(prefix=_temp_prefix(target), suffix=".old", dir=target.parent))
                os.replace(target, old / target.name)
            os.replace(tmp, target)
            if old is not None:
                shutil.rmtree(old)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def canonical_json(obj: Any) -> str:
    """JSON text with sorted keys and a trailing newline: stable across runs."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, indent=2, default=str) + "\n"


def write_json(obj: Any, path: str | os.PathLike) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(canonical_json(obj), encoding="utf-8")
    return Path(path)


def read_json(path: str | os.PathLike) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def write_text(text: str, path: str | os.PathLike) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def directory_hash(path: str | os.PathLike) -> str:
    """sha256 over the relative names and contents of every file below `path` (a model folder's revision)."""

    root = Path(path)
    digest = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(f"{file.relative_to(root).as_posix()}\0{sha256_file(file)}\n".encode())
    return digest.hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_table(
    table,
    path: str | os.PathLike,
    sort_by: Sequence[str] = (),
    provenance: dict | None = None,
) -> Path:
    """Write a pandas DataFrame or pyarrow Table as Parquet, sorted by `sort_by`.

    Provenance (a JSON-able dict) goes into the schema metadata, read back with
    `read_provenance`. The pandas index is never stored.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not isinstance(table, pa.Table):
        table = pa.Table.from_pandas(table, preserve_index=False)
    if sort_by:
        table = table.sort_by([(column, "ascending") for column in sort_by])
    # Drop pandas' own metadata: it records the pandas version and index layout,
    # neither of which is part of the data.
    metadata = {k: v for k, v in (table.schema.metadata or {}).items() if k != b"pandas"}
    if provenance is not None:
        metadata[PROVENANCE_KEY] = canonical_json(provenance).encode("utf-8")
    table = table.replace_schema_metadata(metadata or None)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", compression_level=9, row_group_size=1 << 20)
    return Path(path)


def write_table_parts(parts: Iterable, path: str | os.PathLike, schema, provenance: dict | None = None) -> Path:
    """Write pyarrow tables one after the other into one Parquet file of `schema` (each part
    cast to it), holding one part at a time: a table too big for memory, built piece by piece.
    Same format, compression and metadata as `write_table`: one part gives the same bytes."""
    import pyarrow.parquet as pq

    metadata = {k: v for k, v in (schema.metadata or {}).items() if k != b"pandas"}
    if provenance is not None:
        metadata[PROVENANCE_KEY] = canonical_json(provenance).encode("utf-8")
    schema = schema.with_metadata(metadata or None) if metadata else schema.remove_metadata()
    with atomic_path(path) as tmp:
        with pq.ParquetWriter(tmp, schema, compression="zstd", compression_level=9) as writer:
            for part in parts:
                writer.write_table(part.select(schema.names).cast(schema), row_group_size=1 << 20)
    return Path(path)


def read_table(path: str | os.PathLike, columns: Sequence[str] | None = None, where: tuple[str, Any] | None = None):
    """Read a Parquet artifact as a pandas DataFrame (only `columns`, which must all be there;
    only the rows whose column `where[0]` equals `where[1]`, when given).

    A missing, truncated or foreign file, or a missing column, is one line naming the file.
    """
    return read_arrow(path, columns, where).to_pandas()


def read_arrow(path: str | os.PathLike, columns: Sequence[str] | None = None, where: tuple[str, Any] | None = None):
    """`read_table` as a pyarrow Table. With `where`, the file is scanned row group by row
    group and only the matching rows are kept: one language of a file of every language
    without the others in memory."""
    import pyarrow as pa

    path = Path(path)
    with _readable_parquet(path) as parquet:
        names = parquet.schema_arrow.names
        missing = [column for column in [*(columns or ()), *(where[:1] if where else ())] if column not in names]
        if missing:
            raise BabelforgeError(
                f"{path}: no column {missing[0]!r} (it has {', '.join(names)}); "
                "rebuild it with the stage that writes it"
            )
        if where is None:
            return parquet.read(columns=list(columns) if columns else None)
        import pyarrow.dataset as ds

        return ds.dataset(path, format="parquet").to_table(
            columns=list(columns) if columns else None, filter=ds.field(where[0]) == pa.scalar(where[1])
        )


def read_schema(path: str | os.PathLike):
    """The Arrow schema of a Parquet artifact (its footer only); a missing, truncated or foreign
    file is one line naming the file."""
    with _readable_parquet(Path(path)) as parquet:
        return parquet.schema_arrow


def value_counts(path: str | os.PathLike, column: str, batch_size: int = 1 << 16) -> dict[Any, int]:
    """{value: rows} of one column of a Parquet artifact, read in batches (bounded memory)."""

    import pyarrow.compute as pc

    path = Path(path)
    counts: collections.Counter = collections.Counter()
    with _readable_parquet(path) as parquet:
        if column not in parquet.schema_arrow.names:
            raise BabelforgeError(f"{path}: no column {column!r}; rebuild it with the stage that writes it")
        for batch in parquet.iter_batches(columns=[column], batch_size=batch_size):
            for entry in pc.value_counts(batch.column(0)).to_pylist():
                counts[entry["values"]] += entry["counts"]
    return dict(counts)


@contextlib.contextmanager
def _readable_parquet(path: Path) -> Iterator[Any]:
    """The open `pyarrow.parquet.ParquetFile`; any read error inside the block (a missing,
    truncated or foreign file) becomes one line naming the file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.is_file():
        raise BabelforgeError(f"{path}: no such artifact; run the stage that writes it first")
    try:
        with pq.ParquetFile(path) as parquet:
            yield parquet
    except (OSError, pa.ArrowException) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise BabelforgeError(
            f"{path}: not a readable Parquet file ({first}); rebuild it with the stage that writes it"
        ) from None


def read_provenance(path: str | os.PathLike) -> dict:
    metadata = read_schema(path).metadata or {}
    raw = metadata.get(PROVENANCE_KEY)
    return json.loads(raw) if raw else {}


# --- one writer per output ---------------------------------------------------------------


def lock_path(output: str | os.PathLike) -> Path:
    """The lock file of an output: `.<name>.lock` beside it (never inside a DVC output folder)."""
    output = Path(output)
    return output.with_name(f".{output.name}.lock")


def _missing_folders(path: Path) -> list[Path]:
    """The folders above `path` that do not exist yet, deepest first."""
    missing = []
    for parent in path.parents:
        if parent.exists():
            break
        missing.append(parent)
    return missing


def _take_lock(stage: str, output: Path) -> int:
    """An exclusive flock on `output`'s lock file, holding its pid; one line naming the holder if taken."""

    path = lock_path(output)
    _make_parent(path)
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise BabelforgeError(f"cannot write beside {output}: {os_error_text(error)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise BabelforgeError(
                f"{output} is being written by {holder}; wait for it to finish (or stop it), then rerun"
            ) from None
        # the holder before us may have removed the file after we opened it: lock the current one
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"babelforge {stage} (pid {os.getpid()})".encode(), 0)
            return fd
        os.close(fd)


@contextlib.contextmanager
def stage_lock(stage: str, outputs: Iterable[str | os.PathLike]) -> Iterator[None]:
    """Hold every output of a stage for the whole run: a second writer of any of them stops at
    once with one line naming the holder's pid. Dead writers' temp files are cleared on entry.

    The lock is an advisory `flock` on `.<name>.lock` beside each output, released (and the file
    removed) on exit; a killed holder's lock is released by the kernel, its file reused.
    """
    held: list[tuple[Path, int]] = []
    # Folders made only to hold a lock file go again when the stage wrote nothing into them, so a
    # failed stage leaves no empty output folder behind.
    made: list[Path] = []
    try:
        for output in sorted({Path(os.path.abspath(o)) for o in outputs}):
            made += _missing_folders(lock_path(output))
            held.append((output, _take_lock(stage, output)))
        for output, _ in held:
            clear_leftovers(output, recursive=True)
        yield
    finally:
        for output, fd in reversed(held):
            with contextlib.suppress(OSError):
                lock_path(output).unlink()
            os.close(fd)
        for folder in sorted(set(made), key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()


# --- outputs swapped in only on success ----------------------------------------------------


def _link_or_copy(source: str, dest: str) -> None:
    """A hard link (no bytes copied; every writer replaces a file by renaming, never rewrites it in
    place, so the link keeps the old bytes), or a copy where the file system has no links."""
    try:
        os.link(source, dest, follow_symlinks=False)
    except OSError:
        shutil.copy2(source, dest, follow_symlinks=False)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


class OutputGuard:
    """A stage's existing outputs, kept as they are while it runs and put back unless it succeeds.

    On entry each output that exists is kept beside itself (`.<name>.<pid>.<random>.old`, hard
    links of its files); `commit()` marks the run a success and the kept copies go on exit; any
    other exit (an error, a non-zero exit code, Ctrl-C) swaps each kept copy back in for whatever
    the stage left there, so a stage that stops half way leaves its outputs byte for byte as they
    were. An output that did not exist is left as the stage left it (atomic files, committed
    shards a rerun resumes). A SIGKILL leaves the stage's work in place and the copy as a dead
    writer's leftover, removed by the next run (`clear_leftovers`): a rerun resumes the shards.
    """

    def __init__(self, outputs: Iterable[str | os.PathLike]):
        self.outputs = sorted({Path(os.path.abspath(o)) for o in outputs})
        self.kept: dict[Path, Path] = {}
        self.succeeded = False

    def commit(self) -> None:
        self.succeeded = True

    def __enter__(self) -> OutputGuard:
        try:
            for output in self.outputs:
                if os.path.lexists(output):
                    self.kept[output] = self._keep(output)
        except BaseException:
            self._discard()
            raise
        return self

    def _keep(self, output: Path) -> Path:
        with _write_errors(output):
            if output.is_dir() and not output.is_symlink():
                kept = Path(tempfile.mkdtemp(prefix=_temp_prefix(output), suffix=".old", dir=output.parent))
                shutil.copytree(output, kept, symlinks=True, copy_function=_link_or_copy, dirs_exist_ok=True)
            else:
                kept = output.parent / f"{_temp_prefix(output)}{os.urandom(4).hex()}.old"
                _link_or_copy(str(output), str(kept))
        return kept

    def _discard(self) -> None:
        for kept in self.kept.values():
            with contextlib.suppress(OSError):
                _remove(kept)

    def _restore(self) -> None:
        for output, kept in self.kept.items():
            if os.path.lexists(output):
                aside = Path(tempfile.mkdtemp(prefix=_temp_prefix(output), suffix=".old", dir=output.parent))
                os.replace(output, aside / output.name)
                os.replace(kept, output)
                shutil.rmtree(aside)
            else:
                os.replace(kept, output)

    def __exit__(self, kind, error, trace) -> None:
        if self.succeeded and kind is None:
            self._discard()
        else:
            self._restore()


# --- what an --out would replace -------------------------------------------------------------------


def file_stats(path: str | os.PathLike) -> dict[str, tuple[int, int]]:
    """name -> (size, mtime_ns) of every file at or under `path` ("." when it is one file; {} when it is
    not there), links as themselves; writers' temp files left out (they are no one's work)."""
    root = Path(path)
    if not os.path.lexists(root):
        return {}
    if root.is_symlink() or not root.is_dir():
        stat = root.lstat()
        return {".": (stat.st_size, stat.st_mtime_ns)}
    found = {}
    for folder, folders, files in os.walk(root):
        for name in [*files, *(entry for entry in folders if os.path.islink(os.path.join(folder, entry)))]:
            item = Path(folder) / name
            if _LEFTOVER.match(name) or _LEGACY_LEFTOVER.match(name):
                continue
            stat = item.lstat()
            found[item.relative_to(root).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return found


def git_tracked_files(path: str | os.PathLike) -> list[str]:
    """The files git tracks at or under `path` (its index, deleted ones included), relative to it ("."
    for the file itself), sorted; [] outside a git work tree or without git."""
    target = Path(os.path.realpath(path))
    folder = next((p for p in [target, *target.parents] if p.is_dir()), None)
    if folder is None:
        return []
    try:
        result = subprocess.run(
            ["git", "--literal-pathspecs", "-C", str(folder), "ls-files", "-z", "--", str(target)],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if result.returncode != 0:  # not a git work tree
        return []
    names = [folder / name for name in result.stdout.decode("utf-8", "replace").split("\0") if name]
    return sorted(
        "." if name == target else name.relative_to(target).as_posix() for name in names if name.is_relative_to(target)
    )


# The record an `--out` run keeps of each output it wrote: the command and every file it left there, so a
# rerun of that command into the same --out knows the files are its own, and any other file is someone's
# work (`not_written_by`). Records live in one folder of the user's cache (`written_records_folder`), one
# per output's real path, never beside or inside the output (a folder a user lists holds only the data).
LISTED = 3  # how many names a message lists before "and N more"


def record_path(output: str | Path, folder: Path) -> Path:
    """The record of what a command wrote at `output` (a real path): `folder/<sha256 of the path>.json`."""
    return folder / f"{hashlib.sha256(str(output).encode('utf-8')).hexdigest()[:32]}.json"


def written_record(
    command: str, output: str | Path, files: Mapping[str, Sequence[int]], complete: bool
) -> dict[str, Any]:
    """The record of an output (a real path): the command, the files it holds (name -> [size, mtime_ns], "."
    for an output that is one file) and whether the run finished (`complete`) or is under way (it may stop
    half way)."""
    listing = {name: list(files[name]) for name in sorted(files)}
    return {"command": command, "output": str(output), "complete": complete, "files": listing}


def not_written_by(
    command: str, output: str | Path, record: Mapping[str, Any] | None, files: Mapping[str, Sequence[int]]
) -> list[str]:
    """The files of an output (a real path; its files name -> [size, mtime_ns]) that `command` did not leave
    there, sorted.

    Without a record of `command` there (none, another command's, another path's) every file is someone
    else's; a run of it that stopped half way (not `complete`) left files the record cannot list, its rerun
    resumes them; else a file the record does not list, or one changed since (size or time), is someone
    else's work.
    """
    if not files:
        return []
    if not isinstance(record, Mapping) or (record.get("command"), record.get("output")) != (command, str(output)):
        return sorted(files)
    if not record.get("complete"):
        return []
    kept = record.get("files") if isinstance(record.get("files"), Mapping) else {}
    return sorted(name for name, stat in files.items() if list(kept.get(name) or ()) != list(stat))


def listed(names: Sequence[str], limit: int = LISTED) -> str:
    """`a, b, c and 4 more`: the first names of a list, for a one-line message."""
    shown = ", ".join(names[:limit])
    return f"{shown} and {len(names) - limit} more" if len(names) > limit else shown


def written_records_folder() -> Path:
    """Where the records of what --out runs wrote are kept (babelforge.core.runs.record_path): the user's
    cache, `$XDG_CACHE_HOME/babelforge/written` (`~/.cache/...` without it)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "babelforge" / "written"


def read_written_record(output: Path) -> dict | None:
    """The record of what an --out run wrote at `output` (a real path); None when there is none or it cannot
    be read (then nothing there counts as the command's own)."""
    try:
        record = json.loads(record_path(output, written_records_folder()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


class WrittenRecords:
    """The records of what an `--out` run writes (babelforge.core.runs.record_path), so that its rerun into
    the same --out knows the files there are its own.

    `start()` (inside the OutputGuard, which keeps and puts back the records it finds) marks each output
    it may take over (`clean`) as under way; `commit()` records every output's files once the run
    succeeded. A run that fails leaves a record it made only where it left work a rerun resumes (an
    output that holds files). A record that cannot be written (a read-only home) is no error: the next
    run into that --out is refused, and says why.
    """

    def __init__(self, command: str, outputs: Sequence[Path], clean: Sequence[Path]):
        self.command = command
        self.outputs = list(outputs)
        self.clean = list(clean)
        self.paths = [record_path(output, written_records_folder()) for output in self.outputs]
        self.had: set[Path] = set()
        self.succeeded = False

    def __enter__(self) -> WrittenRecords:
        self.had = {path for path in self.paths if os.path.lexists(path)}
        return self

    def _write(self, output: Path, complete: bool) -> None:
        with contextlib.suppress(BabelforgeError):
            write_json(
                written_record(self.command, output, file_stats(output), complete),
                record_path(output, written_records_folder()),
            )

    def start(self) -> None:
        for output in self.clean:
            self._write(output, complete=False)

    def commit(self) -> None:
        for output in self.outputs:
            self._write(output, complete=True)
        self.succeeded = True

    def __exit__(self, kind, error, trace) -> None:
        if self.succeeded and kind is None:
            return
        for output, path in zip(self.outputs, self.paths):
            if path not in self.had and not file_stats(output):
                with contextlib.suppress(OSError):
                    path.unlink()
