"""MVL-SIB instance sampling and task building: pure, seeded, language-independent.

An instance couples one SIB-200 sentence with 5 images and 4 further sentences of its
topic (positives) and 3 images and 3 sentences of other topics (negatives). The ids are
drawn once, from the sentence ids and topics alone, so every language gets the same
instance with the same image and sentence ids: the benchmark is multi-way parallel.

Decisions worth knowing:
- The 3 negatives come from 3 *distinct* other topics (drawn without replacement from the
  6 others); negative image i and negative sentence i share negative topic i. So the four
  options of every task stand for four different topics and exactly one matches.
- Co-sentences (positives and negatives) are drawn from the sentence's own split by default
  (`sentence_pool: split`), so train instances never show a test sentence; `all` draws from
  all 1,004 sentences.
- Each instance has its own random stream, seeded by (seed, index_id, replicate), and draws
  from id-sorted pools: an instance does not depend on the order the corpus lists sentences in.
- The correct option's position is balanced exactly (each of the 4 positions n/4 times),
  shuffled with a seed per task, and shared by the k variants of a task and by every
  language, so comparisons across k or languages see the same option order.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from babelforge.core.errors import BabelforgeError

N_OPTIONS = 4
OPTION_LETTERS = ("A", "B", "C", "D")

# task code -> (long name, what the references are, what the options are)
TASKS: dict[str, tuple[str, str, str]] = {
    "i2s": ("images_to_sentence", "images", "sentences"),
    "s2i": ("sentences_to_image", "sentences", "images"),
    "t2s": ("topic_to_sentence", "topic", "sentences"),
    "s2t": ("sentences_to_topic", "sentences", "topics"),
}


@dataclass(frozen=True)
class SamplingConfig:
    seed: int = 42
    instances_per_sentence: int = 3
    n_positive_images: int = 5
    n_positive_sentences: int = 4
    n_negatives: int = 3
    sentence_pool: str = "split"  # "split" or "all"

    def __post_init__(self) -> None:
        if self.sentence_pool not in ("split", "all"):
            raise BabelforgeError(f"mvl_sib.sentence_pool is {self.sentence_pool!r}; use 'split' or 'all'")
        if self.n_negatives != N_OPTIONS - 1:
            raise BabelforgeError(
                f"mvl_sib.n_negatives is {self.n_negatives}; the tasks have {N_OPTIONS} options, "
                f"so it must be {N_OPTIONS - 1}"
            )
        if self.instances_per_sentence < 1:
            raise BabelforgeError("mvl_sib.instances_per_sentence must be at least 1")


@dataclass(frozen=True)
class Instances:
    """Column arrays, one row per instance (instance_id = row number)."""

    sentence_id: np.ndarray  # (n,) SIB index_id
    replicate: np.ndarray  # (n,) 0..instances_per_sentence-1
    split: np.ndarray  # (n,) str
    topic: np.ndarray  # (n,) str
    positive_images: np.ndarray  # (n, 5) image ids, same topic
    positive_sentences: np.ndarray  # (n, 4) index_ids, same topic, not the sentence itself
    negative_topics: np.ndarray  # (n, 3) distinct topics != topic
    negative_images: np.ndarray  # (n, 3) image of negative_topics[:, i]
    negative_sentences: np.ndarray  # (n, 3) index_id of negative_topics[:, i]

    def __len__(self) -> int:
        return len(self.sentence_id)


def _stream(*keys: int) -> np.random.Generator:
    return np.random.default_rng(list(keys))


def _task_key(name: str) -> int:
    return zlib.crc32(name.encode("utf-8"))


def sample_instances(
    ids: Sequence[int],
    splits: Sequence[str],
    topics: Sequence[str],
    images_by_topic: Mapping[str, Sequence[str]],
    config: SamplingConfig,
) -> Instances:
    """Draw `instances_per_sentence` instances for every sentence, in corpus order."""
    if not (len(ids) == len(splits) == len(topics)):
        raise BabelforgeError("sample_instances: ids, splits and topics differ in length")
    topic_names = sorted(set(topics))
    images = {t: sorted(images_by_topic.get(t, ())) for t in topic_names}
    for topic, pool in images.items():
        if len(pool) < config.n_positive_images:
            raise BabelforgeError(
                f"topic {topic!r} has {len(pool)} images; an instance needs {config.n_positive_images} "
                "(check the image manifest)"
            )
        if len(set(pool)) != len(pool):
            raise BabelforgeError(f"topic {topic!r} lists an image id twice in the image manifest")
    other_topics = {t: [o for o in topic_names if o != t] for t in topic_names}
    for topic, others in other_topics.items():
        if len(others) < config.n_negatives:
            raise BabelforgeError(
                f"only {len(others)} topics besides {topic!r}; {config.n_negatives} distinct negative topics needed"
            )

    # Sentence pools: (pool key, topic) -> index_ids, sorted so a draw depends on the pool's
    # members and not on the order the corpus lists them in.
    pools: dict[tuple[str, str], list[int]] = {}
    for index_id, split, topic in zip(ids, splits, topics):
        key = split if config.sentence_pool == "split" else "all"
        pools.setdefault((key, topic), []).append(int(index_id))
    for pool in pools.values():
        pool.sort()
    for key in sorted({key for key, _ in pools}):
        for topic in topic_names:
            pools.setdefault((key, topic), [])
    for (key, topic), pool in sorted(pools.items()):
        if len(pool) < config.n_positive_sentences + 1:
            raise BabelforgeError(
                f"sentence pool {key!r} has {len(pool)} sentences of topic {topic!r}; "
                f"{config.n_positive_sentences + 1} needed (try mvl_sib.sentence_pool: all)"
            )

    reps = config.instances_per_sentence
    n = len(ids) * reps
    out_sentence = np.empty(n, dtype=np.int64)
    out_replicate = np.empty(n, dtype=np.int64)
    out_split = np.empty(n, dtype=object)
    out_topic = np.empty(n, dtype=object)
    pos_img = np.empty((n, config.n_positive_images), dtype=object)
    pos_sent = np.empty((n, config.n_positive_sentences), dtype=np.int64)
    neg_topic = np.empty((n, config.n_negatives), dtype=object)
    neg_img = np.empty((n, config.n_negatives), dtype=object)
    neg_sent = np.empty((n, config.n_negatives), dtype=np.int64)

    row = 0
    for index_id, split, topic in zip(ids, splits, topics):
        key = split if config.sentence_pool == "split" else "all"
        same = [s for s in pools[(key, topic)] if s != int(index_id)]
        for replicate in range(reps):
            rng = _stream(config.seed, int(index_id), replicate)
            out_sentence[row], out_replicate[row] = index_id, replicate
            out_split[row], out_topic[row] = split, topic
            picks = rng.choice(len(images[topic]), config.n_positive_images, replace=False)
            pos_img[row] = [images[topic][i] for i in picks]
            picks = rng.choice(len(same), config.n_positive_sentences, replace=False)
            pos_sent[row] = [same[i] for i in picks]
            others = other_topics[topic]
            chosen = [others[i] for i in rng.choice(len(others), config.n_negatives, replace=False)]
            neg_topic[row] = chosen
            neg_img[row] = [images[t][rng.integers(len(images[t]))] for t in chosen]
            neg_sent[row] = [pools[(key, t)][rng.integers(len(pools[(key, t)]))] for t in chosen]
            row += 1
    return Instances(
        sentence_id=out_sentence,
        replicate=out_replicate,
        split=out_split,
        topic=out_topic,
        positive_images=pos_img,
        positive_sentences=pos_sent,
        negative_topics=neg_topic,
        negative_images=neg_img,
        negative_sentences=neg_sent,
    )


def balanced_labels(n: int, seed: int, task: str, n_options: int = N_OPTIONS) -> np.ndarray:
    """Correct-option positions: each position n/n_options times (±1), seeded shuffle per task."""
    labels = np.resize(np.arange(n_options, dtype=np.int8), n)
    return _stream(seed, _task_key(task)).permutation(labels)


def place_options(correct: np.ndarray, negatives: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(n, 4) options: the correct one at `labels[i]`, the negatives in drawn order elsewhere."""
    candidates = np.column_stack([correct, negatives])  # column 0 = correct
    n_options = candidates.shape[1]
    # For label L, the option at position p is candidate order[L][p].
    order = np.array(
        [[0 if p == label else (p + 1 if p < label else p) for p in range(n_options)] for label in range(n_options)]
    )
    return np.take_along_axis(candidates, order[labels.astype(np.intp)], axis=1)


