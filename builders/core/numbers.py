"""The one number rule: every number a user gives (a params.yaml setting, `--set`, `dvc exp run -S`,
a command-line flag) is finite and inside the range declared beside it.

A range is declared once, where the setting is (`setting(0.05, "...", minimum=0, maximum=1)`), or
where a hand-written flag is (`number_flag(float, "--images-per-second", Bounds(above=0))`). NaN
passes every comparison as false, so an unchecked `.nan` switches a `value > limit` test off
without a word; infinity makes a timeout or a count meaningless. Both are refused everywhere, with
or without a declared range. Pure functions; the callers name where the number came from.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from babelforge.core.errors import BabelforgeError


@dataclass(frozen=True)
class Bounds:
    """The range a setting's numbers lie in: `minimum` and `maximum` included, `above` excluded
    (a timeout above 0). None: no bound on that side."""

    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None

    def __post_init__(self) -> None:
        if self.minimum is not None and self.above is not None:
            raise TypeError("Bounds: give minimum or above, not both")

    def holds(self, value: float) -> bool:
        return (
            (self.minimum is None or value >= self.minimum)
            and (self.above is None or value > self.above)
            and (self.maximum is None or value <= self.maximum)
        )

    def __str__(self) -> str:
        low = f"at least {_shown(self.minimum)}" if self.minimum is not None else None
        low = f"above {_shown(self.above)}" if self.above is not None else low
        if self.minimum is not None and self.maximum is not None:
            return f"between {_shown(self.minimum)} and {_shown(self.maximum)}"
        high = f"at most {_shown(self.maximum)}" if self.maximum is not None else None
        return " and ".join(part for part in (low, high) if part)

    @property
    def declared(self) -> bool:
        return any(bound is not None for bound in (self.minimum, self.maximum, self.above))


ANY = Bounds()


def _shown(bound: float) -> str:
    """A bound as a user would write it: 1, not 1.0; 0.5; 536870912, not 5.4e+08."""
    return str(int(bound)) if float(bound).is_integer() else repr(bound)


def is_number(value: object) -> bool:
    """An int or float (a bool is no number here: `true` where a count belongs is a type error)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def number_problem(value: float, bounds: Bounds = ANY) -> str | None:
    """Why `value` breaks the number rule (`it must be ...`), None when it keeps it."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"it must be a finite number{' ' + str(bounds) if bounds.declared else ''}"
    if not bounds.holds(value):
        return f"it must be {bounds}"
    return None


def number_flag(kind: type, flag: str, bounds: Bounds = ANY) -> Callable[[str], float]:
    """The argparse `type` of a numeric flag: the text as `kind` (int or float), kept to the number
    rule; otherwise one line naming the flag (a BabelforgeError, which the CLI prints as it is)."""
    expected = "an integer" if kind is int else "a number"

    def parse(text: str) -> float:
        try:
            value = kind(text.strip())
        except ValueError:
            raise BabelforgeError(
                f"{flag} {text!r}: not {expected}{' ' + str(bounds) if bounds.declared else ''}"
            ) from None
        problem = number_problem(value, bounds)
        if problem:
            raise BabelforgeError(f"{flag} is {value!r}; {problem}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its own messages by it
    return parse
