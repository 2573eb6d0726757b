"""Headline metrics for `dvc metrics show`."""

import pandas as pd
import pytest

from babelforge.eval.report.merge import summary_metrics


def test_summary_metrics_counts_a_language_once_per_prompt_set():
    frame = pd.DataFrame(
        [
            {
                "model": "m",
                "task": "zeroshot",
                "dataset": "babel_imagenet",
                "lang": "deu_Latn",
                "prompt_set": "nllb",
                "top1": 0.5,
            },
            {
                "model": "m",
                "task": "zeroshot",
                "dataset": "babel_imagenet",
                "lang": "bre_Latn",
                "prompt_set": "english",
                "top1": 0.1,
            },
            {
                "model": "m",
                "task": "zeroshot",
                "dataset": "babel_imagenet",
                "lang": "bre_Latn",
                "prompt_set": "label_only",
                "top1": 0.3,
            },
            {
                "model": "m",
                "task": "retrieval",
                "dataset": "xtd",
                "lang": "deu_Latn",
                "prompt_set": None,
                "mean_recall": 0.2,
            },
        ]
    )
    metrics = summary_metrics(frame)["m"]
    assert metrics["zeroshot/babel_imagenet/nllb"] == {"top1": 0.5, "n_languages": 1}
    assert metrics["zeroshot/babel_imagenet/english"]["top1"] == 0.1
    assert metrics["zeroshot/babel_imagenet/label_only"]["top1"] == 0.3
    assert metrics["retrieval/xtd"] == {"mean_recall": 0.2, "n_languages": 1}


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
