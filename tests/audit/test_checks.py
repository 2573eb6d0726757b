"""Each audit check on crafted labels: what it must flag and what it must leave alone."""

from pathlib import Path

import pytest

from babelforge.audit import checks
from babelforge.core.scripts import dominant_script
from tests.audit.conftest import FIN_LABELS, KMR_LABELS, clip_names, stub_rank


def flagged_by(check, labels, scripts=(), **kwargs):
    """{class_idx: detail} of one check over one language's labels."""
    return checks.flag_labels(labels, scripts, **kwargs)[0][check]


def script_mismatches(labels, scripts):
    return flagged_by("script_mismatch", labels, scripts)


def english_lemmas():
    names = clip_names()
    return {idx: [names[idx]] for idx in range(30)}


def policy(**severity):
    return checks.AuditPolicy(
        severity={
            "empty_label": "error",
            "script_mismatch": "error",
            "english_lookalike": "warning",
            "duplicate": "warning",
            "langid_other": "info",
            **severity,
        },
        score_weights={
            "empty_label": 1.0,
            "script_mismatch": 1.0,
            "english_lookalike": 1.0,
            "duplicate": 0.5,
            "langid_other": 0.1,
        },
    )


def test_cyrillic_label_in_latin_language_is_a_script_mismatch():
    flagged = script_mismatches(FIN_LABELS, ["Latn"])
    assert set(flagged) == {1}
    assert flagged[1].startswith("Cyrl")


def test_traditional_label_in_simplified_chinese_is_flagged_and_the_reverse():
    labels = {0: "金鱼", 1: "金魚", 2: "吉娃娃"}  # simplified fish, traditional fish, shared characters
    assert flagged_by("han_variant", labels, ["Hani", "Hans"]) == {1: "Hant characters, expected Hans"}
    assert set(flagged_by("han_variant", labels, ["Hani", "Hant"])) == {0}
    assert flagged_by("han_variant", labels, ["Hani"]) == {}  # no standard named: nothing to check


def test_latin_acronyms_pass_but_latin_names_inside_greek_do_not():
    labels = {0: "GSM", 1: "GAP!", 2: "λύκος canis latrans", 3: "DVD-плеер", 4: "Granny Smith"}
    assert set(script_mismatches(labels, ["Grek", "Cyrl"])) == {2, 4}


def test_sorani_arabic_script_in_kurmanji_is_flagged():
    assert set(script_mismatches(KMR_LABELS, ["Latn"])) == {1}


def test_japanese_mixes_kana_and_han_without_flags():
    assert script_mismatches({0: "テンチ", 1: "金魚", 2: "ひらがな"}, ["Jpan"]) == {}
    assert script_mismatches({0: "金魚"}, ["Hans"]) == {}
    assert script_mismatches({0: "テンチ"}, ["Hans"]) == {0: "Kana, expected Hani"}


def test_no_expected_script_means_no_check():
    assert script_mismatches(FIN_LABELS, []) == {}


def test_duplicates_ignore_case_and_name_each_other():
    flagged = flagged_by("duplicate", FIN_LABELS)
    assert set(flagged) == {2, 3}
    assert flagged[2] == "also class 3" and flagged[3] == "also class 2"


@pytest.mark.parametrize(
    "label, english, expected",
    [
        ("Hammer-head Shark", "hammerhead shark", True),
        ("Tênch", "tench", True),  # accent stripped
        ("ÉLECTRIC RAY", "electric ray", True),  # case and accent
        ("goldfisch", "goldfish", False),  # a real translation stays
        ("golden fish", "goldfish", False),
    ],
)
def test_english_lookalike_under_loose_matching(label, english, expected):
    flagged = flagged_by("english_lookalike", {7: label}, english_lemmas={7: [english]})
    assert (7 in flagged) is expected


def test_english_lookalike_of_another_class_says_which():
    flagged = flagged_by("english_lookalike", {5: "Gold-Fish"}, english_lemmas=english_lemmas())
    assert flagged == {5: "English 'goldfish' (class 1)"}


def test_crafted_finnish_flags_each_defect_once():
    flagged = flagged_by("english_lookalike", FIN_LABELS, english_lemmas=english_lemmas())
    assert set(flagged) == {4}
    assert flagged_by("empty_label", FIN_LABELS) == {6: "leading/trailing whitespace"}
    assert flagged_by("empty_label", {0: " ", 1: "kala"}) == {0: "empty"}


def test_langid_flags_only_confident_long_disagreements():
    labels = {0: "kala", 1: "a long english looking label", 2: "собака"}
    flags, summary = checks.flag_labels(labels, langid_code="fi", rank=stub_rank, policy=checks.LangidPolicy(8, 0.9))
    assert flags["langid_other"] == {1: "en p=0.95"}  # long + p=0.95
    assert summary["disagree"] == 2  # short "собака" is counted, not flagged
    assert summary["disagree_confident"] == 1
    flags, unknown = checks.flag_labels(labels, langid_code=None, rank=stub_rank)
    assert unknown == {"status": "not checked", "reason": "langid does not know this language"}
    assert flags["langid_other"] == {}
    assert checks.flag_labels(labels, langid_code="fi")[1]["reason"] == "langid not run"


