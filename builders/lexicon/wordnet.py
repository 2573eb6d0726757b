"""WordNet 3.0 through nltk, over Debian's database files.

nltk will not read `/usr/share/wordnet` in place: it wants `corpora/wordnet/` inside one
of its data directories, with a `lexnames` file Debian does not ship. `provision_nltk_wordnet`
builds that directory once (copying the database and `resources/wordnet_lexnames.tsv`).
"""

from __future__ import annotations

import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.imagenet import ImageNetClass
from babelforge.core.io import sha256_file
from babelforge.core.resources import resource
from babelforge.core.tsv import TsvSpec, matching, one_of, read_tsv
from babelforge.lexicon.senses import wnid_to_synset

LEXNAMES = resource("wordnet_lexnames.tsv")
# nltk's `lexnames`: no header; file number, lexicographer file name, syntactic category (1-4).
LEXNAMES_TABLE = TsvSpec(
    ("number", "lexname", "category"),
    required=("number", "lexname", "category"),
    unique=(("number",), ("lexname",)),
    checks={
        "number": matching(r"[0-9]{2}", "a two-digit file number"),
        "lexname": matching(r"(adj|adv|noun|verb)\.[a-zA-Z]+", "a lexicographer file name (noun.animal)"),
        "category": one_of("1", "2", "3", "4"),
    },
    header=False,
)
# The database files nltk's WordNet reader opens.
WORDNET_FILES = (
    "adj.exc",
    "adv.exc",
    "noun.exc",
    "verb.exc",
    "cntlist.rev",
    "data.adj",
    "data.adv",
    "data.noun",
    "data.verb",
    "index.adj",
    "index.adv",
    "index.noun",
    "index.verb",
    "index.sense",
)


@dataclass(frozen=True)
class ClassKnowledge:
    """One ImageNet class resolved in WordNet 3.0 (ELEVATER-style knowledge)."""

    class_idx: int
    wnid: str
    synset: str  # WordNet 3.0 offset id, 01440764-n
    synset_name: str  # tench.n.01
    clip_name: str
    lemmas: tuple[str, ...]  # English lemmas in WordNet order, `_` -> space
    definition: str
    hypernym_path: tuple[str, ...]  # synset names from entity.n.01 down to the class
    taxa: tuple[str, ...] = ()  # `rank:Name` of the taxa the class belongs to (`genus:Canis`), sorted
    broader_lemmas: tuple[str, ...] = ()  # English lemmas of every hypernym up to entity, `_` -> space, sorted
    other_senses: tuple[str, ...] = ()  # other synsets (any part of speech) of the class's lemmas, sorted


def check_lexnames(path: str | Path = LEXNAMES) -> None:
    """The lexnames table as nltk needs it: numbered 00, 01, 02 ... in file order (it asserts so)."""
    for number, (line, row) in enumerate(read_tsv(path, LEXNAMES_TABLE)):
        if int(row["number"]) != number:
            raise BabelforgeError(f"{path}:{line}: file number {row['number']}, expected {number:02d} (00, 01, ...)")


def provision_nltk_wordnet(dict_dir: str | Path, nltk_data: str | Path) -> Path:
    """Make `<nltk_data>/corpora/wordnet/` from a WordNet 3.0 `dict` directory; returns its path.

    Copies only when a file is missing or differs in size, so a second call is cheap.
    """
    dict_dir, target = Path(dict_dir), Path(nltk_data) / "corpora" / "wordnet"
    missing = [name for name in WORDNET_FILES if not (dict_dir / name).is_file()]
    if missing:
        raise BabelforgeError(
            f"{dict_dir}: not a WordNet 3.0 database (missing {', '.join(missing)}); "
            "install it with `apt-get install wordnet-base wordnet-sense-index` or set wordnet.dict_dir"
        )
    check_lexnames(LEXNAMES)  # before anything is copied: nltk fails on a bad one with an assert
    target.mkdir(parents=True, exist_ok=True)
    for name in WORDNET_FILES:
        source, copy = dict_dir / name, target / name
        if not copy.exists() or copy.stat().st_size != source.stat().st_size:
            shutil.copyfile(source, copy)
    lexnames = target / "lexnames"
    if not lexnames.exists() or lexnames.read_bytes() != LEXNAMES.read_bytes():
        shutil.copyfile(LEXNAMES, lexnames)
    return target


