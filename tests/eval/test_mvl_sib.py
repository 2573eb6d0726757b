"""MVL-SIB scoring: options against the mean of the k references, per task layout."""

import numpy as np
import pandas as pd
import pytest

from babelforge.eval.mvl_sib.metric import choose_options, evaluate_table, parse_config

E = np.eye(4, dtype=np.float32)


def test_options_are_scored_against_the_mean_of_the_references():
    # References e0 and e1: their mean points between them. Option 0 equals one reference
    # exactly (cos 0.71 with the mean); option 1 is the mean direction (cos 1): option 1 wins.
    refs = np.stack([E[0], E[1]])[None]
    options = np.stack([E[0], E[0] + E[1], E[2], E[3]])[None]
    assert choose_options(refs, options).tolist() == [1]


def _fake_texts(texts):
    """A text embeds as the basis vector of the digit it ends with."""
    return np.stack([E[int(t[-1])] for t in texts])


@pytest.mark.parametrize(
    "task, table",
    [
        ("i2s", {"ref_image_ids": [["img2"]], "option_sentences": [["s 0", "s 2", "s 1", "s 3"]]}),
        ("s2i", {"ref_sentences": [["s 3", "s 3"]], "option_image_ids": [["img0", "img1", "img2", "img3"]]}),
        ("t2s", {"option_sentences": [["s 0", "s 2", "s 1", "s 3"]]}),
        ("s2t", {"ref_sentences": [["s 1", "s 1"]], "option_topics": [["topic 0", "topic 1", "topic 2", "topic 3"]]}),
    ],
)
def test_each_task_reads_its_own_columns(task, table):
    # Every table also has `topic` and `option_topics` (as the mvl_sib stage writes them);
    # t2s takes the topic as its reference, the others must not.
    base = {"topic": ["topic 2"], "option_topics": [["topic 0", "topic 2", "topic 1", "topic 3"]]}
    label = {"i2s": 1, "s2i": 3, "t2s": 1, "s2t": 1}[task]
    frame = pd.DataFrame({**base, **table, "label": [label]})
    images = {f"img{i}": E[i] for i in range(4)}
    assert evaluate_table(frame, task, _fake_texts, images)["accuracy"] == 1.0


def test_config_names():
    assert parse_config("s2i_k3") == ("s2i", 3)
    with pytest.raises(ValueError):
        parse_config("s2i")
