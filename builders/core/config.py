"""Typed stage configs: one dataclass per stage, loaded from one params.yaml group.

Every stage module declares `Config`, a frozen dataclass whose fields carry one default,
one type and one help text (`setting(default, "help")`), and the name of its params group
(`GROUP`). `load_config(Config, params)` is the only reader of params.yaml groups: it
resolves `{sample: ..., full: ...}` choices at any depth for the selected profile, rejects
unknown keys, values of the wrong type and numbers that break the number rule (`core.numbers`:
finite, inside the range declared beside the setting) with one line naming the key, and fills
nested dataclasses and the shared `paths:` group. `describe(Config)` gives `--help` its text.
"""

from __future__ import annotations

import copy
import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, get_args, get_origin

import yaml

from babelforge.core.errors import BabelforgeError
from babelforge.core.numbers import ANY, Bounds, is_number, number_problem
from babelforge.core.params import PROFILES, for_profile, load_yaml_text, profile_of

C = TypeVar("C")
_MISSING = dataclasses.MISSING


def setting(
    default: Any,
    help: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
    **metadata: Any,
) -> Any:
    """A config field with its one default and its one help text (lists/dicts are copied per instance).

    `minimum` / `maximum` (included) and `above` (excluded) declare the range of the setting's numbers
    (every number inside a list or mapping setting too): a count `minimum=1`, a share `minimum=0,
    maximum=1`, a timeout `above=0`. A number outside it, NaN or infinity is a one-line error naming
    the key, from params.yaml, `--set`, `dvc exp run -S` and the setting's flag alike.
    """
    meta = {"help": help, **metadata}
    bounds = Bounds(minimum, maximum, above)
    if bounds.declared:
        meta["bounds"] = bounds
    if has_profile_choice(default):
        # {sample: ..., full: ...} at any depth: the field's default is the sample profile's value
        # (Config() in a test), load_config takes the selected profile's, params.yaml shows both.
        meta["declared"] = default
        default = for_profile(default, PROFILES[0], "default")
    if isinstance(default, (list, dict, set)):
        return dataclasses.field(default_factory=lambda: _copy(default), metadata=meta)
    if dataclasses.is_dataclass(default) and not isinstance(default, type):
        return dataclasses.field(default_factory=lambda: default, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def _copy(value: Any) -> Any:

    return copy.deepcopy(value)


def has_profile_choice(value: Any) -> bool:
    """Whether a value holds a `{sample: ..., full: ...}` choice at any depth."""
    if isinstance(value, dict):
        return bool(value) and set(value) <= set(PROFILES) or any(map(has_profile_choice, value.values()))
    if isinstance(value, (list, tuple)):
        return any(map(has_profile_choice, value))
    return False


def declared_default(f: dataclasses.Field) -> Any:
    """A field's default as declared: with its per-profile choices (what params.yaml shows)."""
    return f.metadata["declared"] if "declared" in f.metadata else _default(f)


def load_config(cls: type[C], params: Mapping[str, Any], group: str | None = None) -> C:
    """The stage config `cls` from params.yaml's group (`cls.GROUP` unless named), profile resolved."""

    name = group or cls.GROUP
    profile = profile_of(params)
    raw: Any = params
    for part in name.split("."):
        raw = (raw or {}).get(part) if isinstance(raw, Mapping) else None
    raw = for_profile(raw if raw is not None else {}, profile, name)
    values = dict(raw) if isinstance(raw, Mapping) else _wrong_type(name, raw, "a mapping")
    for f in dataclasses.fields(cls):
        other = f.metadata.get("group")
        if other is None or f.name in values:
            continue
        if other == "profile":
            values[f.name] = profile
        else:
            values[f.name] = load_config(typing.get_type_hints(cls)[f.name], params, other)
    return build(cls, values, name, profile)


def build(cls: type[C], values: Mapping[str, Any], where: str, profile: str = PROFILES[0]) -> C:
    """`cls(**values)` with every key known and every value of its declared type; a key not given
    takes its default for `profile`."""
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    values = {
        **{
            key: for_profile(f.metadata["declared"], profile, f"{where}.{key}")
            for key, f in fields.items()
            if "declared" in f.metadata and key not in values
        },
        **values,
    }
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise BabelforgeError(
            f"params.yaml: unknown key {where}.{unknown[0]}"
            + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "")
            + f"; {where} takes: {', '.join(fields)}"
        )
    kwargs = {key: _coerce(value, hints[key], f"{where}.{key}", profile) for key, value in values.items()}
    for key, value in kwargs.items():
        check_numbers(value, fields[key].metadata.get("bounds", ANY), f"{where}.{key}")
    return cls(**kwargs)


