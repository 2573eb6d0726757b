"""Rules 3-6 of the label procedure (labels.py) for one (class, language): English and
machine-translated forms out, low-precision sources last (`split_forms`), then the distinct labels
left ranked best first (`rank_candidates`) and why the first won (`rank_reason`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from babelforge.babel_imagenet.forms import Form, english_key
from babelforge.babel_imagenet.label_rules import Ranking
from babelforge.babel_imagenet.trust import priority_index
from babelforge.core.scripts import dominant_script

# Endings the zoological and botanical codes give names above the genus (family, subfamily,
# superfamily, order of birds and fishes, plant family): a Latin word with one is a taxon name.
TAXON_SUFFIXES = ("idae", "inae", "oidea", "iformes", "aceae")


def is_scientific_name(text: str, taxa: Iterable[str]) -> bool:
    """A taxon's Latin name rather than a vernacular one.

    `taxa` are the class's `rank:Name` (the wordnet artifact's `taxa`). Scientific: a name above
    the genus (`Sphyrnidae`), any Latin word with a family/order ending (`Cicadellidae`), or two or
    three plain Latin words starting with the class's genus (`cavia porcellus`, `Canis lupus
    dingo`). A genus name alone is not enough: `lynx`, `python`, `gorilla` are vernacular too.
    """
    words = text.casefold().split()
    if not words or not all(word.isascii() and word.isalpha() for word in words):
        return False
    ranked = [item.split(":", 1) for item in taxa]
    if len(words) == 1:
        higher = {name.casefold() for rank, name in ranked if rank not in ("genus", "subgenus")}
        return words[0] in higher or words[0].endswith(TAXON_SUFFIXES)
    genera = {name.casefold() for rank, name in ranked if rank in ("genus", "subgenus")}
    return len(words) <= 3 and words[0] in genera


@dataclass(frozen=True)
class Candidate:
    """One distinct label (casefolded) of a class in a language, and who gives it."""

    form: Form  # the form that represents it (best source, then source order)
    sources: tuple[str, ...]  # distinct sources giving it, sorted
    scientific: bool
    order: tuple  # the ranking key (smaller is better)
    zipf: float | None = None  # word frequency in the language (frequency.py); None: not looked up

    @property
    def label(self) -> str:
        return self.form.label

    @property
    def key(self) -> str:
        return self.form.key


# What decided between the chosen candidate and the next one, by the first part of the
# agreement key that differs.
# rank_reason where the source order decided and it was learned from the sources' agreement (trust.py)
LEARNED_PRIORITY = "learned_priority"
AGREEMENT_REASONS = (
    "vernacular",
    "agreement",
    "specificity",
    "short_form",
    "frequency_unused",
    "frequency",
    "polysemy",
    "source_priority",
    "source_order",
    "source_order",
    "source_order",
)


# A candidate loses on frequency only to one at least this many Zipf units (log10 uses per billion
# words) more common: tenfold. A smaller difference is noise in the counts next to the source order.
FREQUENCY_MARGIN = 1.0


def frequency_keys(zipfs: Sequence[float | None]) -> list[tuple[bool, bool]]:
    """The frequency part of the agreement key of equally supported candidates: (no recorded use
    while another has some, tenfold rarer than the most common). None (language not covered, a
    phrase, or the rule off) is no evidence: (False, False)."""
    known = [z for z in zipfs if z is not None]
    top = max(known, default=0.0)
    return [(False, False) if z is None else (z <= 0.0 < top, 0.0 < z <= top - FREQUENCY_MARGIN) for z in zipfs]


@dataclass(frozen=True)
class ClassEvidence:
    """What the specificity, short-form and polysemy rules know about one (class, language); the
    defaults switch them off."""

    # casefolded label -> another class of the language gives it more firmly (more sources), or
    # it names a broader WordNet synset of the class
    elsewhere: Callable[[str], bool] | None = None
    compound: bool = False  # the English name has several words (block plane, cathode-ray oscilloscope)
    ambiguous: bool = False  # the class's English lemmas name other WordNet synsets (lighter: light.a.01)


def is_one_word(text: str) -> bool:
    return len(text.split()) == 1


# Scripts that write a word in one or two characters (`童帽` beside `帽`): there any longer word ending
# with a candidate has a modifier in front; elsewhere it takes SHORT_FORM_MODIFIER characters.
CHARACTER_WORD_SCRIPTS = frozenset({"Hani", "Hira", "Kana"})
SHORT_FORM_MODIFIER = 3


def ends_after_modifier(longer: str, key: str) -> bool:
    """`longer` is `key` with a modifier in front (`oscilloscoop`, `scoop`), not a spelling
    variant (`harmónica`, `armónica`) or an inflectional prefix (Volapük `hileon`, `leon`)."""
    if not longer.endswith(key) or longer == key:
        return False
    minimum = 1 if dominant_script(key) in CHARACTER_WORD_SCRIPTS else SHORT_FORM_MODIFIER
    return len(longer) - len(key) >= minimum


def short_form_keys(candidates: Sequence[Candidate]) -> list[bool]:
    """Which candidates look like a short form of the class's compound English name: one word
    from one source while another candidate has more words (`couleuvre` beside `couleuvre
    rayée`) or is the word with a modifier in front (`scoop` beside `oscilloscoop`, `Natter`
    beside `Strumpfbandnatter`)."""
    keys = [candidate.key for candidate in candidates]
    return [
        len(candidate.sources) == 1
        and is_one_word(key)
        and any(other != key and (not is_one_word(other) or ends_after_modifier(other, key)) for other in keys)
        for candidate, key in zip(candidates, keys)
    ]


def needs_support(candidate: Candidate, keys: Iterable[str]) -> bool:
    """In a class whose English lemma has other senses, a candidate only one source gives may
    translate one of those (fra *block plane* -> `appareil`, arb *lighter* -> `أخف`). Support is
    another source, or being a phrase that narrows another candidate of the class (`sampul
    surat`, "letter envelope", beside `sampul`). Any phrase is not (`König der Tiere` beside
    `Löwe`, for *lion*, which also names a celebrity), nor is a common word: the other sense is
    as common (`أخف` is more common than `ولاعة`)."""
    if len(candidate.sources) > 1:
        return False
    words = candidate.key.split()
    return len(words) == 1 or not any(key != candidate.key and key in words for key in keys)


def rank_candidates(
    forms: Sequence[Form],
    ranking: Ranking,
    priority: Sequence[str] = (),
    taxa: Sequence[str] = (),
    zipf: Callable[[str], float | None] | None = None,
    evidence: ClassEvidence = ClassEvidence(),
) -> list[Candidate]:
    """The distinct labels of one (class, language), best first, under `ranking`. `agreement`
    ranks by: vernacular before scientific; more sources; specific to the class before given
    more firmly by another class or naming a broader synset (`evidence.elsewhere`); not a short
    form of a compound name (`evidence.compound`); then `zipf` (label -> word frequency): among
    equally supported candidates a word with recorded use beats one without, and a common word
    a rare one; then, where the English lemma is ambiguous (`evidence.ambiguous`), supported
    (another source, or a phrase narrowing another candidate) before not; then source priority
    and order."""

    def position(form: Form) -> tuple:
        return (form.routed_from is not None, form.rank, form.part)

    grouped: dict[str, list[Form]] = defaultdict(list)
    for form in forms:
        grouped[form.key].append(form)
    candidates = []
    for group in grouped.values():
        sources = tuple(sorted({form.source for form in group}))
        if ranking == "first":
            best = min(group, key=position)
            order: tuple = position(best)
        else:
            best = min(group, key=lambda form: (priority_index(form.source, priority), *position(form)))
            order = (-len(sources), priority_index(best.source, priority), *position(best))
        frequency = zipf(best.label) if zipf and ranking != "first" else None
        candidates.append(Candidate(best, sources, is_scientific_name(best.label, taxa), order, frequency))
    if ranking == "first":
        return sorted(candidates, key=lambda candidate: candidate.order)
    elsewhere = [bool(evidence.elsewhere and evidence.elsewhere(c.key)) for c in candidates]
    short = short_form_keys(candidates) if evidence.compound else [False] * len(candidates)
    keys = [c.key for c in candidates]
    unsupported = [evidence.ambiguous and needs_support(c, keys) for c in candidates]
    # Frequency is compared among equally supported candidates (the same key up to here).
    support: dict[tuple, list[int]] = defaultdict(list)
    for index, candidate in enumerate(candidates):
        head = (candidate.scientific, candidate.order[0], elsewhere[index], short[index])
        support[head].append(index)
    keyed = list(candidates)
    for head, members in support.items():
        for index, key in zip(members, frequency_keys([candidates[i].zipf for i in members])):
            candidate = candidates[index]
            keyed[index] = replace(candidate, order=(*head, *key, unsupported[index], *candidate.order[1:]))
    return sorted(keyed, key=lambda candidate: candidate.order)


def rank_reason(candidates: Sequence[Candidate], ranking: Ranking) -> str:
    """Why the first candidate won: `only`, `first`, or the agreement rule that told it from the next."""
    if len(candidates) == 1:
        return "only"
    if ranking == "first":
        return "first"
    first, second = candidates[0].order, candidates[1].order
    return next(AGREEMENT_REASONS[i] for i, (a, b) in enumerate(zip(first, second)) if a != b)


def split_forms(
    forms: Iterable[Form], english_keys: frozenset[str], low_precision_sources: frozenset[str]
) -> tuple[list[Form], list[Form], int, int]:
    """Rules 3-5: (preferred forms, low-precision forms, English forms dropped, machine-translated dropped)."""
    n_english = n_mt = 0
    preferred: list[Form] = []
    low_precision: list[Form] = []
    for form in forms:
        if english_key(form.label) in english_keys:
            n_english += 1
        elif form.is_translation:
            n_mt += 1
        elif form.source in low_precision_sources:
            low_precision.append(form)
        else:
            preferred.append(form)
    return preferred, low_precision, n_english, n_mt
