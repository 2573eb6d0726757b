"""Zero-shot classification on Babel-ImageNet, per language.

A class embedding is the L2-normalised mean of the L2-normalised embeddings of its
prompts (templates filled with the class's label in that language). An image is
classified by cosine argmax over **that language's class subset only**; images of
classes the language has no label for are not evaluated in that language (Babel-ImageNet's
rule: a language is scored on the classes it covers). Ties rank the true class last.

Reported: top-1, top-5, balanced accuracy (mean per-class recall), per-class accuracy,
and the fixed-100-class control: mean top-1 over `repeats` seeded random subsets of 100
of the language's classes, which makes languages with different class counts comparable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from babelforge.core.languages import ENGLISH
from babelforge.eval.similarity import l2_normalize, rank_of_best_positive

PROMPT_SETS = ("translated", "english", "label")
FALLBACKS = ("english", "label", "both")
CONTROL_CLASSES = 100
CONTROL_REPEATS = 10


def class_embeddings(prompt_emb: np.ndarray, prompt_class: Sequence[int], class_ids: Sequence[int]) -> np.ndarray:
    """(n_classes, d): per class, the normalised mean of its normalised prompt embeddings."""
    prompt_emb = l2_normalize(prompt_emb)
    prompt_class = np.asarray(prompt_class)
    rows = []
    for class_id in class_ids:
        members = prompt_emb[prompt_class == class_id]
        if len(members) == 0:
            raise ValueError(f"class {class_id} has no prompt embedding")
        rows.append(members.mean(axis=0))
    return l2_normalize(np.stack(rows))


def true_class_ranks(
    image_emb: np.ndarray, targets: Sequence[int], class_emb: np.ndarray, class_ids: Sequence[int]
) -> np.ndarray:
    """0-based rank of each image's true class among `class_ids` (ties pessimistic)."""
    scores = l2_normalize(image_emb) @ class_emb.T
    positive = np.asarray(class_ids)[None, :] == np.asarray(targets)[:, None]
    return rank_of_best_positive(scores, positive)


def chance_top1(n_classes: int) -> float:
    """Top-1 of a guess: 1 / classes. A language with fewer classes is easier by this much."""
    return 1.0 / n_classes if n_classes else float("nan")


def normalised_accuracy(accuracy: float, chance: float) -> float:
    """(accuracy - chance) / (1 - chance): 0 at chance, 1 when perfect, whatever the class count, so
    languages (and runs) with other label sets compare. NaN when it cannot be told (one class)."""
    if not chance < 1.0:
        return float("nan")
    return (accuracy - chance) / (1.0 - chance)


def zeroshot_metrics(
    image_emb: np.ndarray, targets: Sequence[int], class_emb: np.ndarray, class_ids: Sequence[int]
) -> dict:
    """Metrics over the images whose class is in `class_ids`, argmax over `class_ids` only."""
    targets = np.asarray(targets)
    class_ids = np.asarray(class_ids)
    inside = np.isin(targets, class_ids)
    ranks = true_class_ranks(np.asarray(image_emb)[inside], targets[inside], class_emb, class_ids)
    kept = targets[inside]
    per_class = {int(c): float((ranks[kept == c] == 0).mean()) for c in np.unique(kept)}
    top1 = float((ranks < 1).mean()) if len(ranks) else float("nan")
    chance = chance_top1(len(class_ids))
    return {
        "top1": top1,
        "chance_top1": chance,
        "top1_norm": normalised_accuracy(top1, chance),
        "top5": float((ranks < 5).mean()) if len(ranks) else float("nan"),
        "balanced_accuracy": float(np.mean(list(per_class.values()))) if per_class else float("nan"),
        "n_images": int(inside.sum()),
        "n_classes": int(len(class_ids)),
        "per_class": per_class,
    }


def fixed_class_control(
    image_emb: np.ndarray,
    targets: Sequence[int],
    class_emb: np.ndarray,
    class_ids: Sequence[int],
    n_classes: int = CONTROL_CLASSES,
    repeats: int = CONTROL_REPEATS,
    seed: int = 0,
) -> float:
    """Mean top-1 over `repeats` seeded subsets of `n_classes` classes that have images.

    NaN when the language has fewer such classes: the control is then undefined.
    """
    class_ids = np.asarray(class_ids)
    eligible = np.flatnonzero(np.isin(class_ids, np.asarray(targets)))
    if len(eligible) < n_classes:
        return float("nan")
    rng = np.random.default_rng(seed)
    scores = []
    for _ in range(repeats):
        chosen = np.sort(rng.choice(eligible, size=n_classes, replace=False))
        scores.append(zeroshot_metrics(image_emb, targets, class_emb[chosen], class_ids[chosen])["top1"])
    return float(np.mean(scores))


def fill_template(template: str, label: str, knowledge: str | None = None) -> str:
    """Put the label into the `{}` slot (str.replace: templates may hold other braces)."""
    text = template.replace("{}", label) if "{}" in template else f"{template} {label}".strip()
    return f"{text} {knowledge}" if knowledge else text


def choose_templates(
    lang: str,
    prompt_set: str,
    translated: Mapping[str, Sequence[str]],
    english: Sequence[str],
    fallback: str = "english",
) -> list[tuple[str, list[str]]]:
    """[(prompt set actually used, templates), ...] for a language.

    `translated` uses the language's translated prompts; a language without them falls
    back to `fallback`: 'english' templates, 'label' (the bare label), or 'both' (the two
    fallback sets the Babel-ImageNet paper compares, one row each); the row says so
    ('english-fallback' / 'label-fallback').
    """
    if prompt_set not in PROMPT_SETS:
        raise ValueError(f"unknown prompt set {prompt_set!r}; known: {', '.join(PROMPT_SETS)}")
    if fallback not in FALLBACKS:
        raise ValueError(f"unknown fallback {fallback!r}; known: {', '.join(FALLBACKS)}")
    if prompt_set == "label":
        return [("label", ["{}"])]
    if prompt_set == "english":
        return [("english", list(english))]
    if translated.get(lang):
        return [("translated", list(translated[lang]))]
    if lang == ENGLISH:
        return [("english", list(english))]  # the templates' own language: nothing fell back
    sets = []
    if fallback in ("english", "both"):
        sets.append(("english-fallback", list(english)))
    if fallback in ("label", "both"):
        sets.append(("label-fallback", ["{}"]))
    return sets


def evaluate_language(
    encode_texts: Callable[[Sequence[str]], np.ndarray],
    image_emb: np.ndarray,
    targets: Sequence[int],
    labels: Mapping[int, str],
    templates: Sequence[str],
    knowledge: Mapping[int, str] | None = None,
    control_seed: int = 0,
    control_classes: int = CONTROL_CLASSES,
    control_repeats: int = CONTROL_REPEATS,
) -> dict:
    """Zero-shot metrics of one language: `labels` maps its class_idx -> label."""
    class_ids = sorted(labels)
    texts, owner = [], []
    for class_id in class_ids:
        extra = knowledge.get(class_id) if knowledge else None
        for template in templates:
            texts.append(fill_template(template, labels[class_id], extra))
            owner.append(class_id)
    class_emb = class_embeddings(encode_texts(texts), owner, class_ids)
    metrics = zeroshot_metrics(image_emb, targets, class_emb, class_ids)
    metrics["top1_100"] = fixed_class_control(
        image_emb, targets, class_emb, class_ids, control_classes, control_repeats, control_seed
    )
    return metrics
