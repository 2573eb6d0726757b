from __future__ import annotations

import numpy as np
import pytest

from babelforge.core.errors import BabelforgeError
from babelforge.mvl_sib.assemble import (
    SamplingConfig,
    balanced_labels,
    id_positions,
    place_options,
    plan_tasks,
    prompt_text,
    sample_instances,
    task_table,
)

TASK_KS = {"i2s": [1, 3, 5], "s2i": [1, 3, 5], "t2s": [1], "s2t": [1, 3, 5]}


def _image_topic(images_by_topic):
    return {image: topic for topic, images in images_by_topic.items() for image in images}


def test_counts_per_instance(instances, corpus):
    assert len(instances) == 3 * len(corpus) == 3012
    assert instances.positive_images.shape == (3012, 5)
    assert instances.positive_sentences.shape == (3012, 4)
    assert instances.negative_images.shape == instances.negative_sentences.shape == (3012, 3)
    assert list(instances.replicate[:6]) == [0, 1, 2, 0, 1, 2]
    assert list(instances.sentence_id[::3]) == list(corpus.ids)


def test_positive_topics_equal_and_negatives_differ(instances, corpus, images_by_topic):
    image_topic = _image_topic(images_by_topic)
    sentence_topic = dict(zip(corpus.ids, corpus.topics))
    sentence_split = dict(zip(corpus.ids, corpus.splits))
    for i in range(len(instances)):
        topic = instances.topic[i]
        assert sentence_topic[instances.sentence_id[i]] == topic
        assert {image_topic[x] for x in instances.positive_images[i]} == {topic}
        assert {sentence_topic[x] for x in instances.positive_sentences[i]} == {topic}
        negative_topics = list(instances.negative_topics[i])
        assert topic not in negative_topics and len(set(negative_topics)) == 3  # 3 distinct other topics
        assert [image_topic[x] for x in instances.negative_images[i]] == negative_topics
        assert [sentence_topic[x] for x in instances.negative_sentences[i]] == negative_topics
        # default pool: co-sentences come from the sentence's own split
        cosentences = [*instances.positive_sentences[i], *instances.negative_sentences[i]]
        assert {sentence_split[x] for x in cosentences} == {instances.split[i]}


def test_no_duplicate_within_an_instance(instances):
    for i in range(len(instances)):
        sentences = [instances.sentence_id[i], *instances.positive_sentences[i], *instances.negative_sentences[i]]
        images = [*instances.positive_images[i], *instances.negative_images[i]]
        assert len(set(sentences)) == 8
        assert len(set(images)) == 8


def test_seed_stable_and_seed_sensitive(corpus, images_by_topic, instances):
    again = sample_instances(corpus.ids, corpus.splits, corpus.topics, images_by_topic, SamplingConfig(seed=7))
    for field in ("positive_images", "positive_sentences", "negative_topics", "negative_images", "negative_sentences"):
        assert np.array_equal(getattr(again, field), getattr(instances, field))
    other = sample_instances(corpus.ids, corpus.splits, corpus.topics, images_by_topic, SamplingConfig(seed=8))
    assert not np.array_equal(other.positive_sentences, instances.positive_sentences)


def test_draw_of_a_sentence_does_not_depend_on_the_others(corpus, images_by_topic, instances):
    # Reversed corpus order: each sentence still gets the same instances.
    reversed_instances = sample_instances(
        corpus.ids[::-1], corpus.splits[::-1], corpus.topics[::-1], images_by_topic, SamplingConfig(seed=7)
    )
    forward = {(s, r): i for i, (s, r) in enumerate(zip(instances.sentence_id, instances.replicate))}
    for j, key in enumerate(zip(reversed_instances.sentence_id, reversed_instances.replicate)):
        i = forward[key]
        assert list(reversed_instances.positive_images[j]) == list(instances.positive_images[i])
        assert list(reversed_instances.negative_sentences[j]) == list(instances.negative_sentences[i])


def test_sentence_pool_all_mixes_splits(corpus, images_by_topic):
    pooled = sample_instances(
        corpus.ids, corpus.splits, corpus.topics, images_by_topic, SamplingConfig(seed=7, sentence_pool="all")
    )
    split_of = dict(zip(corpus.ids, corpus.splits))
    mixed = sum(split_of[x] != pooled.split[i] for i in range(len(pooled)) for x in pooled.positive_sentences[i])
    assert mixed > 0


def test_too_few_images_or_bad_config_is_an_error(corpus, images_by_topic):
    short = {**images_by_topic, "health": images_by_topic["health"][:4]}
    with pytest.raises(BabelforgeError, match="'health' has 4 images"):
        sample_instances(corpus.ids, corpus.splits, corpus.topics, short, SamplingConfig())
    # a split without enough sentences of a topic cannot give positives (or negatives)
    splits = ["dev" if (t == "sports" and s == "test") else s for s, t in zip(corpus.splits, corpus.topics)]
    with pytest.raises(BabelforgeError, match="pool 'test' has 0 sentences of topic 'sports'"):
        sample_instances(corpus.ids, splits, corpus.topics, images_by_topic, SamplingConfig())
    with pytest.raises(BabelforgeError, match="n_negatives"):
        SamplingConfig(n_negatives=2)
    with pytest.raises(BabelforgeError, match="sentence_pool"):
        SamplingConfig(sentence_pool="test")


