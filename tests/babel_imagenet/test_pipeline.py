"""The wordnet -> senses -> labels chain on the real OMW mirror, through the CLI."""
import pandas as pd
import pytest
import yaml

from builders.cli import main as cli
from builders.core.io import read_provenance
from builders.core.languages import registry


def build(tmp, repo_root, shared_data, nltk_data, extra_params=None):
    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    params["profile"] = "sample"
    params["senses"]["omw_dir"] = str(shared_data / "omw")
    params["wordnet"]["nltk_data"] = str(nltk_data)
    for group, values in (extra_params or {}).items():
        params[group].update(values)
    tmp.mkdir(parents=True, exist_ok=True)
    p = tmp / "params.yaml"
    p.write_text(yaml.safe_dump(params))
    assert cli(["wordnet", "--params", str(p), "--out", str(tmp / "wn.parquet")]) == 0
    assert cli(["senses", "--params", str(p), "--wordnet", str(tmp / "wn.parquet"), "--out-dir", str(tmp / "senses")]) == 0
    assert cli(["labels", "--params", str(p), "--wordnet", str(tmp / "wn.parquet"), "--senses-dir", str(tmp / "senses"),
                "--labels", str(tmp / "bi/labels.parquet"), "--languages", str(tmp / "bi/languages.parquet"),
                "--candidates", str(tmp / "bi/candidates.parquet")]) == 0
    return tmp


@pytest.fixture(scope="module")
def built(tmp_path_factory, repo_root, shared_data):
    nltk_data = tmp_path_factory.mktemp("nltk")
    first = build(tmp_path_factory.mktemp("a"), repo_root, shared_data, nltk_data)
    second = build(tmp_path_factory.mktemp("b"), repo_root, shared_data, nltk_data)
    return first, second


ARTIFACTS = ["wn.parquet", "senses/omw.parquet", "bi/labels.parquet", "bi/languages.parquet", "bi/candidates.parquet"]


@pytest.mark.parametrize("artifact", ARTIFACTS)
def test_two_builds_are_byte_identical(built, artifact):
    first, second = built
    assert (first / artifact).read_bytes() == (second / artifact).read_bytes()


def test_labels_from_real_omw(built, capsys):
    first, _ = built
    labels = pd.read_parquet(first / "bi" / "labels.parquet")
    languages = pd.read_parquet(first / "bi" / "languages.parquet").set_index("lang")
    # every kept language has at least min_classes labels, and the table agrees with the labels
    counts = labels.groupby("lang").size()
    assert (counts >= 10).all()
    assert counts.to_dict() == languages["n_classes"].to_dict()
    assert languages.loc["eng_Latn", "n_classes"] == 1000
    assert {"deu_Latn", "fra_Latn", "jpn_Jpan", "pol_Latn"} <= set(languages.index)
    assert set(languages["group"]) <= {"very-low", "low", "mid", "high"}
    # no label left equals an English lemma of any class (rule 2), outside English itself
    wn = pd.read_parquet(first / "wn.parquet")
    english = {l.casefold() for lemmas in wn["lemmas"] for l in lemmas} | {n.casefold() for n in wn["clip_name"]}
    other = labels[labels["lang"] != "eng_Latn"]
    assert not other["label"].str.casefold().isin(english).any()
    assert (other[["n_dropped_english"]].sum() > 0).all()
    # labels are normalised: no underscores, no outer spaces
    assert not other["label"].str.contains("_").any()
    assert (other["label"] == other["label"].str.strip()).all()
    # every language key is a registry key; provenance names the OMW files with their sha256
    assert all(lang in registry() for lang in languages.index)
    sources = read_provenance(first / "bi" / "labels.parquet")["sources"]["senses"]["omw"]
    assert any(path.endswith("wn-wikt-deu.tab") and len(rec["sha256"]) == 64 for path, rec in sources.items())


def test_first_sense_is_chosen(built):
    first, _ = built
    senses = pd.read_parquet(first / "senses" / "omw.parquet")
    labels = pd.read_parquet(first / "bi" / "labels.parquet")
    row = labels[(labels["lang"] == "deu_Latn") & (labels["wnid"] == "n01440764")].iloc[0]
    candidates = senses[(senses["lang"] == "deu_Latn") & (senses["synset"] == "01440764-n")].sort_values("rank")
    assert row["label"] == candidates.iloc[row["rank"]]["lemma"].replace("_", " ").strip()
    assert row["rank"] == 0


def test_duplicates_flagged(built):
    first, _ = built
    labels = pd.read_parquet(first / "bi" / "labels.parquet")
    dup = labels[labels["is_duplicate"]]
    assert len(dup) > 0
    for (lang, label), group in dup.groupby(["lang", labels.loc[dup.index, "label"].str.casefold()]):
        assert len(group) >= 2


def test_min_classes_param_changes_kept_languages(tmp_path, repo_root, shared_data, built):
    strict = build(tmp_path, repo_root, shared_data, tmp_path / "nltk", {"labels": {"min_classes": 300}})
    languages = pd.read_parquet(strict / "bi" / "languages.parquet")
    assert (languages["n_classes"] >= 300).all()
    loose = pd.read_parquet(built[0] / "bi" / "languages.parquet")
    assert len(languages) < len(loose)


def test_summary_is_printed(tmp_path, repo_root, shared_data, built, capsys):
    first, _ = built
    p = first / "params.yaml"
    assert cli(["labels", "--params", str(p), "--wordnet", str(first / "wn.parquet"), "--senses-dir",
                str(first / "senses"), "--labels", str(tmp_path / "bi/labels.parquet"), "--languages", str(tmp_path / "bi/languages.parquet"),
                "--candidates", str(tmp_path / "bi/candidates.parquet")]) == 0
    out = capsys.readouterr().out
    assert "en-drop" in out and "mt-drop" in out and "deu_Latn" in out
    assert out.strip().splitlines()[-1].startswith(f"{len(pd.read_parquet(first / 'bi' / 'languages.parquet'))} languages")
