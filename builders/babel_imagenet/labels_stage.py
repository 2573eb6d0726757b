"""`babelforge labels`: filtered, selected Babel-ImageNet labels and the language table."""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from babelforge.babel_imagenet.candidates import candidates_frame
from babelforge.babel_imagenet.frequency import (
    covered_languages,
    frequency_lookup,
    language_lean,
    wordfreq_version,
)
from babelforge.babel_imagenet.labels import (
    ENGLISH,
    LEARNED_PRIORITY,
    TALLY_COLUMNS,
    ClassEnglish,
    Rules,
    ScriptRouter,
    choose_labels,
    english_lemma_keys,
    english_rows,
    kept_languages,
    resource_group,
)
from babelforge.babel_imagenet.purity import MIXED_SCRIPT, uncovered_pairs
from babelforge.babel_imagenet.reviews import apply_review_folder, read_reviews, review_context
from babelforge.babel_imagenet.trust import MIN_EVIDENCE, PARAMS, LearnedPriority, priority_index
from babelforge.core.config import Paths, as_params, from_group, hidden_alias, setting, stage_paths
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_provenance, read_table, write_table
from babelforge.core.languages import registry
from babelforge.core.metrics import write_metrics
from babelforge.core.progress import info
from babelforge.core.provenance import provenance
from babelforge.core.text_taggers import duplicate_flags
from babelforge.lexicon.senses import SENSE_COLUMNS, Sense
from babelforge.lexicon.senses_stage import Config as SensesConfig

TAGGERS = ("duplicate_v1",)


@dataclass(frozen=True)
class SourcePriority:
    """Which source's form wins among equally supported ones (`agreement` ranking)."""

    default: list[str] = setting(["wikt", "omw", "cldr"], "sources by kind (`omw`) or name (`omw:ell`), best first")
    languages: dict[str, list[str]] = setting(
        {},
        "per-language orders (registry key -> list), replacing the default; with rules.learned_priority "
        "the evidence orders a language's sources and these only break near ties and where it is thin",
    )


