"""`babelforge eval_clipscore_pairs`: CLIP-S (and foil / RefCLIP-S) per row of a TSV of image-caption pairs.

A tool (outside `dvc repro`) for VALSE-style foils or human-rating data: columns `image`,
`caption`, optionally `foil` and `references` (' ||| '-separated). Prints the means; `--out`
writes the per-row scores.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from babelforge.core.config import load_config
from babelforge.core.device import resolve_device
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import atomic_path
from babelforge.core.params import load_params
from babelforge.core.stages import Stage
from babelforge.eval.clipscore.metric import clip_score, encode_reference_sets, pairwise_accuracy, ref_clip_score
from babelforge.eval.config import CommonConfig
from babelforge.eval.flags import model_spec
from babelforge.eval.models import load_model
from babelforge.eval.tools.tsv import check_columns, read_tsv


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "pairs", metavar="FILE", help="pairs TSV: image, caption [, foil] [, references (' ||| '-separated)]"
    )
    parser.add_argument("--image-root", default=".", metavar="DIR", help="folder the TSV's image paths are relative to")
    parser.add_argument(
        "--model",
        type=model_spec,
        metavar="ID[@REVISION]",
        help="model directory or Hub id@sha (default: the first of eval.common.models)",
    )
    parser.add_argument("--device", help="auto, cpu, cuda or cuda:<n> (default: eval.common.device)")
    parser.add_argument("--params", default="params.yaml", help="params file for the defaults (default: params.yaml)")
    parser.add_argument("--out", metavar="FILE", help="per-row scores TSV")


def run(args: argparse.Namespace) -> int:

    table = read_tsv(args.pairs)
    check_columns(table, ["image", "caption"], args.pairs)
    # Empty cells are empty texts, never the string "nan".
    texts = {c: table[c].fillna("").astype(str) for c in ("caption", "foil", "references") if c in table.columns}
    for column in ("caption", "foil"):
        if column in texts and (texts[column].str.strip() == "").any():
            row = int((texts[column].str.strip() == "").idxmax()) + 2  # 1-based, after the header
            raise BabelforgeError(f"{args.pairs}:{row}: empty {column}; every row needs one")
    # params.yaml fills what the flags leave open; with --model given it may be absent.
    common = None
    if args.model is None or (args.device is None and Path(args.params).exists()):
        common = load_config(CommonConfig, load_params(args.params))
    if args.model is None and not common.models:
        raise BabelforgeError("no model: pass --model or list one in params.yaml eval.common.models")
    spec = args.model or {"id": common.models[0].id, "revision": common.models[0].revision}
    device = args.device or (common.device if common else "auto")
    model = load_model(spec["id"], spec["revision"], resolve_device(device))
    image_emb = model.encode_images([Path(args.image_root) / p for p in table["image"]])
    text_emb = model.encode_texts(list(texts["caption"]))
    table["clipscore"] = clip_score(image_emb, text_emb)
    summary = {
        "model": model.name,
        "revision": model.revision,
        "n": len(table),
        "clipscore": float(table["clipscore"].mean()),
    }
    if "foil" in texts:
        table["foil_clipscore"] = clip_score(image_emb, model.encode_texts(list(texts["foil"])))
        summary["pairwise_accuracy"] = pairwise_accuracy(table["clipscore"], table["foil_clipscore"])
    if "references" in texts:
        refs = [[r for r in value.split(" ||| ") if r.strip()] for value in texts["references"]]
        table["ref_clipscore"] = ref_clip_score(image_emb, text_emb, encode_reference_sets(model.encode_texts, refs))
        summary["ref_clipscore"] = float(np.nanmean(table["ref_clipscore"]))
    for key, value in summary.items():
        print(f"{key}\t{value}")
    if args.out:
        with atomic_path(args.out) as tmp:
            table.to_csv(tmp, sep="\t", index=False, lineterminator="\n", float_format="%.6f")
    return 0


STAGE = Stage(
    "eval_clipscore_pairs",
    "CLIP-S (foil, RefCLIP-S) per row of a TSV of image-caption pairs",
    run,
    configure=configure,
    tool=True,
    pinned=True,
    docs="docs/guides/evaluate.md",
)
