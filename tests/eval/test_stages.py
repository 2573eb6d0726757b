"""The eval stages end to end on a small project with the tiny real CLIP (CPU)."""

import json
import re
import struct

import pandas as pd
import pytest

from babelforge.cli import main
from babelforge.core import shards
from babelforge.core.stages import load
from babelforge.eval.documents import ROW_KEYS
from babelforge.eval.tasks import names
from tests.eval.conftest import write_babel_imagenet_tables, write_sample_project

PLOTS = ("correlation_by_model", "zeroshot_by_language", "zeroshot_vs_retrieval")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    import os

    root = write_sample_project(tmp_path_factory.mktemp("project"))
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert main(["eval_tiny_clip"]) == 0
        assert main(["eval_images"]) == 0
        write_babel_imagenet_tables(root)
        for task in (*names(), "report"):
            assert main([f"eval_{task}"]) == 0, task
        yield root
    finally:
        os.chdir(cwd)


def rows(project, task, name=None):
    return json.loads((project / "reports" / "eval" / f"{name or task}.json").read_text())["rows"]


def test_zeroshot_rows(project):
    result = rows(project, "zeroshot")
    assert len(result) == 12  # 3 models x 4 languages
    for row in result:
        assert all(key in row for key in ROW_KEYS)
        assert row["revision"].startswith("sha256:") and row["dataset_version"].startswith("sha256:")
        assert 0.0 <= row["top1"] <= row["top5"] <= 1.0
    by_lang = {r["lang"]: r for r in result if r["model"] == "models/tiny_clip/s0"}
    assert by_lang["deu_Latn"]["prompt_set"] == "translated" and by_lang["deu_Latn"]["n_templates"] == 2
    assert by_lang["fry_Latn"]["prompt_set"] == "english-fallback"
    assert by_lang["eng_Latn"]["n_images"] == 12 and by_lang["deu_Latn"]["n_images"] == 8
    assert by_lang["eng_Latn"]["top1_100"] is not None  # 12 classes >= control size 5
    # one cache folder of committed shards per model and image set (zero-shot, caption, MVL-SIB images)
    folders = [path for path in (project / ".cache" / "eval").iterdir() if path.is_dir()]
    assert len(folders) == 3 * 3
    assert all(shards.committed_files(folder) for folder in folders)


def test_a_new_language_or_prompt_set_reads_the_cached_images(project, capsys):
    """Languages and prompt sets the first run did not have: no image is encoded again."""
    cache = project / ".cache" / "eval"
    written = {path: path.stat().st_mtime_ns for path in cache.rglob("shard-*")}
    capsys.readouterr()
    assert (
        main(
            [
                "eval_zeroshot",
                "--model",
                "models/tiny_clip/s2",
                "--language",
                "fry_Latn",
                "--set",
                "eval.zeroshot.prompt_sets=[english, label]",
                "--out",
                str(project / "zeroshot_new.json"),
            ]
        )
        == 0
    )
    log = capsys.readouterr().err
    assert "image cache hits 2, misses 0, images encoded 0" in log  # one per prompt set
    assert "1 current, 0 to do" in log
    assert {path: path.stat().st_mtime_ns for path in cache.rglob("shard-*")} == written
    result = json.loads((project / "zeroshot_new.json").read_text())["rows"]
    assert [(r["lang"], r["prompt_set"]) for r in result] == [("fry_Latn", "english"), ("fry_Latn", "label")]


def test_run_records_its_typed_settings(project):
    provenance = json.loads((project / "reports" / "eval" / "zeroshot.json").read_text())["provenance"]
    assert provenance["stage"] == "eval_zeroshot" and provenance["device"] == "cpu"
    settings = provenance["params"]["eval.zeroshot"]
    assert settings["max_templates"] == 2 and settings["control_classes"] == 5
    assert settings["drop_duplicate_labels"] is False  # a default the project's params left out is recorded too
    assert provenance["params"]["eval.common"]["models"][0] == {"id": "models/tiny_clip/s0", "revision": None}


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


