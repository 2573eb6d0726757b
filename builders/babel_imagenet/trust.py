"""Per-source trust learned from evidence: how often each label source of a language is right,
estimated from cross-source agreement and from reviewed labels, and the source order it gives.

A source's *first candidate* in a class (its best form, in its own order) counts as right when
another source of the class gives the same form: where two or more sources cover a class, that is
one opportunity, and an agreement when it matches. A reviewed label (`accept` with its label,
`replace`) is a stronger witness: every source of the class gets REVIEW_WEIGHT opportunities, and
as many agreements when its first candidate is the reviewed label. The estimate is smoothed toward
the source kind's pooled estimate over all languages (PRIOR_STRENGTH pseudo-opportunities), so a
language with few shared classes does not flip its order on noise; a language with fewer than
MIN_EVIDENCE classes of evidence keeps the hand-written order (`labels.source_priority`).

Forms are compared casefolded and with Hebrew and Arabic vowel marks folded (`comparison_key`):
Wiktionary writes niqqud and harakat, the wordnets do not, and the same word would never match.
Only the comparison folds them; labels keep their text. Pure: plain data in, plain data out.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

REVIEW_WEIGHT = 5  # a reviewed label counts as this many cross-source comparisons
PRIOR_STRENGTH = 20  # pseudo-opportunities of the pooled estimate of the source's kind
MIN_EVIDENCE = 30  # classes with two or more sources (or a review) a language needs for a learned order
# A source goes ahead of one the hand-written order puts first only when its estimate is higher by more
# than this; closer estimates are a tie the hand-written order breaks (Norwegian Bokmål: 0.805 and 0.804).
ORDER_MARGIN = 0.02
EVIDENCE = "evidence"
PARAMS = "params"


def is_folded_mark(char: str) -> bool:
    """A Hebrew point or accent (niqqud, cantillation), an Arabic vowel sign (harakat, superscript
    alef, Quranic annotation) or the Arabic tatweel: writing a word with or without them is the
    same word. Hamza and madda are letters' parts and stay."""
    code = ord(char)
    return (
        0x0591 <= code <= 0x05C7
        and code not in (0x05BE, 0x05C0, 0x05C3, 0x05C6)  # maqaf, paseq, sof pasuq, nun hafukha: punctuation
        or 0x064B <= code <= 0x0652
        or code in (0x0640, 0x0670)
        or 0x06D6 <= code <= 0x06ED
        and code not in (0x06DD, 0x06DE, 0x06E5, 0x06E6, 0x06E9)  # signs and small letters that are not marks
        or 0x08D3 <= code <= 0x08FF
        and code != 0x08E2
    )


def comparison_key(text: str) -> str:
    """The form two sources must share to agree: casefolded, Hebrew and Arabic vowel marks folded
    (`שֻׁלְחָן` and `שולחן` stay different spellings; `שֻׁלְחָן` and `שלחן` are one word)."""
    return "".join(char for char in text if not is_folded_mark(char)).casefold()


@dataclass(frozen=True)
class ClassSources:
    """What each source of one (language, class) offers: its first candidate and all its forms,
    as comparison keys."""

    lang: str
    synset: str
    first: Mapping[str, str]  # source -> its first candidate's key
    forms: Mapping[str, frozenset[str]]  # source -> every key it gives


@dataclass(frozen=True)
class SourceTrust:
    """One source's estimated precision in one language."""

    lang: str
    source: str
    agreements: int  # its first candidate given by another source of the class
    opportunities: int  # classes where two or more sources give candidates
    reviewed: int  # reviewed classes it covers
    reviewed_right: int  # ... where its first candidate is the reviewed label
    prior: float  # the pooled estimate of the source's kind over all languages
    precision: float  # smoothed estimate


def source_kind(source: str) -> str:
    return source.split(":", 1)[0]


def priority_index(source: str, priority: Sequence[str]) -> int:
    """Position of a source in `priority` by full name (`omw:ell`) or kind (`omw`); unlisted: last."""
    for index, name in enumerate(priority):
        if name in (source, source_kind(source)):
            return index
    return len(priority)


def class_sources(lang: str, synset: str, ranked: Mapping[str, Sequence[str]]) -> ClassSources:
    """ClassSources from {source: its forms' texts in its own order (best first)}."""
    keys = {source: [comparison_key(text) for text in texts] for source, texts in ranked.items() if texts}
    return ClassSources(lang, synset, {s: k[0] for s, k in keys.items()}, {s: frozenset(k) for s, k in keys.items()})


