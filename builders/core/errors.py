"""The one error type a user is meant to read, and how its one line lists names."""

from __future__ import annotations

from collections.abc import Sequence

LISTED = 3  # how many names a message lists before "and N more": the line stays one line


class BabelforgeError(Exception):
    """Bad input or a missing prerequisite the user can fix.

    The CLI prints the message as a single line (what, where, what to do) and exits
    non-zero; no traceback, and the stage writes nothing partial.
    """


def listed(names: Sequence[str], limit: int = LISTED) -> str:
    """`a, b, c and 4 more`: the first names of a list, for a one-line message."""
    shown = ", ".join(names[:limit])
    return f"{shown} and {len(names) - limit} more" if len(names) > limit else shown
