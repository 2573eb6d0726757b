"""The `knowledge` dataset: per ImageNet-1k class, its WordNet 3.0 synset, lemmas, definition
and hypernym path (ELEVATER-style external knowledge). Registered in builders/core/datasets.py."""

from __future__ import annotations

from collections import Counter

from babelforge.core.datasets import ClassLabel, DatasetSpec, DatasetTables, LanguageView, read_artifact
from babelforge.core.errors import BabelforgeError
from babelforge.lexicon.licences import CLIP_NAMES, WORDNET

KNOWLEDGE = DatasetSpec(
    name="knowledge",
    pretty_name="ImageNet-1k WordNet knowledge",
    summary=(
        "Per ImageNet-1k class: WordNet 3.0 synset, English lemmas, definition and hypernym path "
        "(ELEVATER-style external knowledge), keyed by `class_idx`, `wnid` and synset id."
    ),
    artifacts=("wordnet",),
    read="babelforge.lexicon.dataset:read_knowledge",
    task_categories=("zero-shot-image-classification",),
    citations=("miller-1995-wordnet",),
    tags=("wordnet", "imagenet"),
    licences=(("definitions, lemmas, hypernyms", WORDNET), ("`clip_name`", CLIP_NAMES.licence)),
    limitations=("English only; definitions are WordNet 3.0's and can be terse or dated.",),
)


KNOWLEDGE_LANGUAGES = LanguageView(
    name="knowledge", reads=("${paths.wordnet}",), keys="babelforge.lexicon.dataset:knowledge_languages"
)


def knowledge_languages(reads, params) -> list[str]:
    """English only (every view has it)."""
    return []


def read_knowledge(paths) -> DatasetTables:
    table, provenance = read_artifact(paths.wordnet, "WordNet knowledge")
    # one English table: a single config, named like every other English config
    return DatasetTables(
        {"eng_Latn": {KNOWLEDGE.split: table}},
        provenance={paths.wordnet: provenance},
        sort_by=("class_idx",),
        features={"class_idx": imagenet_class_label(table)},
    )


def imagenet_class_label(table) -> ClassLabel:
    """`class_idx` as a class label named by wnid, from a table's own (class_idx, wnid) pairs.

    wnids, not English names: the CLIP names repeat (two classes are "crane"), and a class
    label's names must be unique. Every index from 0 to the largest must have its wnid.
    """
    pairs = dict(zip(table["class_idx"].astype(int), table["wnid"].astype(str)))
    missing = [idx for idx in range(max(pairs) + 1) if idx not in pairs] if pairs else []
    if missing:
        raise BabelforgeError(
            f"class_idx {missing[0]} has no row (of {len(missing)} missing): "
            "the class label needs every ImageNet class's wnid"
        )
    clashes = [wnid for wnid, count in Counter(pairs.values()).items() if count > 1]
    if clashes:
        raise BabelforgeError(f"wnid {sorted(clashes)[0]} names several class_idx values")
    return ClassLabel(tuple(pairs[idx] for idx in range(len(pairs))))
