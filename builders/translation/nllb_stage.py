"""`babelforge nllb`: the CTranslate2 NLLB model, converted once (DVC output `models/nllb-ct2/`).

`sample` profile: the tiny NLLB-architecture model built locally (`tiny.py`), converted the
same way. `full`: `facebook/nllb-200-distilled-1.3B` at the pinned revision, from the local
Hugging Face cache, `nllb.local_path`, or (when online) the Hub.
"""
from __future__ import annotations

import argparse

from builders.core.params import DEFAULT_PARAMS


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--params", default=DEFAULT_PARAMS, help="params file (groups `profile`, `nllb`)")
    parser.add_argument("--out", default="models/nllb-ct2", help="CTranslate2 model directory to write")


def run(args: argparse.Namespace) -> int:
    import tempfile
    from pathlib import Path

    from builders.core.errors import BabelforgeError
    from builders.core.params import load_params, profile_section
    from builders.core.progress import info
    from builders.translation.nllb import convert_to_ctranslate2

    group = profile_section(load_params(args.params), "nllb")
    source = group["source"]
    quantization = group.get("quantization", "auto")
    if source == "tiny":
        from builders.translation.tiny import TINY_MODEL_ID, build_tiny_hf

        seed = int(group.get("tiny_seed", 0))
        with tempfile.TemporaryDirectory() as scratch:
            hf_dir = build_tiny_hf(Path(scratch) / "hf", seed=seed, sib_dir=group["sib_dir"],
                                   templates=group.get("templates") or None)
            out = convert_to_ctranslate2(hf_dir, args.out, quantization, revision=f"seed-{seed}",
                                         model_id=TINY_MODEL_ID)
        info(f"nllb: tiny NLLB model (seed {seed}, {quantization}) -> {out}")
    else:
        revision = group.get("revision") or None
        location = group.get("local_path") or source
        if group.get("local_path") and not Path(location).is_dir():
            # Never read as a Hub id: `models/nllb` would otherwise be looked up on the Hub.
            raise BabelforgeError(f"params.yaml nllb.local_path {location}: no such directory "
                                  f"(a local copy of {source}; leave it empty to use the Hugging Face cache)")
        out = convert_to_ctranslate2(location, args.out, quantization, revision=revision, model_id=source)
        info(f"nllb: {source}@{revision} ({quantization}) from {location} -> {out}")
    return 0