def tallies(
    classes: Sequence[ClassSources], reviewed: Mapping[tuple[str, str], str]
) -> dict[tuple[str, str], list[int]]:
    """(lang, source) -> [agreements, opportunities, reviewed, reviewed_right]. `reviewed`:
    (lang, synset) -> the label a person accepted or set."""
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for group in classes:
        truth = reviewed.get((group.lang, group.synset))
        for source, first in group.first.items():
            entry = counts[(group.lang, source)]
            others = [keys for other, keys in group.forms.items() if other != source]
            if others:
                entry[1] += 1
                entry[0] += any(first in keys for keys in others)
            if truth is not None:
                entry[2] += 1
                entry[3] += first == comparison_key(truth)
    return counts


def estimate_trust(
    classes: Sequence[ClassSources], reviewed: Mapping[tuple[str, str], str] | None = None
) -> list[SourceTrust]:
    """Each (language, source)'s smoothed precision, sorted by (lang, source)."""
    counts = tallies(classes, reviewed or {})
    pooled: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for (_lang, source), (agree, opp, rev, right) in counts.items():
        pooled[source_kind(source)][0] += agree + REVIEW_WEIGHT * right
        pooled[source_kind(source)][1] += opp + REVIEW_WEIGHT * rev
    prior = {kind: (hits / total if total else 0.5) for kind, (hits, total) in pooled.items()}
    result = []
    for (lang, source), (agree, opp, rev, right) in sorted(counts.items()):
        base = prior[source_kind(source)]
        hits, total = agree + REVIEW_WEIGHT * right, opp + REVIEW_WEIGHT * rev
        precision = (hits + PRIOR_STRENGTH * base) / (total + PRIOR_STRENGTH)
        result.append(SourceTrust(lang, source, agree, opp, rev, right, round(base, 4), round(precision, 4)))
    return result


def evidence_classes(classes: Sequence[ClassSources], reviewed: Mapping[tuple[str, str], str]) -> dict[str, int]:
    """lang -> classes that say something about its sources: two or more sources, or a review."""
    counts: dict[str, int] = defaultdict(int)
    for group in classes:
        counts[group.lang] += len(group.first) > 1 or (group.lang, group.synset) in reviewed
    return dict(counts)


def learned_orders(
    trust: Sequence[SourceTrust],
    evidence: Mapping[str, int],
    fallback: Mapping[str, Sequence[str]] | None = None,
    min_evidence: int = MIN_EVIDENCE,
) -> dict[str, tuple[str, ...]]:
    """lang -> its sources by estimated precision, best first, for the languages with at least
    `min_evidence` classes of evidence (the others are left out: their hand-written order stands).
    Estimates within ORDER_MARGIN of each other are a tie, broken by the hand-written order
    (`fallback[lang]`, by full name or kind), then by name."""
    by_lang: dict[str, list[SourceTrust]] = defaultdict(list)
    for entry in trust:
        by_lang[entry.lang].append(entry)
    orders = {}
    for lang, entries in sorted(by_lang.items()):
        if evidence.get(lang, 0) < min_evidence:
            continue
        written = (fallback or {}).get(lang, ())

        def before(a: SourceTrust, b: SourceTrust, written=written) -> int:
            if abs(a.precision - b.precision) > ORDER_MARGIN:
                return -1 if a.precision > b.precision else 1
            return (
                -1
                if (priority_index(a.source, written), a.source) < (priority_index(b.source, written), b.source)
                else 1
            )

        # sources start in the hand-written order, so the sort moves one only past a clearly worse one
        start = sorted(entries, key=lambda e: (priority_index(e.source, written), e.source))
        orders[lang] = tuple(entry.source for entry in sorted(start, key=functools.cmp_to_key(before)))
    return orders


@dataclass(frozen=True)
class LearnedPriority:
    """What the evidence says for a build: every estimate, the classes of evidence per language,
    and the learned order of the languages with enough of it."""

    estimates: tuple[SourceTrust, ...]
    evidence: Mapping[str, int]
    orders: Mapping[str, tuple[str, ...]]

    def order_from(self, lang: str) -> str:
        return EVIDENCE if lang in self.orders else PARAMS


def learn_priority(
    classes: Sequence[ClassSources],
    reviewed: Mapping[tuple[str, str], str] | None = None,
    fallback: Mapping[str, Sequence[str]] | None = None,
    min_evidence: int = MIN_EVIDENCE,
) -> LearnedPriority:
    """The estimates and learned orders of a build's classes (`fallback`: lang -> hand-written order)."""
    reviewed = reviewed or {}
    estimates = estimate_trust(classes, reviewed)
    evidence = evidence_classes(classes, reviewed)
    return LearnedPriority(tuple(estimates), evidence, learned_orders(estimates, evidence, fallback, min_evidence))
