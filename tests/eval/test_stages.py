"""The eval stages end to end on a small project with the tiny real CLIP (CPU)."""
import json

import pandas as pd
import pytest

from builders.cli import main
from eval.report import ROW_KEYS
from tests.eval.conftest import write_babel_imagenet_tables, write_sample_project


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    import os

    root = write_sample_project(tmp_path_factory.mktemp("project"))
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert main(["eval", "tiny-clip"]) == 0
        assert main(["eval", "images"]) == 0
        write_babel_imagenet_tables(root)
        for task in ("zeroshot", "retrieval", "clipscore", "mvl_sib", "report"):
            assert main(["eval", task]) == 0, task
        yield root
    finally:
        os.chdir(cwd)


def rows(project, task):
    return json.loads((project / "reports" / "eval" / f"{task}.json").read_text())["rows"]


def test_zeroshot_rows(project):
    result = rows(project, "zeroshot")
    assert len(result) == 9  # 3 models x 3 languages
    for row in result:
        assert all(key in row for key in ROW_KEYS)
        assert row["revision"].startswith("sha256:") and row["dataset_version"].startswith("sha256:")
        assert 0.0 <= row["top1"] <= row["top5"] <= 1.0
    by_lang = {r["lang"]: r for r in result if r["model"] == "models/tiny_clip/s0"}
    assert by_lang["deu_Latn"]["prompt_set"] == "translated" and by_lang["deu_Latn"]["n_templates"] == 2
    assert by_lang["fry_Latn"]["prompt_set"] == "english-fallback"
    assert by_lang["eng_Latn"]["n_images"] == 12 and by_lang["deu_Latn"]["n_images"] == 8
    assert by_lang["eng_Latn"]["top1_100"] is not None  # 12 classes >= control size 5
    # one cached embedding file per model and image set (zero-shot, caption, MVL-SIB images)
    assert len(list((project / ".cache" / "eval").glob("*.npy"))) == 3 * 3


def test_retrieval_and_clipscore_rows_use_registry_keys(project):
    retrieval = rows(project, "retrieval")
    assert sorted({r["lang"] for r in retrieval}) == ["deu_Latn", "eng_Latn", "jpn_Jpan"]  # "jp" -> ja -> jpn_Jpan
    assert all(r["n_captions"] == 6 and 0 <= r["t2i_r@1"] <= r["t2i_r@10"] == 1.0 for r in retrieval)
    clipscore = rows(project, "clipscore")
    assert all(0 <= r["clipscore"] <= 2.5 for r in clipscore)
    assert all(("ref_clipscore" in r) == (r["lang"] != "eng_Latn") for r in clipscore)


def test_mvl_sib_rows(project):
    result = rows(project, "mvl_sib")
    assert sorted({(r["mvl_task"], r["k"]) for r in result}) == [("i2s", 1), ("s2i", 3)]
    assert all(r["n"] == 8 and 0 <= r["accuracy"] <= 1 for r in result)


def test_report_outputs_and_determinism(project):
    out = project / "reports" / "eval"
    frame = pd.read_csv(out / "results.csv")
    assert set(frame["task"]) == {"zeroshot", "retrieval", "clipscore", "mvl_sib"}
    assert frame[list(ROW_KEYS)].notna().all().all()
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics) == {"models/tiny_clip/s0", "models/tiny_clip/s1", "models/tiny_clip/s2"}
    zeroshot = {k: v for k, v in metrics["models/tiny_clip/s0"].items() if k.startswith("zeroshot/babel_imagenet/")}
    assert zeroshot and all("top1" in values for values in zeroshot.values())
    pngs = sorted((out / "plots").glob("*.png"))
    assert [p.name for p in pngs] == ["correlation_by_language.png", "zeroshot_by_language.png", "zeroshot_vs_retrieval.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    correlations = pd.read_csv(out / "plots" / "correlation_by_language.csv")
    assert set(correlations["lang"]) == {"deu_Latn", "eng_Latn"} and (correlations["n_models"] == 3).all()
    before = {p.name: p.read_bytes() for p in [out / "results.csv", *pngs]}
    assert main(["eval", "report"]) == 0
    assert before == {p.name: p.read_bytes() for p in [out / "results.csv", *pngs]}


def test_missing_input_is_one_clear_error(project, capsys):
    (project / "broken.yaml").write_text("eval:\n  zeroshot:\n    labels: nowhere.parquet\n")
    assert main(["eval", "zeroshot", "--params", "broken.yaml"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nowhere.parquet is missing" in err[0]


def test_clipscore_pairs_tsv(project, capsys):
    pairs = project / "pairs.tsv"
    pairs.write_text("image\tcaption\tfoil\treferences\n"
                     "img0.jpg\ta photo number 0\ta photo number 1\tphoto 0 ||| picture 0\n"
                     "img1.jpg\ta photo number 1\ta photo number 2\tphoto 1\n")
    out = project / "scores.tsv"
    assert main(["eval", "clipscore", "--pairs", str(pairs), "--image-root", "data/eval/images/captions",
                 "--out", str(out)]) == 0
    printed = dict(line.split("\t") for line in capsys.readouterr().out.strip().splitlines())
    assert printed["model"] == "models/tiny_clip/s0" and printed["n"] == "2"
    scores = pd.read_csv(out, sep="\t")
    assert list(scores.columns[-3:]) == ["clipscore", "foil_clipscore", "ref_clipscore"]
    assert ((scores["clipscore"] >= 0) & (scores["clipscore"] <= 2.5)).all()
    assert float(printed["pairwise_accuracy"]) == float((scores["clipscore"] > scores["foil_clipscore"]).mean())


def test_clipscore_pairs_empty_cells_are_not_the_text_nan(project, capsys):
    # An empty references cell means "no references", not a reference reading "nan".
    pairs = project / "pairs_empty.tsv"
    pairs.write_text("image\tcaption\treferences\n"
                     "img0.jpg\ta photo number 0\t\n"
                     "img1.jpg\ta photo number 1\tphoto 1\n")
    out = project / "scores_empty.tsv"
    assert main(["eval", "clipscore", "--pairs", str(pairs), "--image-root", "data/eval/images/captions",
                 "--out", str(out)]) == 0
    scores = pd.read_csv(out, sep="\t")
    assert scores["ref_clipscore"].isna().tolist() == [True, False]
    printed = dict(line.split("\t") for line in capsys.readouterr().out.strip().splitlines())
    assert float(printed["ref_clipscore"]) == pytest.approx(scores["ref_clipscore"].iloc[1])
    pairs.write_text("image\tcaption\nimg0.jpg\t\n")
    assert main(["eval", "clipscore", "--pairs", str(pairs), "--image-root", "data/eval/images/captions"]) == 1
    assert "empty caption" in capsys.readouterr().err
