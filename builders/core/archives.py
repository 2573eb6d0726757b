"""The one reader of downloaded archives (zip, tar, gzip-compressed tar): what a download holds is
written out only as plain files inside the folder it is unpacked into, and only up to a limit.

A downloaded archive is bytes from elsewhere: a pin (sha256) says they are the bytes someone checked,
but pins are settings a user can change. So every archive is read as if hostile, and any archive that is
not what it claims stops the command with one line naming it (`BabelforgeError`), never a traceback:

* not the format its name says (a zip that is no zip, a .tgz that is not gzip), cut short, damaged
  (a bad CRC, broken deflate data), or empty (no member at all);
* a member whose name would leave the folder (an absolute path, a `..` component, a drive letter),
  holds bytes that are not UTF-8 or a control character; a link (symbolic or hard), a device or a
  FIFO; two members that would be written to the same file: refused naming the member, never flattened
  or skipped quietly;
* more members than `ArchiveLimits.max_members`, or members whose sizes add up to more than
  `ArchiveLimits.max_bytes` (a decompression bomb: 3 MB of gzip can declare 3 GiB of zeros). The sizes
  are the ones the archive declares, checked before a member's first byte is written (a zip's all at
  once from its directory, a tar's at each header), and the bytes actually read are counted against the
  same limit as they stream, so a member that lies about its size stops there too. A tar is read as a
  stream through a counting reader, so the tar metadata (long names, pax headers) is bounded as well:
  a bomb stops early, at the memory of one copy buffer and with no file left behind.

Reading is separate from writing: an error while reading the archive is the archive's (one line, "fetch
it again"); an error while writing is the disk's (babelforge.core.io names the file). Callers write into
a folder or file that babelforge.core.io swaps in whole, so a refused archive leaves nothing partial.
"""

from __future__ import annotations

import contextlib
import gzip
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Literal

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import atomic_path

Kind = Literal["zip", "tar", "tar.gz"]
CHUNK = 1 << 20  # bytes copied at a time: the memory a member costs, whatever its size
HEAD = 8  # bytes of an archive's start a message repeats (what the file looks like instead)
# Tar metadata a member may carry before its data (a long name, pax records): real ones are a few
# hundred bytes, so more is refused before it is read into memory.
MAX_METADATA = 1 << 16
# A tar stream's own bytes besides the members' data: a 512-byte header (two with a long name) and up
# to 511 bytes of padding per member, and the end-of-archive blocks rounded up to a record.
TAR_OVERHEAD_PER_MEMBER = 3 * 512
TAR_OVERHEAD = 2 * tarfile.RECORDSIZE
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip starts with a member's header, or is an empty zip
GZIP_MAGIC = b"\x1f\x8b"
FETCH_AGAIN = "fetch it again"


@dataclass(frozen=True)
class ArchiveLimits:
    """How much one archive may expand to, and the settings that say so (named in messages)."""

    max_bytes: int  # the members' sizes added up
    max_members: int  # entries of every kind (files, folders) the archive may list
    bytes_setting: str = "max_bytes"
    members_setting: str = "max_members"

    def __post_init__(self):
        for name, value, where in (
            ("max_bytes", self.max_bytes, self.bytes_setting),
            ("max_members", self.max_members, self.members_setting),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise BabelforgeError(f"{where} is {value!r}; it must be a whole number, at least 1 ({name})")


@dataclass(frozen=True)
class Member:
    """One entry of an archive, as the archive declares it."""

    name: str  # as written in the archive (decoded; bytes that are not UTF-8 kept as surrogates)
    size: int  # declared bytes of its data (0 for a folder)
    is_dir: bool


def archive_kind(name: str) -> Kind:
    """The format a file name says an archive has."""
    lower = name.lower()
    if lower.endswith(".zip"):
        return "zip"
    if lower.endswith((".tgz", ".tar.gz")):
        return "tar.gz"
    if lower.endswith(".tar"):
        return "tar"
    raise BabelforgeError(f"{name}: not a .zip, .tar, .tgz or .tar.gz name; babelforge cannot tell how to unpack it")


def format_problem(head: bytes, kind: Kind) -> str | None:
    """Why an archive's first bytes are not of the format `kind` (None: they are)."""
    if not head:
        return f"empty (0 bytes); {FETCH_AGAIN}"
    if kind == "zip" and not head.startswith(ZIP_MAGIC):
        return f"not a zip archive (it starts with {head[:HEAD]!r}{_looks_like(head)}); {FETCH_AGAIN}"
    if kind == "tar.gz" and not head.startswith(GZIP_MAGIC):
        return f"not gzip-compressed (it starts with {head[:HEAD]!r}{_looks_like(head)}), so no .tgz; {FETCH_AGAIN}"
    return None


def _looks_like(head: bytes) -> str:
    if head.startswith(ZIP_MAGIC):
        return ", a zip"
    if head.startswith(GZIP_MAGIC):
        return ", gzip"
    if head.lstrip()[:1] in (b"<", b"{", b"["):
        return ", text: an error page?"
    return ""


def name_problem(name: str) -> str | None:
    """Why a member's name cannot be unpacked inside a folder (None: it can). The answer completes
    "member <name> ...". Backslashes count as separators: a zip made on Windows may use them."""
    if not name:
        return "has no name"
    if any(0xD800 <= ord(char) <= 0xDFFF for char in name):
        return "has a name that is not UTF-8"
    control = next((char for char in name if ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0), None)
    if control is not None:
        return f"has the control character U+{ord(control):04X} in its name"
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":" and name[0].isalpha()):
        return "has an absolute path"
    if ".." in parts:
        return "has a `..` in its path, which would leave the folder it is unpacked into"
    return None


