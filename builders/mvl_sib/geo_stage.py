"""`babelforge geo_pool`: geo-diverse image pools per language from two CSV files.

  --candidates  CSV with columns image_id, region, country, continent (others ignored)
  --areas       CSV with columns lang, region, country, continent: one row per region a
                language is spoken in (an empty region is allowed; a region needs its country,
                and matches only images of that region *in that country*)
  --out         Parquet: lang, image_id, level (area/country/continent/anywhere), rank

Selection: `builders.mvl_sib.geo.select_geo_pool` (XM3600's greedy back-off).
"""
from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--candidates", required=True, help="candidate images CSV")
    parser.add_argument("--areas", required=True, help="language -> region/country/continent CSV")
    parser.add_argument("--per-language", type=int, required=True, help="images to select per language")
    parser.add_argument("--seed", type=int, default=0, help="tie-break seed within a back-off level")
    parser.add_argument("--out", required=True, help="output Parquet")


def _read_csv(path, required: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    import csv
    from pathlib import Path

    from builders.core.errors import BabelforgeError

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
    from builders.core.errors import BabelforgeError
    from builders.mvl_sib.geo import Candidate

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
    from builders.core.errors import BabelforgeError
    from builders.mvl_sib.geo import LanguageArea

    parts: dict[str, tuple[set, set, set]] = {}
    for line, row in _read_csv(path, ("lang", "region", "country", "continent")):
        if not row["lang"]:
            raise BabelforgeError(f"{path}:{line}: empty lang")
        if not (row["region"] or row["country"] or row["continent"]):
            raise BabelforgeError(f"{path}:{line}: {row['lang']} names no region, country or continent")
        if row["region"] and not row["country"]:
            raise BabelforgeError(f"{path}:{line}: region {row['region']!r} needs its country "
                                  "(region names repeat across countries)")
        regions, countries, continents = parts.setdefault(row["lang"], (set(), set(), set()))
        for values, value in ((regions, _region_key(row)), (countries, row["country"]),
                              (continents, row["continent"])):
            if value:
                values.add(value)
    return {lang: LanguageArea.of(*sets) for lang, sets in parts.items()}


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from builders.core.io import sha256_file, write_table
    from builders.core.progress import info
    from builders.core.provenance import provenance
    from builders.mvl_sib.geo import LEVELS, level_counts, select_geo_pool

    candidates = read_candidates(args.candidates)
    areas = read_areas(args.areas)
    selections = select_geo_pool(candidates, areas, args.per_language, args.seed)
    table = pd.DataFrame(
        [(s.lang, s.image_id, s.level, s.rank) for s in selections], columns=["lang", "image_id", "level", "rank"]
    )
    record = provenance(
        "geo_pool", {"per_language": args.per_language, "seed": args.seed},
        sources={"candidates": {"path": str(args.candidates), "sha256": sha256_file(args.candidates)},
                 "areas": {"path": str(args.areas), "sha256": sha256_file(args.areas)}},
    )
    write_table(table, args.out, sort_by=["lang", "rank"], provenance=record)
    counts = level_counts(selections)
    totals = {level: sum(per_lang[level] for per_lang in counts.values()) for level in LEVELS}
    print(f"geo_pool: {len(counts)} languages × {args.per_language} images -> {args.out}")
    print("  by level: " + ", ".join(f"{level} {count}" for level, count in totals.items()))
    for lang, per_level in sorted(counts.items()):
        if per_level["area"] < args.per_language:
            print(f"  {lang}: " + ", ".join(f"{level} {n}" for level, n in per_level.items() if n))
    info(f"geo_pool: wrote {len(table)} selections")
    return 0
