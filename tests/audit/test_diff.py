"""The label changelog: pure diff on two small label sets, and the CLI on two labels files."""
import json

from builders.audit.diff import diff_labels, labels_by_language, render_markdown
from builders.cli import main as cli
from tests.audit.conftest import labels_table

OLD = {"fin_Latn": {0: "suutari", 1: "kultakala", 2: "hai"}, "rus_Cyrl": {0: "линь"}, "deu_Latn": {0: "Schleie"}}
NEW = {"fin_Latn": {0: "suutari", 1: "Kultakala", 3: "tiikerihai"}, "rus_Cyrl": {0: "линь"},
       "jpn_Jpan": {0: "テンチ", 1: "金魚"}}


def test_added_removed_relabelled_per_language():
    diff = diff_labels(OLD, NEW)
    fin = diff["languages"]["fin_Latn"]
    assert fin["added"] == [{"class_idx": 3, "label": "tiikerihai"}]
    assert fin["removed"] == [{"class_idx": 2, "label": "hai"}]
    assert fin["relabelled"] == [{"class_idx": 1, "old": "kultakala", "new": "Kultakala"}]
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
    assert "| x_Latn | 1 | 1 | 0 | 0 | 1 |" in text


def test_lowest_rank_wins_when_a_class_has_several_rows():
    rows = [{"lang": "fin_Latn", "class_idx": 0, "label": "b", "rank": 2},
            {"lang": "fin_Latn", "class_idx": 0, "label": "a", "rank": 1}]
    assert labels_by_language(rows) == {"fin_Latn": {0: "a"}}


def test_cli_on_two_label_files(tmp_path, capsys):
    old, new = tmp_path / "old.parquet", tmp_path / "new.parquet"
    labels_table(OLD).to_parquet(old)
    labels_table(NEW).to_parquet(new)
    assert cli(["diff", str(old), str(new)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# Label changes") and "## fin_Latn" in text and "tiikerihai" in text
    assert cli(["diff", str(old), str(new), "--format", "json", "--output", str(tmp_path / "d.json")]) == 0
    data = json.loads((tmp_path / "d.json").read_text())
    assert data["summary"]["classes_relabelled"] == 1 and data["old"] == str(old)
    assert cli(["diff", str(old)]) == 1
    assert cli(["diff", str(old), str(tmp_path / "missing.parquet")]) == 1
    assert "no such labels file" in capsys.readouterr().err
