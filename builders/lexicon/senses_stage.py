"""`babelforge senses`: multilingual senses of the 1,000 ImageNet synsets, from OMW or BabelNet.

The source comes from the profile (`senses.source.<profile>`): `omw` reads the OMW raw data
offline; `babelnet` queries the BabelNet HTTP API with the key in the environment;
`babelnet_index` reads a licensed local BabelNet index through BabelNet's own Python package
(its RPC server), and writes the same senses to the same file as `babelnet`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from babelforge.core.config import as_params, from_group, setting
from babelforge.core.io import read_table, write_table
from babelforge.core.languages import registry
from babelforge.core.progress import info
from babelforge.core.provenance import provenance
from babelforge.core.sources import input_record
from babelforge.core.stages import Paths, Stage, stage_paths
from babelforge.lexicon.babelnet import BabelNetSource
from babelforge.lexicon.babelnet_index import BabelNetIndexSource
from babelforge.lexicon.omw import OmwSource
from babelforge.lexicon.senses import SENSE_COLUMNS, senses_path


@dataclass(frozen=True)
class BabelNetConfig:
    base_url: str = setting("https://babelnet.io/v9", "BabelNet HTTP API root")
    cache_dir: str = setting(".cache/babelnet", "every response cached here: a rebuild makes zero requests")
    batch_size: int = setting(3, "target languages per getSynset call (the API allows 3)", minimum=1)


@dataclass(frozen=True)
class BabelNetIndexConfig:
    config_file: str = setting(
        "babelnet_conf.yml", "the babelnet package's config file; its RPC_URL names the server over the local index"
    )
    cache_dir: str = setting(
        ".cache/babelnet_index", "every answer cached here: a rebuild needs neither the package nor its server"
    )


@dataclass(frozen=True)
class Config:
    """The `senses` group of params.yaml."""

    GROUP = "senses"
    source: Literal["omw", "babelnet", "babelnet_index"] = setting(
        {"sample": "omw", "full": "babelnet"},
        "the SenseSource: the open OMW wordnets, the BabelNet HTTP API, or a licensed BabelNet index (babelnet_index)",
    )
    omw_dir: str = setting("data/raw/omw", "OMW raw data (wns/ inside), as `fetch` lays it out")
    omw_source_order: list[str] = setting(["omw", "wikt", "cldr"], "OMW source kinds, best first")
    babelnet: BabelNetConfig = setting(BabelNetConfig(), "the BabelNet client")
    babelnet_index: BabelNetIndexConfig = setting(
        BabelNetIndexConfig(), "BabelNet's own Python package, in RPC mode over a licensed local index"
    )
    profile: str = from_group(str, "profile", "the build profile")
    paths: Paths = stage_paths()


def build_source(config: Config):
    """The SenseSource the config names."""

    if config.source == "omw":
        return OmwSource(config.omw_dir, source_order=config.omw_source_order)

    languages = [lang.key for lang in registry() if lang.babelnet and lang.in_babel_imagenet]
    if config.source == "babelnet_index":
        return BabelNetIndexSource(
            config_file=config.babelnet_index.config_file,
            cache_dir=config.babelnet_index.cache_dir,
            languages=languages,
        )
    return BabelNetSource(
        cache_dir=config.babelnet.cache_dir,
        languages=languages,
        batch_size=config.babelnet.batch_size,
        base_url=config.babelnet.base_url,
    )


def run(config: Config) -> int:

    import pandas as pd

    source = build_source(config)
    synsets = read_table(config.paths.wordnet, columns=["synset"])["synset"].tolist()
    if config.source == "babelnet" and source.cached_synsets(synsets) < len(synsets):
        source.require_key()  # fail now, naming the variable, not after the first request
    senses = list(source.senses(synsets))
    frame = pd.DataFrame([[getattr(s, c) for c in SENSE_COLUMNS] for s in senses], columns=list(SENSE_COLUMNS))
    frame["rank"] = frame["rank"].astype("int32")
    records = source.source_records() if hasattr(source, "source_records") else {}
    if config.source == "omw":
        # the fetched source as a whole (version, manifest hash, licence), then every file read
        records = {**input_record(config.omw_dir, config.paths.raw), "files": records}
    record = provenance(
        "senses", params={"profile": config.profile, "senses": as_params(config)}, sources={config.source: records}
    )
    out = senses_path(config.paths.senses, source.name)  # babelnet_index: babelnet.parquet, the same senses
    write_table(frame, out, sort_by=["lang", "synset", "rank"], provenance=record)
    info(
        f"senses: {len(frame)} senses of {frame['synset'].nunique()} synsets in {frame['lang'].nunique()} "
        f"languages from {config.source} -> {out}"
    )
    return 0


STAGE = Stage(
    "senses",
    "collect multilingual senses of the 1,000 synsets (OMW or BabelNet)",
    run,
    config=Config,
    flags={
        "--wordnet": ("paths.wordnet", "output of `babelforge wordnet`"),
        "--out": ("paths.senses", "writes DIR/<source>.parquet"),
    },
    deps=(
        "${paths.wordnet}",
        "${senses.omw_dir}",
        "resources/sources.tsv",  # version and licence of the fetched source, in the provenance
        "resources/languages.tsv",
    ),
    outs=("${paths.senses}",),
    docs="docs/guides/full-profile.md",
    owns={
        "senses": ("data/senses", "one Parquet of senses per sense source"),
    },
)