@dataclass(frozen=True)
class TaskPlan:
    """The language-independent content of one task config (ids only, no texts)."""

    name: str  # e.g. "i2s_k3"
    task: str  # i2s / s2i / t2s / s2t
    k: int
    label: np.ndarray  # (n,) int8
    refs: np.ndarray | None  # (n, k) image ids or sentence ids; None for t2s (the topic is the query)
    options: np.ndarray  # (n, 4) sentence ids, image ids or topics
    option_topics: np.ndarray  # (n, 4)


def config_name(task: str, k: int) -> str:
    return f"{task}_k{k}"


def plan_tasks(instances: Instances, task_ks: Mapping[str, Sequence[int]], seed: int) -> list[TaskPlan]:
    """Build every (task, k) config from the instances; labels balanced per task."""
    n_pos_images = instances.positive_images.shape[1]
    n_sentences = instances.positive_sentences.shape[1] + 1
    plans = []
    for task in TASKS:
        ks = list(task_ks.get(task, ()))
        if not ks:
            continue
        limit = {"i2s": n_pos_images, "s2i": n_sentences, "s2t": n_sentences, "t2s": 1}[task]
        for k in ks:
            if not 1 <= int(k) <= limit:
                raise BabelforgeError(f"mvl_sib.tasks.{task}: k={k} is outside 1..{limit}")
        labels = balanced_labels(len(instances), seed, task)
        option_topics = place_options(instances.topic, instances.negative_topics, labels)
        if task in ("i2s", "t2s"):
            options = place_options(instances.sentence_id, instances.negative_sentences, labels)
        elif task == "s2i":
            # The correct image is the first positive; the k reference sentences start with
            # the instance's own sentence, then its same-topic co-sentences.
            options = place_options(instances.positive_images[:, 0], instances.negative_images, labels)
        else:  # s2t
            options = option_topics
        sentences = np.column_stack([instances.sentence_id, instances.positive_sentences])
        for k in sorted({int(k) for k in ks}):
            if task == "i2s":
                refs = instances.positive_images[:, :k]
            elif task == "t2s":
                refs = None
            else:
                refs = sentences[:, :k]
            plans.append(TaskPlan(config_name(task, k), task, k, labels, refs, options, option_topics))
    return plans


