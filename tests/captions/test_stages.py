"""The four caption stages end to end on real XTD captions, with a stub translator and the
tiny COMETKiwi; and DVC proof that re-thresholding does not rerun the taggers."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import yaml

from babelforge.cli import main
from babelforge.core import shards
from babelforge.core.io import read_json, read_table, sha256_file
from tests.project import command_env, run

from .conftest import REPO, StubTranslator

REGISTRY = str(REPO / "resources" / "languages.tsv")
N_CAPTIONS = 12


def write_params(path: Path, xtd_path: Path, kiwi_dir, **input_overrides) -> Path:
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    # The full profile's real selection thresholds (sample relaxes langid/script for the random
    # tiny NLLB); the model choices are overridden here: stub translator, tiny Kiwi.
    params["profile"] = "full"
    params["captions"]["input"].update({"path": str(xtd_path), "limit": N_CAPTIONS, **input_overrides})
    params["captions"]["tag"]["kiwi_model"] = str(kiwi_dir)
    # The stub translator needs no model; the stage only checks that the folder is there.
    (path.parent / "nllb-stub").mkdir(exist_ok=True)
    params["paths"]["nllb_model"] = str(path.parent / "nllb-stub")
    path.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return path


def stub_for(xtd):
    sources = {row["caption_id"]: row["caption"] for row in xtd.captions}
    known = {(sources[cid], lang): text for cid, lang, text in xtd.references}
    return StubTranslator(known=known, num_hypotheses=4)


def translate(monkeypatch, params: Path, data: Path, translator) -> int:
    from babelforge.captions import translate_worker

    monkeypatch.setattr(translate_worker, "make_translator", lambda settings: translator)
    return main(["captions_translate", "--params", str(params), "--registry", REGISTRY, "--out", str(data)])


def run_chain(params: Path, data: Path, translator, metrics: Path) -> None:
    """captions_translate (with `translator` in place of NLLB), captions_tag and captions_select."""
    monkeypatch = pytest.MonkeyPatch()
    try:
        assert translate(monkeypatch, params, data, translator) == 0
    finally:
        monkeypatch.undo()
    common = ["--params", str(params), "--out", str(data)]
    assert main(["captions_tag", *common]) == 0
    assert main(["captions_select", *common, "--metrics", str(metrics)]) == 0


@pytest.fixture(scope="module")
def built(tmp_path_factory, xtd, xtd_path, tiny_kiwi_dir):
    """translate -> tag -> select on the first 12 XTD captions (module-scoped: run once)."""
    root = tmp_path_factory.mktemp("pipeline")
    params = write_params(root / "params.yaml", xtd_path, tiny_kiwi_dir)
    data = root / "data"
    run_chain(params, data, stub_for(xtd), data.parent / "metrics")
    return root, data


def test_hypotheses_and_attributes_are_keyed_alike(built):
    _, data = built
    hypotheses = shards.read(data / "hypotheses").to_pandas()
    attributes = shards.read(data / "attributes").to_pandas()
    assert len(hypotheses) == N_CAPTIONS * 10 * 4
    assert list(hypotheses.columns) == ["caption_id", "lang", "hyp_rank", "text", "mt_score", "source_truncated"]
    assert not hypotheses["source_truncated"].any()  # XTD captions are short
    key = ["caption_id", "lang", "hyp_rank"]
    assert hypotheses[key].equals(attributes[key])
    assert {
        "langid_v1__prob",
        "script_v1__share",
        "copy_v1__exact",
        "repetition_v1__longest_run",
        "chrf_v1__score",
        "kiwi_v1__score",
    } <= set(attributes.columns)
    # The stub's rank 1 is the copied English source: tagged as a copy everywhere.
    assert attributes.loc[attributes["hyp_rank"] == 1, "copy_v1__exact"].all()
    assert not attributes.loc[attributes["hyp_rank"] == 0, "copy_v1__exact"].any()


def test_selection_keeps_checked_translations_with_quality_percentiles(built, xtd):
    _, data = built
    selected = read_table(data / "selected.parquet")
    assert len(selected) == N_CAPTIONS * 10
    assert {"image", "caption", "source_lang"} <= set(selected.columns)  # source row carried through
    sources = {row["caption_id"]: row["caption"] for row in xtd.captions}
    kept = selected[selected["text"].notna()]
    assert (kept["text"] != kept["caption_id"].map(sources)).all()  # never the copied source
    assert (kept["hyp_rank"] != 2).all()  # never the decoder loop
    refs = {(cid, lang): text for cid, lang, text in xtd.references}
    # In non-Latin scripts the stub's other hypotheses fail the script check: the human one is kept.
    non_latin = kept[kept["lang"].isin(["rus_Cyrl", "jpn_Jpan", "kor_Hang", "zho_Hans"])]
    assert len(non_latin) >= 0.9 * N_CAPTIONS * 4
    assert all(
        text == refs[(cid, lang)]
        for cid, lang, text in non_latin[["caption_id", "lang", "text"]].itertuples(index=False)
    )
    assert (non_latin["chrf"] == 100.0).all()
    for _, group in kept.groupby("lang"):
        assert (group["is_bottom_25"] != group["is_top_75"]).all()
        assert group["kiwi_percentile"].between(0, 100).all()
        bottom = group[group["is_bottom_25"]]["kiwi_score"]
        top = group[group["is_top_75"]]["kiwi_score"]
        if len(bottom) and len(top):
            assert bottom.max() < top.min()
    rejected = selected[selected["text"].isna()]
    assert rejected["reason"].str.startswith("rejected:").all()
    quality = read_json(data / "quality.json")["languages"]
    assert set(quality) == set(selected["lang"])
    assert quality["rus_Cyrl"]["chrf_corpus"] == 100.0
    assert quality["rus_Cyrl"]["chrf_corpus_top_hypothesis"] == 100.0  # the stub ranks the human one first


def test_every_caption_artifact_and_the_metrics_name_the_profile(built):
    from babelforge.core.io import read_provenance

    root, data = built
    written = [data / "selected.parquet", *shards.committed_files(data / "hypotheses")]
    for path in [*written, *shards.committed_files(data / "attributes")]:
        assert read_provenance(path)["build"] == {"profile": "full"}, path  # no sample note in a full build
    assert read_json(root / "metrics" / "captions.json")["profile"] == "full"


def test_selection_rerun_is_byte_identical(built, tmp_path):
    root, data = built
    before = {name: sha256_file(data / name) for name in ("selected.parquet", "quality.json")}
    common = ["--params", str(root / "params.yaml"), "--out", str(data)]
    assert main(["captions_select", *common, "--metrics", str(data.parent / "metrics")]) == 0
    assert {name: sha256_file(data / name) for name in before} == before


def test_extra_input_columns_reach_the_selected_table(tmp_path, monkeypatch, tiny_kiwi_dir, xtd_path):
    table = tmp_path / "captions.csv"
    table.write_text(
        "id,image,caption,rating,ref_rus_Cyrl\n"
        "a,1.jpg,a dog on the grass,4.5,собака на траве\n"
        "b,2.jpg,two cats,1.0,две кошки\n",
        encoding="utf-8",
    )
    params = write_params(tmp_path / "params.yaml", xtd_path, tiny_kiwi_dir, format="table", targets=["rus_Cyrl"])
    params_data = yaml.safe_load(params.read_text())
    params_data["captions"]["input"]["path"] = str(table)
    params.write_text(yaml.safe_dump(params_data))
    known = {("a dog on the grass", "rus_Cyrl"): "собака на траве", ("two cats", "rus_Cyrl"): "две кошки"}
    data = tmp_path / "data"
    assert translate(monkeypatch, params, data, StubTranslator(known=known, num_hypotheses=3)) == 0
    common = ["--params", str(params), "--out", str(data)]
    assert main(["captions_tag", *common]) == 0
    assert main(["captions_select", *common, "--metrics", str(data.parent / "metrics")]) == 0
    selected = read_table(data / "selected.parquet").set_index("caption_id")
    assert selected.loc["a", "rating"] == "4.5" and selected.loc["b", "ref_rus_Cyrl"] == "две кошки"
    assert selected.loc["a", "text"] == "собака на траве"


def test_tag_stage_with_missing_kiwi_fails_before_writing(built, tmp_path, capsys):
    root, data = built
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["captions"]["tag"]["kiwi_model"] = str(tmp_path / "no-kiwi")
    bad = tmp_path / "params.yaml"
    bad.write_text(yaml.safe_dump(params))
    out = tmp_path / "data"
    shutil.copytree(data, out)
    shutil.rmtree(out / "attributes")
    assert main(["captions_tag", "--params", str(bad), "--out", str(out)]) == 1
    assert "captions_kiwi_model" in capsys.readouterr().err
    assert not (out / "attributes").exists()


def _dvc(cwd: Path, *args: str) -> str:
    return run([sys.executable, "-m", "dvc", *args], cwd, command_env(cwd))


@pytest.mark.slow
def test_changing_selection_params_reruns_selection_only(tmp_path, monkeypatch, xtd, xtd_path, tiny_kiwi_dir):
    """A real DVC project: the repo's dvc.yaml, code and registry, the tiny Kiwi."""
    project = tmp_path / "project"
    shutil.copytree(REPO / "builders", project / "builders", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "dvc.yaml", project / "dvc.yaml")
    (project / "resources").mkdir()
    shutil.copy(REGISTRY, project / "resources" / "languages.tsv")
    shutil.copytree(tiny_kiwi_dir, project / "models" / "cometkiwi-tiny")
    params = write_params(project / "params.yaml", xtd_path, "models/cometkiwi-tiny")
    run(["git", "init", "-q"], project)
    _dvc(project, "init", "-q")
    monkeypatch.chdir(project)
    assert translate(monkeypatch, params, project / "data" / "captions", stub_for(xtd)) == 0

    _dvc(project, "repro", "-s", "language_view@mt-captions")  # the registry rows the caption stages read
    _dvc(project, "repro", "-s", "captions_tag")
    _dvc(project, "repro", "-s", "captions_select")
    attributes = project / "data" / "captions" / "attributes"

    def state():
        return {path.name: (sha256_file(path), path.stat().st_mtime_ns) for path in sorted(attributes.iterdir())}

    before = state()
    quality_before = read_json(project / "data" / "captions" / "quality.json")["languages"]

    values = yaml.safe_load(params.read_text())
    values["captions"]["select"]["default"]["kiwi"] = {"kiwi_v1__score": {"min": 0.6}}
    params.write_text(yaml.safe_dump(values, sort_keys=False))
    assert "up to date" in _dvc(project, "status", "captions_tag")
    assert "captions.select" in _dvc(project, "status", "captions_select")
    result = _dvc(project, "repro", "-s", "captions_tag", "captions_select")
    assert "Running stage 'captions_select'" in result
    assert "Running stage 'captions_tag'" not in result
    assert state() == before
    quality_after = read_json(project / "data" / "captions" / "quality.json")["languages"]
    assert sum(q["n_selected"] for q in quality_after.values()) < sum(q["n_selected"] for q in quality_before.values())
