"""`babelforge captions_kiwi_model`: build the tiny COMETKiwi checkpoint of the `sample` profile.

Random weights, a sentencepiece tokenizer trained on the captions and their human
translations (`captions.input`), COMET's checkpoint layout. Offline and deterministic.
"""
from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    from builders.captions.settings import add_common_arguments

    add_common_arguments(parser)
    parser.add_argument("--out", default="models/cometkiwi-tiny", help="checkpoint directory to write")


def run(args: argparse.Namespace) -> int:
    from builders.captions.qe import build_tiny_kiwi
    from builders.captions.settings import captions_params, load_registry
    from builders.captions.translate_stage import load_input
    from builders.core.params import load_params
    from builders.core.progress import info

    params = load_params(args.params)
    captions, _, _ = load_input(params, load_registry(args.registry))
    corpus = [row["caption"] for row in captions.captions] + [text for _, _, text in captions.references]
    settings = captions_params(params, "kiwi_tiny")
    build_tiny_kiwi(args.out, corpus, **settings)
    info(f"captions_kiwi_model: tiny unified_metric checkpoint -> {args.out}")
    return 0
