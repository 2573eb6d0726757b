"""babelforge.core.scripts: script of a character, shares, Han variants, expected-script share."""

from __future__ import annotations

import pytest

from babelforge.core import scripts as sc


@pytest.mark.parametrize(
    "char, script",
    [
        ("a", "Latn"),
        ("ß", "Latn"),
        ("ệ", "Latn"),
        ("Ж", "Cyrl"),
        ("λ", "Grek"),
        ("ب", "Arab"),
        ("ێ", "Arab"),
        ("א", "Hebr"),
        ("ह", "Deva"),
        ("ি", "Beng"),
        ("ก", "Thai"),
        ("ກ", "Laoo"),
        ("ក", "Khmr"),
        ("က", "Mymr"),
        ("ა", "Geor"),
        ("Ա", "Armn"),
        ("አ", "Ethi"),
        ("Ꭰ", "Cher"),
        ("ᐃ", "Cans"),
        ("ⵜ", "Tfng"),
        ("ߒ", "Nkoo"),
        ("ᱚ", "Olck"),
        ("ꯃ", "Mtei"),
        ("ཀ", "Tibt"),
        ("中", "Hani"),
        ("の", "Hira"),
        ("カ", "Kana"),
        ("한", "Hang"),
        ("Ａ", "Latn"),
        ("𞤀", "Adlm"),
        ("\u0301", "Zinh"),
        ("1", "Zyyy"),
        (" ", "Zyyy"),
        (".", "Zyyy"),
        ("{", "Zyyy"),
        ("。", "Zyyy"),
        ("€", "Zyyy"),
    ],
)
def test_script_of(char, script):
    assert sc.script_of(char) == script


def test_unlisted_letter_is_unknown():
    assert sc.script_of("\U00010330") == "Zzzz"  # Gothic: a letter no range lists


def test_shares_count_letters_only():
    shares = sc.script_shares("Foto 123 фото!!")
    assert shares == {"Cyrl": 0.5, "Latn": 0.5}
    assert sc.dominant_script("Foto 123 фото!!") == "Cyrl"  # tie broken alphabetically
    assert sc.dominant_script("12 {} .") is None and sc.script_shares("") == {}
    assert sc.dominant_script("これは{}の写真です") == "Hira"


def test_han_variant_majority():
    assert sc.han_variant("一张照片") == "Hans"
    assert sc.han_variant("一張照片") == "Hant"
    assert sc.han_variant("照片") is None
    assert not sc.SIMPLIFIED_ONLY & sc.TRADITIONAL_ONLY


def test_expected_script_share_with_composites_and_variants():
    assert sc.expected_script_share("これは{}の写真です", ["Jpan"]) == 1.0
    assert sc.expected_script_share("{}의 사진 寫眞", ["Kore"]) == 1.0
    assert sc.expected_script_share("一張照片", ["Hans"]) == 0.0
    assert sc.expected_script_share("一張照片", ["Hant"]) == 1.0
    assert sc.expected_script_share("一張照片", ["Hani"]) == 1.0
    assert sc.expected_script_share("一張照片", ["Hani", "Hans"]) == 0.0
    assert sc.expected_script_share("一张照片", ["Hani", "Hans"]) == 1.0
    assert sc.expected_script_share("wêneyê {}", ["Latn"]) == 1.0
    assert sc.expected_script_share("وێنەی {}", ["Latn"]) == 0.0
    assert sc.expected_script_share("Foto фото", ["Latn", "Cyrl"]) == 1.0
    assert sc.expected_script_share("{} 123", ["Latn"]) is None
