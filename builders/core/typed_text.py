"""A text a person types is a value, never structure: the check every hand-edited field gets.

A field of a file people edit (a review sheet's cell, a review file's column, a row of a
`resources/*.tsv` table) is written back into a tab-separated file one row per line, and its
text ends up in labels, pages and cards. So a field may not hold what would change that
structure or hide from the reader:

* a line break (`\\n`, `\\r`, U+2028, U+2029 and the other characters `str.splitlines` breaks
  at) or a tab: written into a TSV row, it makes a second row or a seventh field;
* a control character (Unicode category Cc): a terminal or a page would act on it;
* a bidirectional control (U+202A-202E, U+2066-2069, the marks U+200E, U+200F, U+061C): it
  reorders how the text around it shows, so what a reviewer sees is not what is stored;
* any other invisible format character (category Cf: a zero-width space, a BOM, a soft hyphen),
  and the zero-width (non-)joiners U+200C/U+200D outside the scripts that join letters with
  them (Arabic, Syriac, Mongolian, N'Ko and the Brahmic scripts): elsewhere two labels that look
  the same would differ;
* more characters than the field's limit (a label of 500 characters is a paste, not a name).

`value_problem` says what is wrong (None when nothing is); the readers refuse such a field with
one line naming the file, line and field, so the person who typed it fixes it where they typed it.
(A label is the one field whose whitespace is normalised, spaces collapsed, as every label is.)
Pure and stdlib only.
"""

from __future__ import annotations

import unicodedata

from babelforge.core.scripts import COMMON, INHERITED, script_of

# What `str.splitlines` breaks a line at: any of them in a field would start a new row somewhere.
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
BIDI_CONTROLS = frozenset(
    chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)
)
JOINERS = {"\u200c": "zero-width non-joiner", "\u200d": "zero-width joiner"}
# Scripts whose letters a (non-)joiner shapes (Persian ZWNJ, Indic half forms, Sinhala conjuncts).
JOINING_SCRIPTS = frozenset(
    {
        "Arab", "Syrc", "Mong", "Nkoo", "Adlm", "Mand",
        "Deva", "Beng", "Guru", "Gujr", "Orya", "Taml", "Telu", "Knda", "Mlym", "Sinh",
        "Mymr", "Khmr", "Tibt", "Bali", "Java", "Sund", "Lana", "Limb", "Lepc", "Cham", "Batk", "Tglg",
    }
)  # fmt: skip
SHOWN_CHARS = 40  # how much of a refused value a message repeats


def shown(text: str) -> str:
    """A value as a message repeats it: repr (so an invisible character shows), long ones cut."""
    return repr(text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…")


def _joined_script(text: str, index: int) -> str | None:
    """The script of the nearest letter before `index` (combining marks looked through)."""
    for char in reversed(text[:index]):
        script = script_of(char)
        if script != INHERITED:
            return None if script == COMMON else script
    return None


def value_problem(text: str, max_chars: int) -> str | None:
    """What makes `text` more than one value of at most `max_chars` characters (None: nothing).

    The answer completes "<field> <value> ...", e.g. "holds a line break (U+000A)".
    """
    for index, char in enumerate(text):
        code = f"U+{ord(char):04X}"
        if char in LINE_BREAKS:
            return f"holds a line break ({code}); a field is one line, write it as one"
        if char == "\t":
            return "holds a tab; fields are separated by tabs, use a space"
        category = unicodedata.category(char)
        if category == "Cc":
            return f"holds the control character {code}"
        if char in BIDI_CONTROLS:
            return f"holds the bidirectional control {code}, which reorders how the text shows; remove it"
        if char in JOINERS:
            if _joined_script(text, index) in JOINING_SCRIPTS:
                continue
            return f"holds a {JOINERS[char]} ({code}) outside a script that joins letters with it; remove it"
        if category in ("Cf", "Cs", "Co"):
            return f"holds the invisible or private-use character {code}; remove it"
    if len(text) > max_chars:
        return f"has {len(text):,} characters; at most {max_chars:,}"
    return None
