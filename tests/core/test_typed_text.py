"""What makes a typed field more than one value (babelforge.core.typed_text)."""

from __future__ import annotations

import pytest

from babelforge.core.typed_text import shown, value_problem


@pytest.mark.parametrize(
    "text, problem",
    [
        ("Querbinder", None),
        ("Weißer Hai", None),
        ("a\nb", "holds a line break (U+000A)"),
        ("a\r", "holds a line break (U+000D)"),
        ("a\u2028b", "holds a line break (U+2028)"),
        ("a\u2029b", "holds a line break (U+2029)"),
        ("a\x1cb", "holds a line break (U+001C)"),
        ("a\tb", "holds a tab"),
        ("a\x00", "holds the control character U+0000"),
        ("a\x7f", "holds the control character U+007F"),
        ("a\u202ab", "holds the bidirectional control U+202A"),
        ("a\u2069b", "holds the bidirectional control U+2069"),
        ("a\u2066b", "holds the bidirectional control U+2066"),
        ("a\u202eb", "holds the bidirectional control U+202E"),
        ("a\u200eb", "holds the bidirectional control U+200E"),
        ("a\u206ab", "holds the invisible or private-use character U+206A"),  # past the isolates: a format character
        ("100\u202fkm", None),  # a narrow no-break space, just past the bidi controls, is a value
        ("a\u200fb", "holds the bidirectional control U+200F"),
        ("a\u061cb", "holds the bidirectional control U+061C"),
        ("a\u200bb", "holds the invisible or private-use character U+200B"),
        ("a\ufeffb", "holds the invisible or private-use character U+FEFF"),
        ("a\ue000b", "holds the invisible or private-use character U+E000"),
        ("a\u200db", "holds a zero-width joiner (U+200D) outside a script"),
        ("\u200cمی", "holds a zero-width non-joiner (U+200C) outside a script"),  # nothing before it to join
        ("می\u200cخواهم", None),  # Persian spelling
        ("क्\u200dष", None),  # Devanagari half form: the virama before the joiner is a Devanagari mark
        ("é\u0301\u200db", "holds a zero-width joiner"),  # a combining accent looked through: Latin before it
        # the letter nearest before the joiner decides, not the first of the text
        ("a می\u200cخو", None),  # a Latin word, then Persian spelling
        ("می a\u200db", "holds a zero-width joiner (U+200D) outside a script"),  # Persian, then a Latin joiner
        ("x" * 10, None),
        ("x" * 11, "has 11 characters; at most 10"),
    ],
)
def test_value_problem(text, problem):
    found = value_problem(text, 10)
    assert found == problem if problem is None else found.startswith(problem), found


def test_a_refused_value_is_shown_visible_and_short():
    assert shown("a\u200db") == "'a\\u200db'"
    assert shown("x" * 41) == "'" + "x" * 40 + "…'" and shown("x" * 40) == "'" + "x" * 40 + "'"
