"""The shared taggers: blank, script, duplicate, English look-alike, langid ranking."""

import pytest

from babelforge.core.taggers import run_tagger
from babelforge.core.text_taggers import TextContext, duplicate_key


def tag(name, texts, context=None, lang="x", **row):
    rows = [{"id": i, "lang": lang, "text": text, **row} for i, text in enumerate(texts)]
    return run_tagger(name, rows, context or TextContext())


def share(text, scripts):
    return tag("script_v1", [text], TextContext(expected_scripts={"x": scripts}))["share"][0]


@pytest.mark.parametrize(
    "text, scripts, expected",
    [
        ("Собака бежит по траве", ["Cyrl"], 1.0),
        ("Sobaka bezhit po trave", ["Cyrl"], 0.0),
        ("Собака Pittsburgh", ["Cyrl"], 6 / 16),
        ("黒い犬が走っている", ["Hani", "Hira", "Kana"], 1.0),
        ("黒い犬が走っている", ["Jpan"], 1.0),
        ("검은 개가 달린다", ["Hang"], 1.0),
        ("검은 개가 달린다", ["Hani"], 0.0),
        ("ＡＢＣ", ["Latn"], 1.0),  # fullwidth Latin is still Latin
        ("一張{}的照片。", ["Hani", "Hans"], 0.0),  # Traditional text counts no Han letter for Simplified
    ],
)
def test_script_share(text, scripts, expected):
    assert share(text, scripts) == pytest.approx(expected)


def test_script_share_ignores_digits_and_punctuation_and_is_none_without_letters():
    assert share("Собака, 3 раза!", ["Cyrl"]) == 1.0
    assert share("123 ...", ["Cyrl"]) is None


def test_script_mismatch_excuses_latin_acronyms_and_names_the_chinese_standard():
    greek = tag(
        "script_v1",
        ["GSM", "GAP!", "λύκος canis latrans", "DVD-плеер", "Granny Smith", "λύκος"],
        TextContext(expected_scripts={"x": ["Grek", "Cyrl"]}),
    )
    assert greek["mismatch"] == [False, False, True, False, True, False]
    assert greek["dominant"][2] == "Latn"
    chinese = tag("script_v1", ["金鱼", "金魚", "吉娃娃"], TextContext(expected_scripts={"x": ["Hani", "Hans"]}))
    assert chinese["han_variant"] == ["Hans", "Hant", None]
    assert chinese["han_mismatch"] == [False, True, False] and not any(chinese["mismatch"])
    assert tag("script_v1", ["kala"])["mismatch"] == [False]  # no expected scripts: nothing to judge


def test_blank():
    assert tag("blank_v1", ["", "  ", "kala ", "kala"]) == {
        "empty": [True, True, False, False],
        "padded": [False, False, True, False],
    }


def test_duplicates_are_nfc_stripped_casefolded_within_a_language():
    decomposed = "Cafe\u0301"  # `e` + combining acute: NFC makes it `é`
    texts = ["café", "Hai", decomposed, "hai ", "rausku"]
    found = tag("duplicate_v1", texts)
    assert found["is_duplicate"] == [True, True, True, True, False]
    assert found["is_repeat"] == [False, False, True, True, False]
    assert found["others"] == [[2], [3], [0], [1], []]
    assert duplicate_key(decomposed) == duplicate_key(" CAFÉ")
    rows = [{"id": 0, "lang": "fin_Latn", "text": "hai"}, {"id": 0, "lang": "est_Latn", "text": "hai"}]
    assert run_tagger("duplicate_v1", rows, None)["is_duplicate"] == [False, False]  # other language


def test_english_lookalike_says_which_lemma_of_which_class():
    context = TextContext(english_lemmas={1: ["goldfish", "Carassius auratus"], 4: ["hammerhead shark"]})
    found = tag("english_lookalike_v1", ["Gold-Fish", "Hammer-head Shark", "kultakala", "Tênch"], context)
    assert found == {
        "match": [True, True, False, False],
        "lemma": ["goldfish", "hammerhead shark", None, None],
        "lemma_class": [1, 4, None, None],
    }


def test_langid_rank_judges_only_languages_langid_knows():
    ranking = lambda text: [("de", 0.7), ("fi", 0.2), ("en", 0.1)]  # noqa: E731
    rows = [
        {"lang": "fin_Latn", "text": "kala"},
        {"lang": "fry_Latn", "text": "fisk"},
        {"lang": "fin_Latn", "text": "  "},
    ]
    context = TextContext(langid_codes={"fin_Latn": "fi", "fry_Latn": None}, langid_rank=ranking)
    found = run_tagger("langid_rank_v1", rows, context)
    assert found == {
        "top": ["de", None, None],
        "top_prob": [0.7, None, None],
        "rank": [2, None, None],
        "chars": [4, 4, 0],
    }
    assert run_tagger("langid_rank_v1", rows[:1], TextContext(langid_codes={"fin_Latn": "fi"}))["rank"] == [None]
