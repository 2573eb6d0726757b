"""The one archive reader (babelforge.core.archives): what it writes, what it refuses in one line, and a
fuzz of zip and tar bytes (random, mutated, and archives of hostile members) that may only ever end in
files inside the target folder within the limit, or a BabelforgeError naming the archive."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import stat
import struct
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from babelforge.core.archives import MAX_METADATA, ArchiveLimits, name_problem, unpack, unpack_member
from babelforge.core.errors import BabelforgeError
from tests.archive_bytes import zip_bytes

LIMITS = ArchiveLimits(64 << 10, 16, "test.max_bytes", "test.max_members")


def base_name(member) -> str | None:
    """Write every file by its base name, as the XM3600 images are."""
    return PurePosixPath(member.name.replace("\\", "/")).name or None


def info(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = "") -> tuple:
    entry = tarfile.TarInfo(name)
    entry.type, entry.linkname = kind, link
    entry.size = len(data) if kind == tarfile.REGTYPE else 0
    return entry, (io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def tar_bytes(members, compress: bool = True, fmt=tarfile.GNU_FORMAT) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt) as bundle:
        for entry, data in members:
            bundle.addfile(entry, data)
    # gzip's header time fixed: the bytes appear in parametrized test ids, which every xdist worker must collect alike
    return gzip.compress(buffer.getvalue(), mtime=0) if compress else buffer.getvalue()


def refused(archive: Path, folder: Path, limits: ArchiveLimits = LIMITS) -> str:
    with pytest.raises(BabelforgeError) as caught:
        unpack(archive, folder, base_name, limits)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{archive}: ")
    return message.removeprefix(f"{archive}: ")


def test_the_named_members_are_written_by_their_names(tmp_path):
    archive = tmp_path / "images.tgz"
    archive.write_bytes(tar_bytes([info("images/", kind=tarfile.DIRTYPE), info("images/a.jpg", b"ab"), info("b.jpg")]))
    folder = tmp_path / "out"
    folder.mkdir()
    assert unpack(archive, folder, base_name, LIMITS) == ["a.jpg", "b.jpg"]
    assert (folder / "a.jpg").read_bytes() == b"ab" and (folder / "b.jpg").read_bytes() == b""
    zipped = tmp_path / "captions.zip"
    zipped.write_bytes(zip_bytes({"web/captions.jsonl": b'{"a": 1}\n', "README": b"x"}))
    assert unpack_member(zipped, "captions.jsonl", tmp_path / "captions.jsonl", LIMITS).read_bytes() == b'{"a": 1}\n'


@pytest.mark.parametrize(
    "member, problem",
    [
        (info("../../x.jpg", b"x"), "member '../../x.jpg' has a `..` in its path"),
        (info("images/../../x.jpg", b"x"), "member 'images/../../x.jpg' has a `..` in its path"),
        (info("/etc/x.jpg", b"x"), "member '/etc/x.jpg' has an absolute path; refused"),
        (info("C:/x.jpg", b"x"), "member 'C:/x.jpg' has an absolute path; refused"),
        (info("a\nb.jpg", b"x"), "member 'a\\nb.jpg' has the control character U+000A in its name"),
        (
            info("a.jpg", kind=tarfile.SYMTYPE, link="/etc/passwd"),
            "member 'a.jpg' is a symbolic link (to '/etc/passwd')",
        ),
        (info("a.jpg", kind=tarfile.LNKTYPE, link="b.jpg"), "member 'a.jpg' is a hard link (to 'b.jpg')"),
        (info("a.jpg", kind=tarfile.CHRTYPE), "member 'a.jpg' is a device; only files and folders are unpacked"),
        (info("a.jpg", kind=tarfile.BLKTYPE), "member 'a.jpg' is a device"),
        (info("a.jpg", kind=tarfile.FIFOTYPE), "member 'a.jpg' is a FIFO"),
    ],
)
def test_a_member_that_would_leave_the_folder_or_is_no_file_is_refused_naming_it(member, problem, tmp_path):
    archive = tmp_path / "images.tgz"
    archive.write_bytes(tar_bytes([info("ok.jpg", b"fine"), member]))
    folder = tmp_path / "out"
    folder.mkdir()
    assert refused(archive, folder).startswith(problem)
    assert not (tmp_path / "x.jpg").exists() and not (tmp_path.parent / "x.jpg").exists()


def test_a_zip_member_that_is_a_link_or_leaves_the_folder_is_refused(tmp_path):
    link = zipfile.ZipInfo("captions.jsonl")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        bundle.writestr(link, "/etc/passwd")
    archive = tmp_path / "captions.zip"
    archive.write_bytes(buffer.getvalue())
    with pytest.raises(BabelforgeError, match="member 'captions.jsonl' is a symbolic link; only files and folders"):
        unpack_member(archive, "captions.jsonl", tmp_path / "captions.jsonl", LIMITS)
    archive.write_bytes(zip_bytes({"../captions.jsonl": b"x"}))
    with pytest.raises(BabelforgeError, match=r"member '\.\./captions\.jsonl' has a `\.\.` in its path"):
        unpack_member(archive, "captions.jsonl", tmp_path / "captions.jsonl", LIMITS)
    assert sorted(os.listdir(tmp_path)) == ["captions.zip"]  # nothing written, not even a temp file


def test_two_members_written_as_one_name_are_refused_naming_both(tmp_path):
    archive = tmp_path / "images.tgz"
    archive.write_bytes(tar_bytes([info("a/x.jpg", b"1"), info("b/x.jpg", b"2")]))
    assert refused(archive, tmp_path) == "members 'a/x.jpg' and 'b/x.jpg' would both be written as x.jpg; refused"
    archive = tmp_path / "captions.zip"
    archive.write_bytes(zip_bytes({"a/captions.jsonl": b"1", "b/captions.jsonl": b"2"}))
    with pytest.raises(BabelforgeError, match=r"expected one captions.jsonl, found 2 \('a/captions.jsonl', 'b/"):
        unpack_member(archive, "captions.jsonl", tmp_path / "captions.jsonl", LIMITS)
    assert not (tmp_path / "captions.jsonl").exists()


def gzip_zeros(path: Path, name: str, size: int) -> None:
    """A tar.gz holding one member of `size` zero bytes, written without holding it in memory."""
    with gzip.open(path, "wb", compresslevel=9) as packed, tarfile.open(fileobj=packed, mode="w|") as bundle:
        entry = tarfile.TarInfo(name)
        entry.size = size
        with tempfile.TemporaryFile() as zeros:
            zeros.truncate(size)
            bundle.addfile(entry, zeros)


def test_a_bomb_is_refused_at_its_header_before_a_byte_is_written(tmp_path):
    archive = tmp_path / "images.tgz"
    gzip_zeros(archive, "images/bomb.jpg", 16 << 20)  # 16 KiB of gzip declaring 16 MiB
    assert archive.stat().st_size < 64 << 10
    folder = tmp_path / "out"
    folder.mkdir()
    assert refused(archive, folder) == (
        "at member 'images/bomb.jpg': expands to more than 65,536 bytes (test.max_bytes): a decompression bomb or "
        "not the expected archive; raise test.max_bytes only if the real release grew"
    )
    assert list(folder.iterdir()) == []
    zipped = tmp_path / "captions.zip"
    zipped.write_bytes(zip_bytes({"captions.jsonl": bytes(1 << 20)}))
    with pytest.raises(BabelforgeError, match="expands to more than 65,536 bytes"):
        unpack_member(zipped, "captions.jsonl", tmp_path / "captions.jsonl", LIMITS)
    assert not (tmp_path / "captions.jsonl").exists()


def test_too_many_members_are_refused_naming_the_setting(tmp_path):
    archive = tmp_path / "images.tgz"
    archive.write_bytes(tar_bytes([info(f"{n}.jpg") for n in range(17)]))
    assert refused(archive, tmp_path).startswith("at member '16.jpg': more than 16 members (test.max_members)")


def test_tar_metadata_larger_than_any_real_one_is_refused_before_it_is_read(tmp_path):
    entry, data = info("a.jpg", b"x")
    entry.pax_headers = {"comment": "x" * (MAX_METADATA + 1)}
    archive = tmp_path / "images.tgz"
    archive.write_bytes(tar_bytes([(entry, data)], fmt=tarfile.PAX_FORMAT))
    assert "a tar metadata header of" in refused(archive, tmp_path)


def test_a_zip_member_that_holds_more_than_it_declares_stops_at_its_declared_size(tmp_path):
    data = zip_bytes({"captions.jsonl": b"0123456789" * 100})
    # declare 10 bytes where there are 1000, in the local header and in the directory
    local = data.index(b"PK\x03\x04")
    central = data.index(b"PK\x01\x02")
    patched = bytearray(data)
    struct.pack_into("<I", patched, local + 22, 10)
    struct.pack_into("<I", patched, central + 24, 10)
    archive = tmp_path / "captions.zip"
    archive.write_bytes(bytes(patched))
    with pytest.raises(BabelforgeError, match="damaged or not the archive it claims to be"):
        unpack_member(archive, "captions.jsonl", tmp_path / "captions.jsonl", LIMITS)
    assert not (tmp_path / "captions.jsonl").exists()


@pytest.mark.parametrize(
    "name, data, problem",
    [
        ("captions.zip", b"<html>404</html>", "not a zip archive (it starts with b'<html>40', text: an error page?)"),
        ("captions.zip", b"", "empty (0 bytes); fetch it again"),
        ("captions.zip", zip_bytes({"captions.jsonl": b"x" * 500})[:-30], "cut short or damaged: no zip directory"),
        ("captions.zip", zip_bytes({}), "an empty archive (no members); fetch it again"),
        ("images.tgz", zip_bytes({"a.jpg": b"x"}), "not gzip-compressed (it starts with b'PK\\x03\\x04"),
        ("images.tgz", tar_bytes([info("a.jpg", os.urandom(4000))])[:-900], "cut short (Compressed file ended"),
        (
            "images.tgz",
            gzip.compress(b"no tar at all" * 50, mtime=0),
            "damaged or not the archive it claims to be (ReadError",
        ),
        ("images.tgz", tar_bytes([]), "an empty archive (no members)"),
        ("images.tar", b"\0" * 10240, "an empty archive (no members)"),
    ],
)
def test_an_archive_that_is_not_its_format_cut_short_or_empty_is_one_line(name, data, problem, tmp_path):
    archive = tmp_path / name
    archive.write_bytes(data)
    folder = tmp_path / "out"
    folder.mkdir()
    assert refused(archive, folder).startswith(problem)


def test_a_damaged_byte_in_a_tgz_is_found_by_its_crc(tmp_path):
    data = bytearray(tar_bytes([info("a.jpg", os.urandom(20000))]))  # random bytes are stored, not deflated
    data[len(data) // 2] ^= 0xFF
    archive = tmp_path / "images.tgz"
    archive.write_bytes(bytes(data))
    assert "CRC check failed" in refused(archive, tmp_path)


def test_the_limits_are_whole_numbers_of_at_least_one():
    with pytest.raises(BabelforgeError, match=r"x.max_bytes is 0; it must be a whole number, at least 1"):
        ArchiveLimits(0, 1, "x.max_bytes")
    with pytest.raises(BabelforgeError, match=r"y.members is nan"):
        ArchiveLimits(1, float("nan"), members_setting="y.members")


# --- the fuzz -------------------------------------------------------------------------------------------------

FUZZ_LIMITS = ArchiveLimits(32 << 10, 12, "fuzz.max_bytes", "fuzz.max_members")
KINDS = {"zip": "captions.zip", "tar.gz": "images.tgz", "tar": "images.tar"}


def sandbox_run(name: str, data: bytes, member_names=()) -> None:
    """Unpack `data` (an archive called `name`) into <sandbox>/box/out with FUZZ_LIMITS and check the promise:
    it ends in BabelforgeError (one line naming the archive) or success; either way nothing exists outside
    out/ that was not there, and out/ holds plain files of at most the limit's bytes in all."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        box = root / "box"
        out = box / "out"
        out.mkdir(parents=True)
        archive = root / name
        archive.write_bytes(data)
        before = sorted(str(path) for path in root.rglob("*"))
        try:
            unpack(archive, out, base_name, FUZZ_LIMITS)
        except BabelforgeError as error:
            assert "\n" not in str(error) and str(error).startswith(f"{archive}: ")
        after = sorted(str(path) for path in root.rglob("*") if out not in path.parents)
        assert after == before, f"written outside the folder: {sorted(set(after) - set(before))}"
        written = list(out.iterdir())
        assert all(path.is_file() and not path.is_symlink() for path in written)
        assert sum(path.stat().st_size for path in written) <= FUZZ_LIMITS.max_bytes
        shutil.rmtree(out)


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.sampled_from(sorted(KINDS)), st.binary(max_size=4096))
def test_random_bytes_never_raise_anything_but_one_line(kind, data):
    prefix = {"zip": b"PK\x03\x04", "tar.gz": b"\x1f\x8b\x08\x00", "tar": b""}[kind]
    sandbox_run(KINDS[kind], prefix + data)