def _offsets(rows: int, width: int):
    import pyarrow as pa

    return pa.array(np.arange(0, rows * width + 1, width, dtype=np.int32))


def list_column(matrix: np.ndarray, arrow_type):
    """A (rows, width) matrix as an Arrow list column of `width` items per row."""
    import pyarrow as pa

    rows, width = matrix.shape
    return pa.ListArray.from_arrays(_offsets(rows, width), pa.array(matrix.reshape(-1), type=arrow_type))


def id_positions(ids: Sequence[int]) -> np.ndarray:
    """A lookup array: `id_positions(ids)[index_id]` is the index_id's row in corpus order."""
    ids = np.asarray(ids, dtype=np.int64)
    position = np.full(int(ids.max()) + 1, -1, dtype=np.int64)
    position[ids] = np.arange(len(ids))
    return position


# text column -> the id matrix of the plan it follows
_TEXT_COLUMNS = {"ref_sentences": "refs", "option_sentences": "options"}


def shared_columns(plan: TaskPlan, instances: Instances) -> dict:
    """The language-independent columns of a task config, in output order; text columns
    are None placeholders, filled per language by `task_table`."""
    import pyarrow as pa

    columns = {
        "instance_id": pa.array(np.arange(len(instances), dtype=np.int32)),
        "sentence_id": pa.array(instances.sentence_id.astype(np.int32)),
        "split": pa.array(instances.split, type=pa.string()),
        "topic": pa.array(instances.topic, type=pa.string()),
        "label": pa.array(plan.label.astype(np.int8)),
    }
    refs_kind, options_kind = TASKS[plan.task][1], TASKS[plan.task][2]
    if refs_kind == "images":
        columns["ref_image_ids"] = list_column(plan.refs, pa.string())
    elif refs_kind == "sentences":
        columns["ref_sentence_ids"] = list_column(plan.refs.astype(np.int32), pa.int32())
        columns["ref_sentences"] = None
    if options_kind == "sentences":
        columns["option_sentence_ids"] = list_column(plan.options.astype(np.int32), pa.int32())
        columns["option_sentences"] = None
    elif options_kind == "images":
        columns["option_image_ids"] = list_column(plan.options, pa.string())
    columns["option_topics"] = list_column(plan.option_topics, pa.string())
    return columns


