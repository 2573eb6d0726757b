"""`babelforge xm3600`: the fetched XM3600 captions parsed, validated and written to `paths.xm3600`.

Reads `paths.xm3600_release` (`fetch.json`, `captions.jsonl`, `images/`, `image_attributions.csv`) and
writes, swapped in whole:
- `captions.parquet`: one row per caption (`babelforge.xm3600.captions.COLUMNS`, then ATTRIBUTION_COLUMNS:
  its image's author, licence, page and title from the release's image_attributions.csv, which CC BY 2.0
  requires to be given with the image), its provenance naming the pinned release it was made from;
- `xm3600.json`: the same captions as a caption set (`{"images", "captions"}`), what `eval_retrieval`
  reads in the full profile;
- `validation.json`: what the checks counted (images, captions per language, missing (image, language)
  pairs, empty captions, duplicate ids, script mismatches against the language registry) and the bad-row
  counts (`quarantine`: rows read, kept, set aside per reason);
- `quarantine.parquet`: the bad caption rows set aside (file, line, reason, raw text cut to 300 characters).
The captions go through the bad-row policy of every caption input (`xm3600.on_bad_row`,
`xm3600.max_bad_fraction`; babelforge.xm3600.captions.read_captions): a caption or line that is not
UTF-8, not JSON, has an image id that is not the release's (16 hex digits) or given twice, is empty or
holds what the rule for typed text refuses is set aside and counted, or stops the build under `fail`.
A hard check that fails stops the stage with one line and writes nothing; so does an image with no row in
image_attributions.csv (its author and licence could not be given), and a field of that file the typed-text
rule refuses (`babelforge.xm3600.release.read_attributions`: 3,600 curated rows, fixed where they are typed,
no bad-row policy). When the fetch was skipped (the `sample` profile) the folder holds only `skipped.json`,
and the stage says so in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from babelforge.core.bad_rows import BadRowPolicy, Quarantine, quarantine_table
from babelforge.core.bad_rows import summary_line as bad_rows_line
from babelforge.core.config import from_group, setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import atomic_directory, read_json, write_json, write_table
from babelforge.core.languages import registry
from babelforge.core.progress import info
from babelforge.core.provenance import provenance
from babelforge.core.stages import Paths, Stage, stage_paths
from babelforge.xm3600.captions import (
    IMAGE_SUFFIX,
    LANGUAGES,
    caption_rows,
    caption_set,
    read_captions,
    summary_line,
    validate,
)
from babelforge.xm3600.release import (
    ATTRIBUTIONS_FILE,
    CAPTIONS_FILE,
    IMAGES_FOLDER,
    MANIFEST,
    Attribution,
    read_attributions,
)

CAPTIONS_TABLE = "captions.parquet"
CAPTION_SET = "xm3600.json"  # its stem names the caption set in eval rows and the paper's table
VALIDATION = "validation.json"
SKIPPED = "skipped.json"
QUARANTINE = "quarantine.parquet"
# column -> the Attribution field it holds: each caption row carries its image's attribution beside its id
ATTRIBUTION_COLUMNS = {
    "image_author": "author",
    "image_licence": "licence",
    "image_landing_url": "landing_url",
    "image_title": "title",
}


@dataclass(frozen=True)
class Config:
    """The `xm3600` group of params.yaml: reads `paths.xm3600_release`, writes `paths.xm3600`."""

    GROUP = "xm3600"
    max_script_mismatch: float = setting(
        0.05,
        "largest share of a language's captions mostly in a script the registry does not list for it",
        minimum=0,
        maximum=1,
    )
    on_bad_row: str = setting(
        "skip",
        "a caption or line that cannot be kept: skip (set it aside in quarantine.parquet) or fail (stop at it)",
    )
    max_bad_fraction: float = setting(
        0.01, "stop when more than this share of the captions is bad (a systemic cause)", minimum=0, maximum=1
    )
    profile: str = from_group(str, "profile", "the build profile (recorded in the provenance)")
    paths: Paths = stage_paths()


def run(config: Config) -> int:
    release, out = Path(config.paths.xm3600_release), Path(config.paths.xm3600)
    manifest = read_manifest(release)
    if manifest.get("skipped"):
        with atomic_directory(out) as staging:
            write_json({"skipped": manifest["skipped"], "profile": config.profile}, staging / SKIPPED)
        info(f"xm3600: skipped ({config.profile} profile): nothing fetched ({manifest['skipped']})")
        return 0
    policy = BadRowPolicy(config.on_bad_row, config.max_bad_fraction)
    found, quarantine = build(release, out, manifest, config.profile, config.max_script_mismatch, policy)
    info(f"xm3600: {summary_line(found)}; {bad_rows_line('captions', quarantine.summary())} -> {out}")
    return 0


def read_manifest(release: Path) -> dict:
    """The release folder's fetch.json; one line naming the stage to run when it is missing."""
    path = release / MANIFEST
    if not path.is_file():
        raise BabelforgeError(f"{path} is missing: run `babelforge xm3600_fetch` first")
    return read_json(path)


