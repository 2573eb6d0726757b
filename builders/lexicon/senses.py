"""The sense model and the protocol every multilingual sense source follows."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

# Column order of data/senses/<source>.parquet
SENSE_COLUMNS = ("synset", "lang", "lemma", "source", "is_translation", "rank")


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
