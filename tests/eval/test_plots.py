"""The report's plots as a paper would print them, read through their Figure and Axes objects: every
language of a small run named under its position, labels of a large one that do not overlap, the
chance level of each language, accuracy axes from 0, distinct legend entries, models by name.

Set BABELFORGE_PLOT_CHECK=/some/file.png to keep the small run's plot for a look."""

import os
import shutil

import numpy as np
import pandas as pd
import pytest

from babelforge.eval.report.figures import (
    accuracy_by_language_figure,
    benchmark_vs_retrieval_figure,
    chance_level,
    correlation_heatmap_figure,
    display_names,
    plot_accuracy_by_language,
)

MODELS = ("/home/me/checkpoints/my_clip", "openai/clip-vit-base-patch32")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def _zeroshot(classes: dict[str, int], prompt_sets, seed: int = 0) -> pd.DataFrame:
    """Rows shaped like eval_zeroshot's: accuracy near chance, as a random model scores."""
    rng = np.random.default_rng(seed)
    rows = []
    for model in MODELS:
        for lang, n in classes.items():
            for prompt_set in prompt_sets(lang):
                top1 = rng.uniform(0.9, 1.05) / n
                rows.append(
                    {
                        "model": model,
                        "lang": lang,
                        "prompt_set": prompt_set,
                        "n_classes": n,
                        "top1": top1,
                        "top5": min(1.0, 5 * top1),
                    }
                )
    return pd.DataFrame(rows)


def _small_run():
    """A user's two-language run with English templates: English itself and a fallback language;
    accuracies around 0.0024, the range that once filled the whole y axis."""
    return _zeroshot(
        {"eng_Latn": 1000, "deu_Latn": 420},
        lambda lang: ["english"] if lang == "eng_Latn" else ["english-fallback"],
    )


def _large_run():
    rng = np.random.default_rng(1)
    classes = {f"l{i:02d}_Latn": int(n) for i, n in enumerate(rng.integers(10, 1000, 40))}
    return _zeroshot(classes, lambda lang: ["translated"] if lang < "l20" else ["english-fallback", "label-fallback"])


def _chance_line(ax):
    lines = [line for line in ax.get_lines() if line.get_label() == "chance"]
    assert len(lines) == 1
    return lines[0]


def _chance_at(line, position: int) -> float:
    """The chance line's height over the language at x = position: its step from position - 0.5
    to position + 0.5."""
    xs, ys = list(line.get_xdata()), list(line.get_ydata())
    for k in range(len(xs) - 1):
        if xs[k] == position - 0.5 and xs[k + 1] == position + 0.5:
            assert ys[k] == ys[k + 1]
            return float(ys[k])
    raise AssertionError(f"no chance step over position {position}")


def _legend_texts(fig) -> list[str]:
    return [text.get_text() for legend in fig.legends for text in legend.get_texts()]


def _visible_tick_labels(ax):
    return [label for label in ax.get_xticklabels() if label.get_visible() and label.get_text()]


def _check_chance_and_range(ax, frame, metric, langs):
    line = _chance_line(ax)
    n_by_lang = frame.groupby("lang")["n_classes"].max()
    for position, lang in enumerate(langs):
        assert _chance_at(line, position) == pytest.approx(chance_level(n_by_lang[lang], metric))
    low, high = ax.get_ylim()
    assert low == 0.0
    highest = max(frame[metric].max(), max(chance_level(n, metric) for n in n_by_lang))
    assert high >= highest * 1.1 * (1 - 1e-9)


def test_small_run_names_every_language_and_draws_chance():
    frame = _small_run()
    fig = accuracy_by_language_figure(frame, None)
    ax = fig.axes[0]
    fig.canvas.draw()
    # every language named under its position, fewest classes first
    assert [label.get_text() for label in _visible_tick_labels(ax)] == ["deu_Latn", "eng_Latn"]
    assert list(ax.get_xticks()) == [0, 1]
    _check_chance_and_range(ax, frame, "top1", ["deu_Latn", "eng_Latn"])
    assert ax.get_ylim()[1] < 0.01  # a random model's scale, from 0: chance and points both visible
    texts = _legend_texts(fig)
    assert len(texts) == len(set(texts))
    assert texts == [
        "my_clip",
        "clip-vit-base-patch32",
        "English templates, English labels",
        "English templates (fallback: no translated templates)",
        "chance",
    ]
    assert not any("/" in text for text in texts)  # no file path, no Hub organisation


@pytest.mark.slow
def test_small_run_plot_is_written_for_print(tmp_path):
    written = plot_accuracy_by_language(_small_run(), None, tmp_path / "small")
    assert [path.suffix for path in written] == [".png", ".svg", ".pdf"]
    keep = os.environ.get("BABELFORGE_PLOT_CHECK")
    if keep:
        shutil.copyfile(tmp_path / "small.png", keep)