def limit_problem(members: int, expanded: int, limits: ArchiveLimits) -> str | None:
    """Why an archive listing `members` entries that expand to `expanded` bytes so far is over its limits."""
    if members > limits.max_members:
        return (
            f"more than {limits.max_members:,} members ({limits.members_setting}); not the expected archive, "
            f"or raise {limits.members_setting}"
        )
    if expanded > limits.max_bytes:
        return (
            f"expands to more than {limits.max_bytes:,} bytes ({limits.bytes_setting}): a decompression bomb or "
            f"not the expected archive; raise {limits.bytes_setting} only if the real release grew"
        )
    return None


def _refuse(archive: Path, problem: str) -> BabelforgeError:
    return BabelforgeError(f"{archive}: {problem}")


# --- reading ------------------------------------------------------------------------------------------------

# What the standard library raises for bytes that are no archive of their kind, cut short or damaged.
# OSError covers gzip.BadGzipFile and a read of the archive that fails; writes are never inside `_reading`.
READ_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    tarfile.TarError,
    EOFError,
    zlib.error,
    OSError,
    ValueError,  # a zip's broken header fields, a tar's bad number field
    OverflowError,
    NotImplementedError,  # a zip compression method Python does not have
    RuntimeError,  # an encrypted zip member
    KeyError,
)


