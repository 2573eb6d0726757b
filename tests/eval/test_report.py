"""Headline metrics for `dvc metrics show`."""
import pandas as pd

from eval.report import summary_metrics


def test_summary_metrics_counts_a_language_once_per_prompt_set():
    frame = pd.DataFrame([
        {"model": "m", "task": "zeroshot", "dataset": "babel_imagenet", "lang": "deu_Latn", "prompt_set": "nllb", "top1": 0.5},
        {"model": "m", "task": "zeroshot", "dataset": "babel_imagenet", "lang": "bre_Latn", "prompt_set": "english", "top1": 0.1},
        {"model": "m", "task": "zeroshot", "dataset": "babel_imagenet", "lang": "bre_Latn", "prompt_set": "label_only", "top1": 0.3},
        {"model": "m", "task": "retrieval", "dataset": "xtd", "lang": "deu_Latn", "prompt_set": None, "mean_recall": 0.2},
    ])
    metrics = summary_metrics(frame)["m"]
    assert metrics["zeroshot/babel_imagenet/nllb"] == {"top1": 0.5, "n_languages": 1}
    assert metrics["zeroshot/babel_imagenet/english"]["top1"] == 0.1
    assert metrics["zeroshot/babel_imagenet/label_only"]["top1"] == 0.3
    assert metrics["retrieval/xtd"] == {"mean_recall": 0.2, "n_languages": 1}