def valid_archive(kind: str) -> bytes:
    files = {"images/0123456789abcdef.jpg": os.urandom(700), "images/x.jpg": b"caption " * 300, "README": b"hi"}
    if kind == "zip":
        return zip_bytes(files)
    return tar_bytes([info(name, data) for name, data in files.items()], compress=kind == "tar.gz")


VALID = {kind: valid_archive(kind) for kind in KINDS}


@FUZZ
@given(
    st.sampled_from(sorted(KINDS)),
    st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), max_size=6),
    st.one_of(st.none(), st.integers(min_value=0)),
)
def test_mutated_archives_never_raise_anything_but_one_line(kind, flips, cut):
    data = bytearray(VALID[kind])
    for position, value in flips:
        data[position % len(data)] = value
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    sandbox_run(KINDS[kind], bytes(data))


# Member names a hostile archive would use: parent folders, absolute paths (into the sandbox's parent, so an
# escape shows), drive letters, backslashes, control and bidi characters, and plain ones.
NAME_PARTS = st.sampled_from(["..", ".", "", "a", "b.jpg", "images", "\\..", "C:", "x\x00y", "\u202e", "~", " "])
NAMES = st.lists(NAME_PARTS, min_size=1, max_size=4).map("/".join) | st.sampled_from(["/tmp/x.jpg", "//x"])
TYPES = st.sampled_from(
    [tarfile.REGTYPE, tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE]
)
MEMBERS = st.lists(st.tuples(NAMES, TYPES, NAMES, st.integers(0, 20_000)), min_size=0, max_size=14)