def _read_error_text(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    if isinstance(error, EOFError) or "unexpected end of data" in text or "end-of-stream" in text:
        return f"cut short ({text}); {FETCH_AGAIN}"
    if isinstance(error, RuntimeError) and "encrypted" in text:
        return "holds an encrypted member; babelforge unpacks no password-protected archive"
    if isinstance(error, NotImplementedError):
        return f"uses a compression babelforge cannot read ({text}); {FETCH_AGAIN}"
    return f"damaged or not the archive it claims to be ({type(error).__name__}: {text}); {FETCH_AGAIN}"


@contextlib.contextmanager
def _reading(archive: Path) -> Iterator[None]:
    """A read error of `archive` becomes one line naming it (the module's own errors pass as they are)."""
    try:
        yield
    except BabelforgeError:
        raise
    except READ_ERRORS as error:
        raise _refuse(archive, _read_error_text(error)) from None


class _CountingReader:
    """A read-only stream that refuses to give more than `budget` bytes: what a tar stream may
    expand to, metadata included, so no header can make the reader buffer more."""

    def __init__(self, raw: BinaryIO, budget: int, over: Callable[[], BabelforgeError]):
        self.raw, self.budget, self.over, self.read_bytes = raw, budget, over, 0

    def read(self, size: int = -1) -> bytes:
        want = self.budget - self.read_bytes + 1 if size is None or size < 0 else size
        if self.read_bytes + want > self.budget + 1:
            want = self.budget - self.read_bytes + 1  # one byte past the budget tells "more" from "exactly"
        data = self.raw.read(max(want, 0))
        self.read_bytes += len(data)
        if self.read_bytes > self.budget:
            raise self.over()
        return data


class _BoundedTarInfo(tarfile.TarInfo):
    """A tar header whose metadata (a long name, pax records, GNU sparse maps) is refused before it is
    read when it is larger than any real one (tarfile would read it into memory whole)."""

    METADATA_TYPES = (
        tarfile.XHDTYPE,
        tarfile.XGLTYPE,
        tarfile.SOLARIS_XHDTYPE,
        tarfile.GNUTYPE_LONGNAME,
        tarfile.GNUTYPE_LONGLINK,
    )

    def _proc_member(self, tarfile_):  # tarfile's hook between reading a header and its metadata
        if self.type in self.METADATA_TYPES and self.size > MAX_METADATA:
            raise tarfile.HeaderError(f"a tar metadata header of {self.size:,} bytes (at most {MAX_METADATA:,})")
        return super()._proc_member(tarfile_)


def _member_type_problem(info: tarfile.TarInfo) -> str | None:
    if info.issym():
        return f"is a symbolic link (to {info.linkname!r}); only files and folders are unpacked"
    if info.islnk():
        return f"is a hard link (to {info.linkname!r}); only files and folders are unpacked"
    if info.ischr() or info.isblk():
        return "is a device; only files and folders are unpacked"
    if info.isfifo():
        return "is a FIFO; only files and folders are unpacked"
    if not (info.isfile() or info.isdir()):
        return f"is of tar type {info.type!r}, neither a file nor a folder"
    return None


def _zip_type_problem(info: zipfile.ZipInfo) -> str | None:
    mode = info.external_attr >> 16  # the Unix mode, when the zip was made on Unix (else 0)
    if not stat.S_IFMT(mode) or stat.S_ISREG(mode) or stat.S_ISDIR(mode):  # no file type given: a file
        return None
    if stat.S_ISLNK(mode):
        return "is a symbolic link; only files and folders are unpacked"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device; only files and folders are unpacked"
    return "is neither a file nor a folder (by its Unix mode); only files and folders are unpacked"


Visit = Callable[[Member, Callable[[], Iterator[bytes]]], None]


def walk(archive: str | Path, limits: ArchiveLimits, visit: Visit, kind: Kind | None = None) -> int:
    """Read every member of `archive` in order, checked (name, type, count, sizes) before it is visited:
    `visit(member, chunks)` may call `chunks()` once for a file's data, streamed within the limits. Returns
    the number of members; one line naming the archive for anything the module's docstring lists."""
    archive = Path(archive)
    kind = kind or archive_kind(archive.name)
    with _reading(archive):
        with archive.open("rb") as handle:
            head = handle.read(512)
    problem = format_problem(head, kind)
    if problem:
        raise _refuse(archive, problem)
    members = _walk_zip(archive, limits, visit) if kind == "zip" else _walk_tar(archive, kind, limits, visit)
    if members == 0:
        raise _refuse(archive, f"an empty archive (no members); {FETCH_AGAIN}")
    return members


def _checked(archive: Path, member: Member, count: int, expanded: int, limits: ArchiveLimits, type_problem) -> None:
    problem = name_problem(member.name) or type_problem
    if problem:
        raise _refuse(archive, f"member {member.name!r} {problem}; refused")
    over = limit_problem(count, expanded, limits)
    if over:
        raise _refuse(archive, f"at member {member.name!r}: {over}")


def _walk_zip(archive: Path, limits: ArchiveLimits, visit: Visit) -> int:
    try:
        bundle = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as error:  # it starts as a zip (checked), so its directory at the end is missing
        raise _refuse(archive, f"cut short or damaged: no zip directory at its end ({error}); {FETCH_AGAIN}") from None
    except READ_ERRORS as error:
        raise _refuse(archive, _read_error_text(error)) from None
    with bundle:
        infos = bundle.infolist()
        expanded = 0
        members = [Member(info.filename, info.file_size, info.is_dir()) for info in infos]
        for count, (info, member) in enumerate(zip(infos, members), start=1):
            expanded += member.size  # a zip's directory declares every size: all checked before a byte is read
            _checked(archive, member, count, expanded, limits, _zip_type_problem(info))
        for info, member in zip(infos, members):
            visit(member, lambda info=info, member=member: _zip_chunks(archive, bundle, info, member))
    return len(members)


def _zip_chunks(archive: Path, bundle: zipfile.ZipFile, info: zipfile.ZipInfo, member: Member) -> Iterator[bytes]:
    """A zip member's data, never more than it declares (the declared sizes are what the limit added up)."""
    with _reading(archive):
        reader = bundle.open(info)
    with reader:
        got = 0
        while True:
            with _reading(archive):
                chunk = reader.read(CHUNK)
            if not chunk:
                return
            got += len(chunk)
            if got > member.size:
                raise _refuse(archive, f"member {member.name!r} holds more than the {member.size:,} bytes it declares")
            yield chunk


def _walk_tar(archive: Path, kind: Kind, limits: ArchiveLimits, visit: Visit) -> int:
    budget = limits.max_bytes + limits.max_members * TAR_OVERHEAD_PER_MEMBER + TAR_OVERHEAD

    def over() -> BabelforgeError:
        return _refuse(archive, limit_problem(0, limits.max_bytes + 1, limits))

    count, expanded = 0, 0
    with _reading(archive):
        raw = gzip.open(archive, "rb") if kind == "tar.gz" else archive.open("rb")
    with raw:
        with _reading(archive):
            # a stream ("r|"): headers are read in order through the counting reader, never seeked to
            counted = _CountingReader(raw, budget, over)
            bundle = tarfile.open(fileobj=counted, mode="r|", tarinfo=_BoundedTarInfo)
        with bundle:
            while True:
                with _reading(archive):  # the reads only: what `visit` writes is not the archive's error
                    info = bundle.next()
                if info is None:
                    with _reading(archive):  # to the end: gzip checks its CRC there (a damaged byte shows)
                        while counted.read(CHUNK):
                            pass
                    return count
                count += 1
                member = Member(info.name, info.size if info.isfile() else 0, info.isdir())
                expanded += member.size
                _checked(archive, member, count, expanded, limits, _member_type_problem(info))
                visit(member, lambda info=info, member=member: _tar_chunks(archive, bundle, info, member))


def _tar_chunks(archive: Path, bundle: tarfile.TarFile, info: tarfile.TarInfo, member: Member) -> Iterator[bytes]:
    if member.is_dir:
        return
    with _reading(archive):
        reader = bundle.extractfile(info)
    with reader:  # a tar member's data is exactly its declared size: the header's, already counted
        while True:
            with _reading(archive):
                chunk = reader.read(CHUNK)
            if not chunk:
                return
            yield chunk


# --- unpacking ------------------------------------------------------------------------------------------------


def _write(chunks: Iterator[bytes], path: Path) -> None:
    with path.open("wb") as writer:
        for chunk in chunks:
            writer.write(chunk)


def unpack(
    archive: str | Path,
    folder: str | Path,
    select: Callable[[Member], str | None],
    limits: ArchiveLimits,
    kind: Kind | None = None,
) -> list[str]:
    """Write the members `select` names into `folder` (which the caller swaps in whole, see
    babelforge.core.io.atomic_directory): `select(member)` gives the plain file name to write a file as,
    or None to leave it. Every member is checked (walk), written or not. Returns the names written, in
    archive order; two members written as one name is one line naming both."""
    archive, folder = Path(archive), Path(folder)
    written: dict[str, str] = {}

    def visit(member: Member, chunks) -> None:
        if member.is_dir:
            return
        target = select(member)
        if target is None:
            return
        if target in ("", ".", "..") or "/" in target or "\\" in target or "\0" in target:
            raise ValueError(f"select gave {target!r} for {member.name!r}: not a plain file name")
        if target in written:
            raise _refuse(
                archive, f"members {written[target]!r} and {member.name!r} would both be written as {target}; refused"
            )
        written[target] = member.name
        _write(chunks(), folder / target)

    walk(archive, limits, visit, kind)
    return list(written)


def unpack_member(
    archive: str | Path, file_name: str, dest: str | Path, limits: ArchiveLimits, kind: Kind | None = None
) -> Path:
    """The one file called `file_name` (in any folder of the archive) written to `dest`, atomically: one
    line naming the archive when it holds none or more than one, or anything `walk` refuses."""
    archive = Path(archive)
    found: list[str] = []
    with atomic_path(dest) as tmp:

        def visit(member: Member, chunks) -> None:
            if member.is_dir or PurePosixPath(member.name.replace("\\", "/")).name != file_name:
                return
            found.append(member.name)
            if len(found) == 1:
                _write(chunks(), tmp)

        walk(archive, limits, visit, kind)
        if len(found) != 1:
            where = f" ({', '.join(repr(name) for name in found)})" if found else ""
            raise _refuse(archive, f"expected one {file_name}, found {len(found)}{where}; {FETCH_AGAIN}")
    return Path(dest)
