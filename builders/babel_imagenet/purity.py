"""Language purity: forms that belong to another language than the key they stand in.

Two rules, both pure functions over the clean forms of `labels.py` (which calls them):

* **script spans** (`labels.rules.script_span`): a form that mixes words in its language's script
  with words in a script no key of the language uses (`τζάγκουαρ felis onca`, `οικογένεια
  ixodoide`; the router in `script_routing.py` says which scripts a language uses). A leading or trailing
  foreign span is stripped when the rest stands alone: it is another form of the class, or, where
  the class has no form without such a span, the span is one of the class's own WordNet names
  (`Granny Smith`) and the rest names no other class of the language. Otherwise the form is
  flagged `mixed_script` and the label rules use it only when the class has nothing else: the
  rest is often a genus phrase (`κουνέλι γένους sylvilagus`, "rabbit of the genus") or a
  neighbour's name (`νυφίτσα mustela nigripes`: weasel).
* **shared wordnets** (`labels.rules.purity`): one wordnet project can serve several close
  languages from one data set (Wordnet Bahasa, `omw:msa`, writes Indonesian and Malay files; a
  lemma its authors tagged "both" stands in both files, Malay words among them: `selipar`, `kasut
  kayu`). A form of such a source is foreign to its language, and removed there, when all of:
  the same synset has the same form in a sibling language's file (a shared line: a form only in
  this language's file is the project's own judgement that it is this language's); no other source
  gives the form in this language (Wiktionary, CLDR: any class); and word frequency says it is
  at least `PURITY_MARGIN` Zipf units (tenfold) more common in the sibling, as a lower bound
  (`frequency.language_lean`). Frequency alone is not enough: wordfreq's small Indonesian list
  lacks common words (`trompet` reads 0), which the lower bound absorbs.
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from babelforge.babel_imagenet.cleaning import has_letters, normalise_lemma

# Source kinds whose projects write several languages' files from one data set. Wiktionary's files
# (`wikt`) are per language too, but a form shared with another language there is a cognate the
# editors entered twice, not a line copied between languages.
SHARED_SOURCE_KINDS = ("omw",)
# A form is foreign when it is at least this many Zipf units more common in the sibling language
# (lower bound): tenfold, the frequency rule's margin.
PURITY_MARGIN = 1.0
MIXED_SCRIPT = "mixed_script"


# --- script spans ---------------------------------------------------------------------------------


def foreign_words(lang: str, words: Sequence[str], route: Callable[[str, str], str | None]) -> list[bool]:
    """Which words are in a script no key of the language uses (`route` is ScriptRouter.route:
    None when a form in that script would be dropped); words without letters are not."""
    return [route(lang, word) is None for word in words]


def split_span(words: Sequence[str], foreign: Sequence[bool]) -> tuple[str, str] | None:
    """(rest, span) when the foreign words are a leading and/or trailing run around a native rest;
    None when there is nothing to strip or no rest, or a foreign word sits inside the rest."""
    if not any(foreign) or all(foreign):
        return None
    native = [i for i, is_foreign in enumerate(foreign) if not is_foreign]
    first, last = native[0], native[-1]
    if any(foreign[first : last + 1]):
        return None
    rest = " ".join(words[first : last + 1])
    span = " ".join([*words[:first], *words[last + 1 :]])
    return rest, span


def strip_script_spans(
    forms: Sequence,
    route: Callable[[str, str], str | None],
    class_names: Mapping[str, Iterable[str]],
    tally: Counter,
) -> list:
    """The forms with foreign-script spans stripped (`cleaned` gains `script_span`) or flagged
    `mixed_script` (see the module doc); counted in `tally[(lang, n_cleaned_script_span |
    n_mixed_script)]`. `class_names`: synset -> its English WordNet lemmas and CLIP name."""
    route = functools.cache(route)  # the same word recurs across sources and senses

    def foreign_of(form) -> list[bool]:
        return foreign_words(form.lang, form.label.split(), route)

    # Only a form of several words can mix scripts word by word; the rest are looked at only in a
    # class that has such a form (the script test is most of the time this rule takes).
    mixed = {}
    for index, form in enumerate(forms):
        if " " in form.label:
            foreign = foreign_of(form)
            if any(foreign) and not all(foreign):
                mixed[index] = foreign
    if not mixed:
        return list(forms)
    by_class: dict[tuple[str, str], list] = defaultdict(list)
    classes_of: dict[tuple[str, str], set[str]] = defaultdict(set)  # a native rest's text is native wherever it stands
    for form in forms:
        by_class[(form.lang, form.synset)].append(form)
        classes_of[(form.lang, form.key)].add(form.synset)

    @functools.cache
    def plain(lang: str, synset: str) -> frozenset[str]:
        """The class's casefolded forms without a foreign word."""
        return frozenset(form.key for form in by_class[(lang, synset)] if not any(foreign_of(form)))

    result = list(forms)
    for index, foreign in mixed.items():
        form = forms[index]
        split = split_span(form.label.split(), foreign)
        keep = None
        if split is not None and has_letters(split[0]):
            rest, span = split
            key = rest.casefold()
            own_names = {normalise_lemma(name).casefold() for name in class_names.get(form.synset, ())}
            if key in plain(form.lang, form.synset):
                keep = rest  # another form of the class: the span only qualified it
            elif (
                not plain(form.lang, form.synset)
                and span.casefold() in own_names
                and not classes_of[(form.lang, key)] - {form.synset}
            ):
                keep = rest  # the class's own name appended to a name no other class has
        if keep is not None:
            tally[(form.lang, "n_cleaned_script_span")] += 1
            result[index] = replace(form, label=keep, cleaned=(*form.cleaned, "script_span"))
        else:
            tally[(form.lang, "n_mixed_script")] += 1
            result[index] = replace(form, flag=MIXED_SCRIPT)
    return result