def test_balanced_labels_and_option_placement():
    labels = balanced_labels(3012, 1, "i2s")
    assert np.bincount(labels).tolist() == [753] * 4
    assert np.bincount(balanced_labels(10, 1, "i2s")).tolist() == [3, 3, 2, 2]
    assert not np.array_equal(labels, balanced_labels(3012, 1, "s2i"))
    correct = np.array(["c0", "c1", "c2", "c3"], dtype=object)
    negatives = np.array([["n", "m", "o"]] * 4, dtype=object)
    placed = place_options(correct, negatives, np.array([0, 1, 2, 3]))
    assert placed.tolist() == [
        ["c0", "n", "m", "o"],
        ["n", "c1", "m", "o"],
        ["n", "m", "c2", "o"],
        ["n", "m", "o", "c3"],
    ]


def test_task_shapes_and_correct_option(instances, images_by_topic):
    plans = {plan.name: plan for plan in plan_tasks(instances, TASK_KS, seed=7)}
    assert sorted(plans) == sorted(
        ["i2s_k1", "i2s_k3", "i2s_k5", "s2i_k1", "s2i_k3", "s2i_k5", "t2s_k1", "s2t_k1", "s2t_k3", "s2t_k5"]
    )
    image_topic = _image_topic(images_by_topic)
    rows = np.arange(len(instances))
    for _name, plan in plans.items():
        assert plan.options.shape == (3012, 4) and plan.option_topics.shape == (3012, 4)
        assert np.bincount(plan.label).tolist() == [753] * 4
        at_label = plan.options[rows, plan.label]
        topic_at_label = plan.option_topics[rows, plan.label]
        assert (topic_at_label == instances.topic).all()
        for i in range(0, 3012, 97):
            others = [t for p, t in enumerate(plan.option_topics[i]) if p != plan.label[i]]
            assert instances.topic[i] not in others and len(set(others)) == 3
        if plan.task in ("i2s", "t2s"):
            assert (at_label == instances.sentence_id).all()
        if plan.task == "s2i":
            assert all(image_topic[x] == t for x, t in zip(at_label, instances.topic))
        if plan.task == "s2t":
            assert (plan.options == plan.option_topics).all()
        if plan.task == "t2s":
            assert plan.refs is None
        else:
            assert plan.refs.shape == (3012, plan.k)
    # the k variants of a task share their labels; different tasks do not
    assert np.array_equal(plans["i2s_k1"].label, plans["i2s_k5"].label)
    assert not np.array_equal(plans["i2s_k1"].label, plans["s2i_k1"].label)
    assert (plans["s2i_k5"].refs[:, 0] == instances.sentence_id).all()


def test_k_outside_range_is_an_error(instances):
    with pytest.raises(BabelforgeError, match="i2s: k=6"):
        plan_tasks(instances, {"i2s": [6]}, seed=1)


def test_tables_identical_across_languages_except_texts(instances, corpus):
    plans = plan_tasks(instances, TASK_KS, seed=7)
    position = id_positions(corpus.ids)
    for plan in plans:
        tables = {
            lang: task_table(plan, instances, np.array(corpus.texts[lang], dtype=object), position)
            for lang in ("eng_Latn", "zho_Hans", "nqo_Nkoo")
        }
        text_columns = [c for c in tables["eng_Latn"].column_names if c.endswith("sentences")]
        id_columns = [c for c in tables["eng_Latn"].column_names if c not in text_columns]
        assert tables["eng_Latn"].num_rows == 3012
        assert tables["eng_Latn"].select(id_columns).equals(tables["zho_Hans"].select(id_columns))
        assert tables["eng_Latn"].select(id_columns).equals(tables["nqo_Nkoo"].select(id_columns))
        for column in text_columns:
            ids_column = column.replace("sentences", "sentence_ids")
            for lang, table in tables.items():
                ids = table.column(ids_column).to_pylist()
                texts = table.column(column).to_pylist()
                for row in (0, 1500, 3011):
                    assert texts[row] == [corpus.texts[lang][position[x]] for x in ids[row]]


def test_prompts_list_every_topic_and_the_answer_format():
    from babelforge.mvl_sib.sib200 import TOPICS

    for task, k in [("i2s", 1), ("i2s", 5), ("s2i", 3), ("t2s", 1), ("s2t", 5)]:
        text = prompt_text(task, k, TOPICS)
        assert ", ".join(TOPICS) in text and "A, B, C, D" in text and "letter only" in text
    assert "three images" in prompt_text("i2s", 3, TOPICS) and "an image" in prompt_text("i2s", 1, TOPICS)
    assert prompt_text("t2s", 1, TOPICS).startswith("Topic: {topic}.")
    with pytest.raises(BabelforgeError, match="unknown MVL-SIB task"):
        prompt_text("x2y", 1, TOPICS)
