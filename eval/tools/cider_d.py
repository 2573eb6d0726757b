"""CIDEr-D (Vedantam et al., 2015, as in the coco-caption evaluation code).

For every image, the candidate and each reference become tf-idf vectors over their
n-grams (n = 1..4): term frequency = n-gram count, idf = log(N / df) where N is the
number of images and df the number of images whose *references* contain the n-gram.
Per n, the similarity to one reference is the cosine of the two vectors with the
candidate's weights clipped at the reference's (min(g_c, g_r) * g_r, so repeating a
word earns nothing), times the Gaussian length penalty exp(-(l_c - l_r)^2 / (2 sigma^2))
with sigma = 6 and lengths in tokens. CIDEr-D of an image = 10 * mean over n of the
mean over references; the corpus score is the mean over images.

Tokenisation goes by script (`tokenize`, stated in `TOKENIZATION`): text is NFC-normalised
and lower-cased, punctuation and symbols separate tokens, and a token is a
whitespace-separated word, except in scripts written without spaces between words (Han,
kana, Thai, Lao, Khmer, Myanmar, Tibetan, ...), where every character is a token. A
combining mark stays with the character before it, so Thai tone marks and Indic vowel
signs never split a token. For Latin-script text this is the lower-cased, punctuation-free
word split close to the PTB tokeniser the coco code runs first; pass pre-tokenised text
for a per-language segmenter instead.
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from babelforge.core.scripts import COMMON, INHERITED, UNKNOWN, script_of

MAX_N = 4
SIGMA = 6.0
SCALE = 10.0

# ISO 15924 scripts whose writing puts no spaces between words: one token per character.
UNSPACED_SCRIPTS = frozenset(
    {
        "Hani",
        "Hira",
        "Kana",
        "Thai",
        "Laoo",
        "Khmr",
        "Mymr",
        "Tibt",
        "Java",
        "Bali",
        "Lana",
        "Tale",
        "Talu",
        "Bugi",
        "Yiii",
    }
)
TOKENIZATION = (
    "NFC, lower-cased; punctuation and symbols split; whitespace-separated words, except one token "
    "per character (with its combining marks) in unspaced scripts: " + ", ".join(sorted(UNSPACED_SCRIPTS))
)


def tokenize(text: str) -> list[str]:
    """Tokens of `text` by script (see the module docstring)."""
    tokens: list[str] = []
    for word in unicodedata.normalize("NFC", text).lower().split():
        pending = ""  # letters of a spaced-script word
        attach = False  # a combining mark now belongs to the last character token
        for char in word:
            kind = unicodedata.category(char)[0]
            if kind == "M":
                if pending:
                    pending += char
                elif attach:
                    tokens[-1] += char
                continue
            if kind not in "LN":  # punctuation, symbols, controls: a token boundary
                if pending:
                    tokens.append(pending)
                pending, attach = "", False
                continue
            if script_of(char) in UNSPACED_SCRIPTS:
                if pending:
                    tokens.append(pending)
                tokens.append(char)
                pending, attach = "", True
                continue
            pending += char
            attach = False
        if pending:
            tokens.append(pending)
    return tokens


def tokenization_report(texts: Iterable[str]) -> dict[str, list[str]]:
    """Which scripts of `texts` were split into characters and which into words (the output states it)."""
    scripts = {script_of(char) for text in texts for char in text if unicodedata.category(char)[0] == "L"}
    scripts -= {COMMON, INHERITED, UNKNOWN}
    return {"characters": sorted(scripts & UNSPACED_SCRIPTS), "words": sorted(scripts - UNSPACED_SCRIPTS)}


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
        dot = sum(
            min(weight, ref_vec[n].get(ngram, 0.0)) * ref_vec[n].get(ngram, 0.0)
            for ngram, weight in cand_vec[n].items()
        )
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
