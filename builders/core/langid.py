"""langid.py, decoded once per process (and once per machine), scoring a text over the features it has.

The prompts, captions and audit checks all want langid.py's identifier; they share this one
instance. Callers that restrict the language set (`set_languages` replaces the model arrays, never
mutates them) take a shallow copy first.

Decoding langid.py's model string (base64, bz2, an old pickle) takes 1.2 s, in every process that
checks a language. The decoded arrays are kept in the user's cache folder
(`$XDG_CACHE_HOME/babelforge/langid/`, else `~/.cache/...`), keyed by the model string's hash, as a
NumPy file read without pickle in milliseconds. A cache that cannot be read or written is skipped:
the model string is always there.

langid.py scores a text as its feature counts (7,480, nearly all zero for a label or a
sentence) times the model's per-class weights: one dense product per text, with the
float32 weights converted to float64 on every call, 0.6 ms a text. The same product over
the text's nonzero features alone gives the same float64 sums, bit for bit (the terms
summed and their order are the same, without the zeros; tests/core/test_langid.py checks
it on real captions and labels), in a twentieth of the time: most of the audit's run and
much of the prompts' checks.
"""

from __future__ import annotations

import array
import base64
import bz2
import functools
import hashlib
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import atomic_path


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "babelforge" / "langid"


@functools.lru_cache(maxsize=1)
def identifier():
    """langid.py's identifier over all its languages, with normalised probabilities
    (its raw scores are log-likelihoods)."""
    return build_identifier(default_cache_dir())


def build_identifier(cache_dir: Path | None):
    from langid.langid import LanguageIdentifier, model

    class NonzeroFeatureIdentifier(LanguageIdentifier):
        def nb_classprobs(self, fv):
            present = np.flatnonzero(fv)
            return np.dot(fv[present], self.nb_ptc[present]) + self.nb_pc

    nb_ptc, nb_pc, nb_classes, tk_nextmove, tk_output = decoded_model(model, cache_dir)
    nb_pc = np.array(nb_pc)
    nb_ptc = np.array(nb_ptc).reshape(-1, len(nb_pc))  # as langid.py's from_modelstring lays them out
    return NonzeroFeatureIdentifier(nb_ptc, nb_pc, nb_ptc.shape[0], nb_classes, tk_nextmove, tk_output, norm_probs=True)


def decoded_model(model: bytes, cache_dir: Path | None) -> tuple:
    """langid.py's model tuple (nb_ptc, nb_pc, nb_classes, tk_nextmove, tk_output), from the cache
    when it holds this model string's arrays, else decoded (and cached)."""
    path = cache_dir / f"model-{hashlib.sha256(model).hexdigest()[:24]}.npz" if cache_dir else None
    if path is not None and path.is_file():
        try:
            return _read_model(path)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):  # damaged or foreign: decode, write anew
            pass
    decoded = pickle.loads(bz2.decompress(base64.b64decode(model)))  # langid.py's own data, as it loads it
    if path is not None:
        try:
            _write_model(path, decoded)
        except (OSError, BabelforgeError):  # a read-only home, or another process writing it now
            pass
    return decoded


def _write_model(path: Path, decoded: tuple) -> None:
    nb_ptc, nb_pc, nb_classes, tk_nextmove, tk_output = decoded
    states = sorted(tk_output)
    with atomic_path(path) as tmp, tmp.open("wb") as handle:
        np.savez(
            handle,
            nb_ptc=np.frombuffer(nb_ptc, dtype=np.dtype(nb_ptc.typecode)),
            nb_pc=np.frombuffer(nb_pc, dtype=np.dtype(nb_pc.typecode)),
            nb_classes=np.array(nb_classes),
            tk_nextmove=np.frombuffer(tk_nextmove, dtype=np.dtype(tk_nextmove.typecode)),
            output_states=np.array(states, dtype=np.int64),
            output_lengths=np.array([len(tk_output[s]) for s in states], dtype=np.int64),
            output_features=np.array([f for s in states for f in tk_output[s]], dtype=np.int64),
        )


def _read_model(path: Path) -> tuple:
    """The tuple as langid.py decodes it: array.array where it has them (its tokenizer indexes
    tk_nextmove byte by byte, fastest on an array.array), a list of class names, a dict of tuples."""
    with np.load(path, allow_pickle=False) as data:
        nb_ptc = array.array(data["nb_ptc"].dtype.char, data["nb_ptc"].tobytes())
        nb_pc = array.array(data["nb_pc"].dtype.char, data["nb_pc"].tobytes())
        tk_nextmove = array.array(data["tk_nextmove"].dtype.char, data["tk_nextmove"].tobytes())
        nb_classes = [str(name) for name in data["nb_classes"]]
        ends = np.cumsum(data["output_lengths"])
        features = data["output_features"].tolist()
        tk_output = {
            int(state): tuple(features[end - length : end])
            for state, length, end in zip(
                data["output_states"].tolist(), data["output_lengths"].tolist(), ends.tolist()
            )
        }
    return nb_ptc, nb_pc, nb_classes, tk_nextmove, tk_output
