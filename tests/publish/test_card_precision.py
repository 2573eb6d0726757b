"""The Babel-ImageNet card states each config's expected label precision (languages.parquet)."""

import pandas as pd

from babelforge.babel_imagenet.dataset import label_precision_texts
from babelforge.publish.card import ConfigStats, _languages_table


def test_precision_texts_from_languages_parquet(tmp_path):
    path = tmp_path / "languages.parquet"
    pd.DataFrame(
        {
            "lang": ["deu_Latn", "ind_Latn"],
            "label_precision": [0.9412, 0.7742],
            "label_precision_low": [0.9001, 0.6488],
            "label_precision_high": [0.9677, 0.8797],
            "label_precision_basis": ["estimated", "measured"],
            "n_judged": [0, 40],
            "expected_wrong": [25.0, 74.5],
            "estimated_precision": [0.9412, 0.7294],
            "measured_sources": ["", "wikt 10/11 [64.7-99.0]"],
        }
    ).to_parquet(path)
    assert label_precision_texts(path) == {
        "deu_Latn": "94.1 % [90.0-96.8] estimated",
        "ind_Latn": "77.4 % [64.9-88.0] measured (40 reviewed)",
    }
    pd.DataFrame({"lang": ["deu_Latn"], "n_classes": [10]}).to_parquet(path)  # a build before the figure
    assert label_precision_texts(path) == {}


def test_languages_table_shows_precision_only_where_stated():
    stated = [ConfigStats("ind_Latn", 330, "id", precision="77.4 % [64.9-88.0] measured (40 reviewed)")]
    assert "| expected precision |" in _languages_table(stated)[0]
    assert "77.4 % [64.9-88.0] measured (40 reviewed)" in _languages_table(stated)[2]
    assert "expected precision" not in _languages_table([ConfigStats("ind_Latn", 330, "id")])[0]
