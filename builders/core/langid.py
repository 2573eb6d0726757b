"""langid.py, decoded once per process, scoring a text over the features it has.

Decoding langid.py's model string takes about a second, and the prompts, captions and
audit checks all want it; they share this one instance. Callers that restrict the
language set (`set_languages` replaces the model arrays, never mutates them) take a
shallow copy first.

langid.py scores a text as its feature counts (7,480, nearly all zero for a label or a
sentence) times the model's per-class weights: one dense product per text, with the
float32 weights converted to float64 on every call, 0.6 ms a text. The same product over
the text's nonzero features alone gives the same float64 sums, bit for bit (the terms
summed and their order are the same, without the zeros; tests/core/test_langid.py checks
it on real captions and labels), in a twentieth of the time: most of the audit's run and
much of the prompts' checks.
"""

from __future__ import annotations

import functools

import numpy as np


@functools.lru_cache(maxsize=1)
def identifier():
    """langid.py's identifier over all its languages, with normalised probabilities
    (its raw scores are log-likelihoods)."""
    from langid.langid import LanguageIdentifier, model

    class NonzeroFeatureIdentifier(LanguageIdentifier):
        def nb_classprobs(self, fv):
            present = np.flatnonzero(fv)
            return np.dot(fv[present], self.nb_ptc[present]) + self.nb_pc

    return NonzeroFeatureIdentifier.from_modelstring(model, norm_probs=True)
