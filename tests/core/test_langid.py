"""The shared langid.py identifier ranks a text as langid.py itself does, bit for bit."""

import json

import numpy as np
import pandas as pd
import pytest
from langid.langid import LanguageIdentifier, model

from babelforge.core.langid import identifier

N_TEXTS = 600  # langid.py's own dense product takes milliseconds a text


@pytest.fixture(scope="module")
def texts(shared_data) -> list[str]:
    """XTD captions (seven languages, sentences) and OMW Wiktionary forms of six languages (short
    labels in five scripts), spread evenly over both."""
    xtd = json.loads((shared_data / "xtd" / "xtd.json").read_text(encoding="utf-8"))["captions"]
    captions = [text for per_image in xtd.values() for texts in per_image for text in texts]
    forms = []
    for lang in ("deu", "rus", "jpn", "arb", "ell", "hin"):
        tab = shared_data / "omw" / "wns" / "wikt" / f"wn-wikt-{lang}.tab"
        forms += pd.read_csv(tab, sep="\t", comment="#", header=None, quoting=3)[2].astype(str).tolist()
    every = list(dict.fromkeys(captions[:: max(1, len(captions) // (N_TEXTS // 2))]))
    return every + list(dict.fromkeys(forms[:: max(1, len(forms) // (N_TEXTS // 2))]))


def test_scores_equal_langids_dense_product_bit_for_bit(texts):
    ours = identifier()
    for text in texts:
        fv = ours.instance2fv(text)
        assert np.array_equal(ours.nb_classprobs(fv), LanguageIdentifier.nb_classprobs(ours, fv)), text


def test_rank_is_langids_ranking(texts):
    plain = LanguageIdentifier.from_modelstring(model, norm_probs=True)
    ours = identifier()
    assert len(texts) > N_TEXTS * 0.9
    for text in texts[::6]:
        assert ours.rank(text) == plain.rank(text), text
