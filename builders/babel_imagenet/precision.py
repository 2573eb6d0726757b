"""Label quality as a figure: each label's chance of being right (`p_correct`), each language's
expected share of correct labels with an interval, the same measured from a reviewed sample, and
the precision-coverage trade-off of dropping the least likely labels.

`p_correct` starts from the learned precision of the label's source in its language (trust.py: how
often the source's first candidate is given by another source, a Beta posterior smoothed toward the
source kind's pooled estimate) and moves it by the class's other evidence, as independent
likelihood ratios on the odds:

* every other source that gives the same label multiplies the odds by AGREEMENT_ODDS, every other
  source of the class that does not give it by SILENCE_ODDS. Both follow from two assumed rates:
  a source lists a right label among its forms with probability SYNONYM_RECALL (sources list few
  synonyms) and a wrong one with SHARED_ERROR (two sources make the same mistake, e.g. the same
  wrong sense of an ambiguous English name);
* every rule flag on the label (`FLAGS`: a polysemous name with one unsupported source, a label
  naming two classes, a low-precision source, a foreign-script span) multiplies them by FLAG_ODDS.

A label a person accepted or set has p_correct 1. The calibration table in
docs/datasets/babel-imagenet.md checks the result against judged labels.

A language's figure says what it rests on: `estimated` (its sources' precisions learned from
cross-source agreement or reviews), `measured` (a reviewed sample, below), `prior` (no class of the
language has two sources or a review: every source precision is its kind's pooled prior, so the
figure is a guess with a prior-wide interval), `reference` (English).

A language's expected precision is the mean of its labels' p_correct; its interval is a Beta with
that mean and the variance of two parts: the uncertainty of each source's precision (a Beta with
its evidence: the comparisons and reviews behind it plus the prior's pseudo-counts) and the chance
variation of the labels themselves. Once people reviewed at least MIN_MEASURED of a language's
rule labels (a sample, `babelforge review export LANG --sample N`), its figure is measured instead:
the reviewed share right, a Jeffreys Beta interval, applied to the labels nobody reviewed (the
reviewed ones are right by decision).

Pure: plain data in, plain data out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from babelforge.babel_imagenet.trust import PRIOR_STRENGTH, REVIEW_WEIGHT, SourceTrust
from babelforge.core.text_taggers import duplicate_flags

SYNONYM_RECALL = 0.5  # chance another source lists a right label among its forms
SHARED_ERROR = 0.05  # chance another source lists the same wrong label
AGREEMENT_ODDS = SYNONYM_RECALL / SHARED_ERROR  # another source gives the label: x10
SILENCE_ODDS = (1 - SYNONYM_RECALL) / (1 - SHARED_ERROR)  # another source of the class does not: x0.53
# A rule flag halves the odds: a flagged label is a suspect, not a verdict (the audit reports it as such).
FLAG_ODDS = 0.5
FLAGS = ("ambiguous_source", "is_duplicate", "used_low_precision", "mixed_script")
UNKNOWN_PRECISION = 0.5  # a source with no estimate in the language (none of its forms reached the ranking)
REVIEWED = 1.0  # a label a person accepted or set
LEVEL = 0.95  # the intervals' coverage
MIN_MEASURED = 10  # reviewed rule labels a language needs before its figure is measured, not estimated
JEFFREYS = 0.5  # the Beta prior of a measured share (Jeffreys)
ESTIMATED, MEASURED, REFERENCE = "estimated", "measured", "reference"
# estimated from the lexicon layer's p_correct (label_evidence.py: weights fitted on judged labels, labels.p_correct:
# lexicon), where ESTIMATED is the rules' figure alone
LEARNED = "learned"
# an estimated figure none of whose sources another source or a review could check (one source per
# class everywhere): its source precisions are the pooled prior's, so say so (issue 48)
PRIOR = "prior"
PROBABILITY_LIMIT = 1e-4  # p_correct stays inside (0, 1), where odds are finite


def _odds(p: float) -> float:
    p = min(max(p, PROBABILITY_LIMIT), 1 - PROBABILITY_LIMIT)
    return p / (1 - p)


def p_correct(source_precision: float, agreeing: int, silent: int, flags: int) -> float:
    """A label's chance of being right: `source_precision` (its source's learned precision in the
    language) moved by `agreeing` other sources giving the label, `silent` other sources of the
    class not giving it and `flags` rule flags (see the module doc)."""
    odds = _odds(source_precision) * AGREEMENT_ODDS**agreeing * SILENCE_ODDS**silent * FLAG_ODDS**flags
    return min(max(round(odds / (1 + odds), 4), PROBABILITY_LIMIT), 1 - PROBABILITY_LIMIT)


@dataclass(frozen=True)
class LabelEvidence:
    """What p_correct weighs for one label."""

    lang: str
    source: str
    agreeing: int  # other sources giving the label
    silent: int  # other sources of the class not giving it
    flags: tuple[str, ...]  # the FLAGS the label has


def choice_evidence(choice, duplicate: bool) -> LabelEvidence:
    """The evidence of a LabelChoice (labels.py) with a label: its sources, the class's sources
    (every source of a ranked candidate), its flags; `duplicate`: another class has the label."""
    class_sources = {source for candidate in choice.candidates for source in candidate.sources}
    giving = max(choice.n_sources, 1)
    flags = {
        "ambiguous_source": choice.ambiguous_source,
        "is_duplicate": duplicate,
        "used_low_precision": choice.used_low_precision,
        "mixed_script": choice.rank_reason == "mixed_script",
    }
    return LabelEvidence(
        choice.lang,
        choice.source,
        giving - 1,
        max(len(class_sources) - giving, 0),
        tuple(name for name in FLAGS if flags[name]),
    )


def label_p_correct(evidence: LabelEvidence, precision: Mapping[tuple[str, str], float]) -> float:
    """p_correct of a label from its evidence and {(lang, source): learned precision}."""
    base = precision.get((evidence.lang, evidence.source), UNKNOWN_PRECISION)
    return p_correct(base, evidence.agreeing, evidence.silent, len(evidence.flags))


def source_precisions(estimates: Iterable[SourceTrust]) -> dict[tuple[str, str], float]:
    return {(entry.lang, entry.source): entry.precision for entry in estimates}


def source_weights(estimates: Iterable[SourceTrust]) -> dict[tuple[str, str], float]:
    """(lang, source) -> the pseudo-observations behind its precision: its comparisons, its reviews
    (REVIEW_WEIGHT each) and the prior's PRIOR_STRENGTH, as in trust.estimate_trust."""
    return {
        (entry.lang, entry.source): entry.opportunities + REVIEW_WEIGHT * entry.reviewed + PRIOR_STRENGTH
        for entry in estimates
    }


