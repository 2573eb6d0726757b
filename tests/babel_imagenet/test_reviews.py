"""Review files: parsing and applying (pure), and the labels stage on the real mirror with reviews,
where every bad row is one error line naming file and line and nothing is written."""

import pandas as pd
import pytest

from babelforge.babel_imagenet.reviews import (
    Review,
    ReviewContext,
    apply_reviews,
    format_review_file,
    parse_review_file,
    review_coverage,
)
from babelforge.cli import main as cli
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_provenance
from tests.babel_imagenet.conftest import copy_chain

HEADER = "wnid\tdecision\tlabel\treviewer\tdate\tnote\n"
BOW_TIE, FLY, GRAND_PIANO, TENCH, GOLDFISH = "n02883205", "n02190166", "n03452741", "n01440764", "n01443537"


def review(wnid, decision, label="", reviewer="anna", date="2025-01-14", note="", lang="deu_Latn"):
    return Review(lang, wnid, decision, label, reviewer, date, note, f"{lang}.tsv:2")


def row(idx, wnid, label, lang="deu_Latn", source="wikt"):
    return {
        "class_idx": idx,
        "wnid": wnid,
        "lang": lang,
        "label": label,
        "source": source,
        "rank": 0,
        "n_senses": 1,
        "n_dropped_english": 0,
        "n_dropped_mt": 0,
        "n_dropped_low_precision": 0,
        "used_low_precision": False,
        "is_duplicate": False,
    }


RULES = [
    row(0, TENCH, "Schleie"),
    row(308, FLY, "Fliege"),
    row(457, BOW_TIE, "Fliege"),
    row(579, GRAND_PIANO, "Flügel"),
]
CLASS_OF = {TENCH: 0, GOLDFISH: 1, FLY: 308, BOW_TIE: 457, GRAND_PIANO: 579}


# --- pure ----------------------------------------------------------------------------------------


def test_parse_normalises_labels_and_skips_blank_lines():
    text = HEADER + f"{BOW_TIE}\treplace\t Quer_binder \tanna\t2025-01-14\tthe insect is class 308\n\n"
    (parsed,) = parse_review_file(text, "deu_Latn", "deu_Latn.tsv")
    assert (parsed.label, parsed.note, parsed.where) == ("Quer binder", "the insect is class 308", "deu_Latn.tsv:2")


def test_format_then_parse_round_trips_in_wnid_order():
    reviews = [review(BOW_TIE, "replace", "Querbinder"), review(TENCH, "accept", "Schleie"), review(FLY, "reject")]
    text = format_review_file(reviews)
    assert [line.split("\t")[0] for line in text.splitlines()[1:]] == [TENCH, FLY, BOW_TIE]
    assert {(r.wnid, r.decision, r.label) for r in parse_review_file(text, "deu_Latn", "x")} == {
        (r.wnid, r.decision, r.label) for r in reviews
    }


def test_replace_reject_accept_applied_after_the_rules():
    rows, record, warnings = apply_reviews(
        RULES,
        {
            "deu_Latn": [
                review(BOW_TIE, "replace", "Querbinder"),
                review(GRAND_PIANO, "reject"),
                review(TENCH, "accept", "Schleie"),
            ]
        },
        CLASS_OF,
    )
    by_idx = {r["class_idx"]: r for r in rows}
    assert sorted(by_idx) == [0, 308, 457]
    assert (by_idx[457]["label"], by_idx[457]["source"], by_idx[457]["rank"]) == ("Querbinder", "review:anna", -1)
    assert by_idx[457]["rule_label"] == "Fliege" and by_idx[457]["review_decision"] == "replace"
    assert by_idx[0]["reviewed"] and by_idx[0]["source"] == "wikt" and not by_idx[0]["review_stale"]
    assert not by_idx[308]["reviewed"]
    # the duplicate Fliege (fly / bow tie) is resolved by the replace
    assert not any(r["is_duplicate"] for r in rows)
    assert record["deu_Latn"]["decisions"] == {"accept": 1, "reject": 1, "replace": 1}
    assert record["deu_Latn"]["rejected"] == [
        {"class_idx": 579, "wnid": GRAND_PIANO, "label": "Flügel", "reviewer": "anna", "date": "2025-01-14", "note": ""}
    ]
    assert warnings == []
    coverage = review_coverage(rows, record)["deu_Latn"]
    assert (coverage["classes"], coverage["reviewed"], coverage["changed"], coverage["rejected"]) == (4, 3, 2, 1)
    assert (coverage["reviewed_share"], coverage["changed_share"]) == (0.75, 0.5)


def test_an_accept_the_rules_no_longer_agree_with_is_stale_and_keeps_its_label():
    upstream = [row(0, TENCH, "Schlei")]  # the rules now pick another lemma
    rows, _, _ = apply_reviews(upstream, {"deu_Latn": [review(TENCH, "accept", "Schleie")]}, CLASS_OF)
    (result,) = rows
    assert (result["label"], result["rule_label"], result["review_stale"]) == ("Schleie", "Schlei", True)
    assert result["source"] == "review:anna"
    assert review_coverage(rows, {})["deu_Latn"]["stale"] == 1