def open_wordnet(dict_dir: str | Path, nltk_data: str | Path):
    """An nltk WordNetCorpusReader over WordNet 3.0 from `dict_dir`."""

    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    root = provision_nltk_wordnet(dict_dir, nltk_data)
    data_dir = str(Path(nltk_data).resolve())
    if data_dir not in nltk.data.path:
        # nltk only opens corpora inside its registered data directories.
        nltk.data.path.insert(0, data_dir)

    class EnglishWordNetReader(WordNetCorpusReader):
        """nltk's reader without the sense map from its `wordnet` corpus to the one opened: nltk builds
        it (both index.sense files read: 1.1 s of the stage's 5.6) only to place OMW data, and the
        project reads no OMW through nltk (the reader's OMW reader is None)."""

        def map_wn(self, version="wordnet"):
            return None

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions not available": we do not use OMW via nltk
        reader = EnglishWordNetReader(str(root.resolve()), None)
    if reader.get_version() != "3.0":
        raise BabelforgeError(f"{dict_dir}: WordNet {reader.get_version()} found, ImageNet needs 3.0")
    return reader


def choose_hypernym_path(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The longest of a synset's hypernym paths; among equally long ones, the first by name."""
    return min(paths, key=lambda path: (-len(path), path))


# Prefixes WordNet gives the lemma of a taxon synset (`genus_Canis`, `family_Canidae`).
TAXON_RANKS = frozenset(
    {
        "kingdom",
        "subkingdom",
        "phylum",
        "subphylum",
        "superphylum",
        "division",
        "subdivision",
        "class",
        "subclass",
        "superclass",
        "infraclass",
        "order",
        "suborder",
        "superorder",
        "infraorder",
        "family",
        "subfamily",
        "superfamily",
        "tribe",
        "genus",
        "subgenus",
    }
)


def taxon_names(synset) -> tuple[str, ...]:
    """`rank:Name` of every taxon a synset belongs to, sorted: the member holonyms (genus, then
    family, order...) of the synset and of each of its hypernyms. The labels use them to tell
    a scientific name (`cavia porcellus`, `sphyrnidae`) from a vernacular one."""
    taxa: set[str] = set()
    for node in [synset, *synset.closure(lambda s: s.hypernyms() + s.instance_hypernyms())]:
        for taxon in node.closure(lambda s: s.member_holonyms()):
            # a taxon has a rank-prefixed lemma; other member holonyms are groups (`school`, `pack`)
            for lemma in taxon.lemma_names():
                rank, _, name = lemma.partition("_")
                if rank in TAXON_RANKS and name and "_" not in name:
                    taxa.add(f"{rank}:{name}")
    return tuple(sorted(taxa))


def broader_lemmas(synset) -> tuple[str, ...]:
    """The English lemmas of every synset above the class (hypernyms and instance hypernyms, all
    paths): the labels' specificity rule demotes a candidate that names a broader concept."""
    broader = synset.closure(lambda s: s.hypernyms() + s.instance_hypernyms())
    return tuple(sorted({name.replace("_", " ") for node in broader for name in node.lemma_names()}))


def other_senses(reader, synset) -> tuple[str, ...]:
    """Names of the other synsets, of any part of speech, that one of the class's lemmas (or its
    inflected form: `lighter` is also light.a.01) names: the labels' polysemy rule wants more
    support for a candidate when a source may have translated another sense."""
    names = {other.name() for lemma in synset.lemma_names() for other in reader.synsets(lemma)}
    return tuple(sorted(names - {synset.name()}))


def resolve_class(reader, cls: ImageNetClass) -> ClassKnowledge:
    """Look up one class's synset; BabelforgeError naming the wnid if it does not resolve."""
    try:
        synset_id = wnid_to_synset(cls.wnid)
    except ValueError as error:
        raise BabelforgeError(f"class {cls.class_idx}: {error}") from None
    offset, pos = synset_id.split("-")
    try:
        synset = reader.synset_from_pos_and_offset(pos, int(offset))
    except Exception:  # nltk raises WordNetError or ValueError depending on the failure
        synset = None
    if synset is None:
        raise BabelforgeError(
            f"class {cls.class_idx}: wnid {cls.wnid} is not a WordNet 3.0 synset (offset {offset}, pos {pos})"
        )
    # ELEVATER-style knowledge uses one path. nltk's order of a synset's several paths varies
    # with Python's hash seed (it goes through sets), so pick by content: the longest (most
    # specific) path, ties broken by the names along it.
    path = choose_hypernym_path([tuple(node.name() for node in p) for p in synset.hypernym_paths()])
    return ClassKnowledge(
        class_idx=cls.class_idx,
        wnid=cls.wnid,
        synset=synset_id,
        synset_name=synset.name(),
        clip_name=cls.clip_name,
        lemmas=tuple(name.replace("_", " ") for name in synset.lemma_names()),
        definition=synset.definition(),
        hypernym_path=path,
        taxa=taxon_names(synset),
        broader_lemmas=broader_lemmas(synset),
        other_senses=other_senses(reader, synset),
    )


def wordnet_source_record(dict_dir: str | Path) -> dict:
    """Provenance of the WordNet database: version and the sha256 of the noun data file."""
    return {"name": "wordnet-3.0", "data.noun_sha256": sha256_file(Path(dict_dir) / "data.noun")}
