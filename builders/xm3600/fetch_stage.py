"""`babelforge xm3600_fetch`: the official XM3600 release (captions.zip, images.tgz, image_attributions.csv)
into `paths.xm3600_release`, sha256-checked; the archives unpacked to `captions.jsonl` and
`images/<image/key>.jpg`, the attributions kept as they are (the `xm3600` stage gives each row its
image's author and licence from them).

Where the files come from, first match wins: `mirror_url` (an HTTP server with the source-mirror
layout, `xm3600/<file>`), `mirror` (a local folder with that layout), else the upstream URLs. Downloads
resume (babelforge.core.http); a file already there with its pinned hash is not fetched again.
`fetch.json` is removed before anything changes and written last, so an unfinished fetch leaves none.

The official page publishes no checksums. Each pin is a setting (`captions_sha256`, `images_sha256`,
`attributions_sha256`) whose default is the sha256 a public repository that downloads and verifies the
release pins (babelforge.xm3600.release). Every file is verified before it is renamed into place, with
its pin's home named: a file that disagrees (upstream changed, a mirror's copy is corrupt, or a first real
download differs from those pins) stops the fetch with one line naming `xm3600/<file>`, both digests,
`params.yaml xm3600_fetch.<key>` and how to accept new bytes (`babelforge pins --update --accept
xm3600/<file>`); nothing is unpacked and no `fetch.json` is written (under the CLI a release fetched
before is put back as it was). A pin set to null is UNKNOWN and the fetch refuses that file. `--plan`
prints the files, sizes, pins and origins without fetching. The `sample` profile builds offline from the
source mirror, which has no copy of XM3600: there the stage writes only `fetch.json` saying so, with one
line.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.archives import ArchiveLimits, Member, unpack, unpack_member
from babelforge.core.config import from_group, setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.http import copy_verified, download
from babelforge.core.io import atomic_directory, atomic_path, sha256_file, write_json
from babelforge.core.pins import is_sha256
from babelforge.core.progress import info
from babelforge.core.stages import Paths, Stage, stage_paths
from babelforge.xm3600.release import (
    ATTRIBUTIONS_SHA256,
    CAPTIONS_FILE,
    CAPTIONS_SHA256,
    GROUP,
    IMAGE_KEY,
    IMAGE_SUFFIX,
    IMAGES_FOLDER,
    IMAGES_SHA256,
    MANIFEST,
    ReleaseFile,
    plan_lines,
    release_files,
    source_of,
    unpinned,
)

SKIPPED = (
    "the source mirror (../shared/data) has no copy of XM3600, so the sample profile cannot build it; "
    "the full profile fetches the official release"
)


@dataclass(frozen=True)
class Config:
    """The `xm3600_fetch` group of params.yaml; the release goes to `paths.xm3600_release`."""

    GROUP = GROUP
    build: bool = setting(
        {"sample": False, "full": True}, "fetch the release (false: write only fetch.json saying it was skipped)"
    )
    captions_sha256: str | None = setting(
        CAPTIONS_SHA256,
        "sha256 of captions.zip, as a public repository that verifies the release pins it (null: UNKNOWN, refused)",
    )
    images_sha256: str | None = setting(
        IMAGES_SHA256,
        "sha256 of images.tgz, as a public repository that verifies the release pins it (null: UNKNOWN, refused)",
    )
    attributions_sha256: str | None = setting(
        ATTRIBUTIONS_SHA256,
        "sha256 of image_attributions.csv, as a public repository that verifies the release pins it "
        "(null: UNKNOWN, refused)",
    )
    mirror: str | None = setting(
        None, "local copy with the source-mirror layout (xm3600/<file>; null: none)", metavar="DIR"
    )
    mirror_url: str | None = setting(None, "HTTP(S) server with the same layout; used instead of `mirror` when set")
    captions_max_unpacked_bytes: int = setting(
        512 << 20,
        "most bytes captions.zip may expand to (its 17 MB of text, with ample room): more is a decompression "
        "bomb or another file, refused before it is written",
        minimum=1,
    )
    images_max_unpacked_bytes: int = setting(
        1 << 30,
        "most bytes images.tgz may expand to (302 MB of JPEGs, which do not compress, with room): more is a "
        "decompression bomb or another file, refused before it is written",
        minimum=1,
    )
    max_archive_members: int = setting(
        10_000, "most entries (files and folders) either archive may list (images.tgz has 3,600 images)", minimum=1
    )
    plan: bool = setting(False, "print the files, sizes, sha256 pins and origins; fetch nothing")
    profile: str = from_group(str, "profile", "the build profile (recorded in fetch.json)")
    paths: Paths = stage_paths()


def run(config: Config) -> int:
    files = release_files(config.captions_sha256, config.images_sha256, config.attributions_sha256)
    out = Path(config.paths.xm3600_release)
    if config.plan:
        for line in plan_lines(files, config.mirror, config.mirror_url):
            print(line)
        return 0
    if not config.build:
        write_json({"skipped": SKIPPED, "profile": config.profile}, out / MANIFEST)
        info(f"xm3600_fetch: skipped ({config.profile} profile): {SKIPPED}")
        return 0
    missing = unpinned(files)
    if missing:
        names = ", ".join(f"{GROUP}.{file.setting}" for file in missing)
        raise BabelforgeError(
            f"xm3600_fetch: {', '.join(file.name for file in missing)} not pinned ({names} is UNKNOWN); "
            "`babelforge xm3600_fetch --plan` lists the files: check a download and pin its sha256"
        )
    malformed = [file for file in files if not is_sha256(file.sha256)]
    if malformed:
        file = malformed[0]
        raise BabelforgeError(
            f"xm3600_fetch: {GROUP}.{file.setting} is {file.sha256!r}, not a sha256 (64 lower-case hex digits)"
        )
    (out / MANIFEST).unlink(missing_ok=True)  # the release is changing: no manifest until it is whole
    counts = {"fetched": 0, "unchanged": 0}
    for file in files:
        dest = out / file.name
        if dest.is_file() and sha256_file(dest) == file.sha256:
            counts["unchanged"] += 1
            continue
        bring(file, dest, config.mirror, config.mirror_url)
        counts["fetched"] += 1
    captions = out / CAPTIONS_FILE
    with atomic_path(captions) as unpacked:  # captions.jsonl appears only once both archives are unpacked
        unpack_captions(out / "captions.zip", unpacked, limits(config, "captions"))
        images, left_out = unpack_images(out / "images.tgz", out / IMAGES_FOLDER, limits(config, "images"))
    manifest = {
        "profile": config.profile,
        "files": [
            {"name": file.name, "url": file.url, "sha256": file.sha256, "size": (out / file.name).stat().st_size}
            for file in files
        ],
        "captions": {"file": CAPTIONS_FILE, "sha256": sha256_file(captions)},
        "images": images,
    }
    write_json(manifest, out / MANIFEST)
    info(
        f"xm3600_fetch: {len(files)} files ({counts['fetched']} fetched, {counts['unchanged']} unchanged), "
        f"{images} images{left_out_text(left_out)} -> {out}"
    )
    return 0


def limits(config: Config, archive: str) -> ArchiveLimits:
    """What the `archive` ("captions" or "images") of the release may expand to, naming its settings."""
    max_bytes = f"{archive}_max_unpacked_bytes"
    return ArchiveLimits(
        getattr(config, max_bytes),
        config.max_archive_members,
        bytes_setting=f"{GROUP}.{max_bytes}",
        members_setting=f"{GROUP}.max_archive_members",
    )


def left_out_text(names: list[str]) -> str:
    """The files of images.tgz that are no image of the release, for the log line ("" when none)."""
    if not names:
        return ""
    return f" ({len(names)} other files left out, first {names[0]!r}: not named <16 hex digits>{IMAGE_SUFFIX})"


def bring(file: ReleaseFile, dest: Path, mirror: str | None, mirror_url: str | None) -> None:
    """Put `file` at `dest`, verified against its pin: downloaded (resumable) or copied from a local mirror.
    Bytes that are not the pinned ones never reach `dest`: one line names the file, both digests and the pin's home."""
    where = source_of(file, mirror, mirror_url)
    if mirror_url or not mirror:
        download(where, dest, file.sha256, desc=file.name, pin=file.pin)
        return
    copy_verified(
        Path(where),
        dest,
        file.sha256,
        "xm3600_fetch",
        missing_hint=f"expected xm3600/{file.name} there",
        mismatch_hint="not the pinned release file; nothing kept",
        pin=file.pin,
    )


