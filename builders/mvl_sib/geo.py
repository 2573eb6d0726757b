"""Geo-diverse image pools, selected the way Crossmodal-3600 (XM3600) selected its images.

Each language gets N images taken, as far as possible, where the language is spoken.
Languages are served from the smallest candidate pool up, so a language with few local
images is not robbed of them by a language with many. For each language the selection
backs off level by level — the language's own area (its regions), then its countries,
then its continents, then anywhere — and no image is ever given to two languages. The
level an image was taken at is recorded with it.

Pure: plain data in, plain data out; the CSV reading lives in the stage module.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from babelforge.core.errors import BabelforgeError

LEVELS: tuple[str, ...] = ("area", "country", "continent", "anywhere")


@dataclass(frozen=True)
class Candidate:
    image_id: str
    region: str
    country: str
    continent: str


@dataclass(frozen=True)
class LanguageArea:
    """Where a language is spoken: its regions, and the countries and continents they lie in."""

    regions: frozenset[str]
    countries: frozenset[str]
    continents: frozenset[str]

    @classmethod
    def of(cls, regions: Iterable[str], countries: Iterable[str], continents: Iterable[str]) -> LanguageArea:
        return cls(frozenset(regions), frozenset(countries), frozenset(continents))


@dataclass(frozen=True)
class Selection:
    lang: str
    image_id: str
    level: str  # one of LEVELS
    rank: int  # 0..n-1 within the language, in selection order


def level_of(candidate: Candidate, area: LanguageArea) -> int:
    """The closest back-off level at which `candidate` serves a language with `area`."""
    if candidate.region in area.regions:
        return 0
    if candidate.country in area.countries:
        return 1
    if candidate.continent in area.continents:
        return 2
    return 3


def _order_key(seed: int, lang: str, image_id: str) -> int:
    # A per-language, seeded but order-independent tie-break among images of one level.
    return zlib.crc32(f"{seed}\t{lang}\t{image_id}".encode())


def select_geo_pool(
    candidates: Sequence[Candidate],
    areas: Mapping[str, LanguageArea],
    per_language: int,
    seed: int = 0,
) -> list[Selection]:
    """Select `per_language` distinct images for every language of `areas` (see module doc).

    Languages are processed by ascending size of their own-area candidate pool (ties by
    language key). Within a level, images are taken in a seeded pseudo-random order.
    Raises when the candidates cannot cover every language.
    """
    if per_language < 1:
        raise BabelforgeError(f"geo pool: per_language must be at least 1, got {per_language}")
    ids = [c.image_id for c in candidates]
    if len(set(ids)) != len(ids):
        duplicate = next(i for i in ids if ids.count(i) > 1)
        raise BabelforgeError(f"geo pool: image {duplicate!r} is listed twice among the candidates")
    needed = per_language * len(areas)
    if needed > len(candidates):
        raise BabelforgeError(
            f"geo pool: {len(areas)} languages × {per_language} images need {needed} candidates, "
            f"only {len(candidates)} given"
        )

    pool_size = {lang: sum(c.region in area.regions for c in candidates) for lang, area in areas.items()}
    used: set[str] = set()
    selections: list[Selection] = []
    for lang in sorted(areas, key=lambda code: (pool_size[code], code)):
        area = areas[lang]
        ranked = sorted(
            (c for c in candidates if c.image_id not in used),
            key=lambda c: (level_of(c, area), _order_key(seed, lang, c.image_id), c.image_id),
        )
        for rank, candidate in enumerate(ranked[:per_language]):
            used.add(candidate.image_id)
            selections.append(Selection(lang, candidate.image_id, LEVELS[level_of(candidate, area)], rank))
    return selections


def level_counts(selections: Iterable[Selection]) -> dict[str, dict[str, int]]:
    """Per language: how many images were taken at each back-off level."""
    counts: dict[str, dict[str, int]] = {}
    for selection in selections:
        per_level = counts.setdefault(selection.lang, {level: 0 for level in LEVELS})
        per_level[selection.level] += 1
    return counts
