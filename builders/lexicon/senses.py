"""The sense model and the protocol every multilingual sense source follows."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from babelforge.core.errors import BabelforgeError

# Column order of data/senses/<source>.parquet
SENSE_COLUMNS = ("synset", "lang", "lemma", "source", "is_translation", "rank")
# The sense sources `babelforge senses` builds from (senses.source), one file each in paths.senses
SENSE_SOURCES = ("omw", "babelnet")


@dataclass(frozen=True)
class Sense:
    """One lemma of a WordNet 3.0 synset in one language.

    synset: WordNet 3.0 offset id, `01440764-n` (the ImageNet wnid n01440764).
    lang: registry key (`deu_Latn`).
    source: who gave the sense: `omw:<project>`, `wikt`, `cldr`, or BabelNet's source name
        (`WN`, `WIKI`, `WNTR`, `WIKITR`, `WIKIDATA`, `WIKIRED`, ...).
    is_translation: the source marks the sense as an automatic translation.
    rank: position in the source's own order for this synset and language (0 = first).
    """

    synset: str
    lang: str
    lemma: str
    source: str
    is_translation: bool
    rank: int


@runtime_checkable
class SenseSource(Protocol):
    """Yields the senses of the given synsets, per language in the source's own order."""

    name: str

    def senses(self, synsets: Iterable[str], langs: Iterable[str] | None = None) -> Iterator[Sense]:
        """Senses of `synsets` (WordNet 3.0 offset ids) in `langs` (registry keys; None = all)."""
        ...


def wnid_to_synset(wnid: str) -> str:
    """ImageNet wnid `n01440764` -> WordNet 3.0 offset id `01440764-n`."""
    if len(wnid) != 9 or not wnid[1:].isdigit() or wnid[0] not in "nvasr":
        raise ValueError(f"not an ImageNet wnid: {wnid!r} (expected a letter and 8 digits, e.g. n01440764)")
    return f"{wnid[1:]}-{wnid[0]}"


def synset_to_wnid(synset: str) -> str:
    offset, pos = synset.split("-")
    return f"{pos}{offset}"


def senses_path(folder, source: str) -> Path:
    """The senses of `source` in the senses stage's output folder: `<folder>/<source>.parquet`."""
    return Path(folder) / f"{source}.parquet"


def built_senses(folder) -> Path:
    """The senses file the senses stage wrote into `folder`: its name says which source it read
    (the stage writes one, for its profile's `senses.source`). An error when there is none, or
    more than one (a stale file from another source: the reader cannot tell which is meant)."""
    found = [path for path in (senses_path(folder, source) for source in SENSE_SOURCES) if path.is_file()]
    if not found:
        names = " or ".join(f"{source}.parquet" for source in SENSE_SOURCES)
        raise BabelforgeError(f"{folder}: no senses ({names}); run `babelforge senses` first")
    if len(found) > 1:
        raise BabelforgeError(
            f"{folder}: senses of {len(found)} sources ({', '.join(path.name for path in found)}); "
            "the senses stage writes one: remove the stale file or rerun `dvc repro senses`"
        )
    return found[0]
