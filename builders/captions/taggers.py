"""The cheap taggers, registered under versioned names; each adds attribute columns.

A tagger reads hypothesis rows (`caption_id, lang, hyp_rank, text`) and the shared
`TagContext`, and returns `{column: values}` aligned with the rows. Columns are named
`<tagger>__<attribute>`, so a changed tagger gets a new version and never silently
changes what an old column meant (dolma's convention). COMETKiwi (`kiwi_v1`) is in
`qe.py`: it needs a model and is run by the tag stage beside these.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from builders.captions import chrf, langcheck


@dataclass
class TagContext:
    sources: Mapping[str, str]                         # caption_id -> English caption
    expected_scripts: Mapping[str, Sequence[str]]      # lang key -> ISO 15924 scripts
    identifier: langcheck.LanguageIdentifier | None    # None: no language in play has a langid code
    references: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (caption_id, lang) -> text
    repeat_max_n: int = 4


Rows = Sequence[Mapping[str, Any]]


def tag_langid(rows: Rows, context: TagContext) -> dict[str, list]:
    langs, probs = [], []
    cache: dict[tuple[str, str], tuple[str, float]] = {}
    for row in rows:
        key = (row["text"], row["lang"])
        if key not in cache:
            if context.identifier is None or not row["text"].strip():
                cache[key] = ("", math.nan)
            else:
                cache[key] = context.identifier.check(row["text"], row["lang"])
        lang, prob = cache[key]
        langs.append(lang)
        probs.append(prob)
    return {"langid_v1__lang": langs, "langid_v1__prob": probs}


def tag_script(rows: Rows, context: TagContext) -> dict[str, list]:
    cache: dict[tuple[str, str], float] = {}    # n-best lists repeat texts a lot
    shares = []
    for row in rows:
        key = (row["text"], row["lang"])
        if key not in cache:
            cache[key] = langcheck.script_share(row["text"], context.expected_scripts.get(row["lang"], ()))
        shares.append(cache[key])
    return {"script_v1__share": shares}


def tag_copy(rows: Rows, context: TagContext) -> dict[str, list]:
    cache: dict[tuple[str, str], tuple[float, bool]] = {}
    overlap, exact = [], []
    for row in rows:
        key = (row["text"], context.sources[row["caption_id"]])
        if key not in cache:
            cache[key] = (langcheck.copy_overlap(*key), langcheck.is_copy(*key))
        overlap.append(cache[key][0])
        exact.append(cache[key][1])
    return {"copy_v1__overlap": overlap, "copy_v1__exact": exact}


def tag_repetition(rows: Rows, context: TagContext) -> dict[str, list]:
    cache: dict[str, tuple[int, int]] = {}
    words, letters = [], []
    for row in rows:
        text = row["text"]
        if text not in cache:
            cache[text] = (langcheck.longest_repeat_run(text, context.repeat_max_n),
                           langcheck.longest_letter_run(text, context.repeat_max_n))
        words.append(cache[text][0])
        letters.append(cache[text][1])
    return {"repetition_v1__longest_run": words, "repetition_v1__longest_letter_run": letters}


def tag_chrf(rows: Rows, context: TagContext) -> dict[str, list]:
    """chrF against the human translation where the source has one (XTD), else NaN."""
    return {"chrf_v1__score": [
        chrf.sentence_chrf(row["text"], context.references.get((row["caption_id"], row["lang"])))
        for row in rows
    ]}


TAGGERS: dict[str, Callable[[Rows, TagContext], dict[str, list]]] = {
    "langid_v1": tag_langid,
    "script_v1": tag_script,
    "copy_v1": tag_copy,
    "repetition_v1": tag_repetition,
    "chrf_v1": tag_chrf,
}


def run_taggers(rows: Rows, context: TagContext, names: Sequence[str] = tuple(TAGGERS)) -> dict[str, list]:
    columns: dict[str, list] = {}
    for name in names:
        columns.update(TAGGERS[name](rows, context))
    return columns