@dataclass(frozen=True)
class Config:
    """The `labels` group of params.yaml."""

    GROUP = "labels"
    min_classes: int = setting(10, "keep a language only with at least this many classes", minimum=1)
    low_precision_sources: list[str] = setting(
        ["WIKIRED", "WIKIDATA_ALIAS"], "sense sources used only when nothing else is left"
    )
    ranking: Literal["first", "agreement"] = setting(
        "agreement",
        "first: the source's first form (the paper); agreement: vernacular, most sources, "
        "source_priority, source order (per profile: sample agreement, full first)",
    )
    source_priority: SourcePriority = setting(SourcePriority(), "the agreement ranking's source order")
    resolve_duplicates: bool = setting(
        True,
        "give a class another candidate when its label names several classes (per profile: sample true, full false)",
    )
    rules: dict[str, bool] = setting(
        {
            "frequency": True,
            "specificity": True,
            "short_form": True,
            "polysemy": True,
            "purity": True,
            "script_span": True,
            "learned_priority": True,
        },
        "label rules that can be switched off to measure them (dvc exp run -S labels.rules.frequency=false); "
        "frequency: among equally supported candidates (agreement ranking) a word with recorded use beats one "
        "without, and a tenfold more common word a rarer one (wordfreq, ~40 languages); "
        "specificity: among equally supported candidates, one another class of the language gives with more "
        "sources, or that names a broader WordNet synset, loses to one specific to the class; "
        "short_form: where the English name is a compound, a one-word, one-source candidate beside a longer "
        "one (scoop beside oscilloscoop) loses; "
        "polysemy: where the English lemma has other WordNet senses, a candidate with another source, or a phrase "
        "narrowing another candidate (sampul surat beside sampul), beats one without (the rest are flagged "
        "ambiguous_source); "
        "purity: a form a wordnet shared by two close languages (Indonesian/Malay) gives in both files is removed "
        "from the one where no other source gives it and wordfreq finds it at least tenfold rarer (other_language); "
        "script_span: a trailing or leading span in a script the language does not use (a Latin binomial) is "
        "stripped where the rest stands alone, else the form is used only when the class has nothing else; "
        "learned_priority: each language's source order comes from its sources' precision, estimated from "
        "how often a source's first candidate is given by another source of the class (and from reviewed "
        "labels), smoothed toward the source kind's estimate over all languages; a language with fewer than "
        f"{MIN_EVIDENCE} classes of such evidence keeps source_priority (agreement ranking only)",
    )
    script_routes: dict[str, dict[str, str]] = setting(
        {"hbs_Latn": {"Cyrl": "srp_Cyrl"}, "kur_Latn": {"Arab": "ckb_Arab"}},
        "key -> {script: key}: where a form in another script goes when the language's ISO code differs "
        "(macro-languages); same-code keys (xxx_Scrp) are found in the registry",
    )
    senses: SensesConfig = from_group(SensesConfig, "senses", "the senses stage's settings (which source to read)")
    profile: str = from_group(str, "profile", "the build profile")
    paths: Paths = stage_paths()


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wordnet", dest="paths.wordnet", metavar="FILE", help="output of `babelforge wordnet` (paths.wordnet)"
    )
    parser.add_argument(
        "--senses", dest="paths.senses", metavar="DIR", help="output folder of `babelforge senses` (paths.senses)"
    )
    parser.add_argument("--out", dest="paths.labels", metavar="FILE", help="labels.parquet to write (paths.labels)")
    parser.add_argument(
        "--languages", dest="paths.languages", metavar="FILE", help="languages.parquet to write (paths.languages)"
    )
    parser.add_argument(
        "--reviews", dest="paths.reviews", metavar="DIR", help="review files, <lang>.tsv each (paths.reviews)"
    )
    parser.add_argument(
        "--candidates", dest="paths.candidates", metavar="FILE", help="candidates.parquet to write (paths.candidates)"
    )
    parser.add_argument(
        "--metrics",
        dest="paths.metrics",
        metavar="DIR",
        help="folder of the headline metrics; writes labels.json there (paths.metrics)",
    )
    hidden_alias(parser, "--senses-dir", "--senses")
    hidden_alias(parser, "--labels", "--out")


INT_COLUMNS = (
    "class_idx",
    "rank",
    "n_senses",
    "n_dropped_english",
    "n_dropped_mt",
    "n_dropped_low_precision",
    "n_sources",
)


def headline(labels, languages, review_decisions: int) -> dict:
    """labels.json of paths.metrics: what `dvc metrics diff` shows after a labels change."""
    classes = languages["n_classes"]
    return {
        "languages": int(len(languages)),
        "labels": int(len(labels)),
        "classes_per_language": {"min": int(classes.min()), "median": float(classes.median())},
        "review_decisions": int(review_decisions),
    }


