"""p_correct against judged labels: German, Spanish and French labels of the sample build judged
for issue 37 (judged_labels.tsv, test data), binned by p_correct (docs/datasets/label-precision.md)."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

from babelforge.babel_imagenet.precision import brier_score, calibration_table
from tests.babel_imagenet.conftest import copy_chain, run_labels

JUDGED = Path(__file__).with_name("judged_labels.tsv")


def judged_labels() -> pd.DataFrame:
    lines = [line for line in JUDGED.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    return pd.DataFrame(list(csv.DictReader(lines, delimiter="\t"))).astype({"right": int})


def test_p_correct_is_calibrated_on_judged_labels(sample_chain, tmp_path):
    chain = copy_chain(sample_chain, tmp_path / "chain")
    # no precision floor: the judged set holds labels under the sample profile's floor too
    assert run_labels(chain / "params.yaml", chain, chain / "out", "labels.precision_floor.default=0") == 0
    labels = pd.read_parquet(chain / "out" / "labels.parquet", columns=["lang", "wnid", "label", "p_correct"])
    judged = judged_labels()
    matched = judged.merge(labels, on=["lang", "wnid", "label"])
    # the judgements are of these labels: a rules change that moves many of them needs a new judged set
    assert len(matched) >= 0.9 * len(judged), f"only {len(matched)} of {len(judged)} judged labels are still chosen"
    pairs = [(float(p), bool(right)) for p, right in zip(matched["p_correct"], matched["right"])]
    table = calibration_table(pairs)
    predicted = sum(p for p, _ in pairs) / len(pairs)
    observed = sum(right for _, right in pairs) / len(pairs)
    assert abs(predicted - observed) < 0.05  # the expected share right is the share judged right
    assert table[0][4] < table[-1][4]  # the least likely labels are wrong more often than the most likely
    for _low, _high, n, mean_p, share in table:
        if n >= 20:  # a bin with enough labels is within 0.1 of its prediction
            assert abs(mean_p - share) < 0.1, table
    # p_correct tells right from wrong labels better than one share for all
    assert brier_score(pairs) < brier_score([(observed, right) for _, right in pairs])
