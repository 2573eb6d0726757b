"""The shared langid.py identifier ranks a text as langid.py itself does, bit for bit, whether its
model comes from langid.py's model string or from the cache of the decoded arrays."""

import base64
import bz2
import json
import pickle

import numpy as np
import pandas as pd
import pytest
from langid.langid import LanguageIdentifier, model

from babelforge.core.langid import build_identifier, decoded_model, identifier

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


def test_the_cached_model_is_langids_own_and_a_bad_cache_is_passed_over(tmp_path, texts):
    own = pickle.loads(bz2.decompress(base64.b64decode(model)))
    cache = tmp_path / "cache"
    assert decoded_model(model, cache) == own  # decoded, and written
    (written,) = cache.glob("model-*.npz")
    assert decoded_model(model, cache) == own  # read back: the same arrays, types and dict
    assert [type(part) for part in decoded_model(model, cache)] == [type(part) for part in own]
    cached = build_identifier(cache)
    assert all(cached.rank(text) == identifier().rank(text) for text in texts[::20])
    written.write_bytes(written.read_bytes()[:1000])  # a damaged file: decoded again and rewritten
    assert decoded_model(model, cache) == own and written.stat().st_size > 1000
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would go")
    assert decoded_model(model, blocked) == own  # nothing cached, nothing raised
