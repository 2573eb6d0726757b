"""The caption taggers: every attribute column of the `attributes/` shards.

A tagger reads hypothesis rows (`caption_id, lang, hyp_rank, text`) and the shared
`TagContext`, and returns its columns aligned with the rows (`babelforge.core.taggers`).
Stored, a column is `<tagger>__<column>`, so a changed tagger gets a new version and never
silently changes what an old column meant. The script tagger is the shared one
(`babelforge.core.text_taggers`); the rest are the captions' own, COMETKiwi (`kiwi_v1`)
included: its model is loaded once per process (`qe.kiwi_scorer`) and handed over in the context.

`run_taggers(rows, context)` runs them all: the entry point of the tag stage and of any
runner that tags one shard of hypotheses at a time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from babelforge.captions import chrf, langcheck
from babelforge.core import taggers
from babelforge.core.taggers import Rows, cached_by, tagger
from babelforge.core.text_taggers import TextContext

# The taggers of attributes/, and the columns it stores (the script tagger's others,
# dominant script and Chinese standard, are what the audit needs, not selection).
TAGGERS = ("langid_v1", "script_v1", "copy_v1", "repetition_v1", "chrf_v1", "kiwi_v1")
ATTRIBUTES = (
    "langid_v1__lang",
    "langid_v1__prob",
    "script_v1__share",
    "copy_v1__overlap",
    "copy_v1__exact",
    "repetition_v1__longest_run",
    "repetition_v1__longest_letter_run",
    "chrf_v1__score",
    "kiwi_v1__score",
    "kiwi_v1__truncated",
)
KIWI_TRUNCATED = "kiwi_v1__truncated"  # the pair was longer than the Kiwi encoder reads (counted per language)


@dataclass
class TagContext(TextContext):
    sources: Mapping[str, str] = field(default_factory=dict)  # caption_id -> English caption
    identifier: langcheck.LanguageIdentifier | None = None  # None: no language in play has langid
    references: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (caption_id, lang) -> text
    repeat_max_n: int = 4
    kiwi: Any = None  # a qe.KiwiScorer (kiwi_v1)


@tagger("langid_v1", columns={"lang": str, "prob": float}, reads=("text", "lang"))
def tag_langid(rows: Rows, context: TagContext) -> dict[str, list]:
    """langid.py over the languages in play: the likeliest one and the row language's
    probability (normalised over those languages); "" / NaN when it cannot tell."""

    def check(text: str, lang: str) -> tuple[str, float]:
        if context.identifier is None or not text.strip():
            return "", float("nan")
        return context.identifier.check(text, lang)

    found = cached_by(lambda row: (row["text"], row["lang"]), rows, check)
    return {"lang": [lang for lang, _ in found], "prob": [prob for _, prob in found]}


@tagger("copy_v1", columns={"overlap": float, "exact": bool}, reads=("text", "caption_id"))
def tag_copy(rows: Rows, context: TagContext) -> dict[str, list]:
    """Share of the hypothesis' words found in the English source; the source copied as is."""
    found = cached_by(
        lambda row: (row["text"], context.sources[row["caption_id"]]),
        rows,
        lambda hyp, src: (langcheck.copy_overlap(hyp, src), langcheck.is_copy(hyp, src)),
    )
    return {"overlap": [overlap for overlap, _ in found], "exact": [exact for _, exact in found]}


@tagger("repetition_v1", columns={"longest_run": int, "longest_letter_run": int}, reads=("text",))
def tag_repetition(rows: Rows, context: TagContext) -> dict[str, list]:
    """Most consecutive repeats of one word n-gram, and of one letter n-gram (decoder loops)."""
    found = cached_by(
        lambda row: (row["text"],),
        rows,
        lambda text: (
            langcheck.longest_repeat_run(text, context.repeat_max_n),
            langcheck.longest_letter_run(text, context.repeat_max_n),
        ),
    )
    return {"longest_run": [words for words, _ in found], "longest_letter_run": [letters for _, letters in found]}


@tagger("chrf_v1", columns={"score": float}, reads=("text", "caption_id", "lang"))
def tag_chrf(rows: Rows, context: TagContext) -> dict[str, list]:
    """chrF against the human translation where the source has one (XTD), else NaN."""
    return {
        "score": [
            chrf.sentence_chrf(row["text"], context.references.get((row["caption_id"], row["lang"]))) for row in rows
        ]
    }


@tagger("kiwi_v1", columns={"score": float, "truncated": bool}, reads=("text", "caption_id"))
def tag_kiwi(rows: Rows, context: TagContext) -> dict[str, list]:
    """COMETKiwi: reference-free quality of (English source, hypothesis), `context.kiwi` scores;
    truncated: the pair is longer than the Kiwi encoder reads, so it was scored on its beginning
    (like the hypotheses' `source_truncated`: a threshold can drop such rows)."""
    if context.kiwi is None:
        raise ValueError("kiwi_v1 needs a loaded COMETKiwi scorer in the context (qe.kiwi_scorer)")
    sources, texts = [context.sources[row["caption_id"]] for row in rows], [row["text"] for row in rows]
    return {"score": context.kiwi.score(sources, texts), "truncated": context.kiwi.truncated(sources, texts)}


def run_taggers(rows: Rows, context: TagContext, names: Sequence[str] = TAGGERS) -> dict[str, list]:
    """The stored attribute columns of `names` over a batch of hypothesis rows: {column: values}."""
    columns = taggers.run_taggers(names, rows, context)
    return {column: values for column, values in columns.items() if column in ATTRIBUTES}
