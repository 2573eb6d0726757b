import math

import pytest

from babelforge.captions import langcheck
from babelforge.captions.taggers import ATTRIBUTES, TAGGERS, TagContext, run_taggers
from babelforge.core.taggers import run_tagger
from babelforge.core.text_taggers import TextContext

XTD_KEYS = [
    "eng_Latn",
    "deu_Latn",
    "spa_Latn",
    "fra_Latn",
    "ita_Latn",
    "jpn_Jpan",
    "kor_Hang",
    "pol_Latn",
    "rus_Cyrl",
    "tur_Latn",
    "zho_Hans",
]


@pytest.fixture(scope="module")
def identifier(registry):
    return langcheck.LanguageIdentifier({key: registry.get(key).langid for key in XTD_KEYS})


def test_langid_probabilities_are_normalised_over_the_languages_in_play(identifier):
    probabilities = identifier.probabilities("Ein schwarzer Hund läuft über die grüne Wiese")
    assert set(probabilities) == set(XTD_KEYS)
    assert sum(probabilities.values()) == pytest.approx(1.0)
    assert max(probabilities, key=probabilities.get) == "deu_Latn"


def test_langid_flags_a_hypothesis_in_the_wrong_language(identifier):
    best, prob_fr = identifier.check("Ein schwarzer Hund läuft über die grüne Wiese", "fra_Latn")
    assert best == "deu_Latn" and prob_fr < 0.1
    best, prob_fr = identifier.check("Un chien noir court sur la pelouse verte", "fra_Latn")
    assert best == "fra_Latn" and prob_fr > 0.9


def test_langid_without_code_is_not_in_play_and_sets_do_not_interfere(registry, identifier):
    ident = langcheck.LanguageIdentifier({"eng_Latn": "en", "smo_Latn": registry.get("smo_Latn").langid})
    assert set(ident.probabilities("a dog")) == {"eng_Latn"}
    assert set(identifier.probabilities("a dog")) == set(XTD_KEYS)  # the shared model is untouched
    _, prob = ident.check("a dog", "smo_Latn")
    assert math.isnan(prob)


def test_keys_sharing_a_langid_code_are_both_checked(registry):
    # zho_Hans and zho_Hant are both langid "zh": each must get the probability of "zh",
    # not NaN (which would silently turn the langid check off for one of them).
    ident = langcheck.LanguageIdentifier(
        {key: registry.get(key).langid for key in ("deu_Latn", "zho_Hans", "zho_Hant")}
    )
    for key in ("zho_Hans", "zho_Hant"):
        best, prob = ident.check("一只黑色的狗在绿色的草地上奔跑", key)
        assert best == key and prob > 0.9
        best, prob = ident.check("Ein schwarzer Hund läuft über die grüne Wiese", key)
        assert best == "deu_Latn" and prob < 0.1
    assert set(ident.probabilities("ein Hund")) == {"deu_Latn", "zho_Hans", "zho_Hant"}


def test_copy_of_source_is_detected_and_real_translation_is_not():
    source = "Major league baseball game with player from Pittsburgh Pirates."
    assert langcheck.is_copy("major league baseball game, with player from pittsburgh pirates", source)
    assert langcheck.copy_overlap(source, source) == 1.0
    translation = "Partido de béisbol de gran liga con jugador de los Pittsburgh Pirates."
    assert not langcheck.is_copy(translation, source)
    assert langcheck.copy_overlap(translation, source) < 0.3
    partial = "Major league baseball Spiel mit Spieler"
    assert langcheck.copy_overlap(partial, source) == 0.5  # 3 of its 6 words
    assert math.isnan(langcheck.copy_overlap("", source))


@pytest.mark.parametrize(
    "text, run",
    [
        ("a dog runs on the grass", 1),
        ("very very big dog", 2),
        ("a dog a dog a dog a dog", 4),
        ("the the the the the the", 6),
        ("on a red bus on a red bus on a red bus", 3),
        ("猫猫猫猫猫が寝ている", 5),  # Han written without spaces: characters are the units
        ("", 0),
    ],
)
def test_longest_repeat_run_finds_decoder_loops(text, run):
    assert langcheck.longest_repeat_run(text) == run


@pytest.mark.parametrize(
    "text, run",
    [
        ("a dog runs on the grass", 2),  # "ss"
        ("lalalala", 4),
        ("ỡỡỡỡ que", 4),
        ("สวัสดีสวัสดีสวัสดี", 3),  # Thai is written without spaces: the word view sees one unit
        ("a, a. a; a", 4),  # punctuation and spaces do not break a letter loop
    ],
)
def test_longest_letter_run_finds_loops_inside_words(text, run):
    assert langcheck.longest_letter_run(text) == run


