"""The label changelog: pure diff on two small label sets, and the CLI on two labels files."""

import json

from babelforge.audit.diff import diff_labels, labels_by_language, render_markdown
from babelforge.cli import main as cli
from tests.audit.conftest import labels_table

OLD = {"fin_Latn": {0: "suutari", 1: "kultakala", 2: "hai"}, "rus_Cyrl": {0: "линь"}, "deu_Latn": {0: "Schleie"}}
NEW = {
    "fin_Latn": {0: "suutari", 1: "Kultakala", 3: "tiikerihai"},
    "rus_Cyrl": {0: "линь"},
    "jpn_Jpan": {0: "テンチ", 1: "金魚"},
}


def test_added_removed_relabelled_per_language():
    diff = diff_labels(OLD, NEW)
    fin = diff["languages"]["fin_Latn"]
    assert fin["added"] == [{"class_idx": 3, "label": "tiikerihai", "by": "rules"}]
    assert fin["removed"] == [{"class_idx": 2, "label": "hai", "by": "rules"}]
    assert fin["relabelled"] == [{"class_idx": 1, "old": "kultakala", "new": "Kultakala", "by": "rules"}]
    assert "rus_Cyrl" not in diff["languages"]
    summary = diff["summary"]
    assert summary["languages_added"] == ["jpn_Jpan"] and summary["languages_removed"] == ["deu_Latn"]
    assert (summary["classes_added"], summary["classes_removed"], summary["classes_relabelled"]) == (3, 2, 1)
    assert summary["languages_unchanged"] == 1 and summary["languages_changed"] == 3


def test_identical_sets_have_nothing_to_report():
    diff = diff_labels(OLD, OLD)
    assert diff["languages"] == {} and "No label changed." in render_markdown(diff, "a", "b")


def test_markdown_escapes_pipes_and_lists_changes():
    text = render_markdown(diff_labels({"x_Latn": {0: "a"}}, {"x_Latn": {0: "a|b"}}), "old", "new")
    assert "| 0 | a | a\\|b |" in text
    assert "| x_Latn | 1 | 1 | 0 | 0 | 1 | 0 |" in text


def test_lowest_rank_wins_when_a_class_has_several_rows():
    rows = [
        {"lang": "fin_Latn", "class_idx": 0, "label": "b", "rank": 2},
        {"lang": "fin_Latn", "class_idx": 0, "label": "a", "rank": 1},
    ]
    assert labels_by_language(rows) == {"fin_Latn": {0: "a"}}


