"""XM3600 as a hostile or clumsy source would give it (issue 46): archives that are no archives, cut short,
bombs or holding members that leave the folder, stop `xm3600_fetch` in one line with the release left as it
was; captions holding NUL, bidi controls, line breaks or escapes, image ids that name no image, bytes that
are not UTF-8 and an empty caption file go through the bad-row policy of every caption input or stop
`xm3600` in one line. The release is the published-format fixture (tests/xm3600/release_fixture.py) with
one file replaced; each test pins the replaced file's own sha256, as a user who accepted new bytes would."""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from pathlib import Path

import pandas as pd
import pytest
import yaml

from babelforge.cli import main
from babelforge.core.io import read_json
from tests.archive_bytes import zip_bytes
from tests.xm3600.release_fixture import (
    KEYS,
    fixture_record,
    fixture_text,
    write_mirror,
    write_params,
)


def release_with(tmp_path: Path, replaced: dict[str, bytes], images: int = 2, **settings) -> Path:
    """The fixture's mirror with the files `replaced` (name -> bytes), params.yaml pinning them as they are
    and holding `settings` (group.key -> value): the params file."""
    pins = write_mirror(tmp_path / "mirror", [fixture_record(i) for i in range(images)])
    for name, data in replaced.items():
        (tmp_path / "mirror" / "xm3600" / name).write_bytes(data)
        pins[name] = hashlib.sha256(data).hexdigest()
    path = write_params(tmp_path, "full", pins, tmp_path / "mirror")
    params = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key, value in settings.items():
        group, name = key.split(".")
        params.setdefault(group, {})[name] = value
    path.write_text(yaml.safe_dump(params), encoding="utf-8")
    return path


