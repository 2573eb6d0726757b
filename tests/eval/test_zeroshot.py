"""Zero-shot classification: constructed cases with a known answer, the class-subset
rule, the fixed-100 control, prompt fallbacks and the image-embedding cache."""

import math

import numpy as np
import pytest

from babelforge.eval.cache import ImageEmbeddingCache
from babelforge.eval.labels import labels_by_language, translated_templates
from babelforge.eval.zeroshot.metric import (
    choose_templates,
    class_embeddings,
    evaluate_language,
    fill_template,
    fixed_class_control,
    zeroshot_metrics,
)
from babelforge.eval.zeroshot.rows import zeroshot_rows

E = np.eye(5, dtype=np.float32)


def test_class_embedding_is_normalised_mean_of_normalised_prompts():
    prompts = np.array([[3.0, 0.0], [0.0, 0.5], [1.0, 1.0]])
    emb = class_embeddings(prompts, [7, 7, 9], [7, 9])
    assert emb[0] == pytest.approx([np.sqrt(0.5), np.sqrt(0.5)])  # mean of (1,0),(0,1)
    assert emb[1] == pytest.approx([np.sqrt(0.5), np.sqrt(0.5)])


def test_crafted_embeddings_class_3_must_win():
    # The image is closest to class 3 (0.8), then class 1 (0.6); class 3 is the truth.
    image = np.array([[0.0, 0.6, 0.0, 0.8, 0.0]])
    metrics = zeroshot_metrics(image, [3], E, [0, 1, 2, 3, 4])
    assert metrics["top1"] == 1.0 and metrics["per_class"] == {3: 1.0}
    # The same image labelled class 1: wrong at top-1, right within the top 5.
    wrong = zeroshot_metrics(image, [1], E, [0, 1, 2, 3, 4])
    assert wrong["top1"] == 0.0 and wrong["top5"] == 1.0


def test_top5_counts_the_true_class_ranked_fifth_but_not_sixth():
    # Eight classes; every image scores them 0 > 1 > ... > 7, so the true class's 0-based rank is its id.
    classes = np.eye(8, dtype=np.float32)
    image = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2], dtype=np.float32)
    targets = [0, 4, 5, 7]  # ranked 1st, 5th, 6th and 8th
    metrics = zeroshot_metrics(np.stack([image] * 4), targets, classes, range(8))
    assert metrics["top1"] == 0.25  # class 0 only
    assert metrics["top5"] == 0.5  # classes 0 and 4: the 6th and 8th are outside the top 5
    assert metrics["n_classes"] == 8 and metrics["n_images"] == 4


def test_class_subset_rule():
    image = np.array([[0.0, 0.6, 0.0, 0.8, 0.0], [0.0, 0.0, 0.0, 1.0, 0.0]])
    targets = [1, 3]
    # A language without class 3: its image is not evaluated, and the other image is
    # classified among {0, 1, 2, 4} only, where class 1 wins.
    subset = [0, 1, 2, 4]
    metrics = zeroshot_metrics(image, targets, E[subset], subset)
    assert metrics["n_images"] == 1 and metrics["n_classes"] == 4
    assert metrics["top1"] == 1.0
    # With every class, class 3 takes the first image: top-1 is 1/2.
    assert zeroshot_metrics(image, targets, E, range(5))["top1"] == 0.5


def test_ties_count_against_the_true_class():
    image = np.array([[1.0, 1.0, 0.0, 0.0, 0.0]])
    assert zeroshot_metrics(image, [0], E, range(5))["top1"] == 0.0


def test_balanced_accuracy_weights_classes_equally():
    image = np.stack([E[0], E[0], E[0], E[2]])
    targets = [0, 0, 0, 1]  # class 0: 3/3 right; class 1: 0/1 right
    metrics = zeroshot_metrics(image, targets, E, range(5))
    assert metrics["top1"] == 0.75
    assert metrics["balanced_accuracy"] == 0.5


def test_fixed_class_control():
    dim = 150
    emb = np.eye(dim, dtype=np.float32)
    class_ids = list(range(dim))
    targets = list(range(dim))
    assert fixed_class_control(emb, targets, emb, class_ids, 100, 10, seed=1) == 1.0
    # Misclassify every image of the even classes: each subset's top-1 is its share of odd classes.
    shifted = np.roll(emb, 1, axis=0)
    images = np.where(np.arange(dim)[:, None] % 2 == 0, shifted, emb)
    first = fixed_class_control(images, targets, emb, class_ids, 100, 10, seed=1)
    assert first == fixed_class_control(images, targets, emb, class_ids, 100, 10, seed=1)
    assert 0.3 < first < 0.7
    assert math.isnan(fixed_class_control(emb[:50], targets[:50], emb[:50], class_ids[:50], 100, 10))