def test_top5_chance_is_five_over_classes_at_most_one():
    assert chance_level(1000, "top5") == pytest.approx(0.005)
    assert chance_level(4, "top5") == 1.0
    assert chance_level(420) == pytest.approx(1 / 420) == chance_level(420, "balanced_accuracy")
    assert np.isnan(chance_level(100, "top1_100"))  # its control size is not in the rows
    frame = _zeroshot({"eng_Latn": 4, "deu_Latn": 400}, lambda lang: ["translated"])
    fig = accuracy_by_language_figure(frame, None, metric="top5")
    ax = fig.axes[0]
    assert ax.get_ylabel() == "top-5 accuracy"
    _check_chance_and_range(ax, frame, "top5", ["eng_Latn", "deu_Latn"])
    assert ax.get_ylim()[1] == pytest.approx(1.1)  # four classes: top-5 is certain


def test_class_counts_of_the_built_table_order_and_the_rows_set_chance():
    frame = _small_run()
    # the built table counts more classes for German than the run scored (duplicates dropped)
    languages = pd.DataFrame({"lang": ["eng_Latn", "deu_Latn"], "n_classes": [1000, 1000]})
    ax = accuracy_by_language_figure(frame, languages).axes[0]
    assert [label.get_text() for label in ax.get_xticklabels()] == ["deu_Latn", "eng_Latn"]  # tie: by key
    assert _chance_at(_chance_line(ax), 0) == pytest.approx(1 / 420)


@pytest.mark.slow
def test_many_languages_get_labels_that_do_not_overlap():
    frame = _large_run()
    fig = accuracy_by_language_figure(frame, None)
    ax = fig.axes[0]
    fig.canvas.draw()
    order = frame.groupby("lang")["n_classes"].max().reset_index().sort_values(["n_classes", "lang"], kind="stable")
    langs = list(order["lang"])
    labels = _visible_tick_labels(ax)
    assert 10 <= len(labels) < len(langs)  # thinned, still a good share named
    positions = [int(x) for x in ax.get_xticks()]
    assert [label.get_text() for label in labels] == [langs[p] for p in positions]  # each under its own language
    boxes = sorted((label.get_window_extent() for label in labels), key=lambda box: box.x0)
    assert all(left.x1 <= right.x0 for left, right in zip(boxes, boxes[1:]))
    ticks = {*ax.xaxis.get_majorticklocs(), *ax.xaxis.get_minorticklocs()}
    assert ticks == set(range(len(langs)))  # every language keeps a tick, the unnamed ones a short one
    _check_chance_and_range(ax, frame, "top1", langs)
    texts = _legend_texts(fig)
    assert len(texts) == len(set(texts)) and "chance" in texts
    assert {"translated templates", "label only (fallback: no translated templates)"} <= set(texts)
    shown = [text for text in ax.texts if text.get_visible() and (text.get_gid() or "").startswith("group-")]
    boxes = sorted((text.get_window_extent() for text in shown), key=lambda box: box.x0)
    assert shown and all(left.x1 <= right.x0 for left, right in zip(boxes, boxes[1:]))


def test_display_names_never_show_a_path():
    names = display_names(
        ["/home/me/runs/a/final", "/home/me/runs/b/final", "openai/clip-vit-base-patch32", "models/tiny_clip/s0/"],
        {"openai/clip-vit-base-patch32": "CLIP B/32"},
    )
    assert names == {
        "/home/me/runs/a/final": "a/final",  # last parts collide: as many parts as tell them apart
        "/home/me/runs/b/final": "b/final",
        "openai/clip-vit-base-patch32": "CLIP B/32",  # params eval.report.display_names
        "models/tiny_clip/s0/": "s0",
    }
    assert display_names(["google/siglip-base-patch16-256-multilingual"]) == {
        "google/siglip-base-patch16-256-multilingual": "siglip-base-patch16-256-multilingual"
    }


def test_scatter_and_heatmap_start_at_zero_and_name_models():
    pairs = pd.DataFrame(
        {
            "model": [MODELS[0]] * 2 + [MODELS[1]] * 2,
            "lang": ["deu_Latn", "jpn_Jpan"] * 2,
            "dataset": ["xtd"] * 4,
            "x": [0.00236, 0.0025, 0.0024, 0.00245],
            "y": [0.01, 0.012, 0.011, 0.0105],
        }
    )
    fig = benchmark_vs_retrieval_figure(pairs, "Babel-ImageNet top-1", "retrieval mean recall")
    ax = fig.axes[0]
    assert ax.get_xlim()[0] == 0.0 and ax.get_xlim()[1] >= 0.0025 * 1.1 * (1 - 1e-9)
    assert ax.get_ylim()[0] == 0.0 and ax.get_ylim()[1] >= 0.012 * 1.1 * (1 - 1e-9)
    texts = _legend_texts(fig)
    # the two models by their display names, the caption set, the fit and its band
    assert len(texts) == len(set(texts)) == 5 and {"my_clip", "clip-vit-base-patch32", "xtd (model x language)"} <= set(
        texts
    )
    correlations = pd.DataFrame(
        {"model": list(MODELS), "dataset": ["xtd"] * 2, "n_languages": [2, 2], "pearson": [np.nan] * 2}
    )
    ax = correlation_heatmap_figure(correlations, 3, {MODELS[1]: "CLIP B/32"}).axes[0]
    assert [label.get_text() for label in ax.get_yticklabels()] == ["my_clip", "CLIP B/32"]