def build(
    release: Path,
    out: Path,
    manifest: dict,
    profile: str,
    max_script_mismatch: float = 0.05,
    policy: BadRowPolicy | None = None,
) -> tuple:
    """Read (through the bad-row `policy`) and check the release's captions, then write the four files;
    returns (the Validation, the Quarantine)."""
    import pandas as pd

    languages = registry()
    captions_path = release / CAPTIONS_FILE
    if not captions_path.is_file():
        raise BabelforgeError(f"{captions_path} is missing: rerun `babelforge xm3600_fetch`")
    policy = policy or BadRowPolicy()  # the settings' defaults: skip, at most 1 % bad
    quarantine = Quarantine(policy, "captions", hint="check that captions.jsonl is the release's")
    with captions_path.open("rb") as handle:
        records = read_captions(handle, str(captions_path), quarantine)
    scripts = {code: languages.resolve(code).expected_scripts for code in LANGUAGES}
    found = validate(records, scripts, LANGUAGES, max_script_mismatch)
    images = release / IMAGES_FOLDER
    absent = [record.key for record in records if not (images / (record.key + IMAGE_SUFFIX)).is_file()]
    if absent:
        found.problems.append(f"{len(absent)} images have captions but no file in {images} (first: {absent[0]})")
    if found.problems:
        more = f" (and {len(found.problems) - 1} more)" if len(found.problems) > 1 else ""
        raise BabelforgeError(f"xm3600: {captions_path}: {found.problems[0]}{more}; {summary_line(found)}")
    attributions = image_attributions(release / ATTRIBUTIONS_FILE, [record.key for record in records])
    table = pd.DataFrame(caption_rows(records, lambda code: languages.resolve(code).key))
    for column, field in ATTRIBUTION_COLUMNS.items():
        table[column] = [getattr(attributions[key], field) for key in table["image_id"]]
    record = provenance(
        "xm3600",
        {
            "profile": profile,
            "max_script_mismatch": max_script_mismatch,
            "on_bad_row": policy.on_bad_row,
            "max_bad_fraction": policy.max_bad_fraction,
        },
        sources={"xm3600": {"files": manifest.get("files", []), "captions": manifest.get("captions")}},
    )
    with atomic_directory(out) as staging:
        write_table(table, staging / CAPTIONS_TABLE, sort_by=["lang", "image_id", "caption_index"], provenance=record)
        write_json(caption_set(records), staging / CAPTION_SET)
        write_json({**found.as_dict(), "quarantine": quarantine.summary()}, staging / VALIDATION)
        write_table(quarantine_table(row for _, row in quarantine.bad), staging / QUARANTINE)
    return found, quarantine


def image_attributions(path: Path, keys: list[str]) -> dict[str, Attribution]:
    """Each image's row of the release's image_attributions.csv; one line naming the first image without one."""
    if not path.is_file():
        raise BabelforgeError(f"{path} is missing: rerun `babelforge xm3600_fetch` (it fetches the attributions)")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise BabelforgeError(f"{path}: not UTF-8 (byte {error.start}); is it the release's file?") from None
    found = read_attributions(text, str(path))
    absent = sorted(key for key in set(keys) if key not in found)
    if absent:
        more = f" (and {len(absent) - 1} more)" if len(absent) > 1 else ""
        raise BabelforgeError(
            f"xm3600: image {absent[0]}{more} has no row in {path}: its author and licence, which CC BY 2.0 "
            "requires to be given with it, are unknown; nothing was written"
        )
    return found


STAGE = Stage(
    "xm3600",
    "parse and validate the XM3600 captions into versioned Parquet",
    run,
    config=Config,
    flags={"--out": ("paths.xm3600", "the XM3600 folder to write")},
    deps=("${paths.xm3600_release}", "resources/languages.tsv"),
    outs=("${paths.xm3600}",),
    docs="docs/datasets/xm3600.md",
    owns={
        "xm3600": ("data/xm3600", "XM3600 captions (captions.parquet), its caption set (xm3600.json), validation"),
    },
)