# --- intervals -----------------------------------------------------------------------------------


def beta_interval(mean: float, variance: float, level: float = LEVEL) -> tuple[float, float]:
    """The equal-tailed interval of the Beta with this mean and variance (method of moments);
    a variance the Beta cannot have is narrowed to the largest it can (a Beta(mean, 1-mean) share)."""
    from scipy.stats import beta

    if variance <= 0 or mean <= 0 or mean >= 1:
        return (round(mean, 4), round(mean, 4))
    concentration = max(mean * (1 - mean) / variance - 1, 1.0)
    tail = (1 - level) / 2
    low, high = beta.ppf([tail, 1 - tail], mean * concentration, (1 - mean) * concentration)
    return (round(float(low), 4), round(float(high), 4))


def jeffreys_interval(right: int, judged: int, level: float = LEVEL) -> tuple[float, float, float]:
    """(posterior mean, low, high) of a share measured as `right` of `judged` (Jeffreys prior)."""
    from scipy.stats import beta

    a, b = right + JEFFREYS, judged - right + JEFFREYS
    tail = (1 - level) / 2
    low, high = beta.ppf([tail, 1 - tail], a, b)
    return (round(a / (a + b), 4), round(float(low), 4), round(float(high), 4))


@dataclass(frozen=True)
class Estimate:
    """A language's share of correct labels: expected (`estimated`, from p_correct), `measured`
    (from reviewed labels) or `reference` (English: the class names themselves)."""

    precision: float
    low: float
    high: float
    basis: str
    judged: int = 0  # reviewed rule labels a measured figure rests on
    expected_wrong: float = 0.0  # labels expected wrong: (1 - precision) x labels

    def text(self) -> str:
        """`94.1 % [90.2-96.8] estimated` / `... learned (judged labels)` / `... measured (50 reviewed)` /
        `... prior only (no overlap)`."""
        basis = f"{MEASURED} ({self.judged} reviewed)" if self.basis == MEASURED else self.basis
        if self.basis == LEARNED:
            basis = "learned (from judged labels)"
        if self.basis == PRIOR:
            basis = "prior only (no source overlap)"
        return f"{100 * self.precision:.1f} % [{100 * self.low:.1f}-{100 * self.high:.1f}] {basis}"