@FUZZ
@pytest.mark.filterwarnings("ignore:Duplicate name")
@given(MEMBERS, st.booleans())
def test_archives_of_hostile_members_write_only_safe_names_inside_the_folder(members, as_zip):
    if as_zip:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as bundle:
            for name, kind, link, size in members:
                entry = zipfile.ZipInfo(name.replace("\x00", "") or "x")
                mode = {tarfile.DIRTYPE: stat.S_IFDIR, tarfile.SYMTYPE: stat.S_IFLNK, tarfile.CHRTYPE: stat.S_IFCHR}
                entry.external_attr = (mode.get(kind, stat.S_IFREG) | 0o644) << 16
                bundle.writestr(entry, link if kind == tarfile.SYMTYPE else bytes(size))
        data, name = buffer.getvalue(), "captions.zip"
    else:
        entries = [info(name.replace("\x00", ""), bytes(size), kind, link) for name, kind, link, size in members]
        try:
            data, name = tar_bytes(entries), "images.tgz"
        except (ValueError, UnicodeEncodeError):  # a name tarfile cannot write: nothing to test
            return
    sandbox_run(name, data)


@given(NAMES)
def test_a_name_the_reader_accepts_stays_inside_the_folder(name):
    if name_problem(name) is None:
        path = PurePosixPath(name.replace("\\", "/"))
        assert not path.is_absolute() and ".." not in path.parts


