"""Babel-ImageNet label selection: the paper's procedure and the rules the open data needs, as pure functions.
This module runs the procedure (`choose_labels`); each rule lives in its own module, named below.

For each (class, language):
  1. clean every lemma (`cleaning.clean_lemma`, over every sense: `forms.clean_senses`): markup and
     placeholders out, one form per name;
  2. route every form by its script: a form whose script is not the key's own goes to the
     registry key of the same language in that script (`hbs` Cyrillic -> `srp_Cyrl`); with no
     such key it stays when the registry expects the script for the language, else it is dropped
     (`script_routing.py`);
     before routing, a span in a script the language does not use is stripped or the form flagged,
     and after it, a shared wordnet's form of the sibling language is removed (`purity.py`);
  3. drop a form whose casefolded text equals an English lemma of *any* of the 1,000 classes
     (an untranslated English word is not a label in that language);
  4. drop it if the source marks it as an automatic translation;
  5. skip forms from low-precision sources (BabelNet's WIKIRED, WIKIDATA_ALIAS) unless no
     other form is left (3-5: `ranking.split_forms`);
  6. rank what is left: `first` (the paper: the first form in the source's order) or
     `agreement` (a vernacular name before a scientific one, then the forms more distinct
     sources give, then `source_priority` (or the order the sources' agreement gives, trust.py),
     then the source's order; `ranking.rank_candidates`, with what the other classes say:
     `class_evidence.py`; the choice: `label_choice.py`);
  7. optionally, where one label names several classes of a language, give each class that has
     one a candidate no other class of the language uses (the class holding the label most
     firmly keeps it; `duplicate_labels.py`).
A form that is both English and a translation counts as English (rule 3 comes first).
Languages keep their labels only with at least `min_classes` classes (`language_fates.py`). The
settings of every rule: `label_rules.Rules`.
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from babelforge.babel_imagenet.class_evidence import ClassEnglish, class_evidence
from babelforge.babel_imagenet.confusables import repair_forms
from babelforge.babel_imagenet.duplicate_labels import resolve_duplicates
from babelforge.babel_imagenet.forms import Form, clean_senses
from babelforge.babel_imagenet.label_choice import LabelChoice, choose_label
from babelforge.babel_imagenet.label_rules import Rules
from babelforge.babel_imagenet.purity import foreign_forms, strip_script_spans
from babelforge.babel_imagenet.ranking import LEARNED_PRIORITY, split_forms
from babelforge.babel_imagenet.script_routing import ScriptRouter, route_forms
from babelforge.babel_imagenet.trust import ClassSources, LearnedPriority, class_sources, learn_priority
from babelforge.core.languages import ENGLISH
from babelforge.lexicon.senses import Sense


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
