"""The English reference of every class: the audit's look-alike check and the review sheet compare with it.

Read from the built labels (the eng_Latn rows) and the WordNet artifact, so `babelforge audit` and
`babelforge review` share one reading.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from babelforge.core.imagenet import read_imagenet_classes
from babelforge.core.io import read_table
from babelforge.core.languages import ENGLISH


def english_reference(labels, wordnet_path: str | None) -> dict[int, dict[str, Any]]:
    """Per class: English name (the eng_Latn label, else the CLIP name in resources/),
    WordNet definition and every English lemma (for the look-alike check)."""

    names = {int(r.class_idx): str(r.label) for r in labels[labels["lang"] == ENGLISH].itertuples()}
    if not names:
        names = {c.class_idx: c.clip_name for c in read_imagenet_classes()}
    definitions: dict[int, str] = {}
    lemmas: dict[int, list[str]] = {idx: [name] for idx, name in names.items()}
    if wordnet_path and Path(wordnet_path).exists():
        wordnet = read_table(wordnet_path, columns=["class_idx", "lemmas", "definition"])
        for row in wordnet.itertuples():
            idx = int(row.class_idx)
            definitions[idx] = str(row.definition)
            lemmas.setdefault(idx, []).extend(str(lemma).replace("_", " ") for lemma in row.lemmas)
    return {
        idx: {"name": names.get(idx), "definition": definitions.get(idx), "lemmas": lemmas.get(idx, [])}
        for idx in sorted(set(names) | set(definitions))
    }
