"""N-best translation of captions: every hypothesis kept, with the model's score.

Works with any translator that has NLLB's interface
`translate(texts, src_lang, tgt_langs) -> list[list[Hypothesis(text, score)]]` (one target
per text, hypotheses best first), i.e. `builders.translation.nllb.NllbTranslator` or a stub.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Iterator, Mapping, Sequence

from builders.core.errors import BabelforgeError

HYPOTHESIS_COLUMNS = ("caption_id", "lang", "hyp_rank", "text", "mt_score")


@dataclass(frozen=True)
class TranslateSettings:
    """`captions.translate` params. The paper's setting is beam_size 100, num_hypotheses 25."""

    model: str = "models/nllb-ct2"
    beam_size: int = 8
    num_hypotheses: int = 8
    max_decoding_length: int = 256
    max_batch_size: int = 4096
    batch_type: str = "tokens"
    device: str = "auto"
    compute_type: str = "auto"
    # Pairs handed to the translator per call: bounds memory and paces the progress bar.
    chunk_size: int = 512

    def __post_init__(self):
        if not 1 <= self.num_hypotheses <= self.beam_size:
            raise BabelforgeError(
                f"captions.translate: num_hypotheses ({self.num_hypotheses}) must be between 1 and "
                f"beam_size ({self.beam_size})"
            )

    @classmethod
    def from_params(cls, values: Mapping[str, Any]) -> "TranslateSettings":
        """From the resolved `captions.translate` group; an unknown key is an error naming it."""
        known = {field.name for field in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise BabelforgeError(
                f"captions.translate: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return cls(**values)

    def translator_kwargs(self) -> dict[str, Any]:
        return dict(
            device=self.device, compute_type=self.compute_type, beam_size=self.beam_size,
            num_hypotheses=self.num_hypotheses, max_batch_size=self.max_batch_size,
            batch_type=self.batch_type, max_decoding_length=self.max_decoding_length,
        )


def _chunks(items: Sequence, size: int) -> Iterator[Sequence]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


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
    translator's best.
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
                rows.append({
                    "caption_id": caption_id, "lang": key, "hyp_rank": rank,
                    "text": hypothesis.text, "mt_score": float(hypothesis.score),
                })
    return rows