def one_error(stage: str, params: Path, capsys) -> str:
    """Run `stage`; it must fail with one line `babelforge <stage>: error: ...` and no traceback."""
    capsys.readouterr()
    assert main([stage, "--params", str(params)]) == 1
    err = capsys.readouterr().err
    lines = [line for line in err.strip().splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith(f"babelforge {stage}: error: "), err[-2000:]
    return lines[0].removeprefix(f"babelforge {stage}: error: ")


def tgz(members: list[tuple[str, bytes, bytes]]) -> bytes:
    """A .tgz of (name, data, tar type) members; a link's data is its target."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as bundle:
        for name, data, kind in members:
            entry = tarfile.TarInfo(name)
            entry.type = kind
            if kind == tarfile.REGTYPE:
                entry.size = len(data)
                bundle.addfile(entry, io.BytesIO(data))
            else:
                entry.linkname = data.decode()
                bundle.addfile(entry)
    # gzip's header time fixed: the bytes appear in parametrized test ids, which every xdist worker must collect alike
    return gzip.compress(buffer.getvalue(), mtime=0)


def fixture_captions(records: list[dict] | None = None) -> bytes:
    return zip_bytes({"captions.jsonl": fixture_text(records or [fixture_record(i) for i in range(2)]).encode()})


def bomb_zip() -> bytes:
    """captions.zip whose captions.jsonl expands from about 4 KiB to 4 MiB."""
    return zip_bytes({"captions.jsonl": b" " * (4 << 20)})


def bomb_tgz() -> bytes:
    """images.tgz whose one image expands from about 4 KiB to 4 MiB."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as packed, tarfile.open(fileobj=packed, mode="w|") as bundle:
        entry = tarfile.TarInfo(f"images/{KEYS[0]}.jpg")
        entry.size = 4 << 20
        bundle.addfile(entry, io.BytesIO(bytes(entry.size)))
    return buffer.getvalue()


SMALL_LIMITS = {"xm3600_fetch.captions_max_unpacked_bytes": 1 << 20, "xm3600_fetch.images_max_unpacked_bytes": 1 << 20}


@pytest.mark.parametrize(
    "name, data, settings, message",
    [
        ("captions.zip", b"<html>Not Found</html>", {}, "captions.zip: not a zip archive (it starts with b'<html>No'"),
        ("captions.zip", fixture_captions()[:-40], {}, "captions.zip: cut short or damaged: no zip directory at its"),
        ("captions.zip", zip_bytes({}), {}, "captions.zip: an empty archive (no members); fetch it again"),
        ("captions.zip", zip_bytes({"other.txt": b"x"}), {}, "captions.zip: expected one captions.jsonl, found 0"),
        (
            "captions.zip",
            zip_bytes({"../../captions.jsonl": b"{}"}),
            {},
            "captions.zip: member '../../captions.jsonl' has a `..` in its path",
        ),
        (
            "captions.zip",
            bomb_zip(),
            SMALL_LIMITS,
            "captions.zip: at member 'captions.jsonl': expands to more than 1,048,576 bytes "
            "(xm3600_fetch.captions_max_unpacked_bytes): a decompression bomb",
        ),
        (
            "images.tgz",
            zip_bytes({"a.jpg": b"x"}),
            {},
            "images.tgz: not gzip-compressed (it starts with b'PK\\x03\\x04",
        ),
        (
            "images.tgz",
            gzip.compress(b"not a tar" * 100, mtime=0),
            {},
            "images.tgz: damaged or not the archive it claims",
        ),
        (
            "images.tgz",
            tgz([(f"images/{KEYS[0]}.jpg", bytes(range(256)) * 64, tarfile.REGTYPE)])[:-100],
            {},
            "images.tgz: cut short (Compressed file ended before the end-of-stream marker was reached)",
        ),
        (
            "images.tgz",
            tgz([(f"../../{KEYS[0]}.jpg", b"x", tarfile.REGTYPE)]),
            {},
            f"images.tgz: member '../../{KEYS[0]}.jpg' has a `..` in its path",
        ),
        (
            "images.tgz",
            tgz([(f"/etc/{KEYS[0]}.jpg", b"x", tarfile.REGTYPE)]),
            {},
            f"images.tgz: member '/etc/{KEYS[0]}.jpg' has an absolute path; refused",
        ),
        (
            "images.tgz",
            tgz([(f"images/{KEYS[0]}.jpg", b"/etc/passwd", tarfile.SYMTYPE)]),
            {},
            f"images.tgz: member 'images/{KEYS[0]}.jpg' is a symbolic link (to '/etc/passwd')",
        ),
        (
            "images.tgz",
            bomb_tgz(),
            SMALL_LIMITS,
            f"images.tgz: at member 'images/{KEYS[0]}.jpg': expands to more than 1,048,576 bytes "
            "(xm3600_fetch.images_max_unpacked_bytes)",
        ),
        (
            "images.tgz",
            tgz([(f"images/{key}.jpg", b"x", tarfile.REGTYPE) for key in KEYS]),
            {"xm3600_fetch.max_archive_members": 3},
            "images.tgz: at member 'images/ffe1d3c5b7a99b8d.jpg': more than 3 members (xm3600_fetch.max_archive_members)",
        ),
    ],
)
def test_a_bad_archive_stops_the_fetch_in_one_line_writing_nothing(name, data, settings, message, tmp_path, capsys):
    params = release_with(tmp_path, {name: data}, **settings)
    error = one_error("xm3600_fetch", params, capsys)
    assert error.startswith(str(tmp_path / "release") + "/" + message.split(": ", 1)[0] + ": ")
    assert message.split(": ", 1)[1] in error
    release = tmp_path / "release"
    assert not (release / "fetch.json").exists() and not (release / "images").exists()
    assert not (release / "captions.jsonl").exists()
    assert not (tmp_path / KEYS[0]).with_suffix(".jpg").exists()  # nothing escaped to the release's parent
    assert sorted(path.name for path in release.iterdir() if path.name.startswith(".")) == []  # no temp file


def test_a_bomb_after_a_good_fetch_leaves_the_release_as_it_was(tmp_path, capsys):
    params = release_with(tmp_path, {})
    assert main(["xm3600_fetch", "--params", str(params)]) == 0
    release = tmp_path / "release"
    before = {str(path): path.read_bytes() for path in sorted(release.rglob("*")) if path.is_file()}
    params = release_with(tmp_path / "again", {"images.tgz": bomb_tgz()}, **SMALL_LIMITS)
    settings = yaml.safe_load(params.read_text(encoding="utf-8"))
    settings["paths"]["xm3600_release"] = str(release)
    params.write_text(yaml.safe_dump(settings), encoding="utf-8")
    assert "expands to more than 1,048,576 bytes" in one_error("xm3600_fetch", params, capsys)
    assert (release / "images").is_dir()
    images = {path: data for path, data in before.items() if "/images/" in path}
    assert images and all(Path(path).read_bytes() == data for path, data in images.items())


def test_images_not_named_by_an_image_key_are_left_out_and_counted(tmp_path, capsys):
    both = tgz(
        [(f"images/{key}.jpg", b"\xff\xd8", tarfile.REGTYPE) for key in KEYS[:2]]
        + [("images/._x.jpg", b"mac", tarfile.REGTYPE), ("images/holiday.jpg", b"x", tarfile.REGTYPE)]
    )
    params = release_with(tmp_path, {"images.tgz": both})
    capsys.readouterr()
    assert main(["xm3600_fetch", "--params", str(params)]) == 0
    log = capsys.readouterr().err
    assert "2 images (1 other files left out, first 'images/holiday.jpg'" in log
    assert sorted(path.name for path in (tmp_path / "release" / "images").iterdir()) == [f"{k}.jpg" for k in KEYS[:2]]


# --- the caption file ----------------------------------------------------------------------------------------


# the fixture has 2 to 4 images, 71 captions each: one bad caption is more than the default 1 %
TOLERANT = {"xm3600.max_bad_fraction": 0.5}


def built_with(tmp_path: Path, records: list[dict] | None = None, text: bytes | None = None, **settings) -> Path:
    """A release whose captions.jsonl is `text` (default: the fixture's `records`), fetched: params.yaml."""
    records = records or [fixture_record(i) for i in range(2)]
    text = fixture_text(records).encode() if text is None else text
    zipped_text = {"captions.zip": zip_bytes({"captions.jsonl": text})}
    params = release_with(tmp_path, zipped_text, images=len(records), **settings)
    assert main(["xm3600_fetch", "--params", str(params)]) == 0
    return params


HOSTILE_CAPTIONS = {
    "nul": ("Bild\x00 mit NUL", "control_characters"),
    "rlo": ("Bild \u202etxt.exe", "typed_text"),
    "newline": ("Bild\nzweite Zeile", "typed_text"),
    "ansi": ("Bild \x1b[2J", "control_characters"),
    "empty": ("   ", "empty_caption"),
    "long": ("Bild " * 300, "typed_text"),
}


def test_hostile_captions_are_set_aside_and_counted_the_rest_kept(tmp_path):
    records = [fixture_record(i) for i in range(4)]
    for (caption, _), (index, code) in zip(
        HOSTILE_CAPTIONS.values(), [(0, "de"), (1, "de"), (2, "fr"), (3, "en"), (0, "es"), (1, "it")]
    ):
        records[index][code]["caption"][1] = caption
    params = built_with(tmp_path, records, **TOLERANT)
    assert main(["xm3600", "--params", str(params)]) == 0
    out = tmp_path / "xm3600"
    table = pd.read_parquet(out / "captions.parquet")
    assert len(table) == 4 * 71 - len(HOSTILE_CAPTIONS)
    assert not any(caption in set(table["caption"]) for caption, _ in HOSTILE_CAPTIONS.values())
    quarantine = pd.read_parquet(out / "quarantine.parquet")
    assert sorted(quarantine["reason"]) == sorted(reason for _, reason in HOSTILE_CAPTIONS.values())
    assert set(quarantine["line"]) == {1, 2, 3, 4}
    summary = read_json(out / "validation.json")["quarantine"]
    assert (summary["rows"], summary["kept"], summary["quarantined"]) == (4 * 71, 4 * 71 - 6, 6)
    caption_set = read_json(out / "xm3600.json")
    assert caption_set["captions"]["de"][0] == ["Bild 0 0"]  # its other caption kept, in its place


@pytest.mark.parametrize(
    "key, reason",
    [(" ", "missing_id"), ("../../../ok/release/images/0a2b4c6d8e0f1a2b", "bad_id"), ("0A2B4C6D8E0F1A2B", "bad_id")],
)
def test_an_image_id_that_is_not_the_releases_sets_its_line_aside(key, reason, tmp_path):
    records = [fixture_record(i) for i in range(2)]
    records[1]["image/key"] = key
    params = built_with(tmp_path, records, **TOLERANT)
    assert main(["xm3600", "--params", str(params)]) == 0
    out = tmp_path / "xm3600"
    assert read_json(out / "xm3600.json")["images"] == [KEYS[0] + ".jpg"]
    quarantine = pd.read_parquet(out / "quarantine.parquet")
    assert list(zip(quarantine["line"], quarantine["reason"])) == [(2, reason)]


def test_a_line_that_is_not_utf8_is_set_aside_and_a_file_with_none_is_one_line(tmp_path, capsys):
    lines = fixture_text([fixture_record(i) for i in range(2)]).encode().splitlines(keepends=True)
    latin1 = lines[1].replace(b"Bild", "Bild caf\xe9".encode("latin-1"))
    params = built_with(tmp_path / "one", text=lines[0] + latin1, **TOLERANT)
    assert main(["xm3600", "--params", str(params)]) == 0
    quarantine = pd.read_parquet(tmp_path / "one" / "xm3600" / "quarantine.parquet")
    assert list(zip(quarantine["line"], quarantine["reason"])) == [(2, "invalid_utf8")]
    params = built_with(tmp_path / "all", text=b"".join(line.replace(b"Bild", b"Bild\xe9") for line in lines))
    assert one_error("xm3600", params, capsys).startswith(
        "no row is UTF-8 (2 captions, invalid_utf8 2): the file looks like Latin-1/cp1252"
    )


def test_an_empty_caption_file_is_one_line(tmp_path, capsys):
    params = built_with(tmp_path, text=b"")
    path = tmp_path / "release" / "captions.jsonl"
    assert one_error("xm3600", params, capsys) == (
        f"{path}: no caption line (the file is empty); captions.zip is not the release's: rerun "
        "`babelforge xm3600_fetch`"
    )
    assert not (tmp_path / "xm3600").exists()


def test_under_on_bad_row_fail_the_first_bad_caption_stops_naming_file_and_line(tmp_path, capsys):
    records = [fixture_record(i) for i in range(2)]
    records[1]["ru"]["caption"][0] = "фото \u202e"
    params = built_with(tmp_path, records, **{"xm3600.on_bad_row": "fail"})
    path = tmp_path / "release" / "captions.jsonl"
    assert one_error("xm3600", params, capsys).startswith(f"{path}:2: a line break, tab, bidirectional control")
    assert not (tmp_path / "xm3600").exists()


def test_more_bad_captions_than_allowed_stop_the_build(tmp_path, capsys):
    records = [fixture_record(i) for i in range(2)]
    for code in ("de", "fr", "es", "it"):
        records[0][code]["caption"] = ["\x00", "\x00"]
    params = built_with(tmp_path, records)
    error = one_error("xm3600", params, capsys)
    assert error.startswith("8 of 142 captions are bad (control_characters 8), more than max_bad_fraction 0.01")
    assert not (tmp_path / "xm3600").exists()
