"""Lemma cleaning: what a sense source writes in its lemma field that is not part of the name.

The open wordnets carry editorial markup BabelNet never had (found in the OMW mirror):
`GAP!` (OMW's marker for "this language has no word for the concept"), a leading `!` on
Hebrew lemmas, wiki links `[[wandelende]] [[tak]]`, link suffixes `lynx|fr:lynx`,
parenthesised qualifiers `agama (reptile)`, several names in one field
(`borstje, salopette`, `tricycle ; trike`), whole glosses pasted into the lemma, a
Windows-1252 byte read as Latin-1 (`n\\x9cud` for `nœud`) and invisible format characters.

`clean_lemma` turns one raw lemma into zero or more clean forms and says what it did:

* **dropped** (the whole lemma is not a name): `placeholder` (`GAP!`), `gloss` (a sentence),
  `symbol` (one unaccented Latin letter: the `G` and `g` French gives *cellular telephone*;
  one-letter words with an accent, Galician `á` *wing*, are kept), `unreadable` (a private-use
  character stands for a letter Unicode lacks: `\\ueef2鱼` is not 鱼 "fish"), `empty`;
* **cleaned** (the name is kept without the extra): `markup` (leading `!`, `[[…]]`, `|xx:…`
  link targets, stray opening quotes), `qualifier` (text in parentheses), `list` (one form
  per name of a `,` `;` `/` `|` list), `characters` (format characters removed, the
  Windows-1252 bytes repaired).

The raw lemma stays in the labels as provenance (`raw_lemma`).

A label a person types (a review's `replace`, or an edited sheet cell) meets the same rules, but is
refused instead of cleaned, so the reviewer sees what is wrong: `typed_label_problem` says why a label
is not one `clean_lemma` would give back unchanged, or holds what no label may: markup (`<img ...>`,
labels reach the HTML pages), a `{` or `}` (prompts put labels into a template's `{}` slot) or a
control character. Pure and stdlib only.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

DROP_KINDS = ("placeholder", "gloss", "symbol", "unreadable", "empty")
CLEAN_KINDS = ("markup", "qualifier", "list", "characters")

# OMW's "no lexicalisation" markers (the Italian and Hebrew wordnets use GAP!).
PLACEHOLDERS = frozenset({"GAP!", "PSEUDOGAP!"})
# Format characters that carry meaning and stay: the (non-)joiners shape Persian, Kurdish and Indic text.
KEPT_FORMAT = frozenset({"\u200c", "\u200d"})
WIKI_LINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
LANGUAGE_LINK = re.compile(r"^[a-z]{2,3}:")  # `fr:lynx`: a link to another wiki, not a name
QUALIFIER = re.compile(r"\s*\([^()]*\)")
SEPARATORS = re.compile(r"\s*[,;/|]\s*")
OPENING_QUOTES = "‘“«‚„"
# The start of a tag, comment or processing instruction as a browser parses it (`<img`, `</b`, `<!--`).
MARKUP = re.compile(r"<[A-Za-z/!?]")
TAG = re.compile(r"<[^<>]{0,40}>?")  # the tag a MARKUP match starts, for the message
# More words than any name in the mirror has (Navajo's descriptive names reach 8).
MAX_WORDS = 10


@dataclass(frozen=True)
class Cleaned:
    forms: tuple[str, ...]  # clean forms, in the order the lemma gives them; () when dropped
    cleaned: tuple[str, ...]  # CLEAN_KINDS applied
    dropped: str | None  # the DROP_KIND when no form is left


def normalise_lemma(lemma: str) -> str:
    text = unicodedata.normalize("NFC", lemma.replace("_", " "))
    return " ".join(text.split())


def repair_characters(text: str) -> tuple[str, bool]:
    """C1 controls decoded as Windows-1252 (the byte was read as Latin-1), format characters removed."""
    changed = False
    if any("\x80" <= char <= "\x9f" for char in text):
        repaired = []
        for char in text:
            if "\x80" <= char <= "\x9f":
                try:
                    char = char.encode("latin-1").decode("cp1252")
                except UnicodeDecodeError:  # the five bytes cp1252 leaves undefined
                    char = ""
            repaired.append(char)
        text, changed = "".join(repaired), True
    kept = "".join(c for c in text if unicodedata.category(c) != "Cf" or c in KEPT_FORMAT)
    return kept, changed or kept != text


def is_gloss(text: str) -> bool:
    """A sentence, not a name: more than MAX_WORDS words, or four or more ending a sentence."""
    words = text.split()
    sentence = text.rstrip().endswith(".") or re.search(r"[.!?]\s+\w", text) is not None
    return len(words) > MAX_WORDS or (len(words) >= 4 and sentence)


def is_symbol(text: str) -> bool:
    """One unaccented Latin letter: an abbreviation or a symbol, not a name."""
    return len(text) == 1 and text.isascii() and text.isalpha()


def has_letters(text: str) -> bool:
    return any(unicodedata.category(char)[0] in "LM" for char in text)


def clean_lemma(raw: str) -> Cleaned:
    """The clean forms of one raw lemma (see the module doc for every rule)."""
    cleaned: list[str] = []
    text, changed = repair_characters(raw.replace("_", " "))
    if changed:
        cleaned.append("characters")
    if any(unicodedata.category(char) == "Co" for char in text):
        return Cleaned((), tuple(cleaned), "unreadable")
    text = " ".join(text.split())
    if text in PLACEHOLDERS:
        return Cleaned((), tuple(cleaned), "placeholder")
    marked = WIKI_LINK.sub(r"\1", text).lstrip("!").lstrip(OPENING_QUOTES).strip()
    if marked != text:
        cleaned.append("markup")
    text = marked
    unqualified = " ".join(QUALIFIER.sub("", text).split())
    if unqualified != text and unqualified:
        cleaned.append("qualifier")
        text = unqualified
    parts = [part for part in SEPARATORS.split(text) if part]
    links = [part for part in parts if LANGUAGE_LINK.match(part)]
    if links and "markup" not in cleaned:
        cleaned.append("markup")
    parts = [part for part in parts if not LANGUAGE_LINK.match(part)]
    if len(parts) > 1:
        cleaned.append("list")
    forms: list[str] = []
    dropped: str | None = None
    for part in parts:
        form = normalise_lemma(part)
        kind = (
            "empty" if not has_letters(form) else "gloss" if is_gloss(form) else "symbol" if is_symbol(form) else None
        )
        if kind:
            dropped = dropped or kind
        elif form not in forms:
            forms.append(form)
    if forms:
        return Cleaned(tuple(forms), tuple(cleaned), None)
    return Cleaned((), tuple(cleaned), dropped or "empty")


def unsafe_character(text: str) -> str | None:
    """What in `text` no label may hold (markup, a brace, a control character), described; None if nothing."""
    markup = MARKUP.search(text)
    if markup:
        return f"markup ({TAG.match(text, markup.start()).group()!r})"
    if "{" in text or "}" in text:
        return "a { or }, which prompts read as the template's {} slot"
    control = next((char for char in text if unicodedata.category(char) == "Cc"), None)
    if control is not None:
        return f"the control character U+{ord(control):04X}"
    return None


def typed_label_problem(label: str, cleaned: bool = True) -> str | None:
    """Why a label a person typed cannot be a label (None when it can); see the module doc.

    cleaned=False skips the `clean_lemma` test (English labels are CLIP names, which the rules
    take as they are: `kite (bird of prey)`).
    """
    unsafe = unsafe_character(label)
    if unsafe:
        return f"label {label!r} holds {unsafe}; give the plain name"
    if not cleaned:
        return None
    result = clean_lemma(label)
    if result.dropped:
        return f"label {label!r} is not a name: the rules drop it as {result.dropped}"
    if result.forms != (label,):
        return (
            f"label {label!r} is not clean ({', '.join(result.cleaned)}): the rules would make it "
            f"{' / '.join(map(repr, result.forms))}; give one clean name"
        )
    return None