def test_real_langid_is_not_trusted_on_single_words():
    from babelforge.audit.audit_stage import langid_ranking

    labels = {0: "koira", 1: "kissa", 2: "Dies ist ganz offensichtlich ein langer deutscher Satz über Hunde"}
    flags, summary = checks.flag_labels(
        labels, langid_code="fi", rank=langid_ranking(), policy=checks.LangidPolicy(8, 0.9)
    )
    flagged = flags["langid_other"]
    assert 2 in flagged and flagged[2].startswith("de")
    assert set(flagged) <= {2}  # short words never become confident flags


def test_audit_language_counts_severities_and_scores():
    rows = [
        {
            "class_idx": idx,
            "label": label,
            "source": "wikt" if idx % 2 else "omw:fin",
            "n_dropped_english": 1,
            "n_dropped_mt": 2,
            "n_dropped_low_precision": 0,
        }
        for idx, label in FIN_LABELS.items()
    ]
    record = checks.audit_language(rows, english_lemmas(), ["Latn"], "fi", stub_rank, policy())
    counts = {check: entry["count"] for check, entry in record["checks"].items()}
    assert counts["script_mismatch"] == 1 and counts["duplicate"] == 2
    assert counts["english_lookalike"] == 1 and counts["empty_label"] == 1
    assert record["errors"] == counts["script_mismatch"] + counts["empty_label"]
    assert record["dropped"] == {"english": 10, "machine_translated": 20, "low_precision": 0}
    assert record["source_mix"] == {"omw:fin": 5, "wikt": 5}
    assert record["flags"]["1"][0] == ["script_mismatch", "Cyrl, expected Latn"]
    penalty = 1 + 1 + 1 + 0.5 * 2 + 0.1 * counts["langid_other"]
    assert record["quality_score"] == pytest.approx(100 * 10 / 1000 * (1 - penalty / 10), abs=0.01)
    # English labels are not compared against themselves
    eng = checks.audit_language(
        [{"class_idx": 0, "label": "tench", "source": "clip"}],
        english_lemmas(),
        ["Latn"],
        "en",
        None,
        policy(),
        is_english=True,
    )
    assert eng["checks"]["english_lookalike"]["count"] == 0


def test_quality_score_orders_languages_sensibly():
    weights = {"duplicate": 1.0}
    full_clean = checks.quality_score(1000, 1000, {"duplicate": 0}, weights)
    full_dirty = checks.quality_score(1000, 1000, {"duplicate": 100}, weights)
    small_clean = checks.quality_score(100, 1000, {"duplicate": 0}, weights)
    assert full_clean == 100.0 and full_clean > full_dirty > small_clean
    assert checks.quality_score(10, 1000, {"duplicate": 50}, weights) == 0.0
    assert checks.quality_score(0, 1000, {}, weights) == 0.0


def test_policy_rejects_unknown_checks_and_severities():
    with pytest.raises(ValueError, match="unknown audit checks"):
        checks.AuditPolicy(severity={"spelling": "error"}, score_weights={})
    with pytest.raises(ValueError, match="severities"):
        checks.AuditPolicy(severity={"duplicate": "fatal"}, score_weights={})


def test_reference_agreement():
    ours = {0: "linja", 1: "Kultakala", 2: "hai"}
    reference = {1: "kultakala", 2: "hai", 3: "rausku"}
    result = checks.reference_agreement(ours, reference)
    assert result["common"] == 2 and result["exact_match"] == 1
    assert result["exact_agreement"] == 0.5 and result["casefold_agreement"] == 1.0
    assert result["only_ours"] == 1 and result["only_reference"] == 1


def mirror_lemmas(relative: str) -> dict[int, str]:
    """Every `lemma` row of one OMW .tab file of the source mirror, numbered in file order."""
    path = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "omw" / "wns" / relative
    if not path.exists():
        pytest.fail(f"the source mirror is missing: expected {path}")
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    lemmas = [line.split("\t")[2] for line in lines if line.split("\t")[1].endswith(":lemma")]
    return dict(enumerate(lemmas))


def test_script_check_on_real_greek_and_kurdish_lemmas():
    greek = mirror_lemmas("ell/wn-data-ell.tab")
    flagged = script_mismatches(greek, ["Grek"])
    # the Greek wordnet has lemmas that carry a Latin binomial ("λύκος canis latrans")
    assert flagged and len(flagged) < len(greek) / 5
    for idx in flagged:
        letters = [c for c in greek[idx] if c.isalpha()]
        latin = sum(dominant_script(c) == "Latn" for c in letters)
        assert latin >= len(letters) / 2, greek[idx]
    # Kurdish Wiktionary mixes Kurmanji (Latin) and Sorani (Arabic script): as Kurmanji, the Arabic ones flag
    kurdish = mirror_lemmas("wikt/wn-wikt-kur.tab")
    as_kurmanji = script_mismatches(kurdish, ["Latn"])
    assert as_kurmanji and all(detail.startswith("Arab") for detail in as_kurmanji.values())
    assert set(as_kurmanji).isdisjoint(set(script_mismatches(kurdish, ["Arab"])))