def task_table(plan: TaskPlan, instances: Instances, texts, position: np.ndarray, shared: dict | None = None):
    """The rows of one task config in one language, as a pyarrow Table (instance order).

    `texts` is the language's sentences in corpus order (a sequence or a pyarrow string
    array), `position` the `id_positions` lookup, `shared` the `shared_columns` of the plan
    (computed once for all languages). Ids and texts are both stored so a row is usable on
    its own; image ids name files `images/<image_id>.jpg`.
    """
    import pyarrow as pa

    if not isinstance(texts, pa.Array):
        texts = pa.array(list(texts), type=pa.string())
    columns = {}
    for name, column in (shared or shared_columns(plan, instances)).items():
        if column is None:
            ids = getattr(plan, _TEXT_COLUMNS[name])
            column = pa.ListArray.from_arrays(_offsets(*ids.shape), texts.take(position[ids].reshape(-1)))
        columns[name] = column
    return pa.table(columns)


# task -> (what is shown for k = 1, for k > 1, the instruction). Filled by `prompt_text`;
# `{{topic}}` survives as `{topic}`, to be filled per row in t2s.
_PROMPTS: dict[str, tuple[str, str, str]] = {
    "i2s": (
        "an image",
        "{n} images that share one topic",
        "You are shown {shown} and four sentences labelled {letters}. Each sentence is about one of these "
        "topics: {topics}. Which sentence is about the topic of the image{s}? Answer with the letter only.",
    ),
    "s2i": (
        "a sentence",
        "{n} sentences that share one topic",
        "You are shown {shown} and four images labelled {letters}. The topic is one of: {topics}. "
        "Which image shows the topic of the sentence{s}? Answer with the letter only.",
    ),
    "t2s": (
        "a topic",
        "a topic",
        "Topic: {{topic}}. Below are four sentences labelled {letters}, each about one of these topics: "
        "{topics}. Which sentence is about the given topic? Answer with the letter only.",
    ),
    "s2t": (
        "a sentence",
        "{n} sentences that share one topic",
        "You are shown {shown} and four topics labelled {letters}, chosen from: {topics}. "
        "Which of them is the topic of the sentence{s}? Answer with the letter only.",
    ),
}


def prompt_text(task: str, k: int, topics: Sequence[str]) -> str:
    """The English instruction for a task config (list of topics + what to answer)."""
    if task not in _PROMPTS:
        raise BabelforgeError(f"unknown MVL-SIB task {task!r} (known: {', '.join(TASKS)})")
    one, many, template = _PROMPTS[task]
    number = {1: "one", 3: "three", 5: "five"}.get(k, str(k))
    return template.format(
        shown=one if k == 1 else many.format(n=number),
        letters=", ".join(OPTION_LETTERS),
        topics=", ".join(topics),
        s="" if k == 1 else "s",
    )
