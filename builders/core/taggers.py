"""Tag, then filter: versioned taggers and one declarative threshold step.

A *tagger* is a function over a batch of rows (plain mappings) and a context object that
returns one list of values per declared output column, aligned with the rows. It is
registered under a versioned name (`langid_v1`); a tagger whose meaning changes gets a new
version, so a stored column never silently changes what it means (dolma's convention).
Stored, a column is named `<tagger>__<column>` (`script_v1__share`).

    @tagger("script_v1", columns={"share": float, "dominant": str}, reads=("text", "lang"),
            help="share of letters in the language's expected scripts; the dominant script")
    def tag_script(rows, context): ...

`run_tagger` checks what a tagger returns: exactly its declared columns, one value per row,
each value of the declared type or None ("not measurable"). A tagger takes a whole batch so
that a sharded runner can run any of them, one shard at a time.

The *threshold step* turns tagged rows into rejection reasons. Thresholds are data:

    {reason: {column: {min: x} | {max: x} | {equals: x}, ...}, ...}

A row fails a reason when any of its conditions fails; `null` turns a reason, a condition or
one bound off. A value that is missing (None or NaN: "not measurable") passes unless the
condition says `missing: fail`. A reason may be limited to some rows with `when: {column:
condition}` (it applies only where every `when` condition holds). Per-language overrides
merge into the default at every level (`Thresholds.for_language`).
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from babelforge.core.errors import BabelforgeError

Rows = Sequence[Mapping[str, Any]]
Columns = dict[str, list]
TaggerFunction = Callable[[Rows, Any], Mapping[str, Sequence[Any]]]

NAME = re.compile(r"^[a-z][a-z0-9_]*_v[0-9]+$")
SEPARATOR = "__"
COLUMN_TYPES = (float, int, bool, str, list)


@dataclass(frozen=True)
class Tagger:
    """A registered tagger: its versioned name, declared columns and the function."""

    name: str
    columns: Mapping[str, type]
    function: TaggerFunction = field(repr=False, compare=False)
    reads: tuple[str, ...] = ()  # row fields the function reads
    help: str = ""
    module: str = ""

    @property
    def base(self) -> str:
        return self.name.rsplit("_v", 1)[0]

    @property
    def version(self) -> int:
        return int(self.name.rsplit("_v", 1)[1])

    def column(self, name: str) -> str:
        """The stored name of one of its columns: `<tagger>__<column>`."""
        if name not in self.columns:
            raise KeyError(f"tagger {self.name} has no column {name!r} (it has {', '.join(self.columns)})")
        return f"{self.name}{SEPARATOR}{name}"

    @property
    def stored_columns(self) -> dict[str, type]:
        return {self.column(name): kind for name, kind in self.columns.items()}


REGISTRY: dict[str, Tagger] = {}


def register(
    name: str, columns: Mapping[str, type], function: TaggerFunction, reads: Iterable[str] = (), help: str = ""
) -> Tagger:
    """Add a tagger to the registry; a second, different registration of one name is an error."""
    if not NAME.match(name):
        raise ValueError(f"tagger name {name!r}: expected <name>_v<version>, e.g. langid_v1")
    if not columns:
        raise ValueError(f"tagger {name}: declares no output column")
    for column, kind in columns.items():
        if SEPARATOR in column or not column.isidentifier():
            raise ValueError(f"tagger {name}: column {column!r} must be an identifier without '{SEPARATOR}'")
        if kind not in COLUMN_TYPES:
            raise ValueError(f"tagger {name}: column {column} has type {kind!r}; one of float, int, bool, str, list")
    entry = Tagger(name, dict(columns), function, tuple(reads), help, getattr(function, "__module__", ""))
    known = REGISTRY.get(name)
    if known is not None and (known.module, known.function.__qualname__) != (entry.module, function.__qualname__):
        raise ValueError(
            f"tagger {name} is registered twice ({known.module} and {entry.module}); "
            "a changed tagger takes a new version"
        )
    REGISTRY[name] = entry
    return entry


def tagger(name: str, columns: Mapping[str, type], reads: Iterable[str] = (), help: str = ""):
    """Decorator form of `register`; the function stays callable as it is."""

    def decorate(function: TaggerFunction) -> TaggerFunction:
        register(name, columns, function, reads, help or _first_paragraph(function.__doc__))
        return function

    return decorate


def _first_paragraph(doc: str | None) -> str:
    return " ".join((doc or "").strip().split("\n\n")[0].split())


def get(name: str) -> Tagger:
    """A registered tagger; its module must have been imported (a stage imports the modules of
    the taggers it runs; `babelforge taggers` imports every stage)."""
    if name not in REGISTRY:
        raise BabelforgeError(f"unknown tagger {name!r}; registered: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[name]


def _type_ok(value: Any, kind: type) -> bool:
    if value is None:
        return True
    if kind is bool:
        return isinstance(value, bool) or type(value).__name__ == "bool_"
    if isinstance(value, bool):
        return False
    if kind is float:
        return isinstance(value, numbers.Real)
    if kind is int:
        return isinstance(value, numbers.Integral)
    if kind is list:
        return isinstance(value, (list, tuple))
    return isinstance(value, kind)


def check_output(entry: Tagger, rows: Rows, output: Mapping[str, Sequence[Any]]) -> Columns:
    """`output` as {column: list}, after checking it has exactly the declared columns, one
    value per row, each of the declared type (or None)."""
    got, declared = set(output), set(entry.columns)
    if got != declared:
        extra, missing = sorted(got - declared), sorted(declared - got)
        raise ValueError(
            f"tagger {entry.name} returned columns {sorted(got)}; declared {sorted(declared)}"
            + (f" (unexpected: {', '.join(extra)})" if extra else "")
            + (f" (missing: {', '.join(missing)})" if missing else "")
        )
    checked: Columns = {}
    for column, kind in entry.columns.items():
        values = list(output[column])
        if len(values) != len(rows):
            raise ValueError(f"tagger {entry.name}: column {column} has {len(values)} values for {len(rows)} rows")
        bad = next((value for value in values if not _type_ok(value, kind)), None)
        if bad is not None:
            raise ValueError(f"tagger {entry.name}: column {column} declared {kind.__name__}, got {bad!r}")
        checked[column] = values
    return checked


def run_tagger(name: str, rows: Rows, context: Any) -> Columns:
    """One tagger over a batch of rows: {column: values}, checked."""
    entry = get(name)
    return check_output(entry, rows, entry.function(rows, context))


def run_taggers(names: Iterable[str], rows: Rows, context: Any) -> Columns:
    """Several taggers over one batch: {`<tagger>__<column>`: values}, every output checked."""
    columns: Columns = {}
    for name in names:
        entry = get(name)
        for column, values in run_tagger(name, rows, context).items():
            columns[entry.column(column)] = values
    return columns


def cached_by(key: Callable[[Mapping[str, Any]], Any], rows: Rows, compute: Callable[..., Any]) -> list:
    """`compute(*key(row))` for every row, each distinct key computed once (n-best lists and
    prompt sets repeat texts a lot)."""
    cache: dict[Any, Any] = {}
    out = []
    for row in rows:
        k = key(row)
        if k not in cache:
            cache[k] = compute(*k)
        out.append(cache[k])
    return out


# --- the threshold step -------------------------------------------------------------------------

CONDITION_KEYS = ("min", "max", "equals", "missing")
WHEN = "when"
_UNSET = object()


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


@dataclass(frozen=True)
class Condition:
    """What a passing value satisfies: `min <= value <= max`, `value == equals`."""

    min: float | None = None
    max: float | None = None
    equals: Any = _UNSET
    missing: str = "pass"  # a missing value (None / NaN) passes, or fails

    def passes(self, value: Any) -> bool:
        if is_missing(value):
            return self.missing == "pass"
        if self.min is not None and value < self.min:
            return False
        if self.max is not None and value > self.max:
            return False
        return self.equals is _UNSET or value == self.equals

    @property
    def active(self) -> bool:
        return self.min is not None or self.max is not None or self.equals is not _UNSET

    def as_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.min is not None:
            data["min"] = self.min
        if self.max is not None:
            data["max"] = self.max
        if self.equals is not _UNSET:
            data["equals"] = self.equals
        if self.missing != "pass":
            data["missing"] = self.missing
        return data


@dataclass(frozen=True)
class Rule:
    """One rejection reason: the conditions a row must meet, where the `when` conditions hold."""

    reason: str
    conditions: Mapping[str, Condition]
    when: Mapping[str, Condition] = field(default_factory=dict)

    def applies(self, row: Mapping[str, Any]) -> bool:
        return all(condition.passes(row.get(column)) for column, condition in self.when.items())

    def fails(self, row: Mapping[str, Any]) -> bool:
        return self.applies(row) and not all(
            condition.passes(row.get(column)) for column, condition in self.conditions.items()
        )

    @property
    def columns(self) -> set[str]:
        return set(self.conditions) | set(self.when)


def _condition(data: Any, where: str) -> Condition | None:
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise BabelforgeError(f"{where} is {data!r}; expected {{min: x}}, {{max: x}} or {{equals: x}} (null: off)")
    unknown = sorted(set(data) - set(CONDITION_KEYS))
    if unknown:
        raise BabelforgeError(f"{where}: unknown key {unknown[0]}; a condition takes {', '.join(CONDITION_KEYS)}")
    for bound in ("min", "max"):
        value = data.get(bound)
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
            raise BabelforgeError(f"{where}.{bound} is {value!r}; expected a number (null: off)")
    missing = data.get("missing", "pass")
    if missing not in ("pass", "fail"):
        raise BabelforgeError(f"{where}.missing is {missing!r}; one of 'pass', 'fail'")
    equals = data["equals"] if data.get("equals") is not None else _UNSET
    condition = Condition(data.get("min"), data.get("max"), equals, missing)
    return condition if condition.active else None


def _conditions(data: Any, where: str) -> dict[str, Condition]:
    if not isinstance(data, Mapping):
        raise BabelforgeError(f"{where} is {data!r}; expected {{column: condition}}")
    parsed = {column: _condition(value, f"{where}.{column}") for column, value in data.items()}
    return {column: condition for column, condition in parsed.items() if condition is not None}


def parse_rules(data: Mapping[str, Any] | None, where: str) -> tuple[Rule, ...]:
    """`{reason: {column: condition, when: {...}} | null}` -> the active rules, in the given order."""
    rules = []
    for reason, body in (data or {}).items():
        if body is None:
            continue
        if not isinstance(body, Mapping):
            raise BabelforgeError(f"{where}.{reason} is {body!r}; expected {{column: condition}} (null: off)")
        conditions = _conditions({k: v for k, v in body.items() if k != WHEN}, f"{where}.{reason}")
        when = _conditions(body.get(WHEN) or {}, f"{where}.{reason}.{WHEN}")
        if conditions:
            rules.append(Rule(str(reason), conditions, when))
    return tuple(rules)


def merge(base: Any, override: Any) -> Any:
    """`override` merged into `base` at every mapping level; a null in `override` turns off."""
    if isinstance(base, Mapping) and isinstance(override, Mapping):
        merged = dict(base)
        for key, value in override.items():
            merged[key] = merge(base[key], value) if key in base and value is not None else value
        return merged
    return override


@dataclass(frozen=True)
class Thresholds:
    """A rule set as params.yaml holds it: `default` rules for every language and per-language
    overrides (`languages: {lang: {reason: {...}}}`) merged into them."""

    default: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    languages: dict[str, dict[str, Any]] = field(default_factory=dict)

    def for_language(self, lang: str, where: str, extra: Mapping[str, Any] | None = None) -> tuple[Rule, ...]:
        """The rules of `lang`: the default, its override, then `extra` (a stage's own, e.g.
        langid off for a language langid does not know). `where` names the group in errors."""
        data = merge(merge(self.default, self.languages.get(lang) or {}), extra or {})
        return parse_rules(data, f"{where}.languages.{lang}" if lang in self.languages else f"{where}.default")

    def check(self, available: Iterable[str], where: str) -> None:
        """Every rule parses and every column a rule reads is among `available`: a misspelt
        column stops the stage before any row is judged."""
        known = set(available)
        sets = [(f"{where}.default", self.default)] + [
            (f"{where}.languages.{lang}", merge(self.default, data or {})) for lang, data in self.languages.items()
        ]
        for place, data in sets:
            for rule in parse_rules(data, place):
                unknown = sorted(rule.columns - known)
                if unknown:
                    raise BabelforgeError(
                        f"{place}.{rule.reason}: no column {unknown[0]} to threshold; "
                        f"columns: {', '.join(sorted(known))}"
                    )


def rejection_reasons(row: Mapping[str, Any], rules: Sequence[Rule]) -> list[str]:
    """The reasons (in rule order) a row fails; empty when it passes every rule."""
    return [rule.reason for rule in rules if rule.fails(row)]