def estimate_language(
    p_values: Sequence[float], sources: Sequence[str], weights: Mapping[str, float], level: float = LEVEL
) -> Estimate:
    """The expected precision of one language's labels (`p_values`, each label's `sources` entry its
    source) and its interval; `weights`: source -> pseudo-observations behind its precision
    (a source not in it, such as a reviewer's, adds no source uncertainty)."""
    n = len(p_values)
    if not n:
        return Estimate(0.0, 0.0, 0.0, ESTIMATED)
    mean = sum(p_values) / n
    by_source: dict[str, list[float]] = defaultdict(list)
    for p, source in zip(p_values, sources):
        by_source[source].append(p)
    variance = sum(p * (1 - p) for p in p_values) / n**2
    for source, values in by_source.items():
        if source in weights:
            share, p_source = len(values) / n, sum(values) / len(values)
            variance += share**2 * p_source * (1 - p_source) / (weights[source] + 1)
    low, high = beta_interval(mean, variance, level)
    return Estimate(round(mean, 4), low, high, ESTIMATED, expected_wrong=round(n * (1 - mean), 1))


# --- measured by review ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Judgement:
    """One reviewed rule label: its source and whether the reviewer kept it."""

    source: str
    right: bool


def review_judgements(rows: Iterable[Mapping], rejected: Iterable[Mapping], rule_source: Mapping[int, str]) -> list:
    """The judgements of one language's reviews: labels.parquet rows (an accept keeping the rules'
    label is right, a replace by another label wrong; an accept the rules since moved away from
    judges nothing of today's rules) and the classes a review rejected (wrong). `rule_source`:
    class_idx -> the source of the rules' label (candidates.parquet's chosen row)."""
    judgements = []
    for row in rows:
        if not row.get("reviewed") or row.get("review_stale") or not isinstance(row.get("rule_label"), str):
            continue
        source = rule_source.get(int(row["class_idx"]), str(row["source"]))
        judgements.append(Judgement(source, row["label"] == row["rule_label"]))
    judgements += [Judgement(rule_source.get(int(r["class_idx"]), ""), False) for r in rejected]
    return judgements


