import math

import pytest

from babelforge.captions.select import (
    DEFAULT_CHECKS,
    choose,
    failed_checks,
    headline,
    percentiles,
    quality_flags,
    with_text_tags,
)
from babelforge.captions.selected import select_rows
from babelforge.core.errors import BabelforgeError
from babelforge.core.taggers import Thresholds

NAN = math.nan
# The full profile's checks (params.yaml `captions.select.default`, profile full).
FULL = {
    **DEFAULT_CHECKS,
    "langid": {"langid_v1__prob": {"min": 0.5}},
    "script": {"script_v1__share": {"min": 0.5}},
    "repetition": {"repetition_v1__longest_run": {"max": 3}, "repetition_v1__longest_letter_run": {"max": 5}},
}


def rules(default=FULL, languages=None, lang="deu_Latn"):
    return Thresholds(default, languages or {}).for_language(lang, "captions.select")


def hyp(
    rank,
    kiwi,
    text="Ein Hund",
    langid=0.9,
    script=1.0,
    overlap=0.0,
    exact=False,
    run=1,
    letter_run=1,
    lang="deu_Latn",
    caption_id="c1",
):
    row = {
        "caption_id": caption_id,
        "lang": lang,
        "hyp_rank": rank,
        "text": text,
        "mt_score": -0.1 * rank,
        "langid_v1__prob": langid,
        "script_v1__share": script,
        "copy_v1__overlap": overlap,
        "copy_v1__exact": exact,
        "repetition_v1__longest_run": run,
        "repetition_v1__longest_letter_run": letter_run,
        "kiwi_v1__score": kiwi,
    }
    return with_text_tags([row])[0]


def test_each_check_rejects_what_it_should():
    t = rules()
    assert failed_checks(hyp(0, 0.5), t) == []
    assert failed_checks(hyp(0, 0.5, langid=0.2), t) == ["langid"]
    assert failed_checks(hyp(0, 0.5, script=0.1), t) == ["script"]
    assert failed_checks(hyp(0, 0.5, exact=True, overlap=1.0), t) == ["copy"]
    assert failed_checks(hyp(0, 0.5, overlap=0.9), t) == ["copy"]
    assert failed_checks(hyp(0, 0.5, run=4), t) == ["repetition"]
    assert failed_checks(hyp(0, 0.5, letter_run=6), t) == ["repetition"]
    assert failed_checks(hyp(0, 0.5, run=3, letter_run=5), t) == []  # limits are inclusive
    assert failed_checks(hyp(0, 0.5, text="  "), t) == ["empty"]
    assert failed_checks(hyp(0, 0.1), rules({**FULL, "kiwi": {"kiwi_v1__score": {"min": 0.3}}})) == ["kiwi"]


def test_a_null_threshold_turns_its_check_off():
    off = rules(DEFAULT_CHECKS)  # the sample profile: langid, script and repetition off
    assert failed_checks(hyp(0, 0.5, langid=0.0, script=0.0, run=9, letter_run=9), off) == []
    assert failed_checks(hyp(0, 0.5, exact=True), off) == ["copy"]
    assert failed_checks(hyp(0, 0.5, exact=True), rules({**FULL, "copy": None})) == []


def test_unmeasurable_attributes_do_not_reject():
    # NaN: langid does not know the language / the text has no letters.
    assert failed_checks(hyp(0, 0.5, langid=NAN, script=NAN, overlap=NAN), rules()) == []


def test_highest_kiwi_among_passing_hypotheses_wins():
    candidates = [hyp(0, 0.9, langid=0.1), hyp(1, 0.4), hyp(2, 0.7), hyp(3, 0.95, run=9)]
    choice = choose(candidates, rules())
    assert choice.best["hyp_rank"] == 2
    assert (choice.n_hypotheses, choice.n_passed, choice.reason) == (4, 2, None)


def test_ties_go_to_the_translators_preferred_hypothesis_whatever_the_row_order():
    candidates = [hyp(3, 0.7), hyp(1, 0.7), hyp(2, 0.7)]
    assert choose(candidates, rules()).best["hyp_rank"] == 1
    assert choose(list(reversed(candidates)), rules()).best["hyp_rank"] == 1


@pytest.mark.parametrize("missing", [None, NAN], ids=["none", "nan"])
def test_an_unscored_hypothesis_ranks_below_every_scored_one(missing):
    # Kiwi gave no score (None: not run; NaN: it could not score the text). Such a hypothesis
    # loses to any scored one, however low, even to one the translator ranked below it.
    candidates = [hyp(0, missing), hyp(1, -3.0)]
    for order in (candidates, list(reversed(candidates))):
        choice = choose(order, rules())
        assert choice.best["hyp_rank"] == 1
        assert (choice.n_hypotheses, choice.n_passed, choice.reason) == (2, 2, None)
    # With no score at all, the translator's preference decides, whatever the row order.
    unscored = [hyp(2, missing), hyp(1, missing)]
    assert choose(unscored, rules()).best["hyp_rank"] == 1
    assert choose(list(reversed(unscored)), rules()).best["hyp_rank"] == 1


def test_all_rejected_records_why():
    candidates = [hyp(0, 0.9, langid=0.1), hyp(1, 0.8, langid=0.2, script=0.0), hyp(2, 0.7, exact=True)]
    choice = choose(candidates, rules())
    assert choice.best is None
    assert choice.reason == "rejected:langid=2,script=1,copy=1"
    assert (choice.n_hypotheses, choice.n_passed) == (3, 0)
    nothing = choose([], rules())
    assert (nothing.best, nothing.reason, nothing.n_hypotheses, nothing.n_passed) == (None, "no_hypotheses", 0, 0)


