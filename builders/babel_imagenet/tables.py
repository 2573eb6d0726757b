"""The labels stage's tables as plain data: the label choices in, the rows of labels.parquet and
languages.parquet out, with candidates.parquet's added columns (`zipf`, `source_precision`) and the
agreement ranking's source order per language. Plain data in and out: no artifact is read or written
here (the language names come from the registry)."""

from __future__ import annotations

from babelforge.babel_imagenet.class_evidence import ClassEnglish
from babelforge.babel_imagenet.cleaning import CLEAN_KINDS, DROP_KINDS
from babelforge.babel_imagenet.label_choice import PRECISION_FLOOR
from babelforge.babel_imagenet.label_rules import Rules
from babelforge.babel_imagenet.precision import LanguageFigure, source_precisions, sources_text
from babelforge.babel_imagenet.resource_groups import resource_group
from babelforge.babel_imagenet.trust import PARAMS, LearnedPriority
from babelforge.core.languages import registry
from babelforge.core.text_taggers import duplicate_flags

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

INT_COLUMNS = (
    "class_idx",
    "rank",
    "n_senses",
    "n_dropped_english",
    "n_dropped_mt",
    "n_dropped_low_precision",
    "n_sources",
)


def labels_frame(choices, classes, p_correct=None, p_rules=None):
    """Rows of labels.parquet from LabelChoices (only chosen labels) and the class table;
    `p_correct`: (lang, synset) -> the label's p_correct (precision.py; None: not estimated);
    `p_rules`: the rules' figure, where the lexicon layer gave p_correct (its first input; None: p_correct)."""
    import pandas as pd

    by_synset = {row.synset: (row.class_idx, row.wnid) for row in classes.itertuples()}
    rows = [
        {
            "class_idx": by_synset[c.synset][0],
            "wnid": by_synset[c.synset][1],
            "lang": c.lang,
            "label": c.label,
            "source": c.source,
            "rank": c.rank,
            "n_senses": c.n_senses,
            "n_dropped_english": c.n_dropped_english,
            "n_dropped_mt": c.n_dropped_mt,
            "n_dropped_low_precision": c.n_dropped_low_precision,
            "used_low_precision": c.used_low_precision,
            "raw_lemma": c.raw_lemma,
            "routed_from": c.routed_from or "",
            "n_sources": c.n_sources,
            "rank_reason": c.rank_reason,
            "ambiguous_source": c.ambiguous_source,
            "p_correct": (p_correct or {}).get((c.lang, c.synset)),
            "p_rules": (p_rules if p_rules is not None else p_correct or {}).get((c.lang, c.synset)),
        }
        for c in choices
        if c.label is not None
    ]
    frame = pd.DataFrame(rows).sort_values(["lang", "class_idx"], kind="stable").reset_index(drop=True)
    # another class of the language has the same label (the audit's `duplicate` check, one tagger)
    frame["is_duplicate"] = duplicate_flags(frame["lang"], frame["label"])
    for column in INT_COLUMNS:
        frame[column] = frame[column].astype("int32")
    frame["p_correct"] = frame["p_correct"].astype("float64")
    frame["p_rules"] = frame["p_rules"].astype("float64")
    return frame


def languages_frame(choices, kept: dict[str, int], tally=None, orders: dict[str, tuple[str, str, int]] | None = None):
    """One row per kept language: class count, resource group, what the filters dropped, what
    cleaning and script routing did (`tally[(lang, column)]`, columns TALLY_COLUMNS), and the
    agreement ranking's source order (`orders[lang]`: (order, where it came from, classes of
    evidence), `source_orders`; empty when the ranking uses none)."""
    import pandas as pd

    tally = tally or {}
    orders = orders or {}
    totals: dict[str, list[int]] = {}
    for c in choices:
        if c.lang in kept:
            t = totals.setdefault(c.lang, [0, 0, 0, 0, 0])
            t[0] += c.n_dropped_english
            t[1] += c.n_dropped_mt
            t[2] += c.n_dropped_low_precision
            t[3] += c.label is None and c.rank_reason != PRECISION_FLOOR
            t[4] += c.rank_reason == PRECISION_FLOOR
    languages = registry()
    counts = (
        "n_classes",
        "n_dropped_english",
        "n_dropped_mt",
        "n_dropped_low_precision",
        "n_classes_emptied",
        "n_dropped_precision",
        *TALLY_COLUMNS,
    )
    return pd.DataFrame(
        [
            {
                "lang": lang,
                "name": languages.get(lang).name,
                "n_classes": n,
                "group": resource_group(n),
                "n_dropped_english": totals[lang][0],
                "n_dropped_mt": totals[lang][1],
                "n_dropped_low_precision": totals[lang][2],
                "n_classes_emptied": totals[lang][3],
                "n_dropped_precision": totals[lang][4],
                **{column: tally.get((lang, column), 0) for column in TALLY_COLUMNS},
                **dict(zip(SOURCE_ORDER_COLUMNS, orders.get(lang, ("", "", 0)))),
            }
            for lang, n in kept.items()
        ],
        columns=["lang", "name", "n_classes", "group", *counts[1:], *SOURCE_ORDER_COLUMNS],
    ).astype({column: "int32" for column in (*counts, "n_trust_classes")})


