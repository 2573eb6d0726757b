"""Babel-ImageNet label selection: the paper's procedure and the rules the open data needs, as pure functions.

For each (class, language):
  1. clean every lemma (`cleaning.clean_lemma`): markup and placeholders out, one form per name;
  2. route every form by its script: a form whose script is not the key's own goes to the
     registry key of the same language in that script (`hbs` Cyrillic -> `srp_Cyrl`); with no
     such key it stays when the registry expects the script for the language, else it is dropped;
     before routing, a span in a script the language does not use is stripped or the form flagged,
     and after it, a shared wordnet's form of the sibling language is removed (`purity.py`);
  3. drop a form whose casefolded text equals an English lemma of *any* of the 1,000 classes
     (an untranslated English word is not a label in that language);
  4. drop it if the source marks it as an automatic translation;
  5. skip forms from low-precision sources (BabelNet's WIKIRED, WIKIDATA_ALIAS) unless no
     other form is left;
  6. rank what is left: `first` (the paper: the first form in the source's order) or
     `agreement` (a vernacular name before a scientific one, then the forms more distinct
     sources give, then `source_priority` (or the order the sources' agreement gives, trust.py),
     then the source's order);
  7. optionally, where one label names several classes of a language, give each class that has
     one a candidate no other class of the language uses (the class holding the label most
     firmly keeps it).
A form that is both English and a translation counts as English (rule 3 comes first).
Languages keep their labels only with at least `min_classes` classes.
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from babelforge.babel_imagenet.cleaning import CLEAN_KINDS, DROP_KINDS, clean_lemma, normalise_lemma
from babelforge.babel_imagenet.confusables import repair_forms
from babelforge.babel_imagenet.purity import foreign_forms, strip_script_spans
from babelforge.babel_imagenet.trust import ClassSources, LearnedPriority, class_sources, learn_priority, priority_index
from babelforge.core.errors import BabelforgeError
from babelforge.core.languages import ENGLISH
from babelforge.core.scripts import dominant_script, expand_script
from babelforge.core.text_taggers import is_latin_acronym
from babelforge.lexicon.senses import Sense

DEFAULT_LOW_PRECISION_SOURCES = frozenset({"WIKIRED", "WIKIDATA_ALIAS"})
# Resource groups by number of classes (upper bounds inclusive); reproduces the paper's
# 17/32/35/16 split of its 100 evaluation languages.
GROUP_BOUNDS = (("very-low", 100), ("low", 333), ("mid", 666), ("high", 1000))
Ranking = Literal["first", "agreement"]
# Per-language counts of what cleaning and routing did (columns of languages.parquet).
TALLY_COLUMNS = (
    *(f"n_dropped_{kind}" for kind in DROP_KINDS),
    "n_dropped_script",
    "n_dropped_other_language",
    *(f"n_cleaned_{kind}" for kind in CLEAN_KINDS),
    "n_cleaned_script_span",
    "n_cleaned_confusable",
    "n_mixed_script",
    "n_routed_out",
    "n_routed_in",
)
# Endings the zoological and botanical codes give names above the genus (family, subfamily,
# superfamily, order of birds and fishes, plant family): a Latin word with one is a taxon name.
TAXON_SUFFIXES = ("idae", "inae", "oidea", "iformes", "aceae")


def english_key(text: str) -> str:
    """The form compared against English lemmas: normalised and casefolded."""
    return normalise_lemma(text).casefold()


def english_lemma_keys(lemmas_per_class: Iterable[Iterable[str]]) -> frozenset[str]:
    return frozenset(english_key(lemma) for lemmas in lemmas_per_class for lemma in lemmas)


# --- 1. cleaning ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Form:
    """One clean form of a sense, in the language it ended up in."""

    synset: str
    lang: str
    label: str
    raw: str  # the lemma as the source wrote it
    source: str
    is_translation: bool
    rank: int  # the sense's rank in its source order (in its own language)
    part: int = 0  # position among the forms one raw lemma gave
    routed_from: str | None = None
    cleaned: tuple[str, ...] = ()
    flag: str = ""  # `mixed_script`: a span in a script the language does not use, not strippable (purity.py)

    @property
    def key(self) -> str:
        return self.label.casefold()


def clean_senses(senses: Iterable[Sense], tally: Counter) -> list[Form]:
    """The clean forms of the senses; dropped and cleaned lemmas counted in `tally[(lang, column)]`."""
    forms = []
    for sense in senses:
        result = clean_lemma(sense.lemma)
        for kind in result.cleaned:
            tally[(sense.lang, f"n_cleaned_{kind}")] += 1
        if result.dropped:
            tally[(sense.lang, f"n_dropped_{result.dropped}")] += 1
        forms.extend(
            Form(
                sense.synset,
                sense.lang,
                text,
                sense.lemma,
                sense.source,
                sense.is_translation,
                sense.rank,
                part,
                cleaned=result.cleaned,
            )
            for part, text in enumerate(result.forms)
        )
    return forms


# --- 2. script routing -----------------------------------------------------------------------------


class ScriptRouter:
    """Where a form goes by its script: its own key, another key of the language, or nowhere.

    A form's script is its dominant script (`babelforge.core.scripts`). It stays when that is the
    key's own script (`Hans` covers Han), or when it is a short Latin acronym (`GSM`, as the audit
    allows). Otherwise it goes to `routes[lang][script]` when given (macro-languages: `hbs_Latn`
    Cyrillic -> `srp_Cyrl`, `kur_Latn` Arabic -> `ckb_Arab`), else to the registry key with the
    same ISO 639-3 code written in that script (one without a variant suffix, when exactly one
    exists). With no target it stays if the registry expects that script for the language
    (`Language.expected_scripts`: Ojibwe is written in syllabics and in Latin) and is dropped if not.
    """

    def __init__(self, languages, routes: Mapping[str, Mapping[str, str]] | None = None):

        self.languages = languages
        self.routes = {lang: dict(by_script) for lang, by_script in (routes or {}).items()}
        for lang, by_script in self.routes.items():
            for script, target in by_script.items():
                if lang not in languages or target not in languages:
                    missing = lang if lang not in languages else target
                    raise BabelforgeError(
                        f"labels.script_routes: {missing} is not a registry key "
                        "(resources/languages.tsv); name keys such as srp_Cyrl"
                    )
                expected = languages.get(target).expected_scripts
                if script not in set().union(*(expand_script(s) for s in expected)):
                    raise BabelforgeError(
                        f"labels.script_routes.{lang}.{script}: {target} is not written in "
                        f"{script} (registry scripts {','.join(expected)})"
                    )
        by_script: dict[tuple[str, str], list[str]] = defaultdict(list)
        for language in languages:
            if "-" not in language.key:
                for script in expand_script(language.script):
                    by_script[(language.iso639_3, script)].append(language.key)
        self._same_language = {where: keys[0] for where, keys in by_script.items() if len(keys) == 1}

    def route(self, lang: str, text: str) -> str | None:
        """The key the form belongs to (`lang` itself when it stays), None when it is dropped."""

        script = dominant_script(text)
        language = self.languages.get(lang)
        if script is None or script in expand_script(language.script):
            return lang
        if script == "Latn" and is_latin_acronym(text):
            return lang
        target = self.routes.get(lang, {}).get(script) or self._same_language.get((language.iso639_3, script))
        if target and target != lang:
            return target
        if script in set().union(*(expand_script(s) for s in language.expected_scripts)):
            return lang
        return None


def route_forms(forms: Iterable[Form], router: ScriptRouter, tally: Counter) -> list[Form]:
    """Forms moved to the key their script belongs to; the others dropped. Counted in `tally`."""
    routed = []
    for form in forms:
        target = router.route(form.lang, form.label)
        if target is None:
            tally[(form.lang, "n_dropped_script")] += 1
        elif target != form.lang:
            tally[(form.lang, "n_routed_out")] += 1
            tally[(target, "n_routed_in")] += 1
            routed.append(replace(form, lang=target, routed_from=form.lang))
        else:
            routed.append(form)
    return routed


# --- 3-6. choosing one label per class ------------------------------------------------------------


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


@dataclass(frozen=True)
class LabelChoice:
    synset: str
    lang: str
    label: str | None  # None: every form was dropped
    source: str | None
    rank: int | None  # the chosen sense's rank in its source order
    n_senses: int  # clean forms of the class in the language (after routing)
    n_dropped_english: int
    n_dropped_mt: int
    n_dropped_low_precision: int  # low-precision forms passed over for a better one
    used_low_precision: bool
    raw_lemma: str | None = None
    routed_from: str | None = None
    n_sources: int = 0  # distinct sources that give the chosen label
    # only | first | vernacular | specificity | agreement | short_form | polysemy | frequency_unused |
    # frequency | source_priority | learned_priority (a learned source order) | source_order | unique;
    # purity | script_span (a form of another language or with a foreign-script span would have won) |
    # mixed_script (kept with such a span: the class has nothing else)
    rank_reason: str = ""
    ambiguous_english: bool = False  # the class's English lemmas name other synsets (polysemy rule on)
    candidates: tuple[Candidate, ...] = field(default=(), compare=False, repr=False)

    @property
    def ambiguous_source(self) -> bool:
        """The audit's `ambiguous_source`: the English lemma has other senses, the class's sources
        disagree (candidates from several sources) and the label has no support (one source, not a
        phrase narrowing another candidate). Where one source covers a class nothing could support
        its label: not flagged, or most labels of a one-source language would be."""
        chosen = next((c for c in self.candidates if self.label and c.key == self.label.casefold()), None)
        if not (self.ambiguous_english and chosen and needs_support(chosen, [c.key for c in self.candidates])):
            return False
        return len({source for candidate in self.candidates for source in candidate.sources}) > 1


def choose_label(
    forms: Sequence[Form],
    english_keys: frozenset[str],
    low_precision_sources: frozenset[str] = DEFAULT_LOW_PRECISION_SOURCES,
    ranking: Ranking = "first",
    priority: Sequence[str] = (),
    taxa: Sequence[str] = (),
    zipf: Callable[[str], float | None] | None = None,
    evidence: ClassEvidence = ClassEvidence(),
) -> LabelChoice:
    """Apply rules 3-6 to the forms of one (synset, language)."""
    if not forms:
        raise ValueError("choose_label needs at least one form")
    synset, lang = forms[0].synset, forms[0].lang
    preferred, low_precision, n_english, n_mt = split_forms(forms, english_keys, low_precision_sources)
    candidates = rank_candidates(preferred or low_precision, ranking, priority, taxa, zipf, evidence)
    chosen = candidates[0] if candidates else None
    return LabelChoice(
        synset=synset,
        lang=lang,
        label=chosen.label if chosen else None,
        source=chosen.form.source if chosen else None,
        rank=chosen.form.rank if chosen else None,
        n_senses=len(forms),
        n_dropped_english=n_english,
        n_dropped_mt=n_mt,
        n_dropped_low_precision=len(low_precision) if preferred else 0,
        used_low_precision=bool(chosen) and not preferred,
        raw_lemma=chosen.form.raw if chosen else None,
        routed_from=chosen.form.routed_from if chosen else None,
        n_sources=len(chosen.sources) if chosen else 0,
        rank_reason=rank_reason(candidates, ranking) if chosen else "",
        ambiguous_english=evidence.ambiguous,
        candidates=tuple(candidates),
    )


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


# --- 7. duplicates -----------------------------------------------------------------------------


def with_candidate(choice: LabelChoice, candidate: Candidate, reason: str) -> LabelChoice:
    return replace(
        choice,
        label=candidate.label,
        source=candidate.form.source,
        rank=candidate.form.rank,
        raw_lemma=candidate.form.raw,
        routed_from=candidate.form.routed_from,
        n_sources=len(candidate.sources),
        rank_reason=reason,
    )


def resolve_duplicates(choices: Sequence[LabelChoice]) -> list[LabelChoice]:
    """Where one label (casefolded) names several classes of a language, every class but one that
    has a candidate no other class of the language uses takes it. The class keeping the label:
    one without such a candidate, else the one where the most sources give it (then by synset).
    Classes are visited in synset order, so the result does not depend on the input order."""
    result = {(c.lang, c.synset): c for c in choices}
    by_lang: dict[str, list[LabelChoice]] = defaultdict(list)
    for choice in choices:
        if choice.label is not None:
            by_lang[choice.lang].append(choice)
    for lang, labelled in sorted(by_lang.items()):
        used = Counter(choice.label.casefold() for choice in labelled)
        holders: dict[str, list[str]] = defaultdict(list)
        for choice in sorted(labelled, key=lambda c: c.synset):
            holders[choice.label.casefold()].append(choice.synset)
        for key in sorted(k for k, synsets in holders.items() if len(synsets) > 1):
            group = [result[(lang, synset)] for synset in holders[key]]

            def unique_alternative(choice: LabelChoice, key=key, used=used) -> Candidate | None:
                return next((c for c in choice.candidates if c.key != key and not used[c.key]), None)

            keeper = next((c for c in group if unique_alternative(c) is None), None)
            if keeper is None:
                keeper = min(group, key=lambda c: (-c.n_sources, c.synset))
            for choice in group:
                alternative = None if choice is keeper else unique_alternative(choice)
                if alternative is not None:
                    used[key] -= 1
                    used[alternative.key] += 1
                    result[(lang, choice.synset)] = with_candidate(choice, alternative, "unique")
    return [result[(c.lang, c.synset)] for c in choices]


# --- the whole procedure --------------------------------------------------------------------------


@dataclass(frozen=True)
class Rules:
    """The settings of the procedure (the `labels` group of params.yaml, resolved)."""

    ranking: Ranking = "first"
    source_priority: tuple[str, ...] = ("wikt", "omw", "cldr")
    source_priority_by_lang: Mapping[str, Sequence[str]] = field(default_factory=dict)
    low_precision_sources: frozenset[str] = DEFAULT_LOW_PRECISION_SOURCES
    resolve_duplicates: bool = False
    # (lang, label) -> word frequency (frequency.frequency_lookup); None: the frequency rule is off
    frequency: Callable[[str, str], float | None] | None = field(default=None, compare=False)
    specificity: bool = False  # agreement: a candidate specific to the class beats one shared with another
    short_form: bool = False  # agreement: a one-word, one-source short form of a compound name loses
    polysemy: bool = False  # agreement: where the English lemma is ambiguous, a supported candidate wins
    script_span: bool = False  # strip a foreign-script span, else pass the form over (purity.py)
    # (lang, other lang, label) -> Zipf lean to the other (frequency.language_lean); None: purity rule off
    purity: Callable[[str, str, str], float | None] | None = field(default=None, compare=False)
    # agreement: each language's source order from its sources' estimated precision (trust.py) where the
    # evidence suffices; source_priority stays the order elsewhere
    learned_priority: bool = False

    def priority(self, lang: str) -> Sequence[str]:
        return self.source_priority_by_lang.get(lang, self.source_priority)


def choose_labels(
    senses: Iterable[Sense],
    english_keys: frozenset[str],
    router: ScriptRouter | None = None,
    rules: Rules = Rules(),
    taxa: Mapping[str, Sequence[str]] | None = None,
    exclude_langs: Iterable[str] = (ENGLISH,),
    tally: Counter | None = None,
    english: Mapping[str, ClassEnglish] | None = None,
    class_names: Mapping[str, Iterable[str]] | None = None,
    reviewed: Mapping[tuple[str, str], str] | None = None,
    learned: list[LearnedPriority] | None = None,
) -> list[LabelChoice]:
    """One LabelChoice per (synset, language) that has forms, sorted by (lang, synset).

    `router` routes forms by script (None: no routing); `taxa` gives each synset's taxa for the
    scientific-name rule; `english` what WordNet says of each synset's English name (the
    specificity, short-form and polysemy rules); `class_names` each synset's English names (the
    script-span rule); `tally` collects the per-language cleaning and routing counts. With
    `rules.learned_priority`, `reviewed` ((lang, synset) -> a reviewed label) is evidence for the
    sources' trust, and `learned` receives the LearnedPriority of the sources' estimates (the one the
    ranking used, or with the rule off the estimates alone: p_correct's base)."""
    tally = Counter() if tally is None else tally
    excluded = set(exclude_langs)
    forms, foreign = prepared_forms((s for s in senses if s.lang not in excluded), router, rules, class_names, tally)
    grouped: dict[tuple[str, str], list[Form]] = defaultdict(list)
    removed: dict[tuple[str, str], list[Form]] = defaultdict(list)
    for form in forms:
        if form.lang not in excluded:
            (removed if form in foreign else grouped)[(form.lang, form.synset)].append(form)
    taxa = taxa or {}

    def zipf_in(lang: str) -> Callable[[str], float | None] | None:
        return None if rules.frequency is None else functools.partial(rules.frequency, lang)

    evidence = class_evidence(grouped, english_keys, rules, english or {})
    orders: Mapping[str, tuple[str, ...]] = {}
    ordering = rules.learned_priority and rules.ranking == "agreement"
    # the estimates are also each label's p_correct base (precision.py), whatever orders the sources
    if ordering or learned is not None:
        fallback = {lang: rules.priority(lang) for lang, _ in grouped}
        trust = learn_priority(source_classes(grouped, english_keys, rules), reviewed, fallback)
        orders = trust.orders if ordering else {}
        if learned is not None:
            learned.append(trust)

    def choose(group: Sequence[Form]) -> LabelChoice:
        lang, synset = group[0].lang, group[0].synset  # never empty: every group has a kept or passed form
        choice = choose_label(
            group,
            english_keys,
            rules.low_precision_sources,
            rules.ranking,
            orders.get(lang) or rules.priority(lang),
            taxa.get(synset, ()),
            zipf_in(lang),
            evidence(lang, synset),
        )
        if lang in orders and choice.rank_reason == "source_priority":
            return replace(choice, rank_reason=LEARNED_PRIORITY)
        return choice

    def choose_clean(group: Sequence[Form]) -> LabelChoice:
        # script spans: a flagged mixed-script form only when the class has nothing else
        clean = [form for form in group if not form.flag]
        flagged = [form for form in group if form.flag]
        return choose_passing_over(choose, clean, flagged, "script_span", fallback=True)

    choices = []
    for where in sorted(grouped.keys() | removed.keys()):
        # purity: a form of another language is removed; `purity` where it would have been the label
        choices.append(
            choose_passing_over(choose_clean, grouped.get(where, []), removed.get(where, []), "purity", False)
        )
    return resolve_duplicates(choices) if rules.resolve_duplicates else choices


def source_classes(
    grouped: Mapping[tuple[str, str], Sequence[Form]], english_keys: frozenset[str], rules: Rules
) -> list[ClassSources]:
    """What each source offers a (language, class), for the trust estimate: the forms the ranking
    would see (rules 3-5; a form flagged with a foreign-script span left out), each source's in
    its own order (`Form` position: not routed first, then rank, then part)."""
    classes = []
    for (lang, synset), group in sorted(grouped.items()):
        preferred, low_precision, _, _ = split_forms(
            (form for form in group if not form.flag), english_keys, rules.low_precision_sources
        )
        by_source: dict[str, list[Form]] = defaultdict(list)
        for form in preferred or low_precision:
            by_source[form.source].append(form)
        ranked = {
            source: [f.label for f in sorted(forms, key=lambda f: (f.routed_from is not None, f.rank, f.part))]
            for source, forms in by_source.items()
        }
        if ranked:
            classes.append(class_sources(lang, synset, ranked))
    return classes


def prepared_forms(
    senses: Iterable[Sense],
    router: ScriptRouter | None,
    rules: Rules,
    class_names: Mapping[str, Iterable[str]] | None,
    tally: Counter,
) -> tuple[list[Form], dict[Form, str]]:
    """Rules 1-2 and the purity rules: the clean forms with foreign-script spans stripped or
    flagged (`rules.script_span`), routed by script, and {form: sibling language} of the forms
    a shared wordnet gives in the wrong one of two languages (`rules.purity`), counted in `tally`."""
    forms = clean_senses(senses, tally)
    if router is not None:
        if rules.script_span:
            # Latin look-alikes inside Cyrillic and Greek words first: a repaired word has no foreign span left
            forms = repair_forms(forms, rules.frequency, tally)
            forms = strip_script_spans(forms, router.route, class_names or {}, tally)
        forms = route_forms(forms, router, tally)
    foreign = foreign_forms(forms, rules.purity) if rules.purity is not None else {}
    for form in foreign:
        tally[(form.lang, "n_dropped_other_language")] += 1
    return forms, foreign


def choose_passing_over(
    choose: Callable[[Sequence[Form]], LabelChoice],
    kept: Sequence[Form],
    passed: Sequence[Form],
    reason: str,
    fallback: bool,
) -> LabelChoice | None:
    """The choice among the `kept` forms, passing over the `passed` ones: its `rank_reason` is
    `reason` where the choice among all of them would have been a passed form. Where the kept
    forms give no label: with `fallback` the choice among all (a passed form chosen has the
    `rank_reason` of the passed forms' flag), else no label (the class counts as emptied)."""
    if not passed:
        return choose(kept)
    everything = choose([*kept, *passed])
    choice = choose(kept) if kept else None
    if choice is None or choice.label is None:
        if not fallback:
            return replace(
                everything,
                label=None,
                source=None,
                rank=None,
                raw_lemma=None,
                routed_from=None,
                n_sources=0,
                rank_reason="",
                candidates=(),
            )
        flags = {form.key: form.flag for form in passed}
        if (
            everything.label is not None
            and everything.label.casefold() in flags
            and not any(form.key == everything.label.casefold() for form in kept)
        ):
            return replace(everything, rank_reason=flags[everything.label.casefold()])
        return everything
    if everything.label is not None and everything.label.casefold() not in {form.key for form in kept}:
        choice = replace(choice, rank_reason=reason)
    return replace(choice, n_senses=everything.n_senses)


def is_compound_name(clip_name: str, lemmas: Iterable[str]) -> bool:
    """The English name has a head a translator may render alone: the CLIP name has several
    words (`block plane`), or one English name ends with another (`oscilloscope`, `scope`). A
    WordNet lemma of several words alone does not count: most animals have one (`Sus scrofa`,
    `king of beasts`), and their one-word names are no short forms."""
    names = {english_key(name) for name in (clip_name, *lemmas)}
    return not is_one_word(clip_name) or any(a != b and a.endswith(b) for a in names for b in names)


@dataclass(frozen=True)
class ClassEnglish:
    """A class's English name as WordNet sees it (the wordnet artifact's columns)."""

    compound: bool = False  # a lemma or the CLIP name has several words
    ambiguous: bool = False  # `other_senses` is not empty
    broader: frozenset[str] = frozenset()  # casefolded English lemmas of every hypernym (`broader_lemmas`)

    @classmethod
    def of(
        cls, clip_name: str, lemmas: Iterable[str], broader: Iterable[str], other_senses: Iterable[str]
    ) -> ClassEnglish:
        return cls(
            compound=is_compound_name(clip_name, lemmas),
            ambiguous=any(True for _ in other_senses),
            broader=frozenset(english_key(lemma) for lemma in broader),
        )


def class_evidence(
    grouped: Mapping[tuple[str, str], Sequence[Form]],
    english_keys: frozenset[str],
    rules: Rules,
    english: Mapping[str, ClassEnglish],
) -> Callable[[str, str], ClassEvidence]:
    """(lang, synset) -> the ClassEvidence of the switched-on rules. Specificity compares a
    candidate's support (distinct sources) in the class with its support in every other class of
    the language: given by more sources elsewhere, it is not specific to this class. (Equal
    support says nothing: `coffre` is both *storage chest* and *safe* in one source each.)"""
    if rules.ranking != "agreement":
        return lambda lang, synset: ClassEvidence()
    support: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    if rules.specificity:
        for (lang, synset), group in grouped.items():
            preferred, low_precision, _, _ = split_forms(group, english_keys, rules.low_precision_sources)
            sources: dict[str, set[str]] = defaultdict(set)
            for form in preferred or low_precision:
                sources[form.key].add(form.source)
            for key, given in sources.items():
                support[(lang, key)][synset] = len(given)

    def evidence(lang: str, synset: str) -> ClassEvidence:
        name = english.get(synset, ClassEnglish())

        def elsewhere(key: str) -> bool:
            by_class = support.get((lang, key), {})
            here = by_class.get(synset, 0)
            return key in name.broader or any(n > here for other, n in by_class.items() if other != synset)

        return ClassEvidence(
            elsewhere=elsewhere if rules.specificity else None,
            compound=rules.short_form and name.compound,
            ambiguous=rules.polysemy and name.ambiguous,
        )

    return evidence


def resource_group(n_classes: float) -> str:
    """The resource group of a language with `n_classes` labelled classes (GROUP_BOUNDS): the one rule the
    label tables, the card and the report's figures name groups by. A count above ImageNet-1k's is a
    table of another dataset, refused rather than drawn as `high`."""
    for name, upper in GROUP_BOUNDS:
        if n_classes <= upper:
            return name
    raise BabelforgeError(
        f"{n_classes:g} classes: more than ImageNet-1k has ({GROUP_BOUNDS[-1][1]}); resource groups are for "
        "Babel-ImageNet's class counts (the `n_classes` of its labels)"
    )


# rank_reason of a class the precision floor dropped (labels.precision_floor, precision.py)
PRECISION_FLOOR = "precision_floor"


def drop_label(choice: LabelChoice, reason: str) -> LabelChoice:
    """The choice without its label, for `reason` (its candidates stay: candidates.parquet lists them)."""
    return replace(
        choice, label=None, source=None, rank=None, raw_lemma=None, routed_from=None, n_sources=0, rank_reason=reason
    )


def kept_languages(choices: Iterable[LabelChoice], min_classes: int) -> dict[str, int]:
    """Languages with at least `min_classes` labelled classes, and their class counts."""
    counts = Counter(choice.lang for choice in choices if choice.label is not None)
    return {lang: n for lang, n in sorted(counts.items()) if n >= min_classes}


def language_fates(choices: Iterable[LabelChoice]) -> dict[str, int]:
    """Classes with a label per language that has senses, after the rules (fates_line says which are kept)."""
    counts = Counter(choice.lang for choice in choices if choice.label is not None)
    return {lang: counts.get(lang, 0) for lang in sorted({choice.lang for choice in choices})}


def fates_line(fates: Mapping[str, int], min_classes: int, wanted: Iterable[str], before: Iterable[str] | None) -> str:
    """One line saying what became of the languages: how many are kept, which joined or left since the
    build `before` (the kept languages of the previous languages.parquet), and which of the `wanted`
    (Babel-ImageNet) languages are not kept and why, so an added or lost language is never silent."""
    wanted = set(wanted)
    kept = {lang for lang, n in fates.items() if n >= min_classes}
    few = [f"{lang} {n}" for lang, n in fates.items() if n < min_classes and lang in wanted]
    others = sum(1 for lang, n in fates.items() if n < min_classes and lang not in wanted)
    uncovered = sorted(wanted - set(fates))
    parts = [f"{len(kept)} kept"]
    if before is not None:
        before = set(before)
        joined = [f"{lang} {fates[lang]}" for lang in sorted(kept - before)]
        left = sorted(before - kept)
        parts.append(
            f"since the last build: {'+' + ', +'.join(joined) if joined else 'none joined'}; "
            f"{'-' + ', -'.join(left) if left else 'none left'}"
        )
    if few or others:
        parts.append(
            f"fewer than min_classes {min_classes} classes: {', '.join(few) or 'no Babel-ImageNet language'}"
            + (f" (and {others} other languages)" if others else "")
        )
    if uncovered:
        parts.append(f"no sense source covers {len(uncovered)} Babel-ImageNet languages: {', '.join(uncovered)}")
    return "languages: " + "; ".join(parts)


def english_rows(clip_names: Mapping[str, str]) -> list[LabelChoice]:
    """English labels are the standard CLIP class names (synset -> name)."""
    return [
        LabelChoice(
            synset, ENGLISH, name, "clip", 0, 1, 0, 0, 0, False, raw_lemma=name, n_sources=1, rank_reason="only"
        )
        for synset, name in sorted(clip_names.items())
    ]