# --- shared wordnets -------------------------------------------------------------------------------


def shared_sources(forms: Iterable) -> dict[str, frozenset[str]]:
    """Sources of a SHARED_SOURCE_KINDS kind that give forms in several languages -> those languages."""
    langs: dict[str, set[str]] = defaultdict(set)
    for form in forms:
        if form.source.split(":", 1)[0] in SHARED_SOURCE_KINDS:
            langs[form.source].add(form.lang)
    return {source: frozenset(keys) for source, keys in sorted(langs.items()) if len(keys) > 1}


def foreign_forms(forms: Sequence, lean: Callable[[str, str, str], float | None]) -> dict:
    """form -> the sibling language it belongs to, for the forms of shared wordnets the evidence
    puts in another language (module doc). `lean` is `frequency.language_lean`."""
    shared = shared_sources(forms)
    if not shared:
        return {}
    lines = {(form.source, form.lang, form.synset, form.key) for form in forms if form.source in shared}
    attested: dict[tuple[str, str], set[str]] = defaultdict(set)
    for form in forms:
        attested[(form.lang, form.key)].add(form.source)
    foreign = {}
    for form in forms:
        if form.source not in shared or attested[(form.lang, form.key)] - {form.source}:
            continue
        for sibling in sorted(shared[form.source] - {form.lang}):
            if (form.source, sibling, form.synset, form.key) not in lines:
                continue
            bound = lean(form.lang, sibling, form.label)
            if bound is not None and bound >= PURITY_MARGIN:
                foreign[form] = sibling
                break
    return foreign


def uncovered_pairs(forms: Iterable, covered: frozenset[str]) -> list[tuple[str, str]]:
    """The language pairs of shared wordnets the purity rule cannot weigh because wordfreq lacks
    one of them (`covered`: the registry keys it has; Norwegian Nynorsk is not), for the build log."""
    pairs = set()
    for langs in shared_sources(forms).values():
        for lang in langs:
            for sibling in langs - {lang}:
                if lang not in covered or sibling not in covered:
                    pairs.add(tuple(sorted((lang, sibling))))
    return sorted(pairs)
