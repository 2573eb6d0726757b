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


def test_a_languages_texts_cut_by_the_text_encoder_are_counted_once_per_language(digit_images):
    """Both tasks of a language read its sentences: a long one is encoded, and counted, once; every
    row of the language carries the count, and the run JSON's `text_truncation` counts it once."""
    from babelforge.eval.documents import run_document
    from babelforge.eval.mvl_sib.rows import mvl_sib_rows
    from tests.eval.conftest import CountingEncoder

    class NoCache:
        def embeddings(self, model, image_set, *_):
            return model.encode_images([image_set.root / name for name in image_set.files])

    long = "s 1 " + "word " * 5
    options = {"aaa_Latn": [["s 0", long, "s 2", "s 3"]], "bbb_Latn": [["s 0", "s 1", "s 2", "s 3"]]}
    tables = {}
    for lang, sentences in options.items():
        base = {"topic": ["topic 1"], "option_topics": [["topic 0", "topic 1", "topic 2", "topic 3"]], "label": [1]}
        tables[("i2s_k1", lang)] = pd.DataFrame({**base, "ref_image_ids": [["1"]], "option_sentences": sentences})
        tables[("t2s_k1", lang)] = pd.DataFrame({**base, "option_sentences": sentences})
    model = CountingEncoder(max_words=4)
    rows = mvl_sib_rows(model, tables, digit_images, NoCache())
    assert {(row["mvl_task"], row["lang"]): row["texts_truncated"] for row in rows} == {
        ("i2s", "aaa_Latn"): 1,
        ("t2s", "aaa_Latn"): 1,
        ("i2s", "bbb_Latn"): 0,
        ("t2s", "bbb_Latn"): 0,
    }
    assert model.truncated_texts == 1  # encoded once for both tasks
    document = run_document("mvl_sib", rows, {})
    assert document["text_truncation"] == {"fake": {"texts_truncated": 1, "by_language": {"mvl_sib": {"aaa_Latn": 1}}}}


def test_languages_are_done_one_at_a_time_and_rows_keep_the_config_then_language_order(digit_images, tmp_path):
    """At full size (205 languages) holding every language's tables and text vectors took 5.5 GB: the
    tables are read when looked up, all of a language's before the next language's, and the rows still
    come in (config, lang) order, as the results file has them."""
    from babelforge.eval.mvl_sib.mvl_sib_stage import TablesOnDemand
    from babelforge.eval.mvl_sib.rows import mvl_sib_rows
    from tests.eval.conftest import CountingEncoder

    class NoCache:
        def embeddings(self, model, image_set, *_):
            return model.encode_images([image_set.root / name for name in image_set.files])

    looked_up = []

    class RecordingTables(TablesOnDemand):
        def __getitem__(self, key):
            looked_up.append(key)
            return super().__getitem__(key)

    tables = RecordingTables()
    for lang in ("bbb_Latn", "aaa_Latn", "ccc_Latn"):
        for config in ("t2s_k1", "i2s_k1"):
            base = {"topic": ["topic 1"], "option_topics": [["topic 0", "topic 1", "topic 2", "topic 3"]], "label": [1]}
            frame = pd.DataFrame({**base, "ref_image_ids": [["1"]], "option_sentences": [["s 0", "s 1", "s 2", "s 3"]]})
            path = tmp_path / config / f"{lang}.parquet"
            path.parent.mkdir(exist_ok=True)
            frame.to_parquet(path)
            tables[(config, lang)] = path
    rows = mvl_sib_rows(CountingEncoder(max_words=4), tables, digit_images, NoCache())

    assert looked_up == [
        ("i2s_k1", "aaa_Latn"), ("t2s_k1", "aaa_Latn"),
        ("i2s_k1", "bbb_Latn"), ("t2s_k1", "bbb_Latn"),
        ("i2s_k1", "ccc_Latn"), ("t2s_k1", "ccc_Latn"),
    ]  # fmt: skip
    assert [(row["mvl_task"], row["lang"]) for row in rows] == [
        ("i2s", "aaa_Latn"), ("i2s", "bbb_Latn"), ("i2s", "ccc_Latn"),
        ("t2s", "aaa_Latn"), ("t2s", "bbb_Latn"), ("t2s", "ccc_Latn"),
    ]  # fmt: skip
    assert [row["accuracy"] for row in rows] == [1.0] * 6
