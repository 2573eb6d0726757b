"""Slot strategies: one batched call, acceptance order, restoration, fallback, spacing."""

from __future__ import annotations

import re

import pytest

from babelforge.translation import placeholders as ph
from babelforge.translation.nllb import Hypothesis

ORDER = ph.strategies(["tag_noun", "brace", "degree", "section", "reference"])


class StubTranslator:
    """Deterministic fake MT: applies `rewrite` to each source text; records every call."""

    def __init__(self, rewrite):
        self.rewrite = rewrite
        self.calls: list[tuple[list[str], str, list[str]]] = []

    def translate(self, texts, src_lang, tgt_langs):
        self.calls.append((list(texts), src_lang, list(tgt_langs)))
        return [[Hypothesis(self.rewrite(text), -0.5 - len(text) / 100)] for text in texts]


def german(text: str) -> str:
    """A word-for-word 'translation' that keeps every marker as it is."""
    words = {"a": "ein", "photo": "Foto", "of": "von", "the": "dem", "object": "Objekt", "bad": "schlechtes"}
    return re.sub(r"[A-Za-z]+", lambda m: words.get(m.group(0), m.group(0)), text)


def test_all_strategies_for_all_templates_in_one_call(templates):
    stub = StubTranslator(german)
    ph.translate_templates(stub.translate, templates, "deu_Latn", "deu_Latn", ORDER)
    assert len(stub.calls) == 1
    texts, src, targets = stub.calls[0]
    assert len(texts) == len(templates) * (len(ORDER) + 1)
    assert src == "eng_Latn" and set(targets) == {"deu_Latn"}
    assert texts[0] == templates[0].replace("{}", "<b>object</b>")
    assert texts[len(templates)] == templates[0].replace("{}", "{c}")
    assert texts[-1] == ph.bare_template(templates[-1]) and "{}" not in texts[-1]


def test_first_strategy_accepted_when_marker_survives(templates):
    results = ph.translate_templates(StubTranslator(german).translate, templates, "deu_Latn", "deu_Latn", ORDER)
    assert [r.template_id for r in results] == list(range(len(templates)))
    assert {r.strategy for r in results} == {"tag_noun"}
    assert not any(r.fallback for r in results)
    assert all(r.text.count("{}") == 1 and "<b>" not in r.text and "Objekt" not in r.text for r in results)
    assert results[0].text == "ein schlechtes Foto von ein {}."


def test_lost_and_doubled_markers_move_to_the_next_strategy(templates):
    def mangle(text):
        text = german(text).replace("<b>", "").replace("</b>", "")  # tags lost
        return text.replace("{c}", "{c} {c}")  # brace doubled

    results = ph.translate_templates(StubTranslator(mangle).translate, templates, "deu_Latn", "deu_Latn", ORDER)
    assert {r.strategy for r in results} == {"degree"}
    assert all(r.text.count("{}") == 1 and "°" not in r.text for r in results)


def test_a_stray_slot_in_the_output_rejects_the_strategy(templates):
    # The marker survives once, but the output already holds a `{}` of its own: restoring
    # would give two slots, so the next strategy is tried.
    assert ph.STRATEGIES["brace"].restore("ein {} Foto {c}") is None
    assert ph.STRATEGIES["tag_noun"].restore("{} ein <b>Objekt</b>") is None

    def stray(text):
        return german(text).replace("<b>", "{} <b>")

    results = ph.translate_templates(StubTranslator(stray).translate, templates, "deu_Latn", "deu_Latn", ORDER)
    assert {r.strategy for r in results} == {"brace"}
    assert all(r.text.count("{}") == 1 for r in results)


def test_no_surviving_marker_falls_back_to_appended_slot(templates):
    def lose_everything(text):
        for token in ph.MARKER_TOKENS:
            text = text.replace(token, "")
        return german(text)

    stub = StubTranslator(lose_everything)
    results = ph.translate_templates(stub.translate, templates, "deu_Latn", "deu_Latn", ORDER)
    assert all(r.fallback and r.strategy == ph.FALLBACK_STRATEGY for r in results)
    bare_outputs = stub.calls[0][0][-len(templates) :]
    for result, bare in zip(results, bare_outputs):
        assert result.text == ph.normalise_spacing(german(bare) + " {}", "deu_Latn")
        assert result.text.endswith(" {}")


def test_mixed_outcomes_per_template(templates):
    # Only the second template keeps its brace; the rest lose all markers.
    second = templates[1].replace("{}", "{c}")

    def rewrite(text):
        if text == second:
            return german(text)
        return german(re.sub(r"<b>|</b>|\{c\}|°|§|※", "", text))

    results = ph.translate_templates(StubTranslator(rewrite).translate, templates, "deu_Latn", "deu_Latn", ORDER)
    assert results[1].strategy == "brace" and not results[1].fallback
    assert all(r.fallback for i, r in enumerate(results) if i != 1)