def test_letter_runs_flag_exactly_the_junk_human_captions_of_xtd(xtd):
    """XTD's German references hold two junk captions ('ööö...', 'mmm...'); no other
    human caption in any language repeats a letter n-gram more than 3 times in a row."""
    texts = [text for _, _, text in xtd.references] + [row["caption"] for row in xtd.captions]
    flagged = [text for text in texts if langcheck.longest_letter_run(text) > 5]
    assert sorted(set(flagged)) == ["mmmmmmmmmmmmmmmmmmmmmmmm", "öööööööööööööööööö"]
    assert max(langcheck.longest_letter_run(t) for t in texts if t not in flagged) <= 3
    assert max(langcheck.longest_repeat_run(t) for t in texts) <= 2


def test_taggers_write_versioned_aligned_columns(registry, identifier):
    rows = [
        {"caption_id": "c1", "lang": "rus_Cyrl", "hyp_rank": 0, "text": "Собака бежит по зелёной траве"},
        {"caption_id": "c1", "lang": "rus_Cyrl", "hyp_rank": 1, "text": "A dog runs on green grass"},
        {"caption_id": "c1", "lang": "rus_Cyrl", "hyp_rank": 2, "text": "собака собака собака собака"},
        {"caption_id": "c2", "lang": "deu_Latn", "hyp_rank": 0, "text": "Eine Katze schläft"},
    ]
    context = TagContext(
        sources={"c1": "A dog runs on green grass", "c2": "A cat sleeps"},
        expected_scripts={key: registry.get(key).scripts for key in XTD_KEYS},
        identifier=identifier,
        references={("c1", "rus_Cyrl"): "Собака бежит по зелёной траве"},
    )
    cheap = [name for name in TAGGERS if name != "kiwi_v1"]  # kiwi_v1: test_kiwi_is_a_registered_tagger
    columns = run_taggers(rows, context, cheap)
    assert all(name.split("__")[0] in cheap and "_v" in name for name in columns)
    assert set(columns) == {column for column in ATTRIBUTES if not column.startswith("kiwi_v1")}
    assert all(len(values) == len(rows) for values in columns.values())
    assert columns["langid_v1__lang"][:2] == ["rus_Cyrl", "eng_Latn"]
    assert columns["script_v1__share"][:2] == [1.0, 0.0]
    assert columns["copy_v1__exact"] == [False, True, False, False]
    assert columns["repetition_v1__longest_run"][2] == 4
    # Six-letter "собака" is longer than the letter n-grams looked at (n <= 4): the word view catches it.
    assert columns["repetition_v1__longest_letter_run"][2] == 1
    assert columns["chrf_v1__score"][0] == pytest.approx(100.0)
    assert math.isnan(columns["chrf_v1__score"][3])


def test_human_translations_pass_and_english_fails_the_language_check(xtd, identifier, registry):
    """On real XTD data: the human translations are recognised as their language, the
    English captions (what a copying model would emit) are not."""
    sources = {row["caption_id"]: row["caption"] for row in xtd.captions}
    refs = [(cid, lang, text) for cid, lang, text in xtd.references if cid in list(sources)[:100]]
    passed = [identifier.check(text, lang)[1] >= 0.5 for _, lang, text in refs]
    copied = [identifier.check(sources[cid], lang)[1] >= 0.5 for cid, lang, _ in refs]
    assert sum(passed) / len(passed) > 0.9
    assert sum(copied) / len(copied) < 0.05
    context = TextContext(expected_scripts={lang: registry.get(lang).scripts for _, lang, _ in refs})
    scripts = run_tagger("script_v1", [{"text": text, "lang": lang} for _, lang, text in refs], context)["share"]
    assert sum(share >= 0.5 for share in scripts) / len(scripts) > 0.95


def test_kiwi_is_a_registered_tagger_loaded_once_per_process(tiny_kiwi_dir):
    from babelforge.captions.qe import KiwiScorer, kiwi_scorer, load_kiwi

    scorer, record = kiwi_scorer(str(tiny_kiwi_dir))
    assert kiwi_scorer(str(tiny_kiwi_dir)) == (scorer, record)  # the same model object, not a reload
    rows = [
        {"caption_id": "c1", "lang": "deu_Latn", "hyp_rank": r, "text": text}
        for r, text in enumerate(["Ein Hund läuft", "A dog runs", "Ein Hund läuft"])
    ]
    context = TagContext(sources={"c1": "A dog runs"}, kiwi=scorer)
    scores = run_taggers(rows, context, ["kiwi_v1"])["kiwi_v1__score"]
    direct = KiwiScorer(load_kiwi(str(tiny_kiwi_dir))[0], device="cpu").score(
        ["A dog runs"] * 3, [row["text"] for row in rows]
    )
    assert scores == pytest.approx(direct) and scores[0] == scores[2] != scores[1]
    with pytest.raises(ValueError, match="kiwi_v1 needs a loaded COMETKiwi scorer"):
        run_taggers(rows, TagContext(sources={"c1": "A dog runs"}), ["kiwi_v1"])
