"""Source accuracies learned from the candidates' agreement structure (issue 48): a latent-truth model
of the Dawid & Skene (1979) family ("one-coin", open answers), fitted by EM, with each source's
accuracy pooled across languages.

Each source of a class gives one answer, its *vote*: its first form, unless one of its other forms is
another source's first form (then it votes for that one: it agrees). The class's true name is one of
the voted labels or none of them. A source's vote is right with probability `accuracy[lang, source]`;
two wrong votes coincide with probability SHARED_ERROR (the same wrong sense of an ambiguous English
name). So, against "none of them is right", the hypothesis "label l is right" has the odds

    prod over the sources voting l of accuracy / (1 - accuracy), divided by SHARED_ERROR per extra voter,

and the class's hypotheses are normalised into each label's posterior (`p_correct` of that label). A
class with one source gives its vote exactly the source's accuracy.

EM alternates the posteriors (E) and the accuracies (M: a Beta-MAP estimate). Only classes where
another source also votes inform a source's accuracy (a lone vote is its own evidence), and the Beta
prior is the accuracy pooled over every language of the same source kind (`wikt`, `omw`, `cldr`), with
POOL_STRENGTH pseudo-observations: a language with little overlap leans on the pool, one with none
keeps it, and its `evidence` (checked votes + POOL_STRENGTH) says how much stands behind the figure.
A label a person decided is known: its class's posterior puts 1 on it (kept) or 0 (rejected), and the
class counts REVIEW_WEIGHT times in its sources' accuracies (as in trust.py), even with one source.

Why not a library: crowd-kit's DawidSkene / OneCoinDawidSkene and Snorkel's LabelModel fit per-worker
accuracies by maximum likelihood over a closed label set; none pools a worker's accuracy across groups
(languages) with a prior, takes open answers where two wrong answers rarely coincide, or returns the
evidence behind each accuracy that the language intervals need; Snorkel also brings torch. The model
is ~80 lines of plain Python.

Pure: plain data in, plain data out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from babelforge.babel_imagenet.trust import REVIEW_WEIGHT

POOL_STRENGTH = 20.0  # pseudo-observations of the pooled accuracy in each (language, source) estimate
SHARED_ERROR = 0.05  # chance a wrong vote coincides with another source's wrong vote (issue 37's rate)
START = 0.8  # EM's starting accuracy
ITERATIONS = 100
TOLERANCE = 1e-5  # EM stops when no accuracy moves more than this
LIMIT = 1e-3  # accuracies stay inside (0, 1), where odds are finite


def source_kind(source: str) -> str:
    """`omw:msa` -> `omw`: the pool a source's accuracy shrinks toward."""
    return source.split(":", 1)[0]


@dataclass(frozen=True)
class ClassVotes:
    """One class of one language: each source's vote and every label any source lists."""

    lang: str
    class_idx: int
    votes: tuple[tuple[str, str], ...]  # (source, the label it votes for)
    labels: tuple[str, ...]  # every listed label (a label nobody votes for is a synonym)


def class_votes(lang: str, class_idx: int, forms: Sequence[tuple[str, str, int]]) -> ClassVotes:
    """The votes of one class from its kept candidate forms (label, source, rank; a source's lowest
    rank is its first form)."""
    by_source: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for label, source, rank in forms:
        by_source[source].append((rank, label))
    first = {source: min(rows)[1] for source, rows in by_source.items()}
    votes = []
    for source, rows in sorted(by_source.items()):
        others = {first[other] for other in first if other != source}
        agreeing = [label for _rank, label in sorted(rows) if label in others]
        votes.append((source, agreeing[0] if agreeing else first[source]))
    return ClassVotes(lang, class_idx, tuple(votes), tuple(sorted({label for label, _, _ in forms})))


def _odds(p: float) -> float:
    p = min(max(p, LIMIT), 1 - LIMIT)
    return p / (1 - p)


def class_posterior(
    votes: ClassVotes, accuracy: Mapping[str, float], shared_error: float = SHARED_ERROR
) -> dict[str, float]:
    """label -> P(it is the class's right name) for every voted label (the rest of the mass: none is)."""
    voters: dict[str, list[str]] = defaultdict(list)
    for source, label in votes.votes:
        voters[label].append(source)
    odds = {}
    for label, sources in voters.items():
        value = shared_error ** -(len(sources) - 1)
        for source in sources:
            value *= _odds(accuracy[source])
        odds[label] = value
    total = 1 + sum(odds.values())
    return {label: value / total for label, value in odds.items()}


@dataclass(frozen=True)
class Rate:
    """A learned accuracy: its Beta-MAP value and the evidence behind it (checked votes +
    POOL_STRENGTH), from which the Beta posterior's variance follows."""

    value: float
    evidence: float

    def variance(self) -> float:
        return self.value * (1 - self.value) / (self.evidence + 1)


