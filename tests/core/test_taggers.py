"""The tagger registry (declared, checked output) and the one threshold step (thresholds as data)."""

import math

import pytest

from babelforge.core import taggers
from babelforge.core.errors import BabelforgeError
from babelforge.core.taggers import Thresholds, parse_rules, rejection_reasons

ROWS = [{"text": "a"}, {"text": "bb"}, {"text": "ccc"}]


def all_taggers() -> dict:
    """The registry once every stage module is imported (each imports the taggers it runs)."""
    from babelforge.pipeline.taggers_stage import used_by

    used_by()
    return taggers.REGISTRY


@pytest.fixture
def scratch_registry(monkeypatch):
    """A registry the test may add to; the project's registrations are restored after it."""
    monkeypatch.setattr(taggers, "REGISTRY", dict(all_taggers()))
    return taggers.REGISTRY


def test_every_project_tagger_is_versioned_typed_and_used_by_a_stage():
    from babelforge.pipeline.taggers_stage import used_by

    used = used_by()
    registry = all_taggers()
    assert set(used) == set(registry)  # no stage names an unknown tagger, no tagger is unused
    for name, entry in registry.items():
        assert entry.name == name and entry.version >= 1 and entry.columns and entry.help, name


def test_output_must_be_the_declared_columns_aligned_with_the_rows(scratch_registry):
    taggers.register("length_v1", {"chars": int}, lambda rows, ctx: {"chars": [len(r["text"]) for r in rows]})
    assert taggers.run_taggers(["length_v1"], ROWS, None) == {"length_v1__chars": [1, 2, 3]}

    taggers.register("extra_v1", {"chars": int}, lambda rows, ctx: {"chars": [1, 2, 3], "words": [1, 1, 1]})
    with pytest.raises(ValueError, match=r"unexpected: words"):
        taggers.run_tagger("extra_v1", ROWS, None)
    taggers.register("short_v1", {"chars": int}, lambda rows, ctx: {"chars": [1, 2]})
    with pytest.raises(ValueError, match="2 values for 3 rows"):
        taggers.run_tagger("short_v1", ROWS, None)
    taggers.register("typed_v1", {"chars": int}, lambda rows, ctx: {"chars": [1, "2", None]})
    with pytest.raises(ValueError, match="declared int, got '2'"):
        taggers.run_tagger("typed_v1", ROWS, None)


def test_names_are_versioned_and_a_name_means_one_function(scratch_registry):
    with pytest.raises(ValueError, match="<name>_v<version>"):
        taggers.register("length", {"chars": int}, lambda rows, ctx: {})
    with pytest.raises(ValueError, match="registered twice"):
        taggers.register("script_v1", {"share": float}, lambda rows, ctx: {})
    with pytest.raises(BabelforgeError, match="unknown tagger 'nope_v1'"):
        taggers.get("nope_v1")


def test_conditions_min_max_equals_and_missing_values():
    rules = parse_rules(
        {
            "short": {"n": {"min": 2}},
            "long": {"n": {"max": 4}},
            "flag": {"ok": {"equals": True}},
            "score": {"p": {"min": 0.5, "missing": "fail"}},
        },
        "test",
    )
    assert rejection_reasons({"n": 3, "ok": True, "p": 0.5}, rules) == []
    assert rejection_reasons({"n": 1, "ok": False, "p": 0.1}, rules) == ["short", "flag", "score"]
    assert rejection_reasons({"n": 5, "ok": True, "p": math.nan}, rules) == ["long", "score"]
    # a missing value passes unless the condition says otherwise
    assert rejection_reasons({"n": None, "ok": True, "p": 0.9}, rules) == []


def test_null_turns_a_reason_a_column_or_a_bound_off():
    assert parse_rules({"a": None, "b": {"x": None}, "c": {"x": {"min": None}}}, "test") == ()
    (rule,) = parse_rules({"range": {"x": {"min": 1, "max": None}}}, "test")
    assert rule.fails({"x": 0}) and not rule.fails({"x": 99})


def test_when_limits_a_reason_to_some_rows():
    (rule,) = parse_rules(
        {"langid": {"agrees": {"equals": True}, "when": {"chars": {"min": 8}, "p": {"min": 0.9, "missing": "fail"}}}},
        "test",
    )
    assert rule.fails({"agrees": False, "chars": 10, "p": 0.95})
    assert not rule.fails({"agrees": False, "chars": 5, "p": 0.95})  # too short to judge
    assert not rule.fails({"agrees": False, "chars": 10, "p": None})  # not judged at all


def test_per_language_overrides_merge_at_every_level():
    thresholds = Thresholds(
        {"length": {"ratio": {"min": 0.2, "max": 4.0}}, "script": {"share": {"min": 0.5}}},
        {"tha_Thai": {"length": {"ratio": {"max": 8.0}}, "script": None}},
    )
    (length,) = thresholds.for_language("tha_Thai", "test")
    assert length.conditions["ratio"].min == 0.2 and length.conditions["ratio"].max == 8.0
    assert [rule.reason for rule in thresholds.for_language("deu_Latn", "test")] == ["length", "script"]
    assert thresholds.for_language("deu_Latn", "test", extra={"script": None})[-1].reason == "length"


@pytest.mark.parametrize(
    "data, message",
    [
        ({"a": {"x": {"minimum": 1}}}, "g.default.a.x: unknown key minimum"),
        ({"a": {"x": {"min": "high"}}}, "g.default.a.x.min is 'high'"),
        ({"a": {"x": {"min": 1, "missing": "skip"}}}, "g.default.a.x.missing is 'skip'"),
        ({"a": {"x": 0.5}}, "g.default.a.x is 0.5"),
        ({"a": {"y": {"min": 1}}}, "g.default.a: no column y"),
    ],
)
def test_bad_thresholds_stop_with_one_line_naming_the_place(data, message):
    with pytest.raises(BabelforgeError, match=message.replace(".", r"\.")):
        Thresholds(data).check(["x"], "g")


def test_taggers_command_lists_every_tagger_with_its_stages(capsys):
    import json

    from babelforge.cli import main

    assert main(["taggers", "--json"]) == 0
    listed = {entry["name"]: entry for entry in map(json.loads, capsys.readouterr().out.splitlines())}
    assert set(listed) == set(all_taggers())
    assert listed["kiwi_v1"]["used_by"] == ["captions_tag"] and listed["kiwi_v1"]["columns"] == {
        "score": "float",
        "truncated": "bool",
    }
    assert set(listed["duplicate_v1"]["used_by"]) == {"labels", "prompts", "audit"}
    assert set(listed["script_v1"]["used_by"]) == {"prompts", "captions_tag", "audit"}
    assert main(["taggers"]) == 0
    assert "langid_rank_v1  (version 1; used by prompts, audit)" in capsys.readouterr().out