def check_numbers(value: Any, bounds: Bounds, where: str) -> None:
    """Every number in `value` (itself, a list's items, a mapping's values, at any depth) kept to the
    number rule: finite and within `bounds`; one line naming the first that is not."""
    if is_number(value):
        problem = number_problem(value, bounds)
        if problem:
            raise BabelforgeError(f"params.yaml: {where} is {value!r}; {problem}")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            check_numbers(item, bounds, f"{where}.{key}")
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            check_numbers(item, bounds, f"{where}[{index}]")


def _coerce(value: Any, kind: Any, where: str, profile: str = PROFILES[0]) -> Any:
    """`value` checked against the annotation `kind` (nested dataclasses built); one line when it is not."""
    if kind is Any:
        check_numbers(value, ANY, where)  # free-form settings (rule tables) hold numbers too: finite ones
        return value
    origin, args = get_origin(kind), get_args(kind)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        for option in options:
            try:
                return _coerce(value, option, where, profile)
            except BabelforgeError:
                continue
        return _wrong_type(where, value, " or ".join(_type_name(o) for o in args))
    if origin is Literal:
        if value in args:
            return value
        raise BabelforgeError(f"params.yaml: {where} is {value!r}; one of {', '.join(map(repr, args))}")
    if dataclasses.is_dataclass(kind):
        if isinstance(value, kind):
            return value
        if not isinstance(value, Mapping):
            return _wrong_type(where, value, "a mapping")
        return build(kind, value, where, profile)
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            return _wrong_type(where, value, _type_name(kind))
        item = args[0] if args else Any
        return [_coerce(v, item, f"{where}[{i}]", profile) for i, v in enumerate(value)]
    if origin is dict or kind is dict:
        if not isinstance(value, Mapping):
            return _wrong_type(where, value, "a mapping")
        key_kind, item = args if args else (Any, Any)
        return {
            _coerce(k, key_kind, f"{where} key", profile): _coerce(v, item, f"{where}.{k}", profile)
            for k, v in value.items()
        }
    if kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        return _wrong_type(where, value, "a number")
    if kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return _wrong_type(where, value, "an integer")
    if kind is bool:
        if isinstance(value, bool):
            return value
        return _wrong_type(where, value, "true or false")
    if kind is str:
        if isinstance(value, str):
            return value
        return _wrong_type(where, value, "a string")
    if isinstance(kind, type):
        if isinstance(value, kind):
            return value
        return _wrong_type(where, value, _type_name(kind))
    return value


def _wrong_type(where: str, value: Any, expected: str) -> Any:
    raise BabelforgeError(f"params.yaml: {where} is {value!r} ({type(value).__name__}); expected {expected}")


def _type_name(kind: Any) -> str:
    if kind is type(None):
        return "null"
    origin, args = get_origin(kind), get_args(kind)
    if origin in (list, tuple):
        return f"a list of {_type_name(args[0])}" if args else "a list"
    if origin is dict:
        return "a mapping"
    if origin is Literal:
        return " | ".join(map(repr, args))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in args)
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(
        kind, getattr(kind, "__name__", str(kind))
    )


@dataclasses.dataclass(frozen=True)
class Setting:
    """One setting of a stage Config, as `--help` and the reference docs show it."""

    key: str  # dotted, from the group: `labels.min_classes`, `eval.runner.shard_size`
    attributes: tuple[str, ...]  # the path of fields from the Config to it
    type: str
    default: Any
    bounds: Bounds | None  # the declared range of its numbers, None when it declares none
    help: str