def labels_frame(choices, classes):
    """Rows of labels.parquet from LabelChoices (only chosen labels) and the class table."""
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
        }
        for c in choices
        if c.label is not None
    ]
    frame = pd.DataFrame(rows).sort_values(["lang", "class_idx"], kind="stable").reset_index(drop=True)
    # another class of the language has the same label (the audit's `duplicate` check, one tagger)
    frame["is_duplicate"] = duplicate_flags(frame["lang"], frame["label"])
    for column in INT_COLUMNS:
        frame[column] = frame[column].astype("int32")
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
            t = totals.setdefault(c.lang, [0, 0, 0, 0])
            t[0] += c.n_dropped_english
            t[1] += c.n_dropped_mt
            t[2] += c.n_dropped_low_precision
            t[3] += c.label is None
    languages = registry()
    counts = (
        "n_classes",
        "n_dropped_english",
        "n_dropped_mt",
        "n_dropped_low_precision",
        "n_classes_emptied",
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


def candidate_precisions(candidates, learned: LearnedPriority | None) -> list[float | None]:
    """candidates.parquet's `source_precision`: the estimated precision of the row's source in its
    language (trust.py), None where it was not estimated (one source, English, the rule off)."""
    if learned is None:
        return [None] * len(candidates)
    precision = {(entry.lang, entry.source): entry.precision for entry in learned.estimates}
    return [precision.get((lang, source)) for lang, source in zip(candidates["lang"], candidates["source"])]


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


SWITCHABLE_RULES = ("frequency", "specificity", "short_form", "polysemy", "purity", "script_span", "learned_priority")
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


def rules_of(config: Config, languages=None):
    """The label rules of `config`; `languages` (registry Languages) are those whose word
    frequencies the frequency rule may look up (None: the whole registry)."""
    unknown = sorted(set(config.rules) - set(SWITCHABLE_RULES))
    if unknown:
        raise BabelforgeError(
            f"labels.rules: unknown rule(s) {', '.join(unknown)}; one of {', '.join(SWITCHABLE_RULES)}"
        )
    frequency = None
    if config.rules.get("frequency", True) and config.ranking == "agreement":
        frequency = frequency_lookup(languages if languages is not None else registry())
    return Rules(
        frequency=frequency,
        ranking=config.ranking,
        source_priority=tuple(config.source_priority.default),
        source_priority_by_lang={lang: tuple(order) for lang, order in config.source_priority.languages.items()},
        low_precision_sources=frozenset(config.low_precision_sources),
        resolve_duplicates=config.resolve_duplicates,
        specificity=config.rules.get("specificity", True),
        short_form=config.rules.get("short_form", True),
        polysemy=config.rules.get("polysemy", True),
        # like the ranking rules, the purity rules are part of `agreement`; `first` stays the paper's procedure
        script_span=config.rules.get("script_span", True) and config.ranking == "agreement",
        purity=language_lean(languages if languages is not None else registry())
        if config.rules.get("purity", True) and config.ranking == "agreement"
        else None,
        learned_priority=config.rules.get("learned_priority", True) and config.ranking == "agreement",
    )


def class_english(classes) -> dict[str, ClassEnglish]:
    """synset -> what the wordnet artifact says of its English name (lemmas and CLIP name,
    `broader_lemmas`, `other_senses`)."""
    return {
        row.synset: ClassEnglish.of(row.clip_name, row.lemmas, row.broader_lemmas, row.other_senses)
        for row in classes.itertuples()
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
    decided = [f"{name} {sum(reasons[r] for r in RULE_REASONS[name])}" for name in SWITCHABLE_RULES if on[name]]
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


def candidate_frequencies(candidates, rules: Rules) -> list[float | None]:
    """candidates.parquet's `zipf`: each candidate's word frequency in its language (the lookups
    the ranking made, memoised), None where wordfreq does not cover the language or the rule is off."""
    if rules.frequency is None:
        return [None] * len(candidates)
    return [rules.frequency(lang, label) for lang, label in zip(candidates["lang"], candidates["label"])]


def reviewed_labels(classes, folder, english_keys) -> dict[tuple[str, str], str]:
    """(lang, synset) -> the label a person set (`replace`) or accepted with its text pinned
    (`accept` with a label): evidence for the sources' trust. An `accept` without a label
    accepts whatever the rules chose, which depends on the order being learned: not evidence."""
    reviews, _ = read_reviews(folder, review_context(classes, english_keys), registry().keys())
    synset_of = dict(zip(classes["wnid"], classes["synset"]))
    return {
        (lang, synset_of[review.wnid]): review.label
        for lang, decisions in reviews.items()
        for review in decisions
        if review.label and review.decision in ("accept", "replace")
    }


def run(config: Config) -> int:

    paths = config.paths
    wordnet_columns = ["class_idx", "wnid", "synset", "clip_name", "lemmas", "taxa", "broader_lemmas", "other_senses"]
    classes = read_table(paths.wordnet, columns=wordnet_columns)
    source, profile = config.senses.source, config.profile
    senses_path = Path(paths.senses) / f"{source}.parquet"
    if not senses_path.exists():
        raise BabelforgeError(f"{senses_path}: no senses for source {source!r}; run `babelforge senses` first")
    senses_frame = read_table(senses_path, columns=list(SENSE_COLUMNS))
    senses = [Sense(*row) for row in senses_frame.itertuples(index=False, name=None)]

    english = english_lemma_keys(list(classes["lemmas"]) + [[name] for name in classes["clip_name"]])
    taxa = {synset: tuple(names) for synset, names in zip(classes["synset"], classes["taxa"])}
    tally: Counter = Counter()
    router, rules = ScriptRouter(registry(), config.script_routes), rules_of(config)
    names = {row.synset: (*row.lemmas, row.clip_name) for row in classes.itertuples()}
    learned: list[LearnedPriority] = []
    choices = choose_labels(
        senses,
        english,
        router,
        rules,
        taxa,
        tally=tally,
        english=class_english(classes),
        class_names=names,
        reviewed=reviewed_labels(classes, paths.reviews, english) if rules.learned_priority else None,
        learned=learned,
    )
    trust = learned[0] if learned else None
    kept = kept_languages(choices, config.min_classes)
    choices = [c for c in choices if c.lang in kept]
    english_choices = english_rows(dict(zip(classes["synset"], classes["clip_name"])))
    kept[ENGLISH] = len(english_choices)
    all_choices = english_choices + choices

    labels = labels_frame(all_choices, classes)
    # People's decisions come after the rules (resources/reviews/<lang>.tsv); a bad row stops here.
    labels, reviews, warnings = apply_review_folder(labels, classes, paths.reviews, english)
    kept = labels.groupby("lang").size().to_dict()
    candidates = candidates_frame(senses, all_choices, classes, english, rules, router)
    candidates["zipf"] = candidate_frequencies(candidates, rules)
    candidates["source_precision"] = candidate_precisions(candidates, trust)
    candidates["source_precision"] = candidates["source_precision"].astype("float64")
    languages = languages_frame(all_choices, dict(sorted(kept.items())), tally, source_orders(kept, rules, trust))
    record = provenance(
        "labels",
        params={"profile": profile, "labels": as_params(config)},
        models={"word_frequencies": {"wordfreq": wordfreq_version()}} if rules.frequency else None,
        sources={"senses": read_provenance(senses_path).get("sources", {}), "senses_file": senses_path.name},
    )
    # Each artifact records the reviews it depends on, so a review changes no more bytes than it must:
    # the class counts only move with a reject (an accept leaves languages.parquet, and its readers, alone).
    rejected = {lang: len(r["rejected"]) for lang, r in reviews.items() if r["rejected"]}
    write_table(
        labels,
        paths.labels,
        sort_by=["lang", "class_idx"],
        provenance={**record, "sources": {**record["sources"], "reviews": reviews}},
    )
    write_table(
        languages,
        paths.languages,
        sort_by=["lang"],
        provenance={**record, "sources": {**record["sources"], **({"reviews_rejected": rejected} if rejected else {})}},
    )
    write_table(
        candidates, paths.candidates, sort_by=["lang", "class_idx", "rank", "source", "label"], provenance=record
    )
    for warning in warnings:
        info(f"labels: review {warning}")
    print(summary_table(languages))
    info(rule_counts(choices, rules))
    info(purity_counts(tally, rules, senses, choices))
    if rules.ranking == "agreement":
        info(learned_counts(trust, rules, sorted(kept)))
    if rules.frequency:
        by_frequency = Counter(c.rank_reason for c in choices if c.rank_reason.startswith("frequency"))
        info(
            f"labels: frequency rule decided {sum(by_frequency.values())} labels "
            f"({by_frequency['frequency']} a more common word, {by_frequency['frequency_unused']} a word with "
            f"recorded use over one without); {int((candidates['zipf'] == 0).sum())} candidates have no recorded use"
        )
    decided = sum(sum(r["decisions"].values()) for r in reviews.values())
    write_metrics(headline(labels, languages, decided), paths.metrics, "labels", profile=profile)
    info(
        f"labels: {len(labels)} labels in {len(languages)} languages ({decided} review decisions applied) "
        f"-> {paths.labels}, {paths.languages}"
    )
    return 0