# languages.parquet: the agreement ranking's source order (comma-joined), `evidence` (learned,
# trust.py) or `params` (labels.source_priority), and the classes that were evidence for it
SOURCE_ORDER_COLUMNS = ("source_order", "source_order_from", "n_trust_classes")


def source_orders(langs, rules: Rules, learned: LearnedPriority | None) -> dict[str, tuple[str, str, int]]:
    """lang -> (the source order its agreement ranking used, comma-joined; `evidence` or `params`;
    classes of evidence). Empty under the `first` ranking, which uses no source order."""
    if rules.ranking != "agreement":
        return {}
    result = {}
    for lang in langs:
        if learned is not None and lang in learned.orders:
            result[lang] = (",".join(learned.orders[lang]), learned.order_from(lang), learned.evidence.get(lang, 0))
        else:
            evidence = learned.evidence.get(lang, 0) if learned is not None else 0
            result[lang] = (",".join(rules.priority(lang)), PARAMS, evidence)
    return result


def class_english(classes) -> dict[str, ClassEnglish]:
    """synset -> what the wordnet artifact says of its English name (lemmas and CLIP name,
    `broader_lemmas`, `other_senses`)."""
    return {
        row.synset: ClassEnglish.of(row.clip_name, row.lemmas, row.broader_lemmas, row.other_senses)
        for row in classes.itertuples()
    }


def candidate_frequencies(candidates, rules: Rules) -> list[float | None]:
    """candidates.parquet's `zipf`: each candidate's word frequency in its language (the lookups
    the ranking made, memoised), None where wordfreq does not cover the language or the rule is off."""
    if rules.frequency is None:
        return [None] * len(candidates)
    return [rules.frequency(lang, label) for lang, label in zip(candidates["lang"], candidates["label"])]


def candidate_precisions(candidates, learned: LearnedPriority | None) -> list[float | None]:
    """candidates.parquet's `source_precision`: the estimated precision of the row's source in its
    language (trust.py), None where it was not estimated (one source, English, the rule off)."""
    if learned is None:
        return [None] * len(candidates)
    precision = source_precisions(learned.estimates)
    return [precision.get((lang, source)) for lang, source in zip(candidates["lang"], candidates["source"])]


# languages.parquet: the share of correct labels (precision.py): the figure shown (measured once enough
# is reviewed, else estimated from p_correct) with its interval and basis, the rule labels reviewed
# for it, the labels expected wrong, the p_correct estimate itself, and the measured share per source
PRECISION_COLUMNS = (
    "label_precision",
    "label_precision_low",
    "label_precision_high",
    "label_precision_basis",
    "n_judged",
    "expected_wrong",
    "estimated_precision",
    "measured_sources",
)


def with_precision(languages, figures: dict[str, LanguageFigure]):
    """languages.parquet's rows with the PRECISION_COLUMNS of `figures` (lang -> LanguageFigure)."""
    frame = languages.copy()
    shown = [figures[lang].shown for lang in frame["lang"]]
    frame["label_precision"] = [e.precision for e in shown]
    frame["label_precision_low"] = [e.low for e in shown]
    frame["label_precision_high"] = [e.high for e in shown]
    frame["label_precision_basis"] = [e.basis for e in shown]
    frame["n_judged"] = [e.judged for e in shown]
    frame["expected_wrong"] = [e.expected_wrong for e in shown]
    frame["estimated_precision"] = [figures[lang].estimated.precision for lang in frame["lang"]]
    frame["measured_sources"] = [sources_text(figures[lang].by_source) for lang in frame["lang"]]
    return frame.astype({"n_judged": "int32", "expected_wrong": "float64"})
