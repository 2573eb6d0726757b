"""Taggers of one short text (a label, a prompt, a caption) that several stages share.

Each shared idea is defined once, here: blank text, the script a text is written in,
duplicates within a language, English look-alikes, and langid's ranking. Rows carry
`text`, `lang` (registry key) and, where a tagger names other rows, `id`. The context
object supplies what a tagger needs beyond the row (see each tagger's docstring); any
object with those attributes will do (`TextContext` is the plain one).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from babelforge.core.scripts import dominant_script, expand_script, expected_script_share, han_variant
from babelforge.core.taggers import Rows, cached_by, run_tagger, tagger

# text -> langid.py's ranking [(code, probability), ...], most likely first
LangidRanking = Callable[[str], Sequence[tuple[str, float]]]


@dataclass
class TextContext:
    expected_scripts: Mapping[str, Sequence[str]] = field(default_factory=dict)  # lang -> ISO 15924
    langid_codes: Mapping[str, str | None] = field(default_factory=dict)  # lang -> langid code
    langid_rank: LangidRanking | None = None  # None: langid not run
    english_lemmas: Mapping[int, Sequence[str]] = field(default_factory=dict)  # class -> English lemmas


# --- blank --------------------------------------------------------------------------------------


@tagger("blank_v1", columns={"empty": bool, "padded": bool}, reads=("text",))
def tag_blank(rows: Rows, context: Any) -> dict[str, list]:
    """Text that is empty or only whitespace; text with leading or trailing whitespace."""
    texts = [str(row.get("text") or "") for row in rows]
    return {
        "empty": [not text.strip() for text in texts],
        "padded": [bool(text.strip()) and text != text.strip() for text in texts],
    }


# --- script -------------------------------------------------------------------------------------


def expand_scripts(scripts: Iterable[str]) -> frozenset[str]:
    """Registry scripts as Unicode script codes (`Hans` -> `Hani`, `Jpan` -> Han + kana)."""
    return frozenset().union(*(expand_script(script) for script in scripts))


def is_latin_acronym(text: str, max_letters: int = 6) -> bool:
    """All letters are basic Latin capitals and there are few of them (`GSM`, `DVD`, `GAP!`)."""
    letters = [char for char in text if char.isalpha()]
    return 0 < len(letters) <= max_letters and all("A" <= char <= "Z" for char in letters)


def script_facts(text: str, expected: tuple[str, ...]) -> tuple[float | None, str | None, bool, str | None, bool]:
    """(share, dominant, mismatch, han_variant, han_mismatch) of one text: see `tag_script`."""
    share = expected_script_share(text, expected)
    dominant = dominant_script(text)
    allowed = expand_scripts(expected)
    # `GSM`, `GAP!`: acronyms are written in Latin letters in any script
    excused = dominant == "Latn" and is_latin_acronym(text)
    mismatch = bool(allowed) and dominant is not None and dominant not in allowed and not excused
    variant = han_variant(text)
    wanted = {script for script in expected if script in ("Hans", "Hant")}
    han_mismatch = len(wanted) == 1 and variant is not None and variant not in wanted
    return share, dominant, mismatch, variant, han_mismatch


@tagger(
    "script_v1",
    reads=("text", "lang"),
    columns={"share": float, "dominant": str, "mismatch": bool, "han_variant": str, "han_mismatch": bool},
)
def tag_script(rows: Rows, context: Any) -> dict[str, list]:
    """Writing system against the language's expected scripts (`context.expected_scripts`).

    share: share of the letters in an expected script (a Traditional-Chinese text counts no
    Han letter for `zho_Hans` and vice versa); None without letters. dominant: the script most
    letters are in. mismatch: the dominant script is not expected (short Latin acronyms
    excused; never with no expected scripts). han_variant: `Hans` / `Hant` when the text's
    standard-specific characters say so. han_mismatch: that standard is not the one expected
    (only when exactly one of Hans / Hant is expected).
    """
    facts = cached_by(
        lambda row: (row["text"], tuple(context.expected_scripts.get(row["lang"], ()))), rows, script_facts
    )
    names = ("share", "dominant", "mismatch", "han_variant", "han_mismatch")
    return {name: [fact[i] for fact in facts] for i, name in enumerate(names)}


# --- duplicates ---------------------------------------------------------------------------------


def duplicate_key(text: str) -> str:
    """The form two texts must share to be duplicates: Unicode NFC, stripped, casefolded."""
    return unicodedata.normalize("NFC", text).strip().casefold()


@tagger("duplicate_v1", columns={"is_duplicate": bool, "is_repeat": bool, "others": list}, reads=("text", "lang", "id"))
def tag_duplicate(rows: Rows, context: Any) -> dict[str, list]:
    """Texts of one language equal under `duplicate_key`.

    is_duplicate: another row of the language has the same text (every member of the group);
    is_repeat: an earlier row has it (all but the first); others: the ids of the other rows.
    """
    groups: dict[tuple[Any, str], list[int]] = {}
    for position, row in enumerate(rows):
        groups.setdefault((row["lang"], duplicate_key(str(row["text"]))), []).append(position)
    is_duplicate, is_repeat, others = [], [], []
    for position, row in enumerate(rows):
        members = groups[(row["lang"], duplicate_key(str(row["text"])))]
        is_duplicate.append(len(members) > 1)
        is_repeat.append(members[0] != position)
        others.append([rows[other]["id"] for other in members if other != position])
    return {"is_duplicate": is_duplicate, "is_repeat": is_repeat, "others": others}


def duplicate_flags(langs: Iterable[str], texts: Iterable[str]) -> list[bool]:
    """`duplicate_v1`'s is_duplicate for parallel columns of languages and texts (labels tables)."""
    rows = [{"id": i, "lang": lang, "text": text} for i, (lang, text) in enumerate(zip(langs, texts))]
    return run_tagger("duplicate_v1", rows, None)["is_duplicate"]


