"""`babelforge geo_pool`: geo-diverse image pools per language from two CSV files.

  --candidates  CSV with columns image_id, region, country, continent (others ignored)
  --areas       CSV with columns lang, region, country, continent: one row per region a
                language is spoken in (an empty region is allowed; a region needs its country,
                and matches only images of that region *in that country*)
  --out         Parquet: lang, image_id, level (area/country/continent/anywhere), rank

Selection: `babelforge.mvl_sib.geo.select_geo_pool` (XM3600's greedy back-off). A tool run by
hand (not a `dvc.yaml` stage): its settings have no params.yaml group unless one is added.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.config import setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import write_table
from babelforge.core.progress import info
from babelforge.core.provenance import provenance
from babelforge.core.sources import input_record
from babelforge.core.stages import Paths, Stage, stage_paths
from babelforge.mvl_sib.geo import LEVELS, Candidate, LanguageArea, level_counts, select_geo_pool


@dataclass(frozen=True)
class Config:
    """The `geo_pool` group (absent from params.yaml: the flags give the inputs)."""

    GROUP = "geo_pool"
    candidates: str | None = setting(
        None, "candidate images CSV (image_id, region, country, continent)", metavar="FILE"
    )
    areas: str | None = setting(None, "language -> region/country/continent CSV", metavar="FILE")
    per_language: int | None = setting(None, "images to select per language", minimum=1)
    seed: int = setting(0, "tie-break seed within a back-off level", minimum=0)
    out: str | None = setting(None, "output Parquet", metavar="FILE")
    paths: Paths = stage_paths()


def _read_csv(path, required: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:

    path = Path(path)
    if not path.is_file():
        raise BabelforgeError(f"{path}: no such CSV file")
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [name for name in required if name not in (reader.fieldnames or [])]
        if missing:
            raise BabelforgeError(f"{path}:1: missing column(s) {missing}; needs {list(required)}")
        rows = []
        for row in reader:
            if None in row or any(row[name] is None for name in required):
                raise BabelforgeError(f"{path}:{reader.line_num}: wrong number of fields")
            rows.append((reader.line_num, {name: row[name].strip() for name in required}))
    return rows


def read_candidates(path):

    candidates = []
    for line, row in _read_csv(path, ("image_id", "region", "country", "continent")):
        if not row["image_id"]:
            raise BabelforgeError(f"{path}:{line}: empty image_id")
        candidates.append(Candidate(**{**row, "region": _region_key(row)}))
    return candidates


def _region_key(row: dict[str, str]) -> str:
    """A region qualified by its country: region names repeat across countries (Punjab in IN
    and PK, Limburg in NL and BE), and an image of one is not from the other's area."""
    return f"{row['country']}/{row['region']}" if row["region"] else ""


def read_areas(path):

    parts: dict[str, tuple[set, set, set]] = {}
    for line, row in _read_csv(path, ("lang", "region", "country", "continent")):
        if not row["lang"]:
            raise BabelforgeError(f"{path}:{line}: empty lang")
        if not (row["region"] or row["country"] or row["continent"]):
            raise BabelforgeError(f"{path}:{line}: {row['lang']} names no region, country or continent")
        if row["region"] and not row["country"]:
            raise BabelforgeError(
                f"{path}:{line}: region {row['region']!r} needs its country (region names repeat across countries)"
            )
        regions, countries, continents = parts.setdefault(row["lang"], (set(), set(), set()))
        for values, value in ((regions, _region_key(row)), (countries, row["country"]), (continents, row["continent"])):
            if value:
                values.add(value)
    return {lang: LanguageArea.of(*sets) for lang, sets in parts.items()}


def run(config: Config) -> int:
    import pandas as pd

    missing = [
        flag
        for flag, value in (
            ("--candidates", config.candidates),
            ("--areas", config.areas),
            ("--per-language", config.per_language),
            ("--out", config.out),
        )
        if value is None
    ]
    if missing:
        raise BabelforgeError(f"geo_pool needs {', '.join(missing)} (or --set geo_pool.<key>=...)")
    candidates = read_candidates(config.candidates)
    areas = read_areas(config.areas)
    selections = select_geo_pool(candidates, areas, config.per_language, config.seed)
    table = pd.DataFrame(
        [(s.lang, s.image_id, s.level, s.rank) for s in selections], columns=["lang", "image_id", "level", "rank"]
    )
    record = provenance(
        "geo_pool",
        {"per_language": config.per_language, "seed": config.seed},
        sources={
            "candidates": input_record(config.candidates, config.paths.raw),
            "areas": input_record(config.areas, config.paths.raw),
        },
    )
    write_table(table, config.out, sort_by=["lang", "rank"], provenance=record)
    counts = level_counts(selections)
    totals = {level: sum(per_lang[level] for per_lang in counts.values()) for level in LEVELS}
    print(f"geo_pool: {len(counts)} languages × {config.per_language} images -> {config.out}")
    print("  by level: " + ", ".join(f"{level} {count}" for level, count in totals.items()))
    for lang, per_level in sorted(counts.items()):
        if per_level["area"] < config.per_language:
            print(f"  {lang}: " + ", ".join(f"{level} {n}" for level, n in per_level.items() if n))
    info(f"geo_pool: wrote {len(table)} selections")
    return 0


STAGE = Stage(
    "geo_pool",
    "select geo-diverse image pools per language (XM3600 method)",
    run,
    config=Config,
    flags={
        "--candidates": ("candidates", "candidate images CSV"),
        "--areas": ("areas", "language -> region/country/continent CSV"),
        "--per-language": ("per_language", "images to select per language"),
        "--seed": ("seed", "tie-break seed within a back-off level"),
        "--out": ("out", "output Parquet"),
    },
    tool=True,
    in_params_yaml=False,
)
