"""Every candidate sense of a class in a language: which label the rules chose, why the others
were set aside, and how many sources give the same form.

A reviewer deciding `Fliege` (fly) against `Fliege` (bow tie) needs the forms the rules passed
over. They are derived here from the senses the labels stage read and the choices it made,
through the labels stage's own rule functions (`forms.clean_senses`, `script_routing`, `purity`:
nothing is re-implemented): each sense is cleaned (a lemma may give several forms, or be dropped),
routed by script, and each form is then placed against the class's choice. Pure: plain data in, plain rows out.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import replace

from babelforge.babel_imagenet.cleaning import DROP_KINDS
from babelforge.babel_imagenet.confusables import repair_forms
from babelforge.babel_imagenet.forms import Form, clean_senses, english_key
from babelforge.babel_imagenet.label_choice import PRECISION_FLOOR, LabelChoice
from babelforge.babel_imagenet.label_rules import Rules
from babelforge.babel_imagenet.purity import foreign_forms, strip_script_spans
from babelforge.babel_imagenet.script_routing import ScriptRouter
from babelforge.core.languages import ENGLISH

# set_aside value -> what it means (the audit page and the review sheet show these).
SET_ASIDE = {
    "": "chosen by the rules",
    "same_label": "another source's sense gives the chosen label",
    "english": "equals an English lemma of some class",
    "machine_translated": "the source marks it as a machine translation",
    "low_precision": "low-precision source, passed over for a better sense",
    "not_first": "usable, but ranked below the chosen label (labels.ranking)",
    "duplicate": "ranked first, but another class of the language kept that label (labels.resolve_duplicates)",
    "script": "written in a script the language's key does not use, and no key of the language does",
    "other_language": "a shared wordnet's form that belongs to its sibling language (labels.rules.purity)",
    "mixed_script": "holds a span in a script the language does not use; used only when nothing else is left",
    "clip_name": "English labels are the CLIP class names",
    PRECISION_FLOOR: "the class was dropped: its label's p_correct is below labels.precision_floor",
    **{f"dropped_{kind}": f"removed by the cleaning rules ({kind})" for kind in DROP_KINDS},
}
CANDIDATE_COLUMNS = (
    "lang",
    "class_idx",
    "wnid",
    "label",
    "raw",
    "source",
    "rank",
    "is_translation",
    "chosen",
    "set_aside",
    "agreement",
)


def candidate_forms(
    senses: Iterable,
    router: ScriptRouter | None,
    rules: Rules = Rules(),
    class_names: Mapping[str, Iterable[str]] | None = None,
) -> tuple[list[Form], list[tuple[object, str]]]:
    """(the clean forms in the key they end up in, [(sense or form, reason)] of what cleaning,
    routing or the purity rule set aside). English senses are cleaned but never routed; spans
    in a foreign script are stripped or flagged as the labels stage does (`rules.script_span`)."""
    dropped: list[tuple[object, str]] = []
    forms = clean_senses(senses, Counter(), dropped)
    if router is not None and rules.script_span:
        english = [form for form in forms if form.lang == ENGLISH]
        others = [form for form in forms if form.lang != ENGLISH]
        others = repair_forms(others, rules.frequency, Counter())
        forms = english + strip_script_spans(others, router.route, class_names or {}, Counter())
    routed: list[Form] = []
    for form in forms:
        target = form.lang if router is None or form.lang == ENGLISH else router.route(form.lang, form.label)
        if target is None:
            dropped.append((form, "script"))
        elif target != form.lang:
            routed.append(replace(form, lang=target, routed_from=form.lang))
        else:
            routed.append(form)
    foreign = foreign_forms(routed, rules.purity) if rules.purity is not None else {}
    dropped.extend((form, "other_language") for form in foreign)
    return [form for form in routed if form not in foreign], dropped


def set_aside_reason(form: Form, choice: LabelChoice, english_keys: frozenset[str], rules: Rules) -> str:
    """Why the rules did not choose `form` ("" when it is the chosen one, `same_label` when it
    gives the chosen label from another sense)."""
    if form.lang == ENGLISH:
        return "clip_name"
    if choice.label is not None and form.key == choice.label.casefold():
        return "" if (form.source, form.rank) == (choice.source, choice.rank) else "same_label"
    if english_key(form.label) in english_keys:
        return "english"
    if form.is_translation:
        return "machine_translated"
    if form.source in rules.low_precision_sources and not choice.used_low_precision:
        return "low_precision"
    if choice.rank_reason == "unique" and choice.candidates and form.key == choice.candidates[0].key:
        return "duplicate"
    if form.flag:
        return form.flag
    if choice.rank_reason == PRECISION_FLOOR:
        return PRECISION_FLOOR
    return "not_first"


def candidate_rows(
    senses: Iterable,
    choices: Iterable[LabelChoice],
    wnids: dict[str, tuple[int, str]],
    english_keys: frozenset[str],
    rules: Rules = Rules(),
    router: ScriptRouter | None = None,
    class_names: Mapping[str, Iterable[str]] | None = None,
) -> list[dict]:
    """One row per form (and per set-aside sense) of every (class, language) the choices cover
    (`CANDIDATE_COLUMNS`), in rank order.

    choices: the labels stage's final choices (only their languages are listed); a chosen label
    that no sense gives (English: the CLIP name) is listed as a candidate of its own.
    wnids: synset -> (class_idx, wnid).
    """
    return rows_of_forms(candidate_forms(senses, router, rules, class_names), choices, wnids, english_keys, rules)


def rows_of_forms(
    cleaned: tuple[list[Form], list[tuple[object, str]]],
    choices: Iterable[LabelChoice],
    wnids: dict[str, tuple[int, str]],
    english_keys: frozenset[str],
    rules: Rules,
) -> list[dict]:
    """`candidate_rows` from what `candidate_forms` gave: the cleaning depends on the senses alone, so
    the labels stage does it once for the tables it builds for two sets of choices."""
    by_group = {(c.lang, c.synset): c for c in choices}
    forms, dropped = cleaned
    grouped: dict[tuple[str, str], list[tuple[Form | object, str]]] = defaultdict(list)
    for form in forms:
        if (form.lang, form.synset) in by_group:
            grouped[(form.lang, form.synset)].append(
                (form, set_aside_reason(form, by_group[(form.lang, form.synset)], english_keys, rules))
            )
    for item, reason in dropped:
        if (item.lang, item.synset) in by_group:
            grouped[(item.lang, item.synset)].append((item, reason))
    rows = []
    for key in sorted(by_group):
        choice, lang = by_group[key], key[0]
        class_idx, wnid = wnids[key[1]]
        group = grouped.get(key, [])
        agreement: dict[str, set[str]] = defaultdict(set)
        for item, _reason in group:
            if isinstance(item, Form):
                agreement[item.key].add(item.source)
        own = choice.label is not None and not any(reason == "" for _, reason in group)
        if own:  # the CLIP name, which no sense gives
            agreement[choice.label.casefold()].add(choice.source or "")
            rows.append(
                _row(
                    lang,
                    class_idx,
                    wnid,
                    choice.label,
                    choice.raw_lemma or choice.label,
                    choice.source or "",
                    choice.rank or 0,
                    False,
                    "",
                    agreement,
                )
            )
        for item, reason in sorted(group, key=lambda pair: (pair[0].rank, getattr(pair[0], "part", 0), pair[0].source)):
            if isinstance(item, Form):
                rows.append(
                    _row(
                        lang,
                        class_idx,
                        wnid,
                        item.label,
                        item.raw,
                        item.source,
                        item.rank,
                        item.is_translation,
                        reason,
                        agreement,
                    )
                )
            else:
                rows.append(
                    _row(
                        lang,
                        class_idx,
                        wnid,
                        item.lemma,
                        item.lemma,
                        item.source,
                        item.rank,
                        item.is_translation,
                        reason,
                        agreement,
                    )
                )
    return rows


def _row(
    lang: str,
    class_idx: int,
    wnid: str,
    label: str,
    raw: str,
    source: str,
    rank: int,
    is_translation: bool,
    reason: str,
    agreement: dict[str, set[str]],
) -> dict:
    return {
        "lang": lang,
        "class_idx": class_idx,
        "wnid": wnid,
        "label": label,
        "raw": raw,
        "source": source,
        "rank": rank,
        "is_translation": is_translation,
        "chosen": reason == "",
        "set_aside": reason,
        "agreement": max(len(agreement.get(label.casefold(), ())), 1),
    }


def candidates_frame(
    cleaned: tuple[list[Form], list[tuple[object, str]]],
    choices: Iterable[LabelChoice],
    classes,
    english_keys: frozenset[str],
    rules: Rules = Rules(),
):
    """candidates.parquet's table (pandas), from the cleaned senses (`candidate_forms`) and the choices
    of the labels stage."""
    import pandas as pd

    wnids = {row.synset: (int(row.class_idx), str(row.wnid)) for row in classes.itertuples()}
    frame = pd.DataFrame(rows_of_forms(cleaned, choices, wnids, english_keys, rules), columns=list(CANDIDATE_COLUMNS))
    return frame.astype(
        {"class_idx": "int32", "rank": "int32", "agreement": "int32", "is_translation": "bool", "chosen": "bool"}
    )