def measured_by_source(
    judgements: Sequence[Judgement], level: float = LEVEL
) -> dict[str, tuple[int, int, float, float]]:
    """source -> (right, judged, low, high): the reviewed share right per source, Jeffreys interval."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for judgement in judgements:
        counts[judgement.source][0] += judgement.right
        counts[judgement.source][1] += 1
    return {
        source: (right, judged, *jeffreys_interval(right, judged, level)[1:])
        for source, (right, judged) in sorted(counts.items())
    }


def measured_language(judgements: Sequence[Judgement], n_labels: int, n_decided: int, level: float = LEVEL) -> Estimate:
    """The measured figure of a language with `n_labels` labels, `n_decided` of them set or
    accepted by a person: the reviewed share right (Jeffreys) holds for the other labels."""
    right = sum(j.right for j in judgements)
    share, low, high = jeffreys_interval(right, len(judgements), level)
    rest = max(n_labels - n_decided, 0)

    def shipped(p: float) -> float:
        return round((n_decided + rest * p) / n_labels, 4) if n_labels else 0.0

    precision = shipped(share)
    return Estimate(
        precision,
        shipped(low),
        shipped(high),
        MEASURED,
        judged=len(judgements),
        expected_wrong=round(rest * (1 - share), 1),
    )


def sources_text(by_source: Mapping[str, tuple[int, int, float, float]]) -> str:
    """`wikt 40/42 [85.1-99.0]; omw:msa 4/8 [...]`: the per-source figures in one cell."""
    return "; ".join(
        f"{source} {right}/{judged} [{100 * low:.1f}-{100 * high:.1f}]"
        for source, (right, judged, low, high) in by_source.items()
    )


# --- the precision-coverage knob ----------------------------------------------------------------------


def coverage_curve(p_values: Sequence[float], floors: Sequence[float]) -> list[tuple[float, int, float]]:
    """(floor, labels kept, expected wrong labels among them) for each floor: the trade-off of
    dropping every label with p_correct below it."""
    curve = []
    for floor in floors:
        kept = [p for p in p_values if p >= floor]
        curve.append((floor, len(kept), round(sum(1 - p for p in kept), 1)))
    return curve


def tradeoff_lines(before: Mapping[str, Sequence[float]], floors: Mapping[str, float]) -> list[str]:
    """One line per language the floor drops labels from, most dropped first: classes kept and
    expected wrong labels before and after."""
    lines = []
    for lang, p_values in before.items():
        floor = floors.get(lang, 0.0)
        (_, n_all, wrong_all), (_, n_kept, wrong_kept) = coverage_curve(p_values, [0.0, floor])
        if n_kept < n_all:
            lines.append(
                (n_all - n_kept, lang, f"{lang} {n_all}->{n_kept} classes, expected wrong {wrong_all}->{wrong_kept}")
            )
    return [text for _, _, text in sorted(lines, key=lambda item: (-item[0], item[1]))]


@dataclass(frozen=True)
class KeptLanguage:
    """What one build kept of a language: class_idx -> (label, source) of its labelled classes, its
    resource group and its sources' learned precision (candidates.parquet's `source_precision`)."""

    classes: Mapping[int, tuple[str, str]]
    group: str
    source_precision: Mapping[str, float]


def floor_move_lines(
    before: Mapping[str, KeptLanguage],
    after: Mapping[str, KeptLanguage],
    floors: Mapping[str, float],
    floor_dropped: Mapping[str, Iterable[int]],
    shown: int = 6,
) -> list[str]:
    """One line per language kept by both builds whose precision-floor classes or resource group moved:
    the classes back above the floor and those now below it (class_idx and label, at most `shown` of
    each), why (the sources whose learned precision moved: reviews, or new senses, move p_correct of
    the labels nobody reviewed), and the group (from -> to). A review moving a language's figure moves
    its classes too, so this is never silent (issue 50). `floor_dropped`: lang -> classes the floor
    dropped in `after`; classes a review labelled or rejected are the review's, not listed here."""
    lines = []
    for lang in sorted(set(before) & set(after)):
        old, new = before[lang], after[lang]
        dropped = set(floor_dropped.get(lang, ()))
        back = sorted(i for i in set(new.classes) - set(old.classes) if not new.classes[i][1].startswith("review"))
        below = sorted(i for i in set(old.classes) - set(new.classes) if i in dropped)
        if not back and not below and old.group == new.group:
            continue
        parts = [f"{lang} {len(old.classes)}->{len(new.classes)} classes"]
        if back:
            parts.append(
                f"{len(back)} back above precision_floor {floors.get(lang, 0.0)}: {_classes(back, new, shown)}"
            )
        if below:
            parts.append(
                f"{len(below)} now below precision_floor {floors.get(lang, 0.0)}: {_classes(below, old, shown)}"
            )
        moved = [
            f"{source} {old.source_precision[source]:.2f}->{p:.2f}"
            for source, p in sorted(new.source_precision.items())
            if source in old.source_precision and round(old.source_precision[source], 2) != round(p, 2)
        ]
        if back or below:
            parts.append(
                f"its sources' precision moved ({', '.join(moved)}), so did the labels' p_correct"
                if moved
                else "its labels' evidence changed (other sources, flags)"
            )
        if old.group != new.group:
            parts.append(f"resource group {old.group} -> {new.group}")
        lines.append("; ".join(parts))
    return lines


def _classes(indices: Sequence[int], kept: KeptLanguage, shown: int) -> str:
    named = ", ".join(f"{i} {kept.classes[i][0]!r}" for i in indices[:shown])
    return named + (f" and {len(indices) - shown} more" if len(indices) > shown else "")


# --- a build's figures -------------------------------------------------------------------------------


@dataclass(frozen=True)
class LanguageFigure:
    """What languages.parquet says of a language's label quality."""

    shown: Estimate  # the figure: measured once enough is reviewed, else estimated
    estimated: Estimate  # always the p_correct figure (calibration compares the two)
    by_source: Mapping[str, tuple[int, int, float, float]]  # measured per source (reviewed languages)


