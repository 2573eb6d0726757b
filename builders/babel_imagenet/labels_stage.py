"""`babelforge labels`: filtered, selected Babel-ImageNet labels and the language table."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from babelforge.babel_imagenet.candidates import candidate_forms, candidates_frame
from babelforge.babel_imagenet.forms import english_lemma_keys
from babelforge.babel_imagenet.frequency import frequency_lookup, language_lean, wordfreq_version
from babelforge.babel_imagenet.label_choice import LEXICON_CHOICE, PRECISION_FLOOR, drop_label, english_rows, rechoose
from babelforge.babel_imagenet.label_evidence import (
    LexiconLayer,
    choice_table,
    lexicon_p_correct,
    preferred_labels,
    read_layer,
)
from babelforge.babel_imagenet.label_rules import Rules
from babelforge.babel_imagenet.labels import choose_labels
from babelforge.babel_imagenet.language_fates import fates_line, kept_languages, language_fates
from babelforge.babel_imagenet.precision import (
    ESTIMATED,
    LEARNED,
    REVIEWED,
    KeptLanguage,
    floor_move_lines,
    headline_precision,
    label_precisions,
    language_figures,
    review_judgements,
    source_precisions,
    source_weights,
    tradeoff_lines,
)
from babelforge.babel_imagenet.reviews import apply_review_folder, reviewed_labels
from babelforge.babel_imagenet.script_routing import ScriptRouter
from babelforge.babel_imagenet.summaries import (
    frequency_counts,
    headline,
    learned_counts,
    precision_counts,
    purity_counts,
    rule_counts,
    summary_table,
)
from babelforge.babel_imagenet.tables import (
    candidate_frequencies,
    candidate_precisions,
    class_english,
    labels_frame,
    languages_frame,
    source_orders,
    with_precision,
)
from babelforge.babel_imagenet.trust import MIN_EVIDENCE, LearnedPriority
from babelforge.core.config import as_params, from_group, setting
from babelforge.core.dvc_lock import last_build_copy
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_provenance, read_table, write_table
from babelforge.core.languages import ENGLISH, registry
from babelforge.core.metrics import write_metrics
from babelforge.core.progress import info
from babelforge.core.provenance import provenance
from babelforge.core.resources import resource
from babelforge.core.stages import Paths, Stage, stage_paths
from babelforge.lexicon.senses import SENSE_COLUMNS, Sense, built_senses

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
class PrecisionFloor:
    """The precision-coverage knob: a class whose label is less likely right than the floor is
    dropped from its language (precision.py's p_correct), before `min_classes` is applied."""

    # sample 0.5: a label below it is more likely wrong than right, so each class dropped removes more
    # than half an expected wrong label; above 0.5 each further class dropped is more likely a right
    # one (the curve in docs/datasets/label-precision.md). full: 0, the paper keeps every class.
    default: float = setting(
        {"sample": 0.5, "full": 0.0},
        "drop a class from a language when its label's p_correct is below this (0: keep every class; "
        "the build log prints classes kept and expected wrong labels per language it drops from)",
        minimum=0,
        maximum=1,
    )
    languages: dict[str, float] = setting(
        {}, "per-language floors (registry key -> floor), replacing the default", minimum=0, maximum=1
    )

    def of(self, lang: str) -> float:
        return self.languages.get(lang, self.default)

    def check(self, keys) -> None:
        """One line for a floor outside [0, 1] or a language no registry key names."""
        unknown = sorted(set(self.languages) - set(keys))
        if unknown:
            raise BabelforgeError(
                f"labels.precision_floor.languages: {', '.join(unknown)} is not a registry key "
                "(resources/languages.tsv); name keys such as ind_Latn"
            )
        outside = sorted(
            f"{key} {value}" for key, value in {"default": self.default, **self.languages}.items() if value > 1
        )
        if outside:
            raise BabelforgeError(f"labels.precision_floor: {', '.join(outside)} is above 1; a floor is a p_correct")


# the lexicon layer's weights (benchmarks/label_precision.py --write-weights), read when labels.p_correct or
# labels.choose is lexicon
WEIGHTS_FILE = "label_precision_weights.json"


@dataclass(frozen=True)
class Config:
    """The `labels` group of params.yaml."""

    GROUP = "labels"
    min_classes: int = setting(10, "keep a language only with at least this many classes", minimum=1)
    low_precision_sources: list[str] = setting(
        ["WIKIRED", "WIKIDATA_ALIAS"], "sense sources used only when nothing else is left"
    )
    ranking: Literal["first", "agreement"] = setting(
        {"sample": "agreement", "full": "first"},
        "first: the source's first form (the paper); agreement: vernacular, most sources, "
        "source_priority, source order (docs/datasets/babel-imagenet.md)",
    )
    source_priority: SourcePriority = setting(SourcePriority(), "the agreement ranking's source order")
    precision_floor: PrecisionFloor = setting(PrecisionFloor(), "the precision-coverage knob (p_correct floor)")
    p_correct: Literal["rules", "lexicon"] = setting(
        "lexicon",
        "which figure is each label's p_correct (what the floor and the precision figures use); rules: its "
        "source's learned precision moved by agreeing and silent sources (precision.py); lexicon: a logistic "
        "layer on the rules' figure and the label's standing among its class's and language's candidates, "
        f"weights fitted on judged labels (resources/{WEIGHTS_FILE}; held out by language it scores Brier 11 % below a "
        "constant on random judged labels where the rules score 7 % above, AUC 0.76 on all judged labels: "
        "docs/datasets/label-precision.md)",
    )
    choose: Literal["rules", "lexicon"] = setting(
        "rules",
        "who chooses each class's label among its candidates; rules: the ranking (labels.ranking); lexicon: the "
        "candidate the lexicon layer gives the highest p_correct, where it beats the rules' first (never a label "
        "another class keeps). Held out by language on 80 judged classes where the two differ, the rules' label "
        "was right in 62 and the layer's in 65; on the 40 of them drawn at random, 34 and 33 (the refitted layer: 32 "
        "and 32 of 38): no better, so the rules choose by default (docs/datasets/label-precision.md)",
    )
    resolve_duplicates: bool = setting(
        {"sample": True, "full": False},
        "give a class another candidate when its label names several classes",
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
    profile: str = from_group(str, "profile", "the build profile")
    paths: Paths = stage_paths()


# the rules labels.rules can switch off (summaries.RULE_REASONS: the rank_reason values each decides)
SWITCHABLE_RULES = ("frequency", "specificity", "short_form", "polysemy", "purity", "script_span", "learned_priority")


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


def run(config: Config) -> int:

    paths = config.paths
    wordnet_columns = ["class_idx", "wnid", "synset", "clip_name", "lemmas", "taxa", "broader_lemmas", "other_senses"]
    classes = read_table(paths.wordnet, columns=wordnet_columns)
    profile = config.profile
    senses_path = built_senses(paths.senses)  # its name says which source the senses stage read
    senses_frame = read_table(senses_path, columns=list(SENSE_COLUMNS))
    senses = [Sense(*row) for row in senses_frame.itertuples(index=False, name=None)]

    english = english_lemma_keys(list(classes["lemmas"]) + [[name] for name in classes["clip_name"]])
    taxa = {synset: tuple(names) for synset, names in zip(classes["synset"], classes["taxa"])}
    tally: Counter = Counter()
    config.precision_floor.check(registry().keys())
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
        reviewed=reviewed_labels(classes, paths.reviews, english),
        learned=learned,
    )
    trust = learned[0] if learned else None
    ordered_by = trust if rules.learned_priority and rules.ranking == "agreement" else None
    p_rules = label_precisions(choices, trust)
    english_choices = english_rows(dict(zip(classes["synset"], classes["clip_name"])))
    # the cleaning depends on the senses alone: done once for the layer's tables and candidates.parquet
    cleaned = candidate_forms(senses, router, rules, names)
    evidence = EvidenceTables(english_choices, classes, cleaned, english, rules)
    # read once, and only where a setting uses it (a broken file stops the stage in one line)
    layer = read_layer(resource(WEIGHTS_FILE)) if "lexicon" in (config.choose, config.p_correct) else None
    if config.choose == "lexicon":
        choices = layer_choices(choices, p_rules, evidence, trust, layer)
        p_rules = label_precisions(choices, trust)
    p_correct = dict(p_rules)
    if config.p_correct == "lexicon":
        p_correct.update(lexicon_figure(choices, p_rules, evidence, layer))
    floors = {lang: config.precision_floor.of(lang) for lang in sorted({c.lang for c in choices})}
    before: dict[str, list[float]] = {}
    for (lang, _synset), p in sorted(p_correct.items()):
        before.setdefault(lang, []).append(p)
    tradeoff = tradeoff_lines(before, floors)
    choices = [
        drop_label(c, PRECISION_FLOOR) if c.label is not None and p_correct[(c.lang, c.synset)] < floors[c.lang] else c
        for c in choices
    ]
    class_index = dict(zip(classes["synset"], classes["class_idx"]))
    floor_dropped: dict[str, set[int]] = {}
    for choice in choices:
        if choice.rank_reason == PRECISION_FLOOR:
            floor_dropped.setdefault(choice.lang, set()).add(int(class_index[choice.synset]))
    kept = kept_languages(choices, config.min_classes)
    fates = language_fates(choices)
    choices = [c for c in choices if c.lang in kept]
    kept[ENGLISH] = len(english_choices)
    fates[ENGLISH] = len(english_choices)
    all_choices = english_choices + choices

    p_correct.update({(ENGLISH, c.synset): REVIEWED for c in english_choices})  # the reference names
    p_rules.update({(ENGLISH, c.synset): REVIEWED for c in english_choices})
    labels = labels_frame(all_choices, classes, p_correct, p_rules)
    # People's decisions come after the rules (resources/reviews/<lang>.tsv); a bad row stops here.
    labels, reviews, warnings = apply_review_folder(labels, classes, paths.reviews, english)
    labels.loc[labels["reviewed"], "p_correct"] = REVIEWED  # a person accepted or set it
    kept = labels.groupby("lang").size().to_dict()
    candidates = candidates_frame(cleaned, all_choices, classes, english, rules)
    candidates["zipf"] = candidate_frequencies(candidates, rules)
    candidates["source_precision"] = candidate_precisions(candidates, ordered_by)
    candidates["source_precision"] = candidates["source_precision"].astype("float64")
    languages = languages_frame(all_choices, dict(sorted(kept.items())), tally, source_orders(kept, rules, ordered_by))
    figures = language_figures(
        list(zip(labels["lang"], labels["p_correct"], labels["source"], labels["reviewed"])),
        source_weights(trust.estimates) if trust is not None else {},
        judgements_of(labels, reviews, candidates),
        reference=[ENGLISH],
        basis=LEARNED if config.p_correct == "lexicon" else ESTIMATED,
    )
    languages = with_precision(languages, figures)
    record = provenance(
        "labels",
        params={"profile": profile, "labels": as_params(config)},
        models={"word_frequencies": {"wordfreq": wordfreq_version()}} if rules.frequency else None,
        sources={"senses": read_provenance(senses_path).get("sources", {}), "senses_file": senses_path.name},
    )
    # Each artifact records the reviews it depends on, so a review changes no more bytes than it must:
    # the class counts only move with a reject (an accept leaves languages.parquet, and its readers, alone).
    rejected = {lang: len(r["rejected"]) for lang, r in reviews.items() if r["rejected"]}
    # what the last build kept, so an added or lost language is named: dvc repro removed the file before
    # this run, its copy is in the DVC cache
    last = Path(paths.languages) if Path(paths.languages).exists() else last_build_copy(paths.languages)
    kept_before = read_table(last, columns=["lang"])["lang"].tolist() if last is not None else None
    # the classes and groups the last build kept, so a class the floor brings back or drops (a review
    # moved its sources' precision) and a language changing group are named (issue 50)
    previous = [last_build(path) for path in (paths.labels, paths.languages, paths.candidates)]
    kept_then = kept_by_language(*(read_table(path) for path in previous)) if all(previous) else {}

    wanted = [language.key for language in registry() if language.in_babel_imagenet and language.key != ENGLISH]
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
    info(f"labels: {fates_line(fates, config.min_classes, wanted, kept_before)}")
    info(rule_counts(choices, rules))
    info(purity_counts(tally, rules, senses, choices))
    if rules.ranking == "agreement":
        info(learned_counts(ordered_by, rules, sorted(kept)))
    info(precision_counts(figures))
    for line in tradeoff:
        info(f"labels: precision_floor {line}")
    for line in floor_move_lines(kept_then, kept_by_language(labels, languages, candidates), floors, floor_dropped):
        info(f"labels: since the last build: {line}")
    if rules.frequency:
        info(frequency_counts(choices, candidates))
    if config.choose == "lexicon":
        info(f"labels: {layer_choice_line(choices)}")
    decided = sum(sum(r["decisions"].values()) for r in reviews.values())
    write_metrics(
        headline(labels, languages, decided, headline_precision(figures)), paths.metrics, "labels", profile=profile
    )
    info(
        f"labels: {len(labels)} labels in {len(languages)} languages ({decided} review decisions applied) "
        f"-> {paths.labels}, {paths.languages}"
    )
    return 0


@dataclass(frozen=True)
class EvidenceTables:
    """What the lexicon layer's tables are built from, besides the choices (label_evidence.py)."""

    english_choices: list
    classes: object
    cleaned: tuple  # candidate_forms of the senses
    english: frozenset
    rules: Rules

    def of(self, choices, p_rules) -> tuple:
        """labels and candidates as the stage would write them for `choices`, before the floor."""
        reference = {(ENGLISH, c.synset): REVIEWED for c in self.english_choices}
        every = self.english_choices + list(choices)
        labels = labels_frame(every, self.classes, {**p_rules, **reference})
        candidates = candidates_frame(self.cleaned, every, self.classes, self.english, self.rules)
        candidates["zipf"] = candidate_frequencies(candidates, self.rules)
        return labels, candidates


def lexicon_figure(choices, p_rules, evidence: EvidenceTables, layer: LexiconLayer) -> dict:
    """(lang, synset) -> the lexicon layer's p_correct of every chosen non-English label, before the floor."""
    synset_of = dict(zip(evidence.classes["wnid"], evidence.classes["synset"]))
    figure = lexicon_p_correct(*evidence.of(choices, p_rules), layer)
    return {(lang, synset_of[wnid]): p for (lang, wnid), p in figure.items()}


def layer_choice_line(choices) -> str:
    """How many kept labels the lexicon layer chose over the rules' first, per language (most first)."""
    by_language = Counter(c.lang for c in choices if c.rank_reason == LEXICON_CHOICE)
    shown = ", ".join(f"{lang} {n}" for lang, n in sorted(by_language.items(), key=lambda item: (-item[1], item[0])))
    return f"choose lexicon: the layer chose {sum(by_language.values())} labels over the rules' first" + (
        f" ({shown})" if shown else ""
    )


def layer_choices(choices, p_rules, evidence: EvidenceTables, trust, layer: LexiconLayer) -> list:
    """The choices with the label the lexicon layer prefers among each class's candidates (labels.choose:
    lexicon); a class whose label resolved a duplicate (`unique`) keeps it, as that choice was forced."""
    labels, candidates = evidence.of(choices, p_rules)
    precision = source_precisions(trust.estimates) if trust is not None else {}
    table = choice_table(labels, candidates, precision)
    preferred = preferred_labels(table, layer.predict(table))
    wnid_of = dict(zip(evidence.classes["synset"], evidence.classes["wnid"]))
    return [
        rechoose(c, preferred[(c.lang, wnid_of[c.synset])])
        if (c.lang, wnid_of[c.synset]) in preferred and c.rank_reason != "unique"
        else c
        for c in choices
    ]


def last_build(path: str) -> Path | None:
    """`path` as the last build left it: in place (a direct run), else its DVC cache copy (`dvc repro`
    removed the outputs before this run); None for a first build."""
    return Path(path) if Path(path).exists() else last_build_copy(path)


def kept_by_language(labels, languages, candidates) -> dict[str, KeptLanguage]:
    """lang -> what a build kept of it (precision.KeptLanguage), from its labels, languages and
    candidates tables (a build before candidates had `source_precision` gives no precisions)."""
    precision: dict[str, dict[str, float]] = {}
    if "source_precision" in candidates:
        known = candidates.dropna(subset=["source_precision"])
        for lang, source, p in zip(known["lang"], known["source"], known["source_precision"]):
            precision.setdefault(lang, {})[source] = float(p)
    classes: dict[str, dict[int, tuple[str, str]]] = {}
    for lang, idx, label, source in zip(labels["lang"], labels["class_idx"], labels["label"], labels["source"]):
        classes.setdefault(lang, {})[int(idx)] = (str(label), str(source))
    return {
        lang: KeptLanguage(classes.get(lang, {}), str(group), precision.get(lang, {}))
        for lang, group in zip(languages["lang"], languages["group"])
    }


def judgements_of(labels, reviews, candidates) -> dict:
    """lang -> the review judgements of its rule labels (precision.review_judgements), the rules'
    source of each class read from candidates.parquet's chosen rows."""
    chosen = candidates[candidates["chosen"]]
    rule_source: dict[str, dict[int, str]] = {}
    for lang, idx, source in zip(chosen["lang"], chosen["class_idx"], chosen["source"]):
        rule_source.setdefault(lang, {})[int(idx)] = source
    reviewed = labels[labels["reviewed"]]
    return {
        lang: review_judgements(
            reviewed[reviewed["lang"] == lang].to_dict("records"),
            reviews.get(lang, {}).get("rejected", []),
            rule_source.get(lang, {}),
        )
        for lang in sorted(set(reviewed["lang"]) | set(reviews))
    }


STAGE = Stage(
    "labels",
    "filter and select Babel-ImageNet labels per language",
    run,
    config=Config,
    flags={
        "--wordnet": ("paths.wordnet", "output of `babelforge wordnet`"),
        "--senses": ("paths.senses", "output folder of `babelforge senses`"),
        "--out": ("paths.labels", "labels.parquet to write"),
        "--languages": ("paths.languages", "languages.parquet to write"),
        "--reviews": ("paths.reviews", "review files, <lang>.tsv each"),
        "--candidates": ("paths.candidates", "candidates.parquet to write"),
        "--metrics": ("paths.metrics", "folder of the headline metrics; writes labels.json there"),
    },
    deps=(
        "${paths.wordnet}",
        "${paths.senses}",
        "${paths.reviews}",  # people's decisions: a changed review reruns labels and what reads them
        "resources/languages.tsv",
        "resources/confusables.tsv",  # Latin look-alikes in Cyrillic and Greek words (confusables.py)
        "resources/label_precision_weights.json",  # the lexicon layer (labels.p_correct: lexicon)
    ),
    outs=(
        "${paths.labels}",
        "${paths.languages}",
        "${paths.candidates}",
    ),
    metrics=("${paths.metrics}/labels.json",),
    docs="docs/datasets/babel-imagenet.md",
    taggers=tuple(TAGGERS),
    owns={
        "labels": ("data/babel_imagenet/labels.parquet", "Babel-ImageNet labels"),
        "languages": ("data/babel_imagenet/languages.parquet", "Babel-ImageNet languages table"),
        "candidates": (
            "data/babel_imagenet/candidates.parquet",
            "every candidate sense per class and language, with why the rules set it aside",
        ),
    },
)