def test_cli_on_two_label_files(tmp_path, capsys):
    old, new = tmp_path / "old.parquet", tmp_path / "new.parquet"
    labels_table(OLD).to_parquet(old)
    labels_table(NEW).to_parquet(new)
    assert cli(["diff", str(old), str(new)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# Label changes") and "## fin_Latn" in text and "tiikerihai" in text
    assert cli(["diff", str(old), str(new), "--format", "json", "--out", str(tmp_path / "d.json")]) == 0
    data = json.loads((tmp_path / "d.json").read_text())
    assert data["summary"]["classes_relabelled"] == 1 and data["old"] == str(old)
    assert cli(["diff", str(old)]) == 1
    assert cli(["diff", str(old), str(tmp_path / "missing.parquet")]) == 1
    assert "no such labels file" in capsys.readouterr().err


def test_review_made_changes_are_listed_apart_from_rule_made_ones():
    from babelforge.audit.diff import review_made

    old_rows = [
        {"lang": "deu_Latn", "class_idx": i, "label": label}
        for i, label in [(0, "Schleie"), (1, "Goldfisch"), (457, "Fliege"), (579, "Flügel"), (9, "Strauß")]
    ]
    new_rows = [
        {"lang": "deu_Latn", "class_idx": 0, "label": "Schlei", "rule_label": "Schlei", "reviewed": False},  # rules
        {"lang": "deu_Latn", "class_idx": 1, "label": "Goldfisch", "rule_label": "Goldfisch", "reviewed": True},
        {"lang": "deu_Latn", "class_idx": 457, "label": "Querbinder", "rule_label": "Fliege", "reviewed": True},
        {"lang": "deu_Latn", "class_idx": 9, "label": "Strauß", "rule_label": "Straußenmännchen", "reviewed": True},
    ]
    new_record = {"deu_Latn": {"rejected": [{"class_idx": 579}]}}
    by_review = review_made(old_rows, new_rows, {}, new_record)
    assert by_review == {("deu_Latn", 457), ("deu_Latn", 579), ("deu_Latn", 9)}
    diff = diff_labels(labels_by_language(old_rows), labels_by_language(new_rows), by_review)
    entry = diff["languages"]["deu_Latn"]
    assert entry["relabelled"] == [
        {"class_idx": 0, "old": "Schleie", "new": "Schlei", "by": "rules"},
        {"class_idx": 457, "old": "Fliege", "new": "Querbinder", "by": "review"},
    ]
    assert entry["removed"] == [{"class_idx": 579, "label": "Flügel", "by": "review"}]
    assert diff["summary"]["by_review"] == {"added": 0, "removed": 1, "relabelled": 1}
    text = render_markdown(diff, "v1", "v2")
    reviews_part = text[text.index("### made by reviews") : text.index("### made by the rules")]
    rules_part = text[text.index("### made by the rules") :]
    assert "Querbinder" in reviews_part and "579 `Flügel`" in reviews_part and "Schlei |" not in reviews_part
    assert "| 0 | Schleie | Schlei |" in rules_part and "Querbinder" not in rules_part
    assert "| deu_Latn | 5 | 4 | 0 | 1 | 2 | 2 |" in text
    # withdrawing a review later is a review-made change too
    assert review_made(new_rows, old_rows, new_record, {}) == by_review


def test_an_accept_is_listed_as_confirmed():
    """An accept changes no label, yet a reviewer must see it in the changelog: Goldfisch (class 1)
    reviewed as the rules chose it is `confirmed`; an accept already in the old release is not."""
    from babelforge.audit.diff import review_confirmed

    old_rows = [
        {"lang": "deu_Latn", "class_idx": 1, "label": "Goldfisch", "rule_label": "Goldfisch", "reviewed": False},
        {"lang": "deu_Latn", "class_idx": 2, "label": "Hai", "rule_label": "Hai", "reviewed": True},
    ]
    new_rows = [
        {"lang": "deu_Latn", "class_idx": 1, "label": "Goldfisch", "rule_label": "Goldfisch", "reviewed": True},
        {"lang": "deu_Latn", "class_idx": 2, "label": "Hai", "rule_label": "Hai", "reviewed": True},
    ]
    confirmed = review_confirmed(old_rows, new_rows)
    assert confirmed == {"deu_Latn": [{"class_idx": 1, "label": "Goldfisch", "by": "review"}]}
    diff = diff_labels(labels_by_language(old_rows), labels_by_language(new_rows), set(), confirmed)
    assert diff["summary"]["classes_confirmed"] == 1 and diff["summary"]["languages_changed"] == 1
    assert diff["languages"]["deu_Latn"]["relabelled"] == []
    text = render_markdown(diff, "v1", "v2")
    assert "confirmed by reviews (label accepted as it was): 1" in text and "- confirmed: 1 `Goldfisch`" in text


def hypotheses(texts: dict[tuple[str, int, int], str]):
    import pandas as pd

    return pd.DataFrame(
        [
            {"caption_id": c, "lang": lang, "hyp_rank": r, "text": t, "mt_score": -0.5}
            for (lang, c, r), t in texts.items()
        ]
    )


def test_rows_changed_per_language_of_two_caption_builds(tmp_path, capsys):
    """What a GPU build changes: rows counted per language, matched on the table's keys."""
    cpu = {
        ("deu_Latn", 1, 0): "Ein Hund",
        ("deu_Latn", 1, 1): "Hund",
        ("deu_Latn", 2, 0): "Katze",
        ("zho_Hans", 1, 0): "狗",
        ("rus_Cyrl", 1, 0): "собака",
    }
    gpu = {**cpu, ("deu_Latn", 1, 1): "Der Hund", ("zho_Hans", 1, 1): "一只狗"}
    del gpu[("rus_Cyrl", 1, 0)]
    old, new = tmp_path / "cpu.parquet", tmp_path / "gpu.parquet"
    hypotheses(cpu).to_parquet(old)
    hypotheses(gpu).to_parquet(new)
    assert cli(["diff", str(old), str(new), "--format", "json", "--out", str(tmp_path / "d.json")]) == 0
    data = json.loads((tmp_path / "d.json").read_text())
    assert data["table"] == "captions" and data["keys"] == ["lang", "caption_id", "hyp_rank"]
    assert data["languages"] == {
        "deu_Latn": {"rows_before": 3, "rows_after": 3, "added": 0, "removed": 0, "changed": 1},
        "rus_Cyrl": {"rows_before": 1, "rows_after": 0, "added": 0, "removed": 1, "changed": 0},
        "zho_Hans": {"rows_before": 1, "rows_after": 2, "added": 1, "removed": 0, "changed": 0},
    }
    assert data["summary"]["changed"] == 1 and data["summary"]["languages_unchanged"] == 0
    assert cli(["diff", str(old), str(new)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# Row changes") and "| deu_Latn | 3 | 3 | 0 | 0 | 1 |" in text
    assert cli(["diff", str(old), str(old)]) == 0
    assert "No row changed." in capsys.readouterr().out


def test_a_labels_file_against_a_caption_table_is_refused(tmp_path, capsys):
    old, new = tmp_path / "labels.parquet", tmp_path / "hyp.parquet"
    labels_table(OLD).to_parquet(old)
    hypotheses({("deu_Latn", 1, 0): "Hund"}).to_parquet(new)
    assert cli(["diff", str(old), str(new)]) == 1
    assert "not the same kind of table" in capsys.readouterr().err
