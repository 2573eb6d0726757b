"""What a review import and the labels stage say on the real sample chain (issue 50): a sheet with no
decision writes nothing, a sampled review that lifts a language's source precision names the classes
the precision floor brings back and the group the language moves to, and a language below
`labels.min_classes` is added offline by lowering it.

The last two are read off one labels run (`reviewed_run`): a labels run on the sample chain is the
cost of these tests (about a minute and a half on a loaded two-core machine), and the review and the
lowered min_classes touch different languages (Indonesian's sources; the languages with 9 classes)."""

from __future__ import annotations

import csv
import io
import re
from contextlib import redirect_stderr
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
import yaml

from babelforge.babel_imagenet.precision import KeptLanguage, floor_move_lines
from babelforge.cli import main as cli
from tests.babel_imagenet.conftest import copy_chain

LANG = "ind_Latn"
RULES_FIGURE = "labels.p_correct=rules"


def review_chain(sample_chain: Path, dest: Path) -> Path:
    """A copy of the sample chain whose params point the review command at its tables and at an empty
    review folder of its own."""
    copy = copy_chain(sample_chain, dest)
    params = yaml.safe_load((copy / "params.yaml").read_text())
    bi = copy / "bi"
    params["paths"].update(
        wordnet=str(copy / "wn.parquet"),
        labels=str(bi / "labels.parquet"),
        languages=str(bi / "languages.parquet"),
        candidates=str(bi / "candidates.parquet"),
        audit=str(copy / "audit"),
        reviews=str(copy / "reviews"),
    )
    (copy / "reviews").mkdir()
    (copy / "params.yaml").write_text(yaml.safe_dump(params))
    return copy


@pytest.fixture
def chain(sample_chain, tmp_path):
    return review_chain(sample_chain, tmp_path / "chain")


@dataclass(frozen=True)
class Relabelled:
    chain: Path
    languages_before: pd.DataFrame  # the chain's last build, at the default min_classes, no review
    labels_before: pd.DataFrame
    exit_code: int
    said: str  # what the labels run wrote to stderr


@pytest.fixture(scope="module")
def reviewed_run(sample_chain, tmp_path_factory) -> Relabelled:
    """40 sampled Indonesian labels accepted into the chain's review folder, then one labels run
    with labels.min_classes lowered to 9 over the chain's `bi/` (the last build at the default 10:
    the stage compares with it). Both builds take the rules' figure as p_correct: that is the figure a
    review moves, through its sources' precision (the lexicon layer, the default, reads it for wordnet
    labels only, so a review moves its floor less: docs/guides/review-labels.md)."""
    chain = review_chain(sample_chain, tmp_path_factory.mktemp("reviewed") / "chain")
    with redirect_stderr(io.StringIO()):
        assert relabel(chain, RULES_FIGURE) == 0  # the last build, before the review
    languages = pd.read_parquet(chain / "bi" / "languages.parquet")
    labels = pd.read_parquet(chain / "bi" / "labels.parquet")
    sheet = chain / "sheet.csv"
    with redirect_stderr(io.StringIO()):
        assert review(chain, "export", LANG, "--sample", "40", "--seed", "7", "--out", str(sheet)) == 0
        assert review(chain, "import", str(decide_all(sheet, "accept")), "--reviewer", "anna") == 0
    with redirect_stderr(io.StringIO()) as said:
        code = relabel(chain, RULES_FIGURE, "labels.min_classes=9")  # the chain's params name its review folder
    return Relabelled(chain, languages, labels, code, said.getvalue())


def review(chain, *args: str) -> int:
    return cli(["review", *args, "--params", str(chain / "params.yaml")])


def relabel(chain, *overrides: str) -> int:
    """`babelforge labels` over the chain's wordnet and senses, into its own `bi/`: the copied last
    build stays in place, so the stage compares with it (`--out-anywhere`: the copy is not its own)."""
    bi = chain / "bi"
    sets = [arg for override in overrides for arg in ("--set", override)]
    return cli(
        [
            "labels",
            *("--params", str(chain / "params.yaml"), "--wordnet", str(chain / "wn.parquet")),
            *("--senses", str(chain / "senses"), "--out", str(bi / "labels.parquet")),
            *("--languages", str(bi / "languages.parquet"), "--candidates", str(bi / "candidates.parquet")),
            *(sets + ["--out-anywhere"]),
        ]
    )


def decide_all(sheet, decision: str):
    """The sheet with `decision` in every row, as a spreadsheet saves it (UTF-8 with BOM)."""
    with sheet.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row["decision"] = decision
    decided = sheet.with_name(f"decided-{sheet.name}")
    with decided.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return decided


