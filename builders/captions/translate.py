"""N-best translation of captions: every hypothesis kept, with the model's score.

The settings are `captions_translate`'s Config. Works with any translator that has NLLB's interface
`translate(texts, src_lang, tgt_langs) -> list[list[Hypothesis(text, score)]]` (one target
per text, hypotheses best first), i.e. `babelforge.translation.nllb.NllbTranslator` or a stub.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from babelforge.core.errors import BabelforgeError

HYPOTHESIS_COLUMNS = ("caption_id", "lang", "hyp_rank", "text", "mt_score", "source_truncated")


def hypotheses_table(rows: Sequence[Mapping[str, Any]]):
    """Hypothesis rows as the pyarrow table of a `hypotheses/` shard (fixed types, also when empty)."""
    import pyarrow as pa

    schema = pa.schema(
        [
            ("caption_id", pa.string()),
            ("lang", pa.string()),
            ("hyp_rank", pa.int32()),
            ("text", pa.string()),
            ("mt_score", pa.float64()),
            ("source_truncated", pa.bool_()),
        ]
    )
    return pa.Table.from_pylist(list(rows), schema=schema)


def _chunks(items: Sequence, size: int) -> Iterator[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def translate_nbest(
    translator,
    captions: Sequence[tuple[str, str]],
    source_code: str,
    targets: Mapping[str, str],
    chunk_size: int = 512,
    progress=lambda iterable, total: iterable,
) -> list[dict[str, Any]]:
    """Hypothesis rows `caption_id, lang, hyp_rank, text, mt_score` for every caption x target.

    `captions` are (caption_id, English text); `targets` maps a registry key to the
    translator's code for it. Identical texts are translated once; an empty caption gets
    no hypotheses (selection records it as `no_hypotheses`). hyp_rank 0 is the
    translator's best. `source_truncated` marks the hypotheses of a caption longer than the
    model's input limit (translated from its beginning): a selection threshold can drop them.
    """
    unique = sorted({text.strip() for _, text in captions if text.strip()})
    pairs = [(text, key) for key in sorted(targets) for text in unique]
    results: dict[tuple[str, str], list] = {}
    for chunk in progress(list(_chunks(pairs, chunk_size)), (len(pairs) + chunk_size - 1) // chunk_size):
        texts = [text for text, _ in chunk]
        codes = [targets[key] for _, key in chunk]
        hypotheses = translator.translate(texts, source_code, codes)
        if len(hypotheses) != len(chunk):
            raise BabelforgeError(f"translator returned {len(hypotheses)} results for {len(chunk)} texts")
        results.update(zip(chunk, hypotheses))
    rows = []
    for caption_id, text in captions:
        for key in sorted(targets):
            for rank, hypothesis in enumerate(results.get((text.strip(), key), [])):
                rows.append(
                    {
                        "caption_id": caption_id,
                        "lang": key,
                        "hyp_rank": rank,
                        "text": hypothesis.text,
                        "mt_score": float(hypothesis.score),
                        "source_truncated": hypothesis.source_truncated,
                    }
                )
    return rows
