"""CIDEr-D on a textbook example worked out by hand.

Two images, N = 2, idf = ln 2 - ln df. References: A "the cat sat", B "the dog ran".
"the" is in both reference sets (df 2, idf 0); every other reference n-gram has df 1
(idf ln 2); "a" appears in no reference (df 0 -> max(1, df) = 1, idf ln 2).
"""

import math

import pytest

from babelforge.eval.tools.cider_d import cider_d, document_frequency, tokenize

REFS = [["the cat sat"], ["the dog ran"]]


def test_textbook_example():
    # A, candidate "the cat": n=1 vectors c=(the 0, cat L), r=(the 0, cat L, sat L) -> cos 1/sqrt2;
    # n=2 c=(the cat L), r=(the cat L, cat sat L) -> 1/sqrt2; n=3,4: the candidate has none -> 0.
    # length 2 vs 3 -> penalty exp(-1/72). CIDEr-D = 10 * (2/sqrt2)/4 * exp(-1/72).
    score_a = 10 * (2 / math.sqrt(2)) / 4 * math.exp(-1 / 72)
    # B, candidate "a dog ran": n=1 c=(a L, dog L, ran L), r=(the 0, dog L, ran L)
    # -> 2L^2 / (sqrt3 L * sqrt2 L) = 2/sqrt6; n=2 c=(a dog, dog ran), r=(the dog, dog ran) -> 1/2;
    # n=3 no shared trigram -> 0. Same length, no penalty.
    score_b = 10 * (2 / math.sqrt(6) + 0.5) / 4
    corpus, per_image = cider_d(["the cat", "a dog ran"], REFS)
    assert per_image[0] == pytest.approx(score_a)  # 3.4867
    assert per_image[1] == pytest.approx(score_b)  # 3.2912
    assert corpus == pytest.approx((score_a + score_b) / 2)


def test_exact_match_of_a_three_word_reference_scores_7_5():
    # n = 1..3 cosines are 1, a 3-word caption has no 4-gram: 10 * 3/4.
    assert cider_d(["the cat sat", "the dog ran"], REFS)[1] == pytest.approx([7.5, 7.5])


def test_clipping_gives_no_credit_for_repetition():
    refs = [["a cat"], ["a dog"]]
    once = cider_d(["cat", "dog"], refs)[1][0]
    thrice = cider_d(["cat cat cat", "dog"], refs)[1][0]
    assert thrice < once


def test_document_frequency_counts_images_not_references():
    df = document_frequency([[tokenize("a cat"), tokenize("a cat again")], [tokenize("a dog")]])
    assert df[("a",)] == 2 and df[("cat",)] == 1 and df[("a", "cat")] == 1


def test_mean_over_references():
    # Second reference shares nothing: the image score halves.
    one = cider_d(["the cat sat", "the dog ran"], [["the cat sat"], ["the dog ran"]])[1][0]
    two = cider_d(["the cat sat", "the dog ran"], [["the cat sat", "zebra"], ["the dog ran"]])[1][0]
    assert two == pytest.approx(one / 2)


# ---------------------------------------------------------------- tokenisation by script


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("A cat, on the MAT!", ["a", "cat", "on", "the", "mat"]),  # Latin: words, as before
        ("Ça va très bien", ["ça", "va", "très", "bien"]),
        ("Две кошки спят", ["две", "кошки", "спят"]),  # Cyrillic: words
        ("고양이 두 마리", ["고양이", "두", "마리"]),  # Hangul is spaced: words
        ("दो बिल्लियाँ सो रही हैं", ["दो", "बिल्लियाँ", "सो", "रही", "हैं"]),  # vowel signs stay in the word
        ("两只猫在睡觉。", ["两", "只", "猫", "在", "睡", "觉"]),  # Han: characters
        ("猫がソファで寝ている", ["猫", "が", "ソ", "フ", "ァ", "で", "寝", "て", "い", "る"]),  # kanji + kana
        ("แมวสองตัว", ["แ", "ม", "ว", "ส", "อ", "ง", "ตั", "ว"]),  # Thai: the mark stays on its letter
        ("iPhone手机", ["iphone", "手", "机"]),  # mixed: each by its script
    ],
)
def test_tokenize_by_script(text, tokens):
    assert tokenize(text) == tokens


def test_unspaced_scripts_score_like_spaced_ones():
    # The case: whole-sentence tokens never matched their references (CIDEr 0.0).
    zh = cider_d(
        ["两只猫在沙发上睡觉", "一个男人在骑自行车", "小狗在草地上奔跑"],
        [["两只猫在沙发上睡觉了"], ["一个男人在街上骑自行车"], ["一只小狗在草地上奔跑"]],
    )[0]
    ja = cider_d(
        ["猫がソファで寝ている", "男が自転車に乗る", "子犬が芝生を走る"],
        [["猫がソファで寝ています"], ["男が通りで自転車に乗る"], ["小さな子犬が芝生を走る"]],
    )[0]
    th = cider_d(
        ["แมวสองตัวนอนบนโซฟา", "ผู้ชายขี่จักรยาน", "ลูกสุนัขวิ่งบนหญ้า"],
        [["แมวสองตัวนอนบนโซฟาแล้ว"], ["ผู้ชายขี่จักรยานบนถนน"], ["ลูกสุนัขตัวเล็กวิ่งบนหญ้า"]],
    )[0]
    assert zh > 1.0 and ja > 1.0 and th > 1.0
    # exact matches: 3 characters -> n = 1..3 cosines 1, no 4-gram: 7.5; 4 characters: 10
    assert cider_d(["两只猫", "一个男人"], [["两只猫"], ["一个男人"]])[1] == pytest.approx([7.5, 10.0])


def test_tokenization_report_names_the_scripts():
    from babelforge.eval.tools.cider_d import tokenization_report

    assert tokenization_report(["猫がソファで", "a cat 2"]) == {
        "characters": ["Hani", "Hira", "Kana"],
        "words": ["Latn"],
    }
