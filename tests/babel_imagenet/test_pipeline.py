"""The wordnet -> senses -> labels chain on the real OMW mirror, through the CLI."""

import pandas as pd
import pytest

from babelforge.babel_imagenet.ranking import AGREEMENT_REASONS, LEARNED_PRIORITY
from babelforge.core.io import read_json, read_provenance
from babelforge.core.languages import registry
from babelforge.core.sources import read_sources
from tests.babel_imagenet.conftest import build_chain as build
from tests.babel_imagenet.conftest import copy_chain, run_labels


@pytest.fixture(scope="module")
def built(tmp_path_factory, repo_root, shared_data, sample_chain):
    """Two builds of the chain: the run's shared one (a copy of it) and one of this module's own."""
    first = copy_chain(sample_chain, tmp_path_factory.mktemp("a") / "chain")
    second = build(tmp_path_factory.mktemp("b"), repo_root, shared_data, tmp_path_factory.mktemp("nltk"))
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
    english = {lemma.casefold() for lemmas in wn["lemmas"] for lemma in lemmas} | {
        n.casefold() for n in wn["clip_name"]
    }
    other = labels[labels["lang"] != "eng_Latn"]
    assert not other["label"].str.casefold().isin(english).any()
    assert (other[["n_dropped_english"]].sum() > 0).all()
    # labels are normalised: no underscores, no outer spaces
    assert not other["label"].str.contains("_").any()
    assert (other["label"] == other["label"].str.strip()).all()
    # every language key is a registry key; provenance names the OMW source (read in place from the
    # mirror: its path and the registry's hash of it) and every OMW file with its sha256
    assert all(lang in registry() for lang in languages.index)
    omw = read_provenance(first / "bi" / "labels.parquet")["sources"]["senses"]["omw"]
    assert omw["sha256"] == read_sources()["omw"].sha256 and omw["path"].endswith("omw")
    assert any(path.endswith("wn-wikt-deu.tab") and len(rec["sha256"]) == 64 for path, rec in omw["files"].items())
    # a sample build says so: in every artifact's provenance and in the headline metrics
    for artifact in ARTIFACTS:
        assert read_provenance(first / artifact)["build"]["profile"] == "sample", artifact
    assert read_json(first / "metrics" / "labels.json")["profile"] == "sample"


@pytest.fixture(scope="module")
def first_rule(built, tmp_path_factory):
    """The same senses under the paper's rule (`full`'s settings): labels only."""
    first, _ = built
    out = tmp_path_factory.mktemp("first")
    paper = ("labels.ranking=first", "labels.resolve_duplicates=false", "labels.precision_floor.default=0")
    assert run_labels(first / "params.yaml", first, out, *paper) == 0
    return pd.read_parquet(out / "labels.parquet")


@pytest.fixture(scope="module")
def no_floor(built, tmp_path_factory):
    """The build's labels without the precision floor: what the ranking rules chose for every class, also
    where the floor then drops it (the lexicon layer drops some right labels: requin-marteau)."""
    first, _ = built
    out = tmp_path_factory.mktemp("no_floor")
    assert run_labels(first / "params.yaml", first, out, "labels.precision_floor.default=0") == 0
    return pd.read_parquet(out / "labels.parquet")


def test_first_sense_is_chosen(built, first_rule):
    first, _ = built
    senses = pd.read_parquet(first / "senses" / "omw.parquet")
    row = first_rule[(first_rule["lang"] == "deu_Latn") & (first_rule["wnid"] == "n01440764")].iloc[0]
    candidates = senses[(senses["lang"] == "deu_Latn") & (senses["synset"] == "01440764-n")].sort_values("rank")
    assert row["label"] == candidates.iloc[row["rank"]]["lemma"].replace("_", " ").strip()
    assert row["rank"] == 0
    assert set(first_rule["rank_reason"]) == {"first", "only"}


def test_duplicates_flagged(built):
    first, _ = built
    labels = pd.read_parquet(first / "bi" / "labels.parquet")
    dup = labels[labels["is_duplicate"]]
    assert len(dup) > 0
    for (_lang, _label), group in dup.groupby(["lang", labels.loc[dup.index, "label"].str.casefold()]):
        assert len(group) >= 2


def test_min_classes_param_changes_kept_languages(tmp_path, repo_root, shared_data, built):
    strict = build(tmp_path, repo_root, shared_data, tmp_path / "nltk", {"labels": {"min_classes": 300}})
    languages = pd.read_parquet(strict / "bi" / "languages.parquet")
    assert (languages["n_classes"] >= 300).all()
    loose = pd.read_parquet(built[0] / "bi" / "languages.parquet")
    assert len(languages) < len(loose)