def unpack_captions(archive: Path, dest: Path, limits: ArchiveLimits) -> Path:
    """captions.jsonl out of captions.zip (wherever the zip holds it), through the one archive reader
    (babelforge.core.archives): one line for a zip that is damaged, cut short, a bomb or holds an unsafe member."""
    return unpack_member(archive, CAPTIONS_FILE, dest, limits, kind="zip")


def image_name(member: Member, left_out: list[str]) -> str | None:
    """The file name a member of images.tgz is unpacked as: `<image/key>.jpg` by its base name (the
    archive's folders dropped: names are image keys); None for anything else (counted in `left_out`),
    and for hidden files (a `._x.jpg` of macOS), which are no image."""
    name = member.name.replace("\\", "/").rsplit("/", 1)[-1]
    if name.startswith("."):
        return None
    if name.endswith(IMAGE_SUFFIX) and IMAGE_KEY.fullmatch(name.removesuffix(IMAGE_SUFFIX)):
        return name
    left_out.append(member.name)
    return None


def unpack_images(archive: Path, dest: Path, limits: ArchiveLimits) -> tuple[int, list[str]]:
    """Every `<image/key>.jpg` of images.tgz into `dest`, through the one archive reader: (how many, the
    names of the other files, left out). The folder is swapped in whole: a refused archive leaves the one
    before."""
    left_out: list[str] = []
    with atomic_directory(dest) as staging:
        written = unpack(archive, staging, lambda member: image_name(member, left_out), limits, kind="tar.gz")
    return len(written), left_out


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", dest="profile", choices=("sample", "full"), help="override the params profile")


STAGE = Stage(
    "xm3600_fetch",
    "fetch the official XM3600 release (captions.zip, images.tgz, image_attributions.csv), sha256-pinned",
    run,
    config=Config,
    configure=configure,
    flags={
        "--mirror": ("mirror", "local mirror directory with the source-mirror layout"),
        "--mirror-url": ("mirror_url", "HTTP(S) base URL of a mirror"),
        "--plan": ("plan", "print the files, sizes and sha256 pins; fetch nothing"),
        "--out": ("paths.xm3600_release", "the release folder"),
    },
    outs=("${paths.xm3600_release}",),
    # what the release is (the pins) and whether it is fetched; not where from (the bytes are verified) nor --plan
    params=(
        "xm3600_fetch.build",
        "xm3600_fetch.captions_sha256",
        "xm3600_fetch.images_sha256",
        "xm3600_fetch.attributions_sha256",
    ),
    docs="docs/datasets/xm3600.md",
    owns={
        "xm3600_release": (
            "data/xm3600_release",
            "the fetched XM3600 release: files, captions.jsonl, images/",
        ),
    },
)
