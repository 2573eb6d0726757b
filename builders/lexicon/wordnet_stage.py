"""`babelforge wordnet`: the 1,000 ImageNet-1k classes resolved in WordNet 3.0."""

from __future__ import annotations

from dataclasses import dataclass

from babelforge.core.config import from_group, setting
from babelforge.core.imagenet import read_imagenet_classes
from babelforge.core.io import sha256_file, write_table
from babelforge.core.progress import info, progress
from babelforge.core.provenance import provenance
from babelforge.core.stages import Paths, Stage, stage_paths
from babelforge.lexicon.wordnet import open_wordnet, resolve_class, wordnet_source_record


@dataclass(frozen=True)
class Config:
    """The `wordnet` group of params.yaml; writes `paths.wordnet`."""

    GROUP = "wordnet"
    dict_dir: str = setting("/usr/share/wordnet", "WordNet 3.0 database (Debian: wordnet-base + wordnet-sense-index)")
    nltk_data: str = setting(".cache/nltk_data", "where nltk's corpora/wordnet/ copy is provisioned (a cache)")
    classes: str = setting(
        "resources/imagenet1k_classes.tsv", "the ImageNet-1k class list (wnid, CLIP name)", metavar="FILE"
    )
    profile: str = from_group(str, "profile", "the build profile (recorded in the provenance)")
    paths: Paths = stage_paths()


def run(config: Config) -> int:
    import pandas as pd

    classes = read_imagenet_classes(config.classes)
    reader = open_wordnet(config.dict_dir, config.nltk_data)
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
            "broader_lemmas": [list(k.broader_lemmas) for k in resolved],
            "other_senses": [list(k.other_senses) for k in resolved],
        }
    )
    record = provenance(
        "wordnet",
        # Only what decides the content (nltk_data is a cache location, and the class list
        # is recorded by its hash below), plus the profile: which build the file belongs to.
        params={"profile": config.profile, "dict_dir": config.dict_dir},
        sources={
            "wordnet": wordnet_source_record(config.dict_dir),
            "imagenet1k_classes": {"sha256": sha256_file(config.classes)},
        },
    )
    write_table(frame, config.paths.wordnet, sort_by=["class_idx"], provenance=record)
    info(f"wordnet: {len(resolved)} classes resolved -> {config.paths.wordnet}")
    return 0


STAGE = Stage(
    "wordnet",
    "resolve the ImageNet-1k wnids to WordNet 3.0 synsets + knowledge",
    run,
    config=Config,
    flags={
        "--classes": ("classes", "class list TSV"),
        "--out": ("paths.wordnet", "Parquet to write"),
    },
    deps=(
        "${wordnet.classes}",
        "resources/wordnet_lexnames.tsv",
    ),
    outs=("${paths.wordnet}",),
    params=(
        "wordnet.dict_dir",
        "wordnet.classes",
    ),
    docs="docs/datasets/knowledge.md",
    owns={
        "wordnet": ("data/wordnet/imagenet1k.parquet", "the 1,000 ImageNet classes with WordNet knowledge"),
    },
)
