"""What a labels build reports: the per-language table it prints, its log lines (the labels each
rule decided, what the purity and script-span rules did, where the learned source order came from,
what the frequency rule decided) and its headline metrics (labels.json of paths.metrics).
Pure: plain data in, text or a mapping out."""

from __future__ import annotations

from collections import Counter

from babelforge.babel_imagenet.frequency import covered_languages
from babelforge.babel_imagenet.label_rules import Rules
from babelforge.babel_imagenet.precision import MEASURED, REFERENCE
from babelforge.babel_imagenet.purity import MIXED_SCRIPT, uncovered_pairs
from babelforge.babel_imagenet.ranking import LEARNED_PRIORITY
from babelforge.babel_imagenet.trust import MIN_EVIDENCE, LearnedPriority, priority_index
from babelforge.core.languages import ENGLISH, registry


def headline(labels, languages, review_decisions: int, precision: dict | None = None) -> dict:
    """labels.json of paths.metrics: what `dvc metrics diff` shows after a labels change;
    `precision`: precision.headline_precision of the build (the expected share of correct labels)."""
    classes = languages["n_classes"]
    return {
        "languages": int(len(languages)),
        "labels": int(len(labels)),
        "classes_per_language": {"min": int(classes.min()), "median": float(classes.median())},
        "review_decisions": int(review_decisions),
        **({"precision": precision} if precision else {}),
    }


def precision_counts(figures) -> str:
    """The build log's line for label precision (precision.py): the median language and the three
    lowest, with intervals, and how many languages a review measured."""
    ranked = sorted(
        ((figure.shown, lang) for lang, figure in figures.items() if figure.shown.basis != REFERENCE),
        key=lambda item: (item[0].precision, item[1]),
    )
    if not ranked:
        return "labels: no label precision estimated"
    middle = ranked[len(ranked) // 2]
    lowest = ", ".join(f"{lang} {estimate.text()}" for estimate, lang in ranked[:3])
    measured = sum(estimate.basis == MEASURED for estimate, _ in ranked)
    return (
        f"labels: expected share of correct labels: median language {middle[1]} {middle[0].text()}; "
        f"lowest {lowest}; {measured} languages measured by review"
    )


def summary_table(languages) -> str:
    header = (
        f"{'lang':<16} {'classes':>7} {'group':<9} {'en-drop':>7} {'mt-drop':>7} {'lowp':>5} "
        f"{'clean':>5} {'cdrop':>5} {'sdrop':>5} {'route':>5}  name"
    )
    lines = [header, "-" * len(header)]
    cleaned = languages.filter(like="n_cleaned_").sum(axis=1)
    dropped = languages.filter(regex="^n_dropped_(placeholder|gloss|symbol|unreadable|empty)$").sum(axis=1)
    routed = languages["n_routed_out"] + languages["n_routed_in"]
    order = languages.sort_values(["n_classes", "lang"], ascending=[False, True]).index
    for i in order:
        row = languages.loc[i]
        lines.append(
            f"{row.lang:<16} {row.n_classes:>7} {row.group:<9} {row.n_dropped_english:>7} "
            f"{row.n_dropped_mt:>7} {row.n_dropped_low_precision:>5} {cleaned[i]:>5} {dropped[i]:>5} "
            f"{row.n_dropped_script:>5} {routed[i]:>5}  {row['name']}"
        )
    counts = languages["group"].value_counts()
    lines.append(
        f"{len(languages)} languages: "
        + ", ".join(f"{g} {counts.get(g, 0)}" for g in ("very-low", "low", "mid", "high"))
    )
    return "\n".join(lines)


def learned_counts(learned: LearnedPriority | None, rules: Rules, langs) -> str:
    """The build log's line for the learned source order: where the evidence set it, where it
    differs from labels.source_priority, and where the evidence was too thin."""
    if learned is None:
        return "labels: learned_priority off; labels.source_priority orders the sources"
    langs = [lang for lang in langs if lang != ENGLISH]
    learned_langs = [lang for lang in langs if lang in learned.orders]
    differ = []
    for lang in learned_langs:
        order = learned.orders[lang]
        positions = [priority_index(source, rules.priority(lang)) for source in order]
        if positions != sorted(positions):  # a source the hand-written order puts later comes first
            differ.append(f"{lang} {'>'.join(order)}")
    return (
        f"labels: learned_priority set the source order of {len(learned_langs)} languages from the sources' "
        f"agreement ({len(differ)} differ from labels.source_priority: {', '.join(differ) or 'none'}); "
        f"{len(langs) - len(learned_langs)} languages with under {MIN_EVIDENCE} classes of evidence keep it"
    )


# rank_reason values each switchable rule decides (the build log counts them)
RULE_REASONS = {
    "frequency": ("frequency", "frequency_unused"),
    "specificity": ("specificity",),
    "short_form": ("short_form",),
    "polysemy": ("polysemy",),
    "purity": ("purity",),
    "script_span": ("script_span",),
    "learned_priority": (LEARNED_PRIORITY,),
}


def rule_counts(choices, rules: Rules) -> str:
    """The build log's line: how many labels each switched-on rule decided."""
    on = {
        "frequency": rules.frequency is not None,
        "specificity": rules.specificity,
        "short_form": rules.short_form,
        "polysemy": rules.polysemy,
        "purity": rules.purity is not None,
        "script_span": rules.script_span,
        "learned_priority": rules.learned_priority,
    }
    reasons = Counter(c.rank_reason for c in choices)
    decided = [f"{name} {sum(reasons[r] for r in RULE_REASONS[name])}" for name, switched in on.items() if switched]
    flagged = sum(c.ambiguous_source for c in choices)
    return f"labels: rules decided {', '.join(decided) or 'nothing (all off)'}; {flagged} labels ambiguous_source"


def purity_counts(tally, rules: Rules, senses, choices) -> str:
    """The build log's line for the purity and script-span rules: forms removed, stripped, flagged,
    labels kept with a foreign-script span, and the shared-wordnet language pairs wordfreq cannot weigh."""
    total = Counter()
    for (_lang, column), n in tally.items():
        total[column] += n
    parts = []
    if rules.purity is not None:
        uncovered = uncovered_pairs(senses, covered_languages(registry()))
        parts.append(
            f"purity removed {total['n_dropped_other_language']} forms of a shared wordnet as another language's"
            + (f" (no word frequencies to weigh {', '.join('/'.join(p) for p in uncovered)})" if uncovered else "")
        )
    if rules.script_span:
        parts.append(
            f"script_span stripped {total['n_cleaned_script_span']} foreign-script spans and flagged "
            f"{total['n_mixed_script']} mixed-script forms, {sum(c.rank_reason == MIXED_SCRIPT for c in choices)} "
            "of them kept as labels (the class has nothing else)"
        )
    return "labels: " + ("; ".join(parts) if parts else "purity and script_span rules off")


def frequency_counts(choices, candidates) -> str:
    """The build log's line for the frequency rule: the labels it decided (a more common word, or a
    word with recorded use over one without) and the candidates without recorded use (`zipf` 0)."""
    by_frequency = Counter(c.rank_reason for c in choices if c.rank_reason.startswith("frequency"))
    return (
        f"labels: frequency rule decided {sum(by_frequency.values())} labels "
        f"({by_frequency['frequency']} a more common word, {by_frequency['frequency_unused']} a word with "
        f"recorded use over one without); {int((candidates['zipf'] == 0).sum())} candidates have no recorded use"
    )
