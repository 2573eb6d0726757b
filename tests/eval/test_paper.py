"""`babelforge eval_paper`: the papers' tables as shipped (resources/papers/), a run beside them, the
suite's plan offline, and the command end to end."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from babelforge.cli import main
from babelforge.core.io import write_json
from babelforge.core.languages import registry
from babelforge.core.provenance import provenance
from babelforge.eval.documents import run_document
from babelforge.eval.families import parse_spec
from babelforge.eval.paper.compare import compare, group_averages, match_models, parse_aliases, setup_differences
from babelforge.eval.paper.plan import hub_cached, plan
from babelforge.eval.paper.tables import (
    GROUP_COLUMNS,
    group_table,
    paper_scores,
    read_models,
    read_tsv,
    table_averages,
)


def resolve(code):
    return registry().resolve(code).key


@pytest.fixture(scope="module")
def zeroshot():
    return paper_scores("babel-imagenet", "zeroshot", resolve)


def test_table2_is_the_mean_of_tables_8_9_over_each_group_but_one_cell(zeroshot):
    """Recomputed from the per-language numbers (exact decimals), Table 2 agrees within the rounding of
    two-decimal inputs and output (0.01) in 59 of its 60 cells; NLLB-SigLIP-base's `high` does not
    (29.32 from Tables 8-9, 29.37 printed): resources/papers/README.md."""
    scores, _ = zeroshot
    names = {model.short: model.table2_name for model in read_models("babel-imagenet")}
    rows = read_tsv("babel_imagenet_t8_t9_zsic_accuracy.tsv")
    off = {}
    for short, name in names.items():
        for column, group in GROUP_COLUMNS.items():
            values = [Decimal(row[short]) for row in rows if row["group_paper"] == group]
            mean = sum(values) / len(values)
            printed = Decimal(str(group_table()[name][column]))
            if abs(mean - printed) > Decimal("0.01"):
                off[(name, column)] = (round(float(mean), 2), float(printed))
    assert off == {("NLLB-SigLIP-base", "high"): (29.32, 29.37)}
    assert {s["group"] for s in scores} == set(GROUP_COLUMNS.values())
    counts = {g: sum(1 for row in rows if row["group_paper"] == g) for g in GROUP_COLUMNS.values()}
    assert counts == {"very-low": 17, "low": 32, "mid": 35, "high": 16, "en": 1}


def test_retrieval_averages_leave_english_out_except_xm3600():
    scores, _ = paper_scores("babel-imagenet", "retrieval", resolve)
    for (dataset, short), printed in table_averages().items():
        values = [s["value"] for s in scores if s["dataset"] == dataset and s["paper_model"] == short]
        without_english = [
            s["value"] for s in scores if s["dataset"] == dataset and s["paper_model"] == short and s["code"] != "en"
        ]
        mean = sum(values if dataset == "xm3600" else without_english) / len(
            values if dataset == "xm3600" else without_english
        )
        assert abs(mean - printed) <= 0.01, (dataset, short, mean, printed)


def test_every_language_code_resolves_through_the_registry_or_is_reported(zeroshot):
    scores, unmapped = zeroshot
    assert unmapped == [] and all(s["lang"] for s in scores)
    assert len({s["lang"] for s in scores}) == 101  # 100 languages and English
    by_code = {s["code"]: s["lang"] for s in scores}
    assert by_code["de"] == "deu_Latn" and by_code["wuu"] == "wuu_Hans" and by_code["en"] == "eng_Latn"
    retrieval, unmapped = paper_scores("babel-imagenet", "retrieval", resolve)
    assert unmapped == [] and all(s["lang"] for s in retrieval)
    by_code = {s["code"]: s["lang"] for s in retrieval if s["dataset"] == "xm3600"}
    assert len(by_code) == 36  # every XM3600 language, Filipino and Cusco Quechua with their own registry rows
    assert (by_code["fil"], by_code["quz"], by_code["no"]) == ("fil_Latn", "quz_Latn", "nob_Latn")
    assert {s["lang"] for s in retrieval if s["code"] == "jp"} == {"jpn_Jpan"}  # XTD's and xFlickrCO's `jp`


def test_the_models_table_covers_every_paper_model_and_its_specs_parse():
    babel = read_models("babel-imagenet")
    header = read_tsv("babel_imagenet_t8_t9_zsic_accuracy.tsv")[0]
    shorts = [c for c in header if c not in ("lang", "num_classes", "group_paper")]
    assert sorted(m.short for m in babel) == sorted(shorts)
    table2 = group_table()
    assert sorted(m.table2_name for m in babel) == sorted(table2)
    assert all(table2[m.table2_name]["params"] == m.params for m in babel)
    mclipscore = read_models("mclipscore")
    assert sorted(m.short for m in mclipscore) == sorted(r["model"] for r in read_tsv("mclipscore_t1_models.tsv"))
    for model in babel + mclipscore:
        ref = parse_spec(model.spec, model.revision or None)
        assert ref.family == model.family and model.hub_repos, model.short
        assert bool(ref.revision) == bool(model.revision), model.short
        if not model.revision and model.loads:
            assert "needs its revision pinned" in model.reason, model.short
    refused = {m.short: m.reason for m in babel + mclipscore if not m.loads}
    assert not refused, refused  # every paper model has a family that loads it
    legacy = next(m for m in babel if m.short == "MC mB B-32")  # M-CLIP's legacy format: BERT + head pickle
    assert legacy.family == "mclip_legacy" and "legacy_multilingual_clip" in legacy.reason
    names = {m.short: parse_spec(m.spec, m.revision or None).name for m in babel}
    assert names["OAI B-32"] == "openai/clip-vit-base-patch32"  # a transformers model: its bare id, as rows name it
    assert names["OC B-32"] == "open_clip:xlm-roberta-base-ViT-B-32"


def zeroshot_row(model, lang, top1, n_classes, prompt_set="translated"):
    return {
        "model": model,
        "revision": "r1",
        "dataset": "babel_imagenet",
        "dataset_version": "sha256:0",
        "lang": lang,
        "prompt_set": prompt_set,
        "seed": 0,
        "n_templates": 2,
        "n_classes": n_classes,
        "n_images": 50 * n_classes,
        "top1": top1,
        "texts_truncated": 0,
    }


OC = "open_clip:xlm-roberta-base-ViT-B-32"
TINY = "models/tiny_clip/s0"


def fabricated_run(path, profile="sample"):
    """A zero-shot run document written with the eval stages' own writers: OpenCLIP XLM-R B-32 (named
    by its spec) on German, Afrikaans, Amharic, English and Abkhazian (no paper number), a tiny CLIP."""
    rows = [
        zeroshot_row(OC, "deu_Latn", 0.5, 738),  # paper 47.58, the paper's class count
        zeroshot_row(OC, "afr_Latn", 0.3, 250),  # paper 36.48 over 303 classes
        zeroshot_row(OC, "amh_Ethi", 0.02, 85),  # paper 1.04
        zeroshot_row(OC, "eng_Latn", 0.6, 1000),  # paper 62.32
        zeroshot_row(OC, "abk_Cyrl", 0.1, 30),  # not in the paper
        zeroshot_row(TINY, "deu_Latn", 0.001, 738),
        zeroshot_row(TINY, "amh_Ethi", 0.011, 85, "english-fallback"),
    ]
    params = {"profile": profile, "eval.zeroshot": {"images": "data/eval/images/imagenet"}}
    record = provenance("eval_zeroshot", params=params, models={OC: "laion5b_s13b_b90k", TINY: "sha256:1"})
    return write_json(run_document("zeroshot", rows, record), path)


def test_compare_pairs_by_spec_and_by_alias_and_averages_groups_over_shared_languages(tmp_path, zeroshot):
    scores, _ = zeroshot
    document = json.loads(fabricated_run(tmp_path / "zeroshot.json").read_text())
    rows = [{"task": document["task"], **row} for row in document["rows"]]
    models = read_models("babel-imagenet")
    aliases = parse_aliases(["NS-base=models/tiny_clip/s0"])
    assert match_models(models, {OC, TINY}, aliases) == [(TINY, "NS-base", "--as"), (OC, "OC B-32", "spec")]
    found = compare(rows, scores, models, "zeroshot", aliases)
    by = {(r["model"], r["lang"]): r for r in found}
    assert set(by) == {(OC, "deu_Latn"), (OC, "afr_Latn"), (OC, "amh_Ethi"), (OC, "eng_Latn")} | {
        (TINY, "deu_Latn"),
        (TINY, "amh_Ethi"),
    }
    german = by[(OC, "deu_Latn")]
    assert german["ours"] == 50.0 and german["paper"] == 47.58 and german["diff"] == pytest.approx(2.42)
    assert german["matched_by"] == "spec" and german["group"] == "high" and german["paper_classes"] == 738
    assert by[(TINY, "amh_Ethi")]["paper"] == 50.12 and by[(TINY, "amh_Ethi")]["prompt_set"] == "english-fallback"

    groups = {
        (g["model"], g["prompt_set"], g["group"]): g for g in group_averages(found, scores, models, group_table())
    }
    low = groups[(OC, "translated", "low")]  # Afrikaans only: the one low-resource language both have
    assert low["n_languages"] == 1 and low["paper_languages"] == 32
    assert low["ours"] == 30.0 and low["paper"] == 36.48 and low["table2"] == 18.29
    assert groups[(OC, "translated", "mid")]["n_languages"] == 0 and groups[(OC, "translated", "mid")]["ours"] is None

    lines = setup_differences(
        rows, found, "zeroshot", "sample", document["provenance"]["params"]["eval.zeroshot"], aliases
    )
    text = "\n".join(lines)
    assert text.startswith("NOT COMPARABLE: a sample-profile run")
    assert "our models/tiny_clip/s0 is put beside the paper's NS-base (--as)" in text
    # German and Amharic have the paper's class count (twice: two models), Afrikaans fewer
    assert "of 4 languages, 3 have the paper's class count, 1 fewer, 0 more" in text
    assert "english-fallback (1 rows)" in text and "translated (6 rows)" in text
    assert "drawn stand-ins, not ImageNet" in text
    full = "\n".join(setup_differences(rows, found, "zeroshot", "full", {}, {}))
    assert "NOT COMPARABLE" not in full and "stand-in:" not in full and "profile: full" in full


def test_plan_is_offline_and_refuses_each_unloadable_model_in_one_line(tmp_path):
    scores, unmapped = paper_scores("babel-imagenet", "zeroshot", resolve)
    models = read_models("babel-imagenet")
    result = plan(models, scores, unmapped, "zeroshot", lambda repo, commit, name: True, ["deu_Latn", "xxx_Latn"])
    status = {entry["short"]: entry for entry in result["models"]}
    assert sorted(s for s, e in status.items() if e["ready"]) == [
        "NS-base",
        "NS-large",
        "OAI B-32",
        "OC B-32",
        "OC H-14",
    ]
    assert "needs its revision pinned" in status["AC L-14"]["line"]
    assert "needs its revision pinned" in status["MC mB B-32"]["line"]  # its legacy format loads (mclip_legacy)
    assert not any(e["line"].startswith("its format does not load") for e in status.values())
    assert all("\n" not in e["line"] for e in status.values())
    assert result["languages"] | {"paper_only": None} == {
        "paper": 101,
        "mapped": 101,
        "unmapped": [],
        "ours": 2,
        "both": 1,
        "paper_only": None,
        "ours_only": 1,
    }
    work = result["work"]
    assert work["images_per_model"] == 50_000 and work["texts_per_model"] == 38_480 * 80
    assert work["gpu_hours_per_model"] == pytest.approx((50_000 / 500 + 38_480 * 80 / 2_000) / 3600)
    assert work["gpu_hours_ready"] == pytest.approx(5 * work["gpu_hours_per_model"])

    # the real cache check: a pinned commit's file in a Hugging Face cache folder, nothing else there
    sha = "3d74acf9a28c67741b2f4f2ea7635f0aaf6f0268"
    snapshot = tmp_path / "models--openai--clip-vit-base-patch32" / "snapshots" / sha
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    cached = hub_cached(tmp_path)
    assert cached("openai/clip-vit-base-patch32", sha, "config.json")
    assert not cached("openai/clip-vit-base-patch32", "0" * 40, "config.json")
    assert cached("openai/clip-vit-base-patch32", None, None) and not cached("xlm-roberta-base", None, None)
    offline = {e["short"]: e for e in plan(models, scores, unmapped, "zeroshot", cached)["models"]}
    assert offline["OAI B-32"]["ready"]
    assert offline["OC B-32"]["line"].startswith("not in the Hugging Face cache: laion/CLIP-ViT-B-32-xlm-roberta-base")


@pytest.mark.slow  # draws and writes the plot (PNG, SVG, PDF)
def test_the_command_end_to_end_on_a_run_json(tmp_path, capsys):
    run = fabricated_run(tmp_path / "zeroshot.json")
    out = tmp_path / "paper"
    code = main(["eval_paper", "--run", str(run), "--as", "NS-base=models/tiny_clip/s0", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert printed.startswith("what differs from the paper's setup:\n- NOT COMPARABLE")
    assert "OC B-32" in printed and "--as" in printed and "very_low" in printed
    assert sorted(p.name for p in out.iterdir()) == [
        "paper_zeroshot.csv",
        "paper_zeroshot.json",
        "paper_zeroshot.pdf",
        "paper_zeroshot.png",
        "paper_zeroshot.svg",
        "paper_zeroshot_groups.csv",
    ]
    document = json.loads((out / "paper_zeroshot.json").read_text())
    assert document["profile"] == "sample" and document["comparable"] is False
    assert document["coverage"][f"{OC} ~ OC B-32"] == {"paper": 101, "ours": 5, "both": 4}
    lines = (out / "paper_zeroshot.csv").read_text().splitlines()
    assert lines[0].startswith("model,paper_model,matched_by,dataset,lang") and len(lines) == 1 + 6

    # errors are one line on stderr: an unknown paper model, a run with nothing to pair
    assert main(["eval_paper", "--run", str(run), "--as", "XX B-32=models/tiny_clip/s0"]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "no paper model 'XX B-32'" in error
    assert main(["eval_paper", "--run", str(run), "--task", "retrieval"]) == 1
    assert "pair one by hand with --as" in capsys.readouterr().err


def test_an_alias_that_names_the_specs_own_pair_pairs_it_once(zeroshot):
    """`--as OC B-32=<its spec's model>` says what the spec already says: one pair (matched by --as),
    so each of our rows is compared once and the group means count each language once."""
    scores, _ = zeroshot
    rows = [{"task": "zeroshot", **zeroshot_row(OC, lang, 0.5, 738)} for lang in ("deu_Latn", "afr_Latn")]
    models = read_models("babel-imagenet")
    aliases = parse_aliases([f"OC B-32={OC}"])
    assert match_models(models, {OC}, aliases) == [(OC, "OC B-32", "--as")]
    found = compare(rows, scores, models, "zeroshot", aliases)
    assert sorted((r["lang"], r["matched_by"]) for r in found) == [("afr_Latn", "--as"), ("deu_Latn", "--as")]
    groups = group_averages(found, scores, models, group_table())
    assert {(g["group"], g["n_languages"]) for g in groups if g["n_languages"]} == {("high", 1), ("low", 1)}


def test_the_setup_text_gives_the_median_of_ours_over_the_papers_class_counts(zeroshot):
    """German 369 of the paper's 738 classes (0.5), Afrikaans 250 of 303 (0.825), Amharic 85 of 85 (1):
    the median ours/paper is 0.83 (the paper's over ours would be 1.21)."""
    scores, _ = zeroshot
    rows = [
        {"task": "zeroshot", **zeroshot_row(OC, lang, 0.4, n)}
        for lang, n in (("deu_Latn", 369), ("afr_Latn", 250), ("amh_Ethi", 85))
    ]
    found = compare(rows, scores, read_models("babel-imagenet"), "zeroshot")
    text = "\n".join(setup_differences(rows, found, "zeroshot", "full", {}, {}))
    assert "of 3 languages, 1 have the paper's class count, 2 fewer, 0 more (median ours/paper 0.83)" in text


def test_retrieval_rows_are_compared_on_text_to_image_recall_at_1():
    """Our retrieval rows carry t2i_r@1 and i2t_r@1; the papers' Tables 10-12 print text-to-image R@1,
    so each row is paired with the paper's number on the same caption set and language."""
    scores, unmapped = paper_scores("babel-imagenet", "retrieval", resolve)
    assert unmapped == [] and {s["metric"] for s in scores} == {"t2i_r@1"}
    rows = [
        {"task": "retrieval", "model": OC, "dataset": dataset, "lang": "deu_Latn", "t2i_r@1": 0.6, "i2t_r@1": 0.1}
        for dataset in ("xm3600", "xtd")
    ]
    found = compare(rows, scores, read_models("babel-imagenet"), "retrieval")
    by = {r["dataset"]: r for r in found}
    assert sorted(by) == ["xm3600", "xtd"]
    assert (by["xm3600"]["ours"], by["xm3600"]["paper"]) == (60.0, 63.68)  # Table 11, OC B-32, de
    assert by["xtd"]["paper"] == 54.5 and by["xtd"]["diff"] == pytest.approx(5.5)  # Table 12
    assert all(r["metric"] == "t2i_r@1" for r in found)


def test_the_plan_counts_the_hours_of_every_paper_model_ready_or_not():
    scores, unmapped = paper_scores("babel-imagenet", "zeroshot", resolve)
    models = read_models("babel-imagenet")
    nothing_cached = plan(models, scores, unmapped, "zeroshot", lambda repo, commit, name: False)
    work = nothing_cached["work"]
    assert len(models) == 12 and not any(e["ready"] for e in nothing_cached["models"])
    assert work["gpu_hours_ready"] == 0
    assert work["gpu_hours_all"] == pytest.approx(12 * work["gpu_hours_per_model"])


def retrieval_row(dataset, lang, t2i):
    """A retrieval result row as eval/retrieval/rows.py writes one (its prompt set is `captions`)."""
    row = {"model": OC, "revision": "r1", "dataset": dataset, "dataset_version": "sha256:0", "lang": lang}
    return row | {"prompt_set": "captions", "seed": 0, "t2i_r@1": t2i, "i2t_r@1": t2i / 2, "texts_truncated": 0}


def test_the_printed_retrieval_table_names_each_rows_caption_set_and_the_setup_is_sentences(tmp_path, capsys):
    """Issue 50: German on XTD and on xFlickrCO were two rows without the caption set that tells them
    apart, and the labels statement ended mid-sentence ("... give each language's")."""
    rows = [retrieval_row("xtd", "deu_Latn", 0.6), retrieval_row("xflickrco", "deu_Latn", 0.4)]
    record = provenance("eval_retrieval", params={"profile": "full"}, models={OC: "laion5b_s13b_b90k"})
    run = write_json(run_document("retrieval", rows, record), tmp_path / "retrieval.json")
    assert main(["eval_paper", "--run", str(run), "--task", "retrieval"]) == 0
    printed = capsys.readouterr().out
    setup, _, tables = printed.partition("\n\n")
    assert all(line.endswith(".") for line in setup.splitlines()[1:]), setup
    table = tables.split("\n\n")[-1].splitlines()
    header = table[0].split()
    assert header[:4] == ["model", "paper_model", "dataset", "lang"], table[0]
    start = table[0].index("dataset")  # a fixed-width table: the column's cells start where its name does
    german = sorted(line[start:].split()[0] for line in table[2:] if " deu_Latn " in line)
    assert german == ["xflickrco", "xtd"], table

    document = json.loads(fabricated_run(tmp_path / "zeroshot.json", profile="full").read_text())
    zeroshot_rows = [{"task": "zeroshot", **row} for row in document["rows"]]
    found = compare(
        zeroshot_rows, paper_scores("babel-imagenet", "zeroshot", resolve)[0], read_models("babel-imagenet"), "zeroshot"
    )
    lines = setup_differences(zeroshot_rows, found, "zeroshot", "full", {}, {})
    labels = next(line for line in lines if line.startswith("labels:"))
    assert labels.endswith("`n_classes` ours and `paper_classes` the paper's.") and all(
        line.endswith(".") for line in lines
    )