def test_per_language_thresholds_override_the_default():
    languages = {"jpn_Jpan": {"script": {"script_v1__share": {"min": 0.9}}}}
    german, japanese_rules = rules(FULL, languages), rules(FULL, languages, "jpn_Jpan")
    japanese = hyp(0, 0.5, script=0.8, lang="jpn_Jpan")
    assert failed_checks(japanese, japanese_rules) == ["script"]
    assert failed_checks(hyp(0, 0.5, script=0.8), german) == []
    assert failed_checks(hyp(0, 0.5, langid=0.2, lang="jpn_Jpan"), japanese_rules) == ["langid"]  # the rest stays


def test_a_misspelt_column_or_condition_stops_the_stage():
    columns = [column for row in [hyp(0, 0.5)] for column in row]
    Thresholds(FULL).check(columns, "captions.select")
    with pytest.raises(BabelforgeError, match="captions.select.default.script: no column script_v1__shar"):
        Thresholds({"script": {"script_v1__shar": {"min": 0.5}}}).check(columns, "captions.select")
    misspelt = Thresholds(FULL, {"jpn_Jpan": {"script": {"script_v1__share": {"minimum": 0.5}}}})
    with pytest.raises(BabelforgeError, match="languages.jpn_Jpan.script.script_v1__share: unknown key minimum"):
        misspelt.check(columns, "captions.select")


def test_percentiles_share_ties_and_flags_split_the_bottom_quarter():
    scores = [0.8, 0.1, 0.5, 0.3, 0.3, 0.9, 0.7, 0.6]
    pct = percentiles(scores)
    assert pct == [75.0, 0.0, 37.5, 12.5, 12.5, 87.5, 62.5, 50.0]
    flags = [quality_flags(p) for p in pct]
    bottom = [s for s, (b, _) in zip(scores, flags) if b]
    assert sorted(bottom) == [0.1, 0.3, 0.3]  # tied 0.3s stay together
    assert all(b != t for b, t in flags)  # the two subsets partition the kept captions
    assert sum(quality_flags(p)[0] for p in percentiles([1.0, 2.0, 3.0, 4.0])) == 1


def test_select_rows_one_row_per_pair_with_percentiles_per_language():
    scored = [hyp(r, 0.1 * (i + 1) + 0.01 * r, caption_id=f"c{i}") for i in range(4) for r in range(2)]
    scored += [hyp(0, 0.9, caption_id="c0", lang="fra_Latn"), hyp(0, 0.2, caption_id="c1", lang="fra_Latn", langid=0.0)]
    pairs = [(f"c{i}", lang) for lang in ("deu_Latn", "fra_Latn") for i in range(5)]
    rows = select_rows(scored, pairs, Thresholds(FULL), where="captions.select")
    by_pair = {(row["caption_id"], row["lang"]): row for row in rows}
    assert len(rows) == 10
    assert by_pair[("c0", "deu_Latn")]["hyp_rank"] == 1
    assert by_pair[("c0", "deu_Latn")]["is_bottom_25"] and not by_pair[("c0", "deu_Latn")]["is_top_75"]
    assert by_pair[("c3", "deu_Latn")]["kiwi_percentile"] == 75.0
    assert by_pair[("c4", "deu_Latn")]["reason"] == "no_hypotheses"
    assert by_pair[("c1", "fra_Latn")]["reason"] == "rejected:langid=1"
    assert by_pair[("c1", "fra_Latn")]["kiwi_percentile"] is None
    # French has one kept caption: it is its language's whole distribution.
    assert by_pair[("c0", "fra_Latn")]["kiwi_percentile"] == 0.0


def test_headline_sums_counts_and_averages_only_the_languages_with_a_figure():
    def figures(n_selected, kiwi, chrf):
        return {
            "n_captions": 4,
            "n_selected": n_selected,
            "n_without_translation": 4 - n_selected,
            "kiwi_mean": kiwi,
            "chrf_corpus": chrf,
            "chrf_corpus_top_hypothesis": None,
            "n_kiwi_truncated": 4 - n_selected,
        }

    quality = {
        "deu_Latn": figures(4, 0.1, 40.0),
        "fra_Latn": figures(3, 0.2, None),
        "rus_Cyrl": figures(2, 0.4, None),
        "zho_Hans": figures(0, None, None),  # nothing selected: no Kiwi mean, left out of the mean
    }
    input_rows = {"rows": 18, "kept": 16, "quarantined": 2, "reasons": {"empty_caption": 2}, "excluded": {}}
    assert headline(quality, input_rows) == {
        "input_rows": 18,
        "input_quarantined": 2,
        "input_truncated": None,  # not known: an input.json from before translating
        "languages": 4,
        "captions": 16,
        "selected": 9,
        "without_translation": 7,
        "kiwi_truncated": 7,  # summed over languages
        "kiwi_mean": 0.233333,  # (0.1 + 0.2 + 0.4) / 3, to 6 decimals
        "chrf_corpus_mean": 40.0,
        "chrf_corpus_top_hypothesis_mean": None,
    }


@pytest.mark.parametrize("stage", ["select_stage", "tag_stage"])
def test_code_defaults_are_the_sample_profiles_params(repo_root, stage):
    import importlib

    from babelforge.core.config import load_config
    from babelforge.core.params import load_params

    config = importlib.import_module(f"babelforge.captions.{stage}").Config
    params = load_params(repo_root / "params.yaml")
    assert load_config(config, params) == config()
    assert load_config(config, {**params, "profile": "full"}) != config()
