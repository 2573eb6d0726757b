"""Every candidate sense of a class in a language: which one the rules chose, why the others
were set aside, and how many sources give the same lemma.

A reviewer deciding `Fliege` (fly) against `Fliege` (bow tie) needs the senses the rules passed
over. They are derived here from the senses the labels stage read and the choices it made,
through the rule functions of `labels.py` themselves (nothing is re-implemented): a sense the
rules did not choose is run through `choose_label` on its own, which says whether a rule drops it
by itself (English lemma, machine translation, empty) or whether it only lost to a better sense
(low precision, not first). Pure: plain data in, plain rows out.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Sequence

from builders.babel_imagenet.labels import ENGLISH, LabelChoice, choose_label, english_key, normalise_lemma
from builders.lexicon.senses import Sense

# set_aside value -> what it means (the audit page and the review sheet show these).
SET_ASIDE = {
    "": "chosen by the rules",
    "english": "equals an English lemma of some class",
    "machine_translated": "the source marks it as a machine translation",
    "low_precision": "low-precision source, passed over for a better sense",
    "not_first": "usable, but a sense ranked before it was chosen",
    "empty": "empty once normalised",
    "clip_name": "English labels are the CLIP class names",
    "other_rule": "set aside by another rule of the labels stage",
}
CANDIDATE_COLUMNS = ("lang", "class_idx", "wnid", "label", "source", "rank", "is_translation", "chosen",
                     "set_aside", "agreement")


def set_aside_reason(sense: Sense, choice: LabelChoice | None, english_keys: frozenset[str],
                     low_precision_sources: frozenset[str]) -> str:
    """Why the rules did not choose `sense` ("" when they did)."""
    if choice is not None and choice.label is not None and (choice.source, choice.rank) == (sense.source, sense.rank):
        return ""
    if sense.lang == ENGLISH:
        return "clip_name"
    alone = choose_label([sense], english_keys, low_precision_sources)
    if alone.n_dropped_english:
        return "english"
    if alone.n_dropped_mt:
        return "machine_translated"
    if alone.label is None:
        return "empty" if not normalise_lemma(sense.lemma) else "other_rule"
    if alone.used_low_precision and choice is not None and choice.label is not None and not choice.used_low_precision:
        return "low_precision"
    return "not_first"


def agreement_counts(senses: Sequence[Sense], extra: Iterable[tuple[str, str]] = ()) -> dict[str, int]:
    """Per casefolded, normalised lemma of one (class, language): how many distinct sources give it."""
    sources: dict[str, set[str]] = defaultdict(set)
    for sense in senses:
        sources[english_key(sense.lemma)].add(sense.source)
    for label, source in extra:
        sources[english_key(label)].add(source)
    return {key: len(names) for key, names in sources.items()}


def candidate_rows(senses: Iterable[Sense], choices: Iterable[LabelChoice], wnids: dict[str, tuple[int, str]],
                   english_keys: frozenset[str], low_precision_sources: frozenset[str]) -> list[dict]:
    """One row per sense of every (class, language) the choices cover (`CANDIDATE_COLUMNS`).

    choices: the labels stage's final choices (only their languages are listed); a chosen label that
    is no sense of the group (English: the CLIP name) is listed as a candidate of its own.
    wnids: synset -> (class_idx, wnid).
    """
    by_group: dict[tuple[str, str], LabelChoice] = {(c.lang, c.synset): c for c in choices}
    grouped: dict[tuple[str, str], list[Sense]] = defaultdict(list)
    for sense in senses:
        if (sense.lang, sense.synset) in by_group:
            grouped[(sense.lang, sense.synset)].append(sense)
    rows = []
    for key in sorted(by_group):
        choice, group = by_group[key], sorted(grouped.get(key, []), key=lambda s: (s.rank, s.source))
        lang, synset = key
        class_idx, wnid = wnids[synset]
        chosen_is_sense = any((s.source, s.rank) == (choice.source, choice.rank) for s in group)
        own = [] if chosen_is_sense or choice.label is None else [(choice.label, choice.source or "")]
        agreement = agreement_counts(group, own)
        for label, source in own:
            rows.append(_row(lang, class_idx, wnid, label, source, choice.rank or 0, False, "", agreement))
        for sense in group:
            reason = set_aside_reason(sense, choice, english_keys, low_precision_sources)
            rows.append(_row(lang, class_idx, wnid, normalise_lemma(sense.lemma), sense.source, sense.rank,
                             sense.is_translation, reason, agreement))
    return rows


def _row(lang: str, class_idx: int, wnid: str, label: str, source: str, rank: int, is_translation: bool,
         reason: str, agreement: dict[str, int]) -> dict:
    return {"lang": lang, "class_idx": class_idx, "wnid": wnid, "label": label, "source": source, "rank": rank,
            "is_translation": is_translation, "chosen": reason == "", "set_aside": reason,
            "agreement": agreement.get(english_key(label), 1)}


def candidates_frame(senses: Iterable[Sense], choices: Iterable[LabelChoice], classes,
                     english_keys: frozenset[str], low_precision_sources: frozenset[str]):
    """candidates.parquet's table (pandas), from the senses and choices of the labels stage."""
    import pandas as pd

    wnids = {row.synset: (int(row.class_idx), str(row.wnid)) for row in classes.itertuples()}
    frame = pd.DataFrame(candidate_rows(senses, choices, wnids, english_keys, low_precision_sources),
                         columns=list(CANDIDATE_COLUMNS))
    return frame.astype({"class_idx": "int32", "rank": "int32", "agreement": "int32",
                         "is_translation": "bool", "chosen": "bool"})