def test_replace_gives_a_class_the_rules_left_empty_a_label():
    rows, _, _ = apply_reviews(RULES, {"deu_Latn": [review(GOLDFISH, "replace", "Goldfisch")]}, CLASS_OF)
    added = next(r for r in rows if r["class_idx"] == 1)
    assert (added["label"], added["rule_label"], added["wnid"], added["reviewed"]) == (
        "Goldfisch",
        None,
        GOLDFISH,
        True,
    )


def test_decisions_with_nothing_to_act_on_warn():
    _, record, warnings = apply_reviews(
        RULES,
        {"deu_Latn": [review(GOLDFISH, "reject")], "fra_Latn": [review(TENCH, "accept", lang="fra_Latn")]},
        CLASS_OF,
    )
    assert record["deu_Latn"]["decisions"]["reject"] == 0 and "fra_Latn" not in record
    assert len(warnings) == 2 and "nothing to do" in warnings[0] and "did not keep" in warnings[1]


# --- the labels stage on the real mirror --------------------------------------------------------


@pytest.fixture(scope="module")
def senses_built(tmp_path_factory, sample_chain):
    """wordnet and senses on the real mirror: a copy of the run's shared chain (its labels unused)."""
    return copy_chain(sample_chain, tmp_path_factory.mktemp("reviews") / "chain")


def labels(built, reviews_dir, out):
    return cli(
        [
            "labels",
            "--params",
            str(built / "params.yaml"),
            "--wordnet",
            str(built / "wn.parquet"),
            "--senses",
            str(built / "senses"),
            "--reviews",
            str(reviews_dir),
            "--out",
            str(out / "labels.parquet"),
            "--languages",
            str(out / "languages.parquet"),
            "--candidates",
            str(out / "candidates.parquet"),
        ]
    )


def test_stage_applies_a_review_file_and_records_it(senses_built, tmp_path):
    reviews = tmp_path / "reviews"
    reviews.mkdir()
    (reviews / "README.md").write_text("not a review file: ignored")
    (reviews / "deu_Latn.tsv").write_text(
        HEADER + f"{BOW_TIE}\treplace\tQuerbinder\tanna\t2025-01-14\t\n{GRAND_PIANO}\treject\t\tanna\t2025-01-14\t\n",
        encoding="utf-8",
    )
    assert labels(senses_built, reviews, tmp_path) == 0
    table = pd.read_parquet(tmp_path / "labels.parquet").set_index(["lang", "wnid"])
    assert table.loc[("deu_Latn", BOW_TIE), "label"] == "Querbinder"
    assert table.loc[("deu_Latn", BOW_TIE), "source"] == "review:anna"
    assert not table.loc[("deu_Latn", FLY), "is_duplicate"]
    assert ("deu_Latn", GRAND_PIANO) not in table.index
    languages = pd.read_parquet(tmp_path / "languages.parquet").set_index("lang")
    assert languages.loc["deu_Latn", "n_classes"] == len(table.loc["deu_Latn"])
    record = read_provenance(tmp_path / "labels.parquet")["sources"]["reviews"]["deu_Latn"]
    assert record["file"] == "deu_Latn.tsv" and len(record["sha256"]) == 64
    candidates = pd.read_parquet(tmp_path / "candidates.parquet")
    german_bow_tie = candidates[(candidates["lang"] == "deu_Latn") & (candidates["wnid"] == BOW_TIE)]
    assert german_bow_tie["label"].tolist() == ["Fliege"] and german_bow_tie["chosen"].all()


BAD_ROWS = {
    "unknown wnid": ("deu_Latn.tsv", "n99999999\taccept\t\tanna\t2025-01-14\t\n", "deu_Latn.tsv:2: unknown wnid"),
    "unknown language file": (
        "german.tsv",
        f"{TENCH}\taccept\t\tanna\t2025-01-14\t\n",
        "german.tsv: not a review file",
    ),
    "replace without label": (
        "deu_Latn.tsv",
        f"{TENCH}\treplace\t\tanna\t2025-01-14\t\n",
        "deu_Latn.tsv:2: replace without a label",
    ),
    "English lemma": (
        "deu_Latn.tsv",
        f"{TENCH}\taccept\tSchleie\tanna\t2025-01-14\t\n{BOW_TIE}\treplace\tBow tie\tanna\t2025-01-14\t\n",
        "deu_Latn.tsv:3: label 'Bow tie' equals an English lemma",
    ),
    "wrong script": (
        "deu_Latn.tsv",
        f"{BOW_TIE}\treplace\tгалстук-бабочка\tanna\t2025-01-14\t\n",
        "deu_Latn.tsv:2: label 'галстук-бабочка' is not in the script of deu_Latn",
    ),
    "markup label": (
        "deu_Latn.tsv",
        f"{TENCH}\taccept\tSchleie\tanna\t2025-01-14\t\n{BOW_TIE}\treplace\t<img src=x onerror=alert(1)>Hund\tanna\t2025-01-14\t\n",
        "deu_Latn.tsv:3: label '<img src=x onerror=alert(1)>Hund' holds markup",
    ),
    "same wnid twice": (
        "deu_Latn.tsv",
        f"{BOW_TIE}\taccept\t\tanna\t2025-01-14\t\n{BOW_TIE}\treject\t\tanna\t2025-01-15\t\n",
        f"deu_Latn.tsv:3: wnid {BOW_TIE} twice",
    ),
    "unknown decision": (
        "deu_Latn.tsv",
        f"{TENCH}\tapprove\t\tanna\t2025-01-14\t\n",
        "deu_Latn.tsv:2: decision 'approve'",
    ),
    "no reviewer": ("deu_Latn.tsv", f"{TENCH}\taccept\t\t\t2025-01-14\t\n", "deu_Latn.tsv:2: no reviewer"),
    "bad date": ("deu_Latn.tsv", f"{TENCH}\taccept\t\tanna\t14.01.2025\t\n", "deu_Latn.tsv:2: date '14.01.2025'"),
    "missing field": ("deu_Latn.tsv", f"{TENCH}\taccept\t\tanna\t2025-01-14\n", "deu_Latn.tsv:2: 5 fields"),
}