def test_an_import_without_a_decision_writes_nothing_and_an_unchanged_one_rewrites_nothing(chain, capsys):
    sheet = chain / "sheet.csv"
    assert review(chain, "export", LANG, "--sample", "40", "--seed", "7", "--out", str(sheet)) == 0
    target = chain / "reviews" / f"{LANG}.tsv"
    capsys.readouterr()

    assert review(chain, "import", str(sheet), "--reviewer", "anna") == 0
    said = capsys.readouterr().err.strip().splitlines()
    # no header-only file: the labels stage's dependency folder is as it was, so `dvc repro` reruns nothing
    assert not any((chain / "reviews").iterdir())
    assert len(said) == 1 and said[0].startswith(f"review import: no row of {sheet} has a decision; nothing written")

    decided = decide_all(sheet, "accept")
    assert review(chain, "import", str(decided), "--reviewer", "anna", "--date", "2026-11-28") == 0
    said = capsys.readouterr().err
    assert "40 decisions" in said and "`git status --short" in said
    written = target.read_bytes()
    assert len(written.decode("utf-8").splitlines()) == 41  # header + the 40 decisions
    stamp = target.stat().st_mtime_ns

    assert review(chain, "import", str(decided), "--reviewer", "anna", "--date", "2026-11-28") == 0
    assert "are already in" in capsys.readouterr().err
    assert target.read_bytes() == written and target.stat().st_mtime_ns == stamp


def test_a_sampled_review_names_the_classes_the_floor_brings_back_and_any_group_move(reviewed_run):
    chain = reviewed_run.chain
    before = reviewed_run.languages_before.set_index("lang").loc[LANG]
    old_classes = set(reviewed_run.labels_before.query("lang == @LANG")["class_idx"])
    assert reviewed_run.exit_code == 0
    said = reviewed_run.said
    # the languages line names those it does not keep (the next test sees the ones with 9 classes join)
    assert "fewer than min_classes 9 classes: " in said
    lines = [line for line in said.splitlines() if line.startswith("labels: since the last build:")]
    after = pd.read_parquet(chain / "bi" / "languages.parquet").set_index("lang").loc[LANG]
    labels = pd.read_parquet(chain / "bi" / "labels.parquet").query("lang == @LANG")
    back = set(labels["class_idx"]) - old_classes
    # 40 accepted Indonesian labels lift both sources' precision: classes come back above the floor
    assert back and after["n_classes"] > before["n_classes"]
    [line] = [line for line in lines if f" {LANG} " in line]
    assert f"{LANG} {before['n_classes']}->{after['n_classes']} classes" in line
    assert f"{len(back)} back above precision_floor 0.5: " in line
    named = {int(idx) for idx in re.findall(r"(\d+) '", line)}
    assert named and named <= back  # the classes named are the ones that came back
    assert "its sources' precision moved (omw:msa " in line
    # A group move is named where one happens (issue 50's case: 331 -> 349 classes, past mid's 333), and only
    # then; the wording of a move is checked on hand-made languages below.
    if after["group"] != before["group"]:
        assert line.endswith(f"resource group {before['group']} -> {after['group']}")
    else:
        assert "resource group" not in line


def test_floor_moves_are_named_only_where_something_moved():
    def kept(classes, group, precision):
        return KeptLanguage({i: (f"l{i}", source) for i, source in classes.items()}, group, precision)

    before = {
        "ind_Latn": kept({1: "wikt", 2: "wikt"}, "low", {"wikt": 0.55}),
        "deu_Latn": kept({1: "wikt"}, "mid", {"wikt": 0.9}),
        "fra_Latn": kept({1: "wikt", 2: "wikt", 3: "wikt"}, "low", {"wikt": 0.7}),
    }
    after = {
        "ind_Latn": kept({1: "wikt", 2: "wikt", 5: "wikt", 6: "review:anna"}, "mid", {"wikt": 0.72}),
        "deu_Latn": kept({1: "wikt"}, "mid", {"wikt": 0.9}),
        "fra_Latn": kept({1: "wikt"}, "low", {"wikt": 0.7}),
    }
    lines = floor_move_lines(before, after, {"ind_Latn": 0.5, "fra_Latn": 0.5}, {"fra_Latn": {2}}, shown=1)
    assert lines == [
        # 3 is gone but not by the floor (a review's reject): only 2 is named
        "fra_Latn 3->1 classes; 1 now below precision_floor 0.5: 2 'l2'; "
        "its labels' evidence changed (other sources, flags)",
        # 6 is a review's own label, not the floor's
        "ind_Latn 2->4 classes; 1 back above precision_floor 0.5: 5 'l5'; "
        "its sources' precision moved (wikt 0.55->0.72), so did the labels' p_correct; resource group low -> mid",
    ]


def test_a_language_below_min_classes_is_added_offline_by_lowering_it(reviewed_run):
    """The sample's registry already holds every language the mirror covers (it is generated from it);
    what `labels` does not keep has fewer than min_classes classes, and lowering it adds them. The
    chain's `bi/` was the last build at the default min_classes, so the stage compares with that."""
    chain, languages = reviewed_run.chain, reviewed_run.languages_before
    assert "yue_Hant" not in set(languages["lang"])
    assert reviewed_run.exit_code == 0
    said = reviewed_run.said
    [fates] = [line for line in said.splitlines() if line.startswith("labels: languages: ")]
    joined = dict(re.findall(r"\+(\S+) (\d+)", fates.split("since the last build: ")[1].split(";")[0]))
    labels = pd.read_parquet(chain / "bi" / "labels.parquet")
    cantonese = labels[labels["lang"] == "yue_Hant"]
    assert joined.get("yue_Hant") == str(len(cantonese)) and len(cantonese) == 9
    assert cantonese["label"].str.len().gt(0).all() and cantonese["source"].eq("wikt").all()
    assert set(joined) == set(pd.read_parquet(chain / "bi" / "languages.parquet")["lang"]) - set(languages["lang"])
