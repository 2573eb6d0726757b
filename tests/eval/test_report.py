"""Headline metrics for `dvc metrics show`."""

import pandas as pd
import pytest

from babelforge.eval.report.merge import summary_metrics


def test_summary_metrics_counts_a_language_once_per_prompt_set():
    def zeroshot(lang, prompt_set, top1, n_classes):
        return {
            "model": "models/tiny_clip/s0",
            "task": "zeroshot",
            "dataset": "babel_imagenet",
            "lang": lang,
            "prompt_set": prompt_set,
            "top1": top1,
            "chance_top1": 1 / n_classes,
            "top1_norm": (top1 - 1 / n_classes) / (1 - 1 / n_classes),
            "balanced_accuracy": top1,
            "top1_100": 0.04,
        }

    frame = pd.DataFrame(
        [
            zeroshot("deu_Latn", "translated", 0.5, 425),
            zeroshot("bre_Latn", "english-fallback", 0.1, 20),
            zeroshot("bre_Latn", "label-fallback", 0.3, 20),
            {
                "model": "models/tiny_clip/s0",
                "task": "retrieval",
                "dataset": "xtd",
                "lang": "deu_Latn",
                "mean_recall": 0.2,
            },
        ]
    )
    metrics = summary_metrics(frame)["s0"]  # the display name, never the path
    assert metrics["zs_tr"]["top1"] == 0.5 and metrics["zs_tr"]["chance"] == round(1 / 425, 6)
    assert metrics["zs_en_fb"]["top1"] == 0.1 and metrics["zs_lbl_fb"]["top1"] == 0.3
    assert metrics["zs_en_fb"]["top1_norm"] == round((0.1 - 0.05) / 0.95, 6)
    assert "balanced_accuracy" not in metrics["zs_tr"]  # equals top1 with as many images per class
    assert metrics["ret_xtd"] == {"recall": 0.2, "langs": 1}
    assert summary_metrics(frame, {"models/tiny_clip/s0": "tiny"}).keys() == {"tiny"}


def test_chance_and_normalised_accuracy():
    from babelforge.eval.zeroshot.metric import chance_top1, normalised_accuracy

    assert chance_top1(425) == 1 / 425 and normalised_accuracy(1 / 425, 1 / 425) == 0.0
    assert normalised_accuracy(1.0, 0.01) == 1.0 and normalised_accuracy(0.0, 0.5) == -1.0
    assert normalised_accuracy(1.0, 1.0) != normalised_accuracy(1.0, 1.0)  # one class: NaN


def _pairs(n_models=3, seed=0):
    """Zero-shot vs retrieval pairs shaped like the sample: two caption sets over different languages."""
    import numpy as np

    rng = np.random.default_rng(seed)
    sets = {
        "xtd": ["deu_Latn", "fra_Latn", "ita_Latn", "jpn_Jpan", "kor_Hang", "pol_Latn", "rus_Cyrl", "zho_Hans"],
        "xflickrco": ["deu_Latn", "ind_Latn", "jpn_Jpan", "rus_Cyrl", "tur_Latn", "zho_Hans"],
    }
    rows = []
    for m in range(n_models):
        for dataset, langs in sets.items():
            for lang in langs:
                x = rng.uniform(0.1, 0.6)
                rows.append({"model": f"m{m}", "lang": lang, "dataset": dataset, "x": x, "y": x + rng.normal(0, 0.05)})
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_correlation_is_per_model_across_languages_and_defined_in_every_cell(tmp_path):
    from babelforge.eval.report.figures import plot_correlation_heatmap
    from babelforge.eval.report.metric import per_model_correlation

    table = per_model_correlation(_pairs())
    assert len(table) == 6 and table["pearson"].notna().all()
    assert table.set_index(["model", "dataset"])["n_languages"].to_dict()[("m0", "xtd")] == 8
    assert (table["pearson"] > 0.5).all()  # y follows x in every model
    # too few shared languages: undefined, drawn as such (and said so), not a silent 0
    few = per_model_correlation(_pairs().groupby(["model", "dataset"]).head(2))
    assert few["pearson"].isna().all()
    written = plot_correlation_heatmap(table, tmp_path / "heat", min_languages=3)
    assert [p.suffix for p in written] == [".png", ".svg", ".pdf"]
    svg = (tmp_path / "heat.svg").read_text()
    assert "n/a" not in svg and "n=8" in svg and "fewer than" not in svg
    plot_correlation_heatmap(few, tmp_path / "few", min_languages=3)
    assert "fewer than 3 languages" in (tmp_path / "few.svg").read_text()


def test_prompt_sets_are_named_for_what_was_used():
    from babelforge.eval.report.figures import _prompt_style

    assert _prompt_style("translated")[2] == "translated templates"
    assert _prompt_style("english-fallback")[2] == "English templates (fallback: no translated templates)"
    assert (
        _prompt_style("label-fallback+knowledge")[2]
        == "label only (fallback: no translated templates) + WordNet definition"
    )
    assert _prompt_style("english-fallback")[1] is False and _prompt_style("translated")[1] is True
    # the same prompts, requested or as a fallback: one shape, filled or hollow
    assert _prompt_style("english")[0] == _prompt_style("english-fallback")[0]
