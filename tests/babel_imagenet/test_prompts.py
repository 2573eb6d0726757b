"""Prompt validation (tag, then filter) and per-language assembly, on hand-made outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from babelforge.babel_imagenet import prompts as pr
from babelforge.core.errors import BabelforgeError
from babelforge.core.languages import read_registry
from babelforge.core.taggers import Thresholds
from babelforge.translation.placeholders import TranslatedTemplate
from tests.registry import write_registry as write_test_registry

REPO = Path(__file__).resolve().parents[2]
# A small registry in the real file's format (scripts = Unicode scripts, so Chinese expects
# `Hani` and the key says Hans); two languages without an NLLB code.
ROWS = [
    ("eng_Latn", "English", "eng", "Latn", "Latn", "en", "EN", "en", "eng_Latn", "en"),
    ("eng_Latn-simple", "Simple English", "eng", "Latn", "Latn", "", "SIMPLE", "", "eng_Latn", "en"),
    ("deu_Latn", "German", "deu", "Latn", "Latn", "de", "DE", "de", "deu_Latn", "de"),
    ("zho_Hans", "Chinese", "zho", "Hans", "Hani", "zh", "ZH", "cmn", "zho_Hans", "zh"),
    ("kmr_Latn", "Kurdish (Kurmanji)", "kmr", "Latn", "Latn", "ku", "KU", "kmr", "kmr_Latn", "ku"),
    ("jpn_Jpan", "Japanese", "jpn", "Jpan", "Jpan", "ja", "JA", "jpn", "jpn_Jpan", "ja"),
    ("fry_Latn", "West Frisian", "fry", "Latn", "Latn", "fy", "FY", "fy", "", ""),
    ("lat_Latn", "Latin", "lat", "Latn", "Latn", "la", "LA", "la", "", "la"),
]


def write_registry(path: Path) -> Path:
    return write_test_registry(path, ROWS)


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    return read_registry(write_registry(tmp_path_factory.mktemp("registry") / "languages.tsv"))


@pytest.fixture(scope="module")
def rank():
    return pr.langid_ranker()


@pytest.fixture(scope="module")
def templates():
    path = REPO / "resources" / "clip_templates_en.txt"
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


CHECKS = Thresholds(pr.DEFAULT_CHECKS)
MIN_VALID = 3


def check(registry, rank, lang, text, english="a photo of a {}.", checks=CHECKS):
    language = registry.get(lang)
    row = pr.PromptRow(lang, "nllb", 0, text, english, "tag_noun", False, -0.1)
    pr.tag_prompts([row], language, rank)
    return pr.check_prompt(row, pr.prompt_rules(checks, language)), row


@pytest.mark.slow
def test_good_prompts_pass(registry, rank):
    assert check(registry, rank, "deu_Latn", "ein Foto von einem {}.")[0] == []
    assert check(registry, rank, "zho_Hans", "一张{}的照片。")[0] == []
    assert check(registry, rank, "jpn_Jpan", "{}の写真です。")[0] == []
    assert check(registry, rank, "kmr_Latn", "wêneyê {} ê.")[0] == []


def test_two_slots_and_lost_slot(registry, rank):
    failed, row = check(registry, rank, "deu_Latn", "ein Foto von einem {} und {}.")
    assert "slot_count" in failed and row.n_slots == 2
    failed, row = check(registry, rank, "deu_Latn", "ein Foto von einem Hund.")
    assert "slot_count" in failed and row.n_slots == 0


def test_leftover_marker(registry, rank):
    failed, row = check(registry, rank, "deu_Latn", "ein Foto § von einem {}.")
    assert row.leftover_marker and "leftover_marker" in failed
    assert check(registry, rank, "deu_Latn", "ein Foto <b>von</b> einem {}.")[1].leftover_marker


def test_wrong_script(registry, rank):
    failed, row = check(registry, rank, "deu_Latn", "фотография {}.")
    assert "script" in failed and row.script_share == 0.0


def test_sorani_is_rejected_for_kurmanji(registry, rank):
    # The original release used ckb_Arab (Sorani, Arabic script) prompts for Latin-script Kurmanji labels.
    failed, row = check(registry, rank, "kmr_Latn", "وێنەیەکی {}.")
    assert "script" in failed and row.script_share == 0.0


def test_traditional_is_rejected_for_simplified(registry, rank):
    failed, row = check(registry, rank, "zho_Hans", "一張{}的照片。")
    assert "script" in failed
    assert check(registry, rank, "zho_Hans", "一张{}的照片。")[1].script_share == 1.0


def test_langid_disagreement_only_where_langid_knows_the_language(registry, rank):
    failed, row = check(registry, rank, "deu_Latn", "une photo de la voiture rouge {} dans la rue.")
    assert "langid" in failed and row.langid_top == "fr"
    # West Frisian has no langid code in the registry: no langid verdict, no failure.
    failed, row = check(registry, rank, "fry_Latn", "in foto fan in {}.")
    assert "langid" not in failed and row.langid_rank is None


def test_length_ratio_bounds(registry, rank):
    failed, row = check(registry, rank, "deu_Latn", "{}.", english="a low resolution photo of the {}.")
    assert "length_ratio" in failed and row.length_ratio < 0.2
    long = "ein sehr sehr sehr sehr sehr sehr sehr sehr sehr sehr langes Foto von {}."
    assert "length_ratio" in check(registry, rank, "deu_Latn", long, english="a {}.")[0]


def test_duplicates_are_flagged_after_the_first(registry, rank):
    texts = ["ein Foto {}.", "Ein Foto {}.", "ein Bild {}.", "ein Foto {}. ", "ein Foto {}."]
    rows = [pr.PromptRow("deu_Latn", "nllb", i, text, "e", "s", False, 0.0) for i, text in enumerate(texts)]
    pr.tag_prompts(rows, registry.get("deu_Latn"), rank)
    # the one duplicate rule of every stage: NFC, stripped, casefolded
    assert [r.is_duplicate for r in rows] == [False, True, False, True, True]


def translations(lang, texts):
    return [
        TranslatedTemplate(lang, i, f"english {i} {{}}", text, "tag_noun", False, -0.2) for i, text in enumerate(texts)
    ]


def test_translated_language_uses_only_valid_prompts(registry, rank, templates):
    texts = [
        "ein Foto von einem {}.",
        "ein schlechtes Foto von einem {}.",
        "eine Skulptur eines {}.",
        "ein Foto von einem {}.",
        "ein Foto {} {}.",
    ]
    rows, summary = pr.assemble_language(
        registry.get("deu_Latn"), templates[:5], translations("deu_Latn", texts), CHECKS, MIN_VALID, rank
    )
    assert summary.status == "translated" and summary.n_valid == 3 and summary.n_duplicates == 1
    assert [r.use for r in rows] == [True, True, True, False, False]
    assert rows[4].failed == ["slot_count"]
    assert {r.prompt_set for r in rows} == {"nllb"}
    assert "valid  3/5" in summary.line()


def test_below_min_valid_gets_both_fallback_sets(registry, rank, templates):
    texts = ["фото {}.", "ein Foto.", "ein Foto {}."]
    rows, summary = pr.assemble_language(
        registry.get("deu_Latn"), templates, translations("deu_Latn", texts), CHECKS, MIN_VALID, rank
    )
    assert summary.status == "below_min_valid" and summary.n_valid == 1
    nllb = [r for r in rows if r.prompt_set == "nllb"]
    assert len(nllb) == 3 and not any(r.use for r in nllb)
    assert_fallback_sets(rows, templates)


def assert_fallback_sets(rows, templates):
    label_only = [r for r in rows if r.prompt_set == "label_only"]
    english = [r for r in rows if r.prompt_set == "english"]
    assert [r.text for r in label_only] == ["{}"] and label_only[0].use
    assert [r.text for r in english] == list(templates) and all(r.use for r in english)


def test_languages_without_nllb_code_are_derived_from_the_registry(registry, rank, templates):
    unsupported = {lang.key for lang in registry if not lang.nllb}
    assert unsupported == {"fry_Latn", "lat_Latn"}
    for key in sorted(unsupported):
        rows, summary = pr.assemble_language(registry.get(key), templates, None, CHECKS, MIN_VALID, rank)
        assert summary.status == "no_nllb_code" and summary.nllb_code is None
        assert {r.status for r in rows} == {"no_nllb_code"}
        assert_fallback_sets(rows, templates)


@pytest.mark.parametrize("key", ["eng_Latn", "eng_Latn-simple"])
def test_source_language_keeps_the_english_templates(registry, rank, templates, key):
    rows, summary = pr.assemble_language(registry.get(key), templates, None, CHECKS, MIN_VALID, rank)
    assert summary.status == "source" and [r.text for r in rows] == list(templates)
    assert all(r.use and r.prompt_set == "english" for r in rows)


def test_checks_are_data_with_per_language_overrides(registry, rank):
    long = "ein sehr sehr sehr sehr sehr sehr sehr sehr sehr sehr langes Foto von {}."
    relaxed = Thresholds(pr.DEFAULT_CHECKS, {"deu_Latn": {"length_ratio": {"length_ratio": {"max": 100.0}}}})
    assert "length_ratio" in check(registry, rank, "deu_Latn", long, english="a {}.")[0]
    assert check(registry, rank, "deu_Latn", long, english="a {}.", checks=relaxed)[0] == []
    # the lower bound of the default stays: only `max` was overridden
    assert (
        "length_ratio"
        in check(registry, rank, "deu_Latn", "{}.", english="a low resolution photo of the {}.", checks=relaxed)[0]
    )
    off = Thresholds({**pr.DEFAULT_CHECKS, "script": None})
    assert check(registry, rank, "deu_Latn", "фотография {}.", checks=off)[0] == ["langid"]


def test_prompts_config_is_params_yaml(tmp_path):

    from babelforge.babel_imagenet.prompts_stage import Config
    from babelforge.core.config import load_config
    from babelforge.core.params import load_params

    params = load_params(REPO / "params.yaml")
    assert load_config(Config, params) == Config()  # code defaults = the sample profile's params
    assert load_config(Config, {**params, "profile": "full"}).max_decoding_length == 64
    params["prompts"]["checks"]["default"]["script"]["script_share"]["min"] = "high"
    with pytest.raises(BabelforgeError, match="prompts.checks.default.script.script_share.min is 'high'"):
        load_config(Config, params).checks.check(["script_share"], "prompts.checks")