def test_summary_is_printed(tmp_path, repo_root, shared_data, built, capsys):
    first, _ = built
    assert run_labels(first / "params.yaml", first, tmp_path / "bi") == 0
    out = capsys.readouterr().out
    assert "en-drop" in out and "mt-drop" in out and "deu_Latn" in out
    assert (
        out.strip().splitlines()[-1].startswith(f"{len(pd.read_parquet(first / 'bi' / 'languages.parquet'))} languages")
    )


# --- the rules of issue 14 on the real mirror: the cases that motivated them -----------------------


def frames(built):
    first, _ = built
    labels = pd.read_parquet(first / "bi" / "labels.parquet")
    return (
        labels,
        pd.read_parquet(first / "bi" / "languages.parquet").set_index("lang"),
        labels[labels["lang"] != "eng_Latn"],
    )


def label_of(labels, lang, wnid):
    rows = labels[(labels["lang"] == lang) & (labels["wnid"] == wnid)]
    return rows.iloc[0]["label"] if len(rows) else None


def test_no_markup_or_placeholder_is_a_label(built, first_rule):
    _, languages, other = frames(built)
    for frame in (other, first_rule[first_rule["lang"] != "eng_Latn"]):
        assert not (frame["label"] == "GAP!").any()
        assert not frame["label"].str.contains(r"^!|\[\[|\||\(|\)", regex=True).any()
        assert not frame["label"].str.fullmatch(r"[A-Za-z]").any()
    # the Italian wordnet's six GAP! senses are counted where they were dropped
    first, _ = built
    senses = pd.read_parquet(first / "senses" / "omw.parquet")
    gaps = senses[senses["lemma"] == "GAP!"].groupby("lang").size()
    assert gaps["ita_Latn"] == 6
    assert languages.loc["ita_Latn", "n_dropped_placeholder"] == gaps["ita_Latn"]
    # Hebrew's `!` prefixes are cleaned off, the names kept
    assert (
        languages.loc["heb_Hebr", "n_cleaned_markup"]
        == senses[(senses["lang"] == "heb_Hebr") & senses["lemma"].str.startswith("!")].shape[0]
    )


def test_named_markup_cases(built, first_rule):
    labels, languages, _ = frames(built)
    stick = labels[(labels["lang"] == "nld_Latn") & (labels["wnid"] == "n02231487")].iloc[0]
    assert (stick["label"], stick["raw_lemma"]) == ("wandelende tak", "[[wandelende]] [[tak]]")
    # French lynx: `lynx (mammifère)|fr:lynx` cleans to `lynx`, which is English: no French label left
    assert label_of(labels, "fra_Latn", "n02127052") is None
    assert languages.loc["fra_Latn", "n_cleaned_qualifier"] >= 2  # lynx, agama, spatule...
    # French cellular telephone: `G` and `g` are symbols; the paper's rule then takes the next sense,
    # agreement the name two sources give
    assert label_of(first_rule, "fra_Latn", "n02992529") == "cellule"
    assert label_of(labels, "fra_Latn", "n02992529") == "téléphone mobile"
    assert languages.loc["fra_Latn", "n_dropped_symbol"] == 2


def test_every_label_is_in_a_script_its_language_expects(built):
    from types import SimpleNamespace

    import babelforge.core.text_taggers  # noqa: F401  (registers script_v1)
    from babelforge.core.scripts import dominant_script
    from babelforge.core.taggers import run_tagger

    labels, languages, _ = frames(built)
    rows = [{"text": label, "lang": lang} for lang, label in zip(labels["lang"], labels["label"])]
    expected = {lang: registry().get(lang).expected_scripts for lang in labels["lang"].unique()}
    mismatch = run_tagger("script_v1", rows, SimpleNamespace(expected_scripts=expected))["mismatch"]
    assert labels.loc[mismatch, ["lang", "label"]].values.tolist() == []
    scripts = labels.assign(script=labels["label"].map(dominant_script)).groupby("lang")["script"]
    # Serbo-Croatian Cyrillic is Serbian's key; Arabic-script Kurdish is Sorani's
    assert set(scripts.get_group("hbs_Latn")) == {"Latn"} and set(scripts.get_group("srp_Cyrl")) == {"Cyrl"}
    assert set(scripts.get_group("kur_Latn")) == {"Latn"} and set(scripts.get_group("ckb_Arab")) == {"Arab"}
    srp = labels[labels["lang"] == "srp_Cyrl"]
    assert (srp["routed_from"] == "hbs_Latn").all()
    assert languages.loc["hbs_Latn", "n_routed_out"] >= languages.loc["srp_Cyrl", "n_routed_in"] >= len(srp)
    assert (labels[labels["lang"] == "ckb_Arab"]["routed_from"] == "kur_Latn").any()
    # Ojibwe has no Latin-script key, and the registry expects Latin for oji_Cans: its Latin names stay
    assert "Latn" in set(scripts.get_group("oji_Cans"))
    # Greek names with a Latin binomial appended are mostly Latin: dropped, another name taken
    assert set(scripts.get_group("ell_Grek")) == {"Grek"}
    assert languages.loc["ell_Grek", "n_dropped_script"] >= 5
    assert label_of(labels, "ell_Grek", "n02114855") == "κογιότ"  # was `λύκος canis latrans`