def language_figures(
    labels: Sequence[tuple[str, float, str, bool]],
    weights: Mapping[tuple[str, str], float],
    judgements: Mapping[str, Sequence[Judgement]],
    reference: Iterable[str] = (),
    min_measured: int = MIN_MEASURED,
    basis: str = ESTIMATED,
) -> dict[str, LanguageFigure]:
    """lang -> its LanguageFigure. `labels`: (lang, p_correct, source, decided by a person) per
    label; `weights`: source_weights; `judgements`: lang -> its review_judgements; `reference`:
    languages whose labels are the reference names (English); `basis`: what an estimate rests on
    (ESTIMATED: the rules' p_correct; LEARNED: the lexicon layer's)."""
    grouped: dict[str, list[tuple[float, str, bool]]] = defaultdict(list)
    for lang, p, source, decided in labels:
        grouped[lang].append((p, source, decided))
    reference = set(reference)
    figures = {}
    for lang, rows in sorted(grouped.items()):
        if lang in reference:
            exact = Estimate(1.0, 1.0, 1.0, REFERENCE)
            figures[lang] = LanguageFigure(exact, exact, {})
            continue
        own = {source: w for (where, source), w in weights.items() if where == lang}
        estimated = estimate_language([p for p, _, _ in rows], [source for _, source, _ in rows], own)
        estimated = replace(estimated, basis=basis)
        if all(weight <= PRIOR_STRENGTH for weight in own.values()):  # nothing checked any of its sources
            estimated = replace(estimated, basis=PRIOR)
        judged = judgements.get(lang, ())
        shown = estimated
        if len(judged) >= min_measured:
            shown = measured_language(judged, len(rows), sum(decided for _, _, decided in rows))
        figures[lang] = LanguageFigure(shown, estimated, measured_by_source(judged) if judged else {})
    return figures


def headline_precision(figures: Mapping[str, LanguageFigure]) -> dict:
    """labels.json's `precision`: the languages' figures summed up (reference languages left out)."""
    shown = [f.shown for f in figures.values() if f.shown.basis != REFERENCE]
    if not shown:
        return {}
    values = sorted(e.precision for e in shown)
    middle = len(values) // 2
    median = values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
    return {
        "mean": round(sum(values) / len(values), 4),
        "median": round(median, 4),
        "min": values[0],
        "expected_wrong_labels": round(sum(e.expected_wrong for e in shown), 1),
        "measured_languages": sum(e.basis == MEASURED for e in shown),
        "prior_only_languages": sum(e.basis == PRIOR for e in shown),
    }


def label_precisions(choices: Sequence, trust) -> dict[tuple[str, str], float]:
    """(lang, synset) -> p_correct of every LabelChoice with a label; `trust`: the build's
    LearnedPriority (its estimates are the base; None: every source UNKNOWN_PRECISION)."""
    labelled = [choice for choice in choices if choice.label is not None]
    duplicates = duplicate_flags([c.lang for c in labelled], [c.label for c in labelled])
    precision = source_precisions(trust.estimates) if trust is not None else {}
    return {
        (choice.lang, choice.synset): label_p_correct(choice_evidence(choice, bool(duplicate)), precision)
        for choice, duplicate in zip(labelled, duplicates)
    }


# --- calibration ---------------------------------------------------------------------------------------

CALIBRATION_EDGES = (0.0, 0.6, 0.8, 0.9, 0.97, 1.0)  # p_correct bins of the calibration table


def calibration_table(
    judged: Sequence[tuple[float, bool]], edges: Sequence[float] = CALIBRATION_EDGES
) -> list[tuple[float, float, int, float, float]]:
    """(low, high, labels, mean p_correct, share judged right) per bin [low, high) of p_correct (the
    last bin holds 1.0) with judged labels in it: `judged` is (p_correct, right) per label."""
    table = []
    for index, (low, high) in enumerate(zip(edges, edges[1:])):
        last = index == len(edges) - 2
        members = [(p, right) for p, right in judged if low <= p < high or (last and p == high)]
        if members:
            predicted = sum(p for p, _ in members) / len(members)
            observed = sum(right for _, right in members) / len(members)
            table.append((low, high, len(members), round(predicted, 3), round(observed, 3)))
    return table


def brier_score(judged: Sequence[tuple[float, bool]]) -> float:
    """Mean squared difference between p_correct and the judgement (1 right, 0 wrong): lower is better."""
    return round(sum((p - right) ** 2 for p, right in judged) / len(judged), 4)


def auc(judged: Sequence[tuple[float, bool]]) -> float:
    """The chance that a right label has a higher p_correct than a wrong one (ties count half):
    how well p_correct tells right from wrong, 0.5 for none. nan without both kinds."""
    right = sorted(p for p, ok in judged if ok)
    wrong = sorted(p for p, ok in judged if not ok)
    if not right or not wrong:
        return float("nan")
    wins = sum(1.0 if r > w else 0.5 if r == w else 0.0 for r in right for w in wrong)
    return round(wins / (len(right) * len(wrong)), 4)


def spearman(first: Sequence[float], second: Sequence[float]) -> float:
    """Spearman's rank correlation of two equally long sequences (average ranks for ties)."""
    from scipy.stats import spearmanr

    if len(first) < 3:
        return float("nan")
    return round(float(spearmanr(first, second).statistic), 3)