def test_fixed_class_control_by_default_needs_100_classes_and_takes_exactly_100():
    emb = np.eye(100, dtype=np.float32)
    assert fixed_class_control(emb, range(100), emb, range(100)) == 1.0  # top1_100: 100 classes suffice
    assert math.isnan(fixed_class_control(emb[:99], range(99), emb[:99], range(99)))


def test_templates_and_fallbacks():
    assert fill_template("a photo of a {}.", "Hund") == "a photo of a Hund."
    assert fill_template("{} {x}", "a", knowledge="a def") == "a {x} a def"
    translated = {"deu_Latn": ["ein Foto von {}."]}
    english = ["a photo of a {}."]
    assert choose_templates("deu_Latn", "translated", translated, english) == [("translated", ["ein Foto von {}."])]
    assert choose_templates("fry_Latn", "translated", translated, english) == [("english-fallback", english)]
    assert choose_templates("fry_Latn", "translated", translated, english, fallback="label") == [
        ("label-fallback", ["{}"])
    ]
    assert choose_templates("fry_Latn", "translated", translated, english, fallback="both") == [
        ("english-fallback", english),
        ("label-fallback", ["{}"]),
    ]
    assert choose_templates("deu_Latn", "label", translated, english) == [("label", ["{}"])]
    assert choose_templates("eng_Latn", "translated", translated, english) == [("english", english)]


def test_evaluate_language_end_to_end_with_fake_encoder(counting_encoder):
    labels = {0: "c0", 1: "c1", 3: "c3"}
    images = np.stack([counting_encoder._onehot(c) for c in (0, 1, 3)])
    metrics = evaluate_language(counting_encoder.encode_texts, images, [0, 1, 3], labels, ["photo of {}", "{}!"])
    assert metrics["top1"] == 1.0 and metrics["n_classes"] == 3


def test_cache_reuses_image_embeddings_across_languages_and_runs(counting_encoder, digit_images, tmp_path):
    labels = {"aaa_Latn": {0: "c0", 1: "c1", 2: "c2"}, "bbb_Latn": {3: "c3", 4: "c4"}, "ccc_Latn": {5: "c5", 0: "c0"}}
    cache = ImageEmbeddingCache(tmp_path / "cache")
    rows = zeroshot_rows(counting_encoder, digit_images, cache, labels, ["a {}"], control_classes=2, control_repeats=3)
    assert counting_encoder.image_calls == 1  # three languages, one encoding
    assert counting_encoder.text_calls == 3
    assert cache.misses == 1 and cache.hits == 2
    assert [r["lang"] for r in rows] == ["aaa_Latn", "bbb_Latn", "ccc_Latn"]
    assert all(r["top1"] == 1.0 and r["prompt_set"] == "english-fallback" for r in rows)
    assert [r["n_images"] for r in rows] == [3, 2, 2]
    # A new process (new cache object, same directory) reads the vectors from disk.
    zeroshot_rows(counting_encoder, digit_images, ImageEmbeddingCache(tmp_path / "cache"), labels, ["a {}"])
    assert counting_encoder.image_calls == 1
    # A different revision is a different key: encoded again.
    counting_encoder.revision = "r2"
    zeroshot_rows(counting_encoder, digit_images, ImageEmbeddingCache(tmp_path / "cache"), labels, ["a {}"])
    assert counting_encoder.image_calls == 2


def test_changed_image_invalidates_cache(counting_encoder, digit_images, tmp_path):
    cache_dir = tmp_path / "cache"
    ImageEmbeddingCache(cache_dir).embeddings(counting_encoder, digit_images)
    (digit_images.root / "2.png").write_bytes(b"changed")
    ImageEmbeddingCache(cache_dir).embeddings(counting_encoder, digit_images)
    assert counting_encoder.image_calls == 2


def test_tables_to_labels_and_templates():
    import pandas as pd

    labels = pd.DataFrame(
        {
            "class_idx": [1, 1, 2, 2],
            "lang": ["x", "x", "x", "x"],
            "label": ["b", "a", "c", "c"],
            "rank": [1, 0, 0, 1],
            "is_duplicate": [False, False, True, False],
        }
    )
    assert labels_by_language(labels) == {"x": {1: "a", 2: "c"}}
    assert labels_by_language(labels, drop_duplicates=True) == {"x": {1: "a", 2: "c"}}
    prompts = pd.DataFrame(
        {
            "lang": ["x", "x", "x"],
            "template_id": [2, 1, 3],
            "text": ["t2 {}", "t1 {}", "bad"],
            "valid": [True, True, True],
        }
    )
    assert translated_templates(prompts) == {"x": ["t1 {}", "t2 {}"]}
    # The prompts stage's layout: `use` decides, and its fallback sets are not translations.
    staged = pd.DataFrame(
        {
            "lang": ["x", "x", "y", "y"],
            "prompt_set": ["nllb", "nllb", "english", "label_only"],
            "template_id": [0, 1, 0, 0],
            "text": ["a {}", "b {}", "photo {}", "{}"],
            "valid": [True, True, True, True],
            "use": [True, False, True, True],
        }
    )
    assert translated_templates(staged) == {"x": ["a {}"]}


