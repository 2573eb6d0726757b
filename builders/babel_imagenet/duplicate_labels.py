"""Rule 7 of the label procedure (labels.py, `labels.resolve_duplicates`): where one label names
several classes of a language, each class that has one takes a candidate no other class uses."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from babelforge.babel_imagenet.label_choice import LabelChoice, with_candidate
from babelforge.babel_imagenet.ranking import Candidate


def resolve_duplicates(choices: Sequence[LabelChoice]) -> list[LabelChoice]:
    """Where one label (casefolded) names several classes of a language, every class but one that
    has a candidate no other class of the language uses takes it. The class keeping the label:
    one without such a candidate, else the one where the most sources give it (then by synset).
    Classes are visited in synset order, so the result does not depend on the input order."""
    result = {(c.lang, c.synset): c for c in choices}
    by_lang: dict[str, list[LabelChoice]] = defaultdict(list)
    for choice in choices:
        if choice.label is not None:
            by_lang[choice.lang].append(choice)
    for lang, labelled in sorted(by_lang.items()):
        used = Counter(choice.label.casefold() for choice in labelled)
        holders: dict[str, list[str]] = defaultdict(list)
        for choice in sorted(labelled, key=lambda c: c.synset):
            holders[choice.label.casefold()].append(choice.synset)
        for key in sorted(k for k, synsets in holders.items() if len(synsets) > 1):
            group = [result[(lang, synset)] for synset in holders[key]]

            def unique_alternative(choice: LabelChoice, key=key, used=used) -> Candidate | None:
                return next((c for c in choice.candidates if c.key != key and not used[c.key]), None)

            keeper = next((c for c in group if unique_alternative(c) is None), None)
            if keeper is None:
                keeper = min(group, key=lambda c: (-c.n_sources, c.synset))
            for choice in group:
                alternative = None if choice is keeper else unique_alternative(choice)
                if alternative is not None:
                    used[key] -= 1
                    used[alternative.key] += 1
                    result[(lang, choice.synset)] = with_candidate(choice, alternative, "unique")
    return [result[(c.lang, c.synset)] for c in choices]