def settings(cls: type, prefix: str | None = None, attributes: tuple[str, ...] = ()) -> list[Setting]:
    """Every setting of a Config, nested groups flattened, in field order (fields taken from other
    groups left out)."""
    prefix = prefix or getattr(cls, "GROUP", cls.__name__)
    hints = typing.get_type_hints(cls)
    found = []
    for f in dataclasses.fields(cls):
        if "group" in f.metadata or "subgroup" in f.metadata:
            continue
        kind = hints[f.name]
        if dataclasses.is_dataclass(kind):
            found += settings(kind, f"{prefix}.{f.name}", (*attributes, f.name))
            continue
        shown = str(kind).replace("typing.", "") if get_origin(kind) else getattr(kind, "__name__", str(kind))
        found.append(
            Setting(
                f"{prefix}.{f.name}",
                (*attributes, f.name),
                shown,
                declared_default(f),
                f.metadata.get("bounds"),
                f.metadata.get("help", ""),
            )
        )
    return found


def describe(cls: type, prefix: str | None = None) -> str:
    """One line per setting (`group.key  type  default  help`), nested groups flattened: `--help` text."""
    lines = []
    for item in settings(cls, prefix):
        bounds = f", {item.bounds}" if item.bounds is not None else ""
        lines.append(f"  {item.key} ({item.type}, default {item.default!r}{bounds}): {item.help}")
    return "\n".join(lines)


def _default(f: dataclasses.Field) -> Any:
    if f.default is not _MISSING:
        return f.default
    if f.default_factory is not _MISSING:  # type: ignore[misc]
        return f.default_factory()  # type: ignore[misc]
    return None


def as_params(config: Any) -> dict[str, Any]:
    """The config's own group as the plain mapping an artifact's provenance records.

    Fields taken from other groups (`paths`, `profile`, another stage's settings) are left out.
    """
    own = [f.name for f in dataclasses.fields(config) if "group" not in f.metadata and "subgroup" not in f.metadata]
    return {key: _plain(getattr(config, key)) for key in own}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return dataclasses.asdict(value)
    return value


def from_group(kind: Any, group: str, help: str) -> Any:
    """A field filled from another params.yaml group (`paths`, another stage's) or `profile`."""
    if group == "profile":
        return dataclasses.field(default="sample", metadata={"help": help, "group": group})
    return dataclasses.field(default_factory=kind, metadata={"help": help, "group": group})


def subgroup(kind: Any, help: str) -> Any:
    """A sub-group of this group that another command's Config reads as its own (`mvl_sib.images`
    inside `mvl_sib`): accepted here, written and documented there."""
    return dataclasses.field(default_factory=kind, metadata={"help": help, "subgroup": True})


def check_assignments(assignments: list[str], accepted: list[str]) -> None:
    """Every `--set` key inside what the command reads: `accepted` holds groups (`eval.zeroshot.*`)
    and single keys (`profile`). A key of another stage's group would be taken and ignored, and
    the run would not be the one asked for."""
    for assignment in assignments:
        key = assignment.partition("=")[0]
        if not any(
            key == name.removesuffix(".*") or (name.endswith(".*") and key.startswith(name[:-1])) for name in accepted
        ):
            raise BabelforgeError(f"--set {key}: not a setting of this command; it takes {', '.join(accepted)}")


def override(params: dict[str, Any], assignments: list[str]) -> dict[str, Any]:
    """params with `--set group.key=value` assignments applied (values parsed as YAML)."""

    result = copy.deepcopy(params)
    for assignment in assignments:
        key, sep, text = assignment.partition("=")
        if not sep or not key:
            raise BabelforgeError(f"--set {assignment!r}: expected group.key=value")
        parts = key.split(".")
        node = result
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise BabelforgeError(f"--set {key}: {part} is not a group")
            node = child
        try:
            node[parts[-1]] = load_yaml_text(text)
        except yaml.YAMLError as error:  # `a: b: c`, a backtick, a `!!python/...` tag (safe_load runs none)
            problem = getattr(error, "problem", None) or str(error).splitlines()[0]
            shown = text if len(text) <= 60 else text[:57] + "..."  # a line, even for a pasted document
            raise BabelforgeError(
                f"--set {key}: {shown!r} is not a YAML value ({problem}); quote a text: --set '{key}=\"...\"'"
            ) from None
    return result