@pytest.mark.parametrize("case", sorted(BAD_ROWS))
def test_a_bad_review_row_stops_the_stage_with_one_line_and_writes_nothing(senses_built, tmp_path, capsys, case):
    name, rows, expected = BAD_ROWS[case]
    reviews = tmp_path / "reviews"
    reviews.mkdir()
    (reviews / name).write_text(HEADER + rows, encoding="utf-8")
    out = tmp_path / "out"
    assert labels(senses_built, reviews, out) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and expected in error, error
    assert str(reviews) in error
    assert not out.exists()


def test_a_bad_header_names_line_one():
    with pytest.raises(BabelforgeError, match=r"x.tsv:1: the header must be"):
        parse_review_file("wnid,decision,label\n", "deu_Latn", "x.tsv")


def test_label_checks_follow_the_language():
    from babelforge.babel_imagenet.reviews import check_review

    context = ReviewContext(frozenset({TENCH}), frozenset({"tench"}), {"eng_Latn": ("Latn",), "rus_Cyrl": ("Cyrl",)})
    check_review(review(TENCH, "replace", "tench", lang="eng_Latn"), context)  # English labels are English words
    check_review(review(TENCH, "replace", "линь", lang="rus_Cyrl"), context)
    with pytest.raises(BabelforgeError, match="not in the script of rus_Cyrl"):
        check_review(review(TENCH, "replace", "lin", lang="rus_Cyrl"), context)


@pytest.mark.parametrize(
    "label, problem",
    [
        ("<img src=x onerror=alert(1)>Hund", "holds markup"),
        ("Hund {} Katze", "holds a { or }"),
        ("Hund\x07", "holds the control character U+0007"),
        ("Querbinder (Kleidung)", "is not clean (qualifier)"),
        ("Querbinder", None),
    ],
)
@pytest.mark.parametrize("decision", ["replace", "accept"])
def test_a_review_label_gets_the_checks_of_a_source_label_naming_file_and_line(label, problem, decision):
    from babelforge.babel_imagenet.reviews import check_review

    context = ReviewContext(frozenset({TENCH, BOW_TIE}), frozenset({"bow tie"}), {"deu_Latn": ("Latn",)})
    text = HEADER + f"{TENCH}\taccept\t\tanna\t2025-01-14\t\n{BOW_TIE}\t{decision}\t{label}\tanna\t2025-01-14\t\n"
    reviews = parse_review_file(text, "deu_Latn", "deu_Latn.tsv")
    for review in reviews[:1]:
        check_review(review, context)
    if problem is None:
        check_review(reviews[1], context)
        return
    with pytest.raises(BabelforgeError) as error:
        check_review(reviews[1], context)
    assert str(error.value).startswith(f"deu_Latn.tsv:3: label {label!r} ") and problem in str(error.value)


def test_the_card_states_review_coverage_per_reviewed_language():
    from babelforge.babel_imagenet.dataset import review_coverage_sentence
    from babelforge.babel_imagenet.reviews import review_coverage

    rows = [
        {"lang": "deu_Latn", "label": "Querbinder", "rule_label": "Fliege", "reviewed": True},
        {"lang": "deu_Latn", "label": "Hai", "rule_label": "Hai", "reviewed": True},
        *({"lang": "deu_Latn", "label": f"w{i}", "rule_label": f"w{i}"} for i in range(6)),
        {"lang": "fin_Latn", "label": "hai", "rule_label": "hai"},
    ]
    coverage = review_coverage(rows, {"deu_Latn": {"rejected": [7]}})
    assert review_coverage_sentence(coverage) == (
        "Reviewed by people in 1 of 2 languages: deu_Latn 3 of 9 classes (33.3%, 2 changed). "
        "Every other label is the rules' choice."
    )
    assert review_coverage_sentence({"fin_Latn": coverage["fin_Latn"]}).startswith("No label has been reviewed")
