"""The one error type a user is meant to read."""


class BabelforgeError(Exception):
    """Bad input or a missing prerequisite the user can fix.

    The CLI prints the message as a single line (what, where, what to do) and exits
    non-zero; no traceback, and the stage writes nothing partial.
    """