# --- English look-alikes ------------------------------------------------------------------------


def loose_form(text: str) -> str:
    """`text` with accents, case, whitespace and punctuation removed: `Café-Crème` -> `cafecreme`."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = (char for char in decomposed if unicodedata.category(char)[0] in "LN")
    return unicodedata.normalize("NFC", "".join(kept)).casefold()


@tagger("english_lookalike_v1", columns={"match": bool, "lemma": str, "lemma_class": int}, reads=("text",))
def tag_english_lookalike(rows: Rows, context: Any) -> dict[str, list]:
    """Texts equal to an English lemma of any class once accents, case, spaces and punctuation go.

    `context.english_lemmas` maps a class to its English lemmas; lemma / lemma_class: the
    matched lemma and its class (the lowest class with that form).
    """
    by_form: dict[str, tuple[int, str]] = {}
    for idx in sorted(context.english_lemmas):
        for lemma in context.english_lemmas[idx]:
            form = loose_form(lemma)
            if form:
                by_form.setdefault(form, (idx, lemma))
    matches = [by_form.get(loose_form(str(row["text"]))) for row in rows]
    return {
        "match": [m is not None for m in matches],
        "lemma": [m[1] if m else None for m in matches],
        "lemma_class": [m[0] if m else None for m in matches],
    }


# --- langid -------------------------------------------------------------------------------------


def _ranking(text: str, code: str | None, rank: LangidRanking | None):
    if code is None or rank is None or not text.strip():
        return None, None, None
    ranking = list(rank(text))
    codes = [c for c, _ in ranking]
    top, top_prob = (ranking[0][0], float(ranking[0][1])) if ranking else (None, None)
    return top, top_prob, codes.index(code) + 1 if code in codes else None


@tagger("langid_rank_v1", columns={"top": str, "top_prob": float, "rank": int, "chars": int}, reads=("text", "lang"))
def tag_langid_rank(rows: Rows, context: Any) -> dict[str, list]:
    """langid.py over all its languages (`context.langid_rank`), for languages it knows
    (`context.langid_codes`): its top language and that one's probability, the rank of the
    row's language (1 = top), and the stripped text's length (langid is unreliable on short text).
    Nothing is judged for a blank text or a language without a langid code."""
    facts = cached_by(
        lambda row: (row["text"], context.langid_codes.get(row["lang"]), context.langid_rank), rows, _ranking
    )
    return {
        "top": [f[0] for f in facts],
        "top_prob": [f[1] for f in facts],
        "rank": [f[2] for f in facts],
        "chars": [len(str(row["text"]).strip()) for row in rows],
    }