@pytest.mark.parametrize(
    "name, problem",
    [
        ("a\ud800.jpg", "has a name that is not UTF-8"),  # the first and last surrogates (undecodable bytes)
        ("a\udfff.jpg", "has a name that is not UTF-8"),
        ("a\x1f.jpg", "has the control character U+001F in its name"),
        ("a\x7f.jpg", "has the control character U+007F in its name"),  # DEL, then the C1 controls
        ("a\x9f.jpg", "has the control character U+009F in its name"),
        ("C:x.jpg", "has an absolute path"),  # a drive, even without a separator
        ("\\x.jpg", "has an absolute path"),
        ("C:", "has an absolute path"),  # a drive alone: two characters
    ],
)
def test_the_edges_of_each_name_rule(name, problem):
    assert name_problem(name) == problem


@pytest.mark.parametrize("name", ["a b.jpg", "a\u00a0b.jpg", "\ud7ff.jpg", "\ue000.jpg", "ab:c.jpg", "c", "..a/b.jpg"])
def test_the_names_just_inside_each_rule_are_kept(name):
    assert name_problem(name) is None  # a space, a no-break space, the code points around the surrogates


@pytest.mark.parametrize(
    "error, start",
    [
        (EOFError(), "cut short (EOFError)"),
        (zlib.error("Error -5 while decompressing data: unexpected end of data"), "cut short"),
        (OSError("Compressed file ended before the end-of-stream marker was reached"), "cut short"),
        (RuntimeError("File 'a.jpg' is encrypted, password required for extraction"), "holds an encrypted member"),
        (RuntimeError("something else"), "damaged or not the archive it claims to be (RuntimeError: something else)"),
        (ValueError("encrypted"), "damaged or not the archive it claims to be (ValueError: encrypted)"),
        (NotImplementedError("compression type 99"), "uses a compression babelforge cannot read"),
    ],
)
def test_each_read_error_is_named_for_what_it_means(error, start):
    from babelforge.core.archives import _read_error_text

    assert _read_error_text(error).startswith(start)


def test_the_limits_are_inclusive():
    from babelforge.core.archives import limit_problem

    limits = ArchiveLimits(max_bytes=100, max_members=3, bytes_setting="b", members_setting="m")
    assert limit_problem(3, 100, limits) is None  # exactly at both limits: the release's own size may
    assert "more than 3 members (m)" in limit_problem(4, 100, limits)
    assert "expands to more than 100 bytes (b)" in limit_problem(3, 101, limits)


@pytest.mark.parametrize("size", [-1, None, 7])
def test_the_counting_reader_gives_exactly_its_budget_and_refuses_one_byte_more(size):
    from babelforge.core.archives import _CountingReader

    def over():
        return BabelforgeError("over")

    def read_all(data: bytes) -> bytes:
        reader, got = _CountingReader(io.BytesIO(data), 20, over), b""
        assert reader.read(0) == b""
        while chunk := reader.read(size):
            got += chunk
        return got

    assert read_all(bytes(range(20))) == bytes(range(20))
    with pytest.raises(BabelforgeError, match="over"):
        read_all(bytes(21))