def test_restore_rules():
    tag, brace, degree = ph.STRATEGIES["tag_noun"], ph.STRATEGIES["brace"], ph.STRATEGIES["degree"]
    assert tag.restore("ein Foto von einem <b>Objekt</b>.") == "ein Foto von einem {}."
    assert tag.restore("ein Foto </b>Objekt<b>.") is None  # wrong order
    assert tag.restore("<b>a</b> und <b>b</b>") is None  # twice
    assert tag.restore("ein Foto von einem Objekt.") is None  # lost
    assert brace.restore("{c} {c}") is None and brace.restore("Foto {c}") == "Foto {}"
    assert degree.restore("Foto ° °") is None and degree.restore("Foto °.") == "Foto {}."


@pytest.mark.parametrize(
    "lang, raw, expected",
    [
        ("deu_Latn", "ein  Foto von einem {} .", "ein Foto von einem {}."),
        ("deu_Latn", "  ein Foto ( {} ) , scharf !", "ein Foto ({}), scharf!"),
        ("spa_Latn", "¿ una foto de un {} ?", "¿una foto de un {}?"),
        ("fra_Latn", "une photo d'un {} !", "une photo d'un {} !"),
        ("fra_Latn", "« {} » : une photo .", "« {} » : une photo."),
        ("zho_Hans", "一张 {} 的照片 。", "一张{}的照片。"),
        ("jpn_Jpan", "{} の 写真 。", "{}の写真。"),
        ("jpn_Jpan", "これは {} です", "これは{}です"),
        ("tha_Thai", "รูปภาพของ {}", "รูปภาพของ{}"),
        ("kor_Hang", "{} 의 사진", "{} 의 사진"),
        ("arb_Arab", "صورة {} ؟", "صورة {}؟"),
        ("pes_Arab", "عکس {} ، زیبا .", "عکس {}، زیبا."),
        ("urd_Arab", "{} کی تصویر ۔", "{} کی تصویر۔"),
        ("hin_Deva", "{} की तस्वीर ।", "{} की तस्वीर।"),
        ("amh_Ethi", "የ {} ፎቶ ።", "የ {} ፎቶ።"),
        ("hye_Armn", "{}-ի լուսանկար ։", "{}-ի լուսանկար։"),
        ("deu_Latn", "Foto\u00a0{}", "Foto\u00a0{}"),
        ("deu_Latn", "e\u0301in Foto {}", "\u00e9in Foto {}"),
    ],
)
def test_spacing_normalisation(lang, raw, expected):
    assert ph.normalise_spacing(raw, lang) == expected


def test_append_slot_spacing():
    assert ph.append_slot("ein Foto. ", "deu_Latn") == "ein Foto. {}"
    assert ph.append_slot("一张照片。", "zho_Hans") == "一张照片。{}"


def test_unknown_strategy_is_an_error():
    from babelforge.core.errors import BabelforgeError

    with pytest.raises(BabelforgeError, match="nope"):
        ph.strategies(["tag_noun", "nope"])


def test_deterministic(templates):
    first = ph.translate_templates(StubTranslator(german).translate, templates, "deu_Latn", "deu_Latn", ORDER)
    again = ph.translate_templates(StubTranslator(german).translate, templates, "deu_Latn", "deu_Latn", ORDER)
    assert first == again


def test_tiny_model_strategy_choice_matches_its_outputs(tiny_translator, templates):
    """With the real (tiny, random) model: one call, and every choice is justified by the outputs."""
    calls = []

    def counting(texts, src, targets):
        calls.append(len(texts))
        return tiny_translator.translate(texts, src, targets)

    subset = templates[:12]
    results = ph.translate_templates(counting, subset, "zho_Hans", "zho_Hans", ORDER)
    assert calls == [len(subset) * (len(ORDER) + 1)]
    inputs = ph.strategy_inputs(subset, ORDER)
    outputs = [h[0].text for h in tiny_translator.translate(inputs, "eng_Latn", ["zho_Hans"] * len(inputs))]
    n = len(subset)
    for result in results:
        survived = [s.name for k, s in enumerate(ORDER) if s.restore(outputs[k * n + result.template_id]) is not None]
        if survived:
            assert result.strategy == survived[0] and not result.fallback
        else:
            assert result.fallback and result.strategy == ph.FALLBACK_STRATEGY
            bare = outputs[len(ORDER) * n + result.template_id]
            assert result.text == ph.append_slot(bare, "zho_Hans")
    assert results == ph.translate_templates(tiny_translator.translate, subset, "zho_Hans", "zho_Hans", ORDER)
