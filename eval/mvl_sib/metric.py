"""MVL-SIB with a dual encoder: score each option against the mean of the k references.

The references (k images, k sentences, or the topic name) are embedded, L2-normalised,
averaged and normalised again; each of the options (sentences, images or topic names)
is scored by cosine with that mean, and the highest-scoring option is the answer
(ties: the earlier option, as argmax does). Accuracy is reported per task, k and
language.

Task tables come from the `mvl_sib` stage: `data/mvl_sib/<task>_k<k>/<lang>.parquet`
with `label` (the correct option's position) and, by task, `ref_image_ids` /
`ref_sentences` / `topic` as references and `option_sentences` / `option_image_ids` /
`option_topics` as options; image ids name `images/<image_id>.jpg`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from babelforge.eval.similarity import l2_normalize

# task -> (reference column, option column); every table also carries `topic` and
# `option_topics`, so the columns are named per task, not guessed from what is present.
TASK_COLUMNS = {
    "i2s": ("ref_image_ids", "option_sentences"),
    "s2i": ("ref_sentences", "option_image_ids"),
    "t2s": ("topic", "option_sentences"),
    "s2t": ("ref_sentences", "option_topics"),
}
CONFIG_NAME = re.compile(r"^(?P<task>[a-z0-9]+)_k(?P<k>\d+)$")


def choose_options(reference_emb: np.ndarray, option_emb: np.ndarray) -> np.ndarray:
    """reference_emb (n, k, d), option_emb (n, c, d) -> chosen option index per row."""
    centre = l2_normalize(l2_normalize(reference_emb).mean(axis=1))
    scores = np.einsum("nd,ncd->nc", centre, l2_normalize(option_emb))
    return scores.argmax(axis=1)


def accuracy(predicted: Sequence[int], labels: Sequence[int]) -> float:
    predicted, labels = np.asarray(predicted), np.asarray(labels)
    return float((predicted == labels).mean()) if len(labels) else float("nan")


def parse_config(name: str) -> tuple[str, int]:
    match = CONFIG_NAME.match(name)
    if not match:
        raise ValueError(f"MVL-SIB config {name!r} is not <task>_k<k>")
    return match["task"], int(match["k"])


def _as_lists(column) -> list[list]:
    """A column of lists, or of scalars (the t2s topic) as one-element lists."""
    return [list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value] for value in column]


def evaluate_table(
    table,
    task: str,
    encode_texts: Callable[[Sequence[str]], np.ndarray],
    image_embedding: Mapping[str, np.ndarray],
) -> dict:
    """Accuracy of one `task` table (a DataFrame); images come from `image_embedding[id]`."""
    if task not in TASK_COLUMNS:
        raise ValueError(f"unknown MVL-SIB task {task!r}; known: {', '.join(TASK_COLUMNS)}")
    ref_column, option_column = TASK_COLUMNS[task]
    missing = [c for c in (ref_column, option_column, "label") if c not in table.columns]
    if missing:
        raise ValueError(f"MVL-SIB {task} table has no column(s) {', '.join(missing)}")

    def embed(column: str) -> np.ndarray:
        items = _as_lists(table[column])
        width = len(items[0]) if items else 0
        flat = [item for row in items for item in row]
        if column.endswith("image_ids"):
            vectors = np.stack([image_embedding[str(item)] for item in flat])
        else:
            unique = sorted(set(map(str, flat)))
            lookup = dict(zip(unique, encode_texts(unique)))
            vectors = np.stack([lookup[str(item)] for item in flat])
        return vectors.reshape(len(items), width, -1)

    predicted = choose_options(embed(ref_column), embed(option_column))
    return {
        "accuracy": accuracy(predicted, table["label"].to_numpy()),
        "n": int(len(table)),
        "references": ref_column,
        "options": option_column,
    }
