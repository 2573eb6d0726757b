"""CIDEr-D (Vedantam et al., 2015, as in the coco-caption evaluation code).

For every image, the candidate and each reference become tf-idf vectors over their
n-grams (n = 1..4): term frequency = n-gram count, idf = log(N / df) where N is the
number of images and df the number of images whose *references* contain the n-gram.
Per n, the similarity to one reference is the cosine of the two vectors with the
candidate's weights clipped at the reference's (min(g_c, g_r) * g_r, so repeating a
word earns nothing), times the Gaussian length penalty exp(-(l_c - l_r)^2 / (2 sigma^2))
with sigma = 6 and lengths in tokens. CIDEr-D of an image = 10 * mean over n of the
mean over references; the corpus score is the mean over images.

Tokenisation is lower-casing and splitting on whitespace with punctuation removed,
close to the PTB tokeniser the coco code runs first; pass pre-tokenised text for a
different scheme.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from typing import Mapping, Sequence

MAX_N = 4
SIGMA = 6.0
SCALE = 10.0

_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)


def tokenize(text: str) -> list[str]:
    return _PUNCT.sub(" ", text.lower()).split()


def ngram_counts(tokens: Sequence[str], max_n: int = MAX_N) -> Counter:
    counts: Counter = Counter()
    for n in range(1, max_n + 1):
        for start in range(len(tokens) - n + 1):
            counts[tuple(tokens[start : start + n])] += 1
    return counts


def document_frequency(references: Sequence[Sequence[Sequence[str]]], max_n: int = MAX_N) -> Counter:
    """df[ngram] = number of images with the n-gram in at least one of their references."""
    df: Counter = Counter()
    for refs in references:
        df.update(set().union(*(ngram_counts(ref, max_n) for ref in refs)) if refs else set())
    return df


def _tfidf(counts: Counter, df: Mapping, log_n_images: float, max_n: int):
    vectors = [dict() for _ in range(max_n)]
    norms = [0.0] * max_n
    for ngram, tf in counts.items():
        weight = tf * (log_n_images - math.log(max(1.0, df.get(ngram, 0.0))))
        vectors[len(ngram) - 1][ngram] = weight
        norms[len(ngram) - 1] += weight * weight
    return vectors, [math.sqrt(v) for v in norms]


def _similarity(candidate, reference, length_gap: int, max_n: int, sigma: float) -> list[float]:
    (cand_vec, cand_norm), (ref_vec, ref_norm) = candidate, reference
    penalty = math.exp(-(length_gap**2) / (2.0 * sigma**2))
    values = []
    for n in range(max_n):
        dot = sum(min(weight, ref_vec[n].get(ngram, 0.0)) * ref_vec[n].get(ngram, 0.0)
                  for ngram, weight in cand_vec[n].items())
        if cand_norm[n] != 0 and ref_norm[n] != 0:
            dot /= cand_norm[n] * ref_norm[n]
        values.append(dot * penalty)
    return values


def cider_d(
    candidates: Sequence[str | Sequence[str]],
    references: Sequence[Sequence[str | Sequence[str]]],
    max_n: int = MAX_N,
    sigma: float = SIGMA,
) -> tuple[float, list[float]]:
    """(corpus CIDEr-D, per-image scores) for one candidate and >= 1 references per image.

    Strings are tokenised with `tokenize`; token lists are used as they are.
    """
    if len(candidates) != len(references):
        raise ValueError(f"{len(candidates)} candidates but {len(references)} reference sets")
    if not candidates:
        return float("nan"), []
    as_tokens = lambda t: tokenize(t) if isinstance(t, str) else list(t)  # noqa: E731
    cand_tokens = [as_tokens(c) for c in candidates]
    ref_tokens = [[as_tokens(r) for r in refs] for refs in references]
    df = document_frequency(ref_tokens, max_n)
    log_n_images = math.log(float(len(cand_tokens)))

    scores = []
    for cand, refs in zip(cand_tokens, ref_tokens):
        if not refs:
            raise ValueError("every image needs at least one reference caption")
        cand_vec = _tfidf(ngram_counts(cand, max_n), df, log_n_images, max_n)
        per_n = [0.0] * max_n
        for ref in refs:
            ref_vec = _tfidf(ngram_counts(ref, max_n), df, log_n_images, max_n)
            sims = _similarity(cand_vec, ref_vec, len(cand) - len(ref), max_n, sigma)
            per_n = [a + b for a, b in zip(per_n, sims)]
        scores.append(SCALE * (sum(per_n) / max_n) / len(refs))
    return sum(scores) / len(scores), scores