def test_zeroshot_flags_override_params_and_print_a_table(project, capsys):
    out = project / "reports" / "eval" / "zeroshot_de.json"
    assert (
        main(
            [
                "eval_zeroshot",
                "--model",
                "models/tiny_clip/s1",
                "--language",
                "de",
                "--language",
                "FY,jpn_Jpan",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    result = rows(project, "zeroshot", "zeroshot_de")
    assert {r["model"] for r in result} == {"models/tiny_clip/s1"}
    assert [r["lang"] for r in result] == ["deu_Latn", "fry_Latn", "jpn_Jpan"]
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split() == [
        "model",
        "lang",
        "prompt_set",
        "n_classes",
        "n_images",
        "top1",
        "chance_top1",
        "top1_norm",
        "top5",
        "balanced_accuracy",
        "top1_100",
    ]
    table = {line.split()[1]: line.split() for line in printed[2:]}
    assert set(table) == {"deu_Latn", "fry_Latn", "jpn_Jpan"}
    assert float(table["deu_Latn"][5]) == pytest.approx(result[0]["top1"], abs=5e-5)
    # the params' own results file was not touched
    assert len(rows(project, "zeroshot")) == 12


def test_caption_tasks_take_language_and_out(project, capsys):
    out = project / "clipscore_de.json"
    assert main(["eval_clipscore", "--language", "de", "--out", str(out)]) == 0
    result = json.loads(out.read_text())["rows"]
    # German only, but still scored against the English references of eval.clipscore.reference_lang
    assert {r["lang"] for r in result} == {"deu_Latn"} and all("ref_clipscore" in r for r in result)
    assert "deu_Latn" in capsys.readouterr().out
    assert main(["eval_retrieval", "--language", "swh", "--out", str(project / "x.json")]) == 1
    assert "unknown language 'swh'" in capsys.readouterr().err
    assert main(["eval_retrieval", "--language", "fy", "--out", str(project / "x.json")]) == 1
    assert "fry_Latn have no captions" in capsys.readouterr().err


def _png_size(path):
    header = path.read_bytes()[:24]
    return struct.unpack(">II", header[16:24])


def test_report_outputs_and_determinism(project):
    out = project / "reports" / "eval"
    frame = pd.read_csv(out / "results.csv")
    assert set(frame["task"]) == set(names())
    assert frame[list(ROW_KEYS)].notna().all().all()
    metrics = json.loads((project / "metrics" / "eval.json").read_text())  # paths.metrics, tracked by git
    assert set(metrics) == {"profile", "s0", "s1", "s2"}  # display names: the folders' last part
    assert metrics["profile"] == "sample"  # the profile the runs record: the tiny CLIPs are random
    zeroshot = [values for group, values in metrics["s0"].items() if group.startswith("zs_")]
    assert zeroshot and all({"top1_100", "top1_norm", "top1", "chance"} <= set(values) for values in zeroshot)
    figures = sorted(p.name for p in (out / "plots").iterdir() if p.suffix in (".png", ".svg", ".pdf"))
    assert figures == sorted(f"{name}.{fmt}" for name in PLOTS for fmt in ("png", "svg", "pdf"))
    for name in PLOTS:
        assert (out / "plots" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (out / "plots" / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"
        assert (out / "plots" / f"{name}.svg").read_text().lstrip().startswith("<?xml")
    before = {p.name: p.read_bytes() for p in (out / "plots").iterdir()}
    before["results.csv"] = (out / "results.csv").read_bytes()
    assert main(["eval_report"]) == 0
    after = {p.name: p.read_bytes() for p in (out / "plots").iterdir()}
    after["results.csv"] = (out / "results.csv").read_bytes()
    assert before == after


def test_plots_fit_a_paper_column_and_a_screen(project):
    plots = project / "reports" / "eval" / "plots"
    for name in PLOTS:
        width, height = _png_size(plots / f"{name}.png")
        # 3.4 in at 150 dpi (constrained layout: a little narrower or wider): two revisions side by side in
        # `dvc plots diff` fit a 1,280 px screen; never a long strip
        assert 400 <= width <= 600 and height <= 1.6 * width, (name, width, height)
        assert b"pHYs" in (plots / f"{name}.png").read_bytes()[:200]  # the resolution travels with the file
    # the vector copies are outputs, not `dvc plots` (shown at their point size they are tiny)
    shown = [plot.path for plot in load("eval_report").plots]
    assert not any(path.endswith(".svg") for path in shown) and any(path.endswith(".png") for path in shown)


def test_the_chance_line_lies_over_the_markers_and_models_are_told_apart(project):
    svg = (project / "reports" / "eval" / "plots" / "zeroshot_vs_retrieval.svg").read_text()
    # one legend entry per model (display names) and per caption set
    sets = re.findall(r">([\w-]+) \(model x language\)<", svg)
    assert all(f">s{seed}<" in svg for seed in range(3)) and sets, sets
    from babelforge.eval.report.figures import accuracy_by_language_figure

    frame = pd.read_csv(project / "reports" / "eval" / "results.csv")
    figure = accuracy_by_language_figure(frame[frame["task"] == "zeroshot"])
    ax = figure.axes[0]
    chance = next(line for line in ax.get_lines() if line.get_label() == "chance")
    assert all(chance.get_zorder() > points.get_zorder() for points in ax.collections if points.get_offsets().size)


def test_per_language_plot_names_fallback_prompts_for_what_they_are(project):
    svg = (project / "reports" / "eval" / "plots" / "zeroshot_by_language.svg").read_text()
    # fry_Latn and jpn_Jpan have no translated prompts: their points are English-template points
    assert "English templates (fallback: no translated templates)" in svg and "translated templates" in svg
    assert "(translated)" not in svg
    # models by their display names (the id's last part), never a file path
    assert all(f">s{seed}<" in svg for seed in range(3)) and "models/tiny_clip" not in svg
    assert ">chance<" in svg


def test_correlation_table_has_one_row_per_model_and_caption_set(project):
    correlations = pd.read_csv(project / "reports" / "eval" / "plots" / "correlation_by_model.csv")
    assert list(correlations.columns) == ["model", "dataset", "n_languages", "pearson", "spearman"]
    assert set(correlations["model"]) == {f"models/tiny_clip/s{seed}" for seed in range(3)}
    assert set(correlations["dataset"]) == {"captions"}
    assert (correlations["n_languages"] == 3).all()  # eng, deu, jpn have zero-shot and retrieval results


def test_missing_input_is_one_clear_error(project, capsys):
    (project / "broken.yaml").write_text("profile: sample\npaths:\n  labels: nowhere.parquet\n")
    assert main(["eval_zeroshot", "--params", "broken.yaml"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nowhere.parquet is missing" in err[0]


def test_clipscore_pairs_tsv(project, capsys):
    pairs = project / "pairs.tsv"
    pairs.write_text(
        "image\tcaption\tfoil\treferences\n"
        "img0.jpg\ta photo number 0\ta photo number 1\tphoto 0 ||| picture 0\n"
        "img1.jpg\ta photo number 1\ta photo number 2\tphoto 1\n"
    )
    out = project / "scores.tsv"
    assert (
        main(["eval_clipscore_pairs", str(pairs), "--image-root", "data/eval/images/captions", "--out", str(out)]) == 0
    )
    printed = dict(line.split("\t") for line in capsys.readouterr().out.strip().splitlines())
    assert printed["model"] == "models/tiny_clip/s0" and printed["n"] == "2"
    scores = pd.read_csv(out, sep="\t")
    assert list(scores.columns[-3:]) == ["clipscore", "foil_clipscore", "ref_clipscore"]
    assert ((scores["clipscore"] >= 0) & (scores["clipscore"] <= 2.5)).all()
    assert float(printed["pairwise_accuracy"]) == float((scores["clipscore"] > scores["foil_clipscore"]).mean())


def test_clipscore_pairs_empty_cells_are_not_the_text_nan(project, capsys):
    # An empty references cell means "no references", not a reference reading "nan".
    pairs = project / "pairs_empty.tsv"
    pairs.write_text("image\tcaption\treferences\nimg0.jpg\ta photo number 0\t\nimg1.jpg\ta photo number 1\tphoto 1\n")
    out = project / "scores_empty.tsv"
    assert (
        main(
            [
                "eval_clipscore_pairs",
                str(pairs),
                "--image-root",
                "data/eval/images/captions",
                "--model",
                "models/tiny_clip/s1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    scores = pd.read_csv(out, sep="\t")
    assert scores["ref_clipscore"].isna().tolist() == [True, False]
    printed = dict(line.split("\t") for line in capsys.readouterr().out.strip().splitlines())
    assert printed["model"] == "models/tiny_clip/s1"
    assert float(printed["ref_clipscore"]) == pytest.approx(scores["ref_clipscore"].iloc[1])
    pairs.write_text("image\tcaption\nimg0.jpg\t\n")
    assert main(["eval_clipscore_pairs", str(pairs), "--image-root", "data/eval/images/captions"]) == 1
    assert "empty caption" in capsys.readouterr().err