def test_knowledge_option_appends_definitions(counting_encoder, digit_images, tmp_path):
    seen = []
    original = counting_encoder.encode_texts

    def recording(texts, batch_size=256, lang=None):
        seen.extend(texts)
        return original(texts, batch_size)

    counting_encoder.encode_texts = recording
    rows = zeroshot_rows(
        counting_encoder,
        digit_images,
        ImageEmbeddingCache(tmp_path),
        {"aaa_Latn": {1: "c1"}},
        ["a {}."],
        knowledge={1: "a thing with fins"},
    )
    assert seen == ["a c1. a thing with fins"]
    assert rows[0]["prompt_set"] == "english-fallback+knowledge"


def test_both_fallbacks_give_two_rows(counting_encoder, digit_images, tmp_path):
    rows = zeroshot_rows(
        counting_encoder,
        digit_images,
        ImageEmbeddingCache(tmp_path),
        {"aaa_Latn": {1: "c1", 2: "c2"}},
        ["a {}."],
        fallback="both",
    )
    assert [(r["prompt_set"], r["n_templates"]) for r in rows] == [("english-fallback", 1), ("label-fallback", 1)]


def test_text_encoding_reports_its_progress_in_texts(counting_encoder, digit_images, tmp_path, capsys):
    """At full size the texts are the stage's hours: the log says how far it is (the last language always)."""
    labels = {"aaa_Latn": {0: "c0", 1: "c1", 2: "c2"}, "bbb_Latn": {3: "c3", 4: "c4"}}
    zeroshot_rows(
        counting_encoder, digit_images, ImageEmbeddingCache(tmp_path), labels, ["a {}", "{}!"], fallback="both"
    )
    last = capsys.readouterr().err.splitlines()[-1]
    # bbb_Latn: english fallback 2 templates x 2 classes, label fallback the label alone x 2 classes
    assert last.startswith(f"text embeddings {counting_encoder.name}: bbb_Latn done (2/2), 6 texts in ")


def test_cache_key_separates_half_and_full_precision(counting_encoder, digit_images, tmp_path):
    # Vectors a GPU run computed in fp16 are not what a CPU (fp32) run computes: never mixed.
    counting_encoder.precision = "float16"
    ImageEmbeddingCache(tmp_path).embeddings(counting_encoder, digit_images)
    counting_encoder.precision = "float32"
    ImageEmbeddingCache(tmp_path).embeddings(counting_encoder, digit_images)
    assert counting_encoder.image_calls == 2
    ImageEmbeddingCache(tmp_path).embeddings(counting_encoder, digit_images)
    assert counting_encoder.image_calls == 2


def test_each_row_counts_its_own_prompts_the_text_encoder_cut(digit_images, tmp_path):
    """A label long enough that its prompts pass the encoder's length is counted in its language's
    row only, once per template that reads it."""
    from tests.eval.conftest import CountingEncoder

    model = CountingEncoder(max_words=4)
    labels = {"aaa_Latn": {0: "c0", 1: "c1 with a long name"}, "bbb_Latn": {2: "c2", 3: "c3"}}
    rows = zeroshot_rows(
        model, digit_images, ImageEmbeddingCache(tmp_path / "cache"), labels, ["a {}", "{}"], control_classes=2
    )
    assert {row["lang"]: row["texts_truncated"] for row in rows} == {"aaa_Latn": 2, "bbb_Latn": 0}
    assert model.truncated_texts == 2


def test_top1_norm_is_top1_above_chance_over_what_is_above_chance():
    """The headline metric where it is made: (top1 - chance) / (1 - chance), with these numbers."""
    classes = np.eye(4, dtype=np.float32)
    images = np.stack([classes[0], classes[1], classes[2], classes[0]])  # the last one is class 3, seen as 0
    metrics = zeroshot_metrics(images, [0, 1, 2, 3], classes, range(4))
    assert metrics["top1"] == 0.75 and metrics["chance_top1"] == 0.25
    assert metrics["top1_norm"] == pytest.approx((0.75 - 0.25) / (1 - 0.25))  # 2/3; swapped arguments give -2