@dataclass
class Fit:
    """The fitted model: each voted label's posterior and each source's accuracy per language."""

    posterior: dict[tuple[str, int, str], float]  # (lang, class_idx, label) -> P(right)
    accuracy: dict[tuple[str, str], Rate]  # (lang, source) -> accuracy of its votes
    pooled: dict[str, float] = field(default_factory=dict)  # source kind -> pooled accuracy
    iterations: int = 0


def fit(
    classes: Sequence[ClassVotes],
    known: Mapping[tuple[str, int, str], bool] | None = None,
    strength: float = POOL_STRENGTH,
    shared_error: float = SHARED_ERROR,
    iterations: int = ITERATIONS,
) -> Fit:
    """Fit the accuracies by EM. `known`: (lang, class_idx, label) -> a person's verdict."""
    known = known or {}
    keys = {(c.lang, source) for c in classes for source, _ in c.votes}
    accuracy = {key: Rate(START, strength) for key in keys}
    pooled: dict[str, float] = {}
    posteriors: list[dict[str, float]] = []
    done = 0
    for iteration in range(1, iterations + 1):
        done = iteration
        posteriors = [
            _known_posterior(
                c, class_posterior(c, {s: accuracy[(c.lang, s)].value for s, _ in c.votes}, shared_error), known
            )
            for c in classes
        ]
        sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
        for c, posterior in zip(classes, posteriors):
            decided = any((c.lang, c.class_idx, label) in known for label in c.labels)
            if len(c.votes) < 2 and not decided:  # a lone vote checks nothing
                continue
            weight = REVIEW_WEIGHT if decided else 1  # a verdict is a stronger witness, as in trust.py
            for source, label in c.votes:
                sums[(c.lang, source)][0] += weight * posterior.get(label, 0.0)
                sums[(c.lang, source)][1] += weight
        kinds: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for (_lang, source), (right, checked) in sums.items():
            kinds[source_kind(source)][0] += right
            kinds[source_kind(source)][1] += checked
        pooled = {kind: right / checked for kind, (right, checked) in kinds.items()}
        updated = {}
        for key in keys:
            right, checked = sums.get(key, (0.0, 0.0))
            prior = pooled.get(source_kind(key[1]), START)
            updated[key] = Rate(
                round((right + strength * prior) / (checked + strength), 6), round(checked + strength, 3)
            )
        moved = max(abs(updated[k].value - accuracy[k].value) for k in keys) if keys else 0.0
        accuracy = updated
        if moved < TOLERANCE:
            break
    posterior = {
        (c.lang, c.class_idx, label): round(p, 4) for c, post in zip(classes, posteriors) for label, p in post.items()
    }
    return Fit(posterior, accuracy, {kind: round(value, 4) for kind, value in pooled.items()}, done)


def _known_posterior(votes: ClassVotes, posterior: dict[str, float], known: Mapping) -> dict[str, float]:
    """The posterior with a person's verdicts: a kept label is the right one, a rejected one is not."""
    verdicts = {
        label: known[(votes.lang, votes.class_idx, label)]
        for label in votes.labels
        if (votes.lang, votes.class_idx, label) in known
    }
    if not verdicts:
        return posterior
    kept = [label for label, right in verdicts.items() if right]
    if kept:
        return {label: float(label in kept) for label in posterior} | {label: 1.0 for label in kept}
    rest = {label: p for label, p in posterior.items() if label not in verdicts}
    scale = 1 / (1 - sum(posterior.get(label, 0.0) for label in verdicts))
    return {label: 0.0 for label in verdicts} | {label: p * scale for label, p in rest.items()}


def label_posterior(fitted: Fit, lang: str, class_idx: int, label: str, source: str) -> float:
    """P(right) of a label: its posterior when some source voted for it, else (a synonym nobody voted
    for) its source's accuracy shrunk by the class's votes elsewhere -- half its source's accuracy,
    a synonym being a second choice."""
    key = (lang, class_idx, label)
    if key in fitted.posterior:
        return fitted.posterior[key]
    rate = fitted.accuracy.get((lang, source))
    return round((rate.value if rate else START) / 2, 4)


# --- candidates.parquet rows in --------------------------------------------------------------------

# set_aside reasons of a candidate that is no label in the language (cleaning dropped it): no vote
NOT_A_LABEL = frozenset(
    {
        "english",
        "clip_name",
        "other_language",
        "script",
        "dropped_placeholder",
        "dropped_symbol",
        "dropped_gloss",
        "dropped_unreadable",
    }
)


def candidate_classes(rows: Iterable[Mapping], skip_langs: Iterable[str] = ()) -> list[ClassVotes]:
    """The ClassVotes of candidates.parquet rows (lang, class_idx, label, source, rank, set_aside)."""
    skip = set(skip_langs)
    forms: dict[tuple[str, int], list[tuple[str, str, int]]] = defaultdict(list)
    for row in rows:
        if row["lang"] in skip or (row.get("set_aside") or "") in NOT_A_LABEL:
            continue
        forms[(row["lang"], int(row["class_idx"]))].append((row["label"], row["source"], int(row["rank"])))
    return [class_votes(lang, idx, found) for (lang, idx), found in sorted(forms.items())]