def test_agreement_rank_reasons_and_duplicates(built, first_rule, no_floor):
    labels, _, other = frames(built)
    reasons = {"only", *AGREEMENT_REASONS, LEARNED_PRIORITY, "unique", "purity", "script_span", "mixed_script"}
    assert set(other["rank_reason"]) <= reasons
    assert (other["rank_reason"] == LEARNED_PRIORITY).any()  # the sources' agreement orders some languages
    assert (other["n_sources"] >= 1).all()
    # the lexicon layer's p_correct beside the rules' figure, its first input, kept apart as p_rules
    assert other["p_rules"].between(0, 1).all() and other["p_correct"].between(0, 1).all()
    assert (other["p_rules"] != other["p_correct"]).mean() > 0.9
    # a class that took a unique candidate is never a duplicate, and there are fewer duplicates
    assert not labels[labels["rank_reason"] == "unique"]["is_duplicate"].any()
    assert labels["is_duplicate"].sum() < first_rule["is_duplicate"].sum() / 2
    # Chinese 美洲豹 named cougar, leopard and jaguar; now only the jaguar
    chinese = labels[labels["lang"] == "zho_Hans"]
    assert chinese[chinese["label"] == "美洲豹"]["wnid"].tolist() == ["n02128925"]
    assert first_rule[(first_rule["lang"] == "zho_Hans") & (first_rule["label"] == "美洲豹")].shape[0] == 3
    # a vernacular name beats a scientific one: French hammerhead (the family name came first)
    assert label_of(first_rule, "fra_Latn", "n01494475") == "sphyrnidae"
    hammerhead = no_floor[(no_floor["lang"] == "fra_Latn") & (no_floor["wnid"] == "n01494475")].iloc[0]
    assert (hammerhead["label"], hammerhead["rank_reason"]) == ("requin-marteau", "vernacular")
    assert label_of(labels, "fra_Latn", "n02364673") == "cochon d'Inde"  # not `cavia porcellus`
    # the frequency rule: Chinese ox is 牛 (wordfreq Zipf 4.84), not the rare 犉 (no recorded use),
    # which two sources give as often; candidates.parquet records each lookup
    ox = labels[(labels["lang"] == "zho_Hans") & (labels["wnid"] == "n02403003")].iloc[0]
    assert (ox["label"], ox["rank_reason"]) == ("牛", "frequency_unused")
    candidates = pd.read_parquet(built[0] / "bi" / "candidates.parquet")
    zipf = candidates[(candidates["lang"] == "zho_Hans") & (candidates["wnid"] == "n02403003")]
    assert dict(zip(zipf["label"], zipf["zipf"])) == {"公牛": 3.65, "牛": 4.84, "犉": 0.0}
    swahili = candidates[candidates["lang"] == "swh_Latn"]
    assert len(swahili) and swahili["zipf"].isna().all()  # not covered: no evidence, the rule is off


def test_purity_rules_on_the_sample(built, first_rule):
    labels, languages, _ = frames(built)
    candidates = pd.read_parquet(built[0] / "bi" / "candidates.parquet")
    # Wordnet Bahasa's Malay words leave Indonesian (and its Indonesian ones Malay); the paper's rule keeps them
    assert label_of(first_rule, "ind_Latn", "n03337140") == "fail"
    assert label_of(labels, "ind_Latn", "n03337140") != "fail"
    foreign = candidates[candidates["set_aside"] == "other_language"]
    assert {"kasut kayu", "almari"} <= set(foreign[foreign["lang"] == "ind_Latn"]["label"])
    assert {"kulkas", "lemari"} <= set(foreign[foreign["lang"] == "zsm_Latn"]["label"])
    assert "trompet" not in set(foreign["label"])  # missing from wordfreq's Indonesian list, not Malay
    assert languages.loc["ind_Latn", "n_dropped_other_language"] == (foreign["lang"] == "ind_Latn").sum()
    # a Latin binomial glued to a Greek name gives way to a plain Greek one
    assert label_of(labels, "ell_Grek", "n02128925") == "ιαγουάρος"  # was `τζάγκουαρ felis onca`
    # a mixed label stays only where the class has no other usable candidate, and says so
    mixed = labels[labels["rank_reason"] == "mixed_script"]
    assert "κουνέλι γένους sylvilagus" in set(mixed["label"])
    others = candidates.merge(mixed[["lang", "wnid"]], on=["lang", "wnid"])
    assert not (others["set_aside"] == "not_first").any()
