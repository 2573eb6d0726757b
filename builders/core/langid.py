"""langid.py, decoded once per process.

Decoding langid.py's model string takes about a second, and the prompts, captions and
audit checks all want it; they share this one instance. Callers that restrict the
language set (`set_languages` replaces the model arrays, never mutates them) take a
shallow copy first.
"""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def identifier():
    """langid.py's identifier over all its languages, with normalised probabilities
    (its raw scores are log-likelihoods)."""
    from langid.langid import LanguageIdentifier, model

    return LanguageIdentifier.from_modelstring(model, norm_probs=True)
