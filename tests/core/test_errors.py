"""A one-line message lists a few names and counts the rest (babelforge.core.errors.listed)."""

from __future__ import annotations

from babelforge.core.errors import LISTED, listed


def test_a_message_lists_three_names_then_a_count():
    assert LISTED == 3
    assert listed(["a", "b", "c"]) == "a, b, c"  # exactly the limit: no count
    assert listed(["a", "b", "c", "d", "e"]) == "a, b, c and 2 more"
    assert listed(["a", "b"], limit=1) == "a and 1 more"
    assert listed(["a"], limit=1) == "a" and listed([]) == ""
