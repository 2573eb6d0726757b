"""`babelforge wordnet`: the 1,000 ImageNet-1k classes resolved in WordNet 3.0."""
from __future__ import annotations

import argparse

from builders.core.params import DEFAULT_PARAMS


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--params", default=DEFAULT_PARAMS, help="params file (group `wordnet`)")
    parser.add_argument("--classes", default="resources/imagenet1k_classes.tsv", help="class list TSV")
    parser.add_argument("--out", default="data/wordnet/imagenet1k.parquet")


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from builders.core.io import sha256_file, write_table
    from builders.core.params import load_params, section
    from builders.core.progress import info, progress
    from builders.core.provenance import provenance
    from builders.lexicon.wordnet import open_wordnet, read_imagenet_classes, resolve_class, wordnet_source_record

    params = section(load_params(args.params), "wordnet")
    classes = read_imagenet_classes(args.classes)
    reader = open_wordnet(params["dict_dir"], params["nltk_data"])
    resolved = [resolve_class(reader, cls) for cls in progress(classes, "wordnet", total=len(classes), unit="class")]
    frame = pd.DataFrame(
        {
            "class_idx": [k.class_idx for k in resolved],
            "wnid": [k.wnid for k in resolved],
            "synset": [k.synset for k in resolved],
            "synset_name": [k.synset_name for k in resolved],
            "clip_name": [k.clip_name for k in resolved],
            "lemmas": [list(k.lemmas) for k in resolved],
            "definition": [k.definition for k in resolved],
            "hypernym_path": [list(k.hypernym_path) for k in resolved],
            "taxa": [list(k.taxa) for k in resolved],
        }
    )
    record = provenance(
        "wordnet",
        params={key: params[key] for key in ("dict_dir",)},
        sources={
            "wordnet": wordnet_source_record(params["dict_dir"]),
            "imagenet1k_classes": {"sha256": sha256_file(args.classes)},
        },
    )
    write_table(frame, args.out, sort_by=["class_idx"], provenance=record)
    info(f"wordnet: {len(resolved)} classes resolved -> {args.out}")
    return 0
