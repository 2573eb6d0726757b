"""Which languages keep their labels (`labels.min_classes`), and the one line saying what became
of the others."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from babelforge.babel_imagenet.label_choice import LabelChoice


def kept_languages(choices: Iterable[LabelChoice], min_classes: int) -> dict[str, int]:
    """Languages with at least `min_classes` labelled classes, and their class counts."""
    counts = Counter(choice.lang for choice in choices if choice.label is not None)
    return {lang: n for lang, n in sorted(counts.items()) if n >= min_classes}


def language_fates(choices: Iterable[LabelChoice]) -> dict[str, int]:
    """Classes with a label per language that has senses, after the rules (fates_line says which are kept)."""
    counts = Counter(choice.lang for choice in choices if choice.label is not None)
    return {lang: counts.get(lang, 0) for lang in sorted({choice.lang for choice in choices})}


def fates_line(fates: Mapping[str, int], min_classes: int, wanted: Iterable[str], before: Iterable[str] | None) -> str:
    """One line saying what became of the languages: how many are kept, which joined or left since the
    build `before` (the kept languages of the previous languages.parquet), and which of the `wanted`
    (Babel-ImageNet) languages are not kept and why, so an added or lost language is never silent."""
    wanted = set(wanted)
    kept = {lang for lang, n in fates.items() if n >= min_classes}
    few = [f"{lang} {n}" for lang, n in fates.items() if n < min_classes and lang in wanted]
    others = sum(1 for lang, n in fates.items() if n < min_classes and lang not in wanted)
    uncovered = sorted(wanted - set(fates))
    parts = [f"{len(kept)} kept"]
    if before is not None:
        before = set(before)
        joined = [f"{lang} {fates[lang]}" for lang in sorted(kept - before)]
        left = sorted(before - kept)
        parts.append(
            f"since the last build: {'+' + ', +'.join(joined) if joined else 'none joined'}; "
            f"{'-' + ', -'.join(left) if left else 'none left'}"
        )
    if few or others:
        parts.append(
            f"fewer than min_classes {min_classes} classes: {', '.join(few) or 'no Babel-ImageNet language'}"
            + (f" (and {others} other languages)" if others else "")
        )
    if uncovered:
        parts.append(f"no sense source covers {len(uncovered)} Babel-ImageNet languages: {', '.join(uncovered)}")
    return "languages: " + "; ".join(parts)
