"""The dataset registry: every dataset babelforge cards, audits and publishes, declared once.

A dataset is one `DatasetSpec` in its own area (`builders/<area>/dataset.py`): the artifacts
its card reads (names in the `paths:` group), its card text, licences and citations, how its
tables become card configs (`read`), and its audit section (whose reader and summary live in the
area too, `builders/<area>/audit_section.py`). `REGISTRY` is every spec of an area's `dataset.py`, found
from the source; the card and publish stages and the audit loop over it, and `dvc.yaml`'s `card` stage
has one entry per name (written from it). Core knows the spec type, nothing about any dataset, and
imports no area. docs/adding_a_dataset.md walks through adding one: its area's dataset.py, its tests.

Functions are named as "module:function" strings and imported only when used, so listing the
datasets (`babelforge card --help`) imports no dataset code.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from babelforge.core.declarations import declared_calls, declaring_files, imported, keywords, literal
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import directory_hash, read_arrow, read_provenance, read_table, sha256_file, value_counts
from babelforge.core.licences import Licence
from babelforge.core.resources import resource


def _discovered(kind: str) -> dict[str, str]:
    """name -> "module:attribute" of every `NAME = <kind>(name="...")` in an area's `dataset.py`
    (`builders/<area>/dataset.py`), read from the source without importing it; by area, then as written."""
    found: dict[str, str] = {}
    for path, module in declaring_files(Path(__file__).resolve().parents[1], "babelforge", "*/dataset.py"):
        for target, call in declared_calls(path, kind):
            name = literal(keywords(call).get("name"))
            if not isinstance(name, str) or target is None:
                raise BabelforgeError(f"{path}: a {kind} is assigned to one name and names itself with a string")
            if name in found:
                raise BabelforgeError(f"two {kind}s named {name!r}: {found[name]} and {path}")
            found[name] = f"{module}:{target}"
    return found


# name (the card folder and Hub dataset) -> "module:attribute" of its DatasetSpec: found, never listed by hand.
REGISTRY: dict[str, str] = _discovered("DatasetSpec")
CITATIONS = resource("citations.bib")
SLICES = "datasets"  # the audit writes <paths.audit>/datasets/<name>.json: what it found per dataset


# Column types a card declares for `datasets.load_dataset` (the card writes them as Hugging Face features).
@dataclass(frozen=True)
class ClassLabel:
    """An integer column whose values index `names` (ImageNet class ids, say)."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class Image:
    """A column of images, stored as {bytes, path}: decoded to PIL images on load."""


@dataclass(frozen=True)
class Value:
    """A scalar column of one type (`string`, `int32`, `float64`, `bool`...): typed even when every value is null."""

    dtype: str


Feature = ClassLabel | Image | Value


@dataclass(frozen=True)
class SectionPlot:
    """A box plot per language of a section's score (its `Section.distribution`) on the audit's index."""

    file: str  # the PNG in the audit's folder, listed in summary.json's `plots`
    title: str  # its heading on the index, and the plot's title
    ylabel: str


@dataclass(frozen=True)
class AuditSection:
    """How the audit reports a dataset beside the labels, per language.

    `artifact` is the input, as in `DatasetSpec.artifacts`; when it is absent the section
    says "not built". `reader` ("module:function", in the dataset's area: `builders/<area>/audit_section.py`)
    takes the input's path and returns a `babelforge.core.sections.Section` (`language(lang) -> dict`,
    `languages()`: the input's own, which the dataset's slice lists; `overview() -> dict`), or None
    when the input is not built.
    """

    key: str  # its entry in each language's record, in summary.json and in the dataset's slice
    title: str  # its heading on the audit's language pages
    artifact: str
    reader: str | None  # None: the labels, which the audit checks row by row (no section of their own)
    overview: bool = False  # summary.json carries the section's overview under `key`
    plot: SectionPlot | None = None  # drawn from the reader's `distribution` when the input is built


@dataclass(frozen=True)
class LazySplit:
    """A config's split read only when the card writes it (`read()` -> Arrow table), so the card
    of an artifact too big for memory holds one config at a time; its row count is known without
    reading it."""

    rows: int
    read: Callable[[], Any]

    def __len__(self) -> int:
        return self.rows


@dataclass
class DatasetTables:
    """What a spec's `read` hands the card: tables per config and split, plus facts from the data."""

    tables: dict[str, dict[str, Any]]  # config -> split -> DataFrame, Arrow table or LazySplit
    sources: dict[str, dict[str, int]] = field(default_factory=dict)  # config -> row `source` -> rows
    groups: dict[str, str] = field(default_factory=dict)  # language -> resource group
    # language -> its rows' expected share of correct ones, as text (the card's languages table)
    precision: dict[str, str] = field(default_factory=dict)
    provenance: dict[str, dict] = field(default_factory=dict)  # artifact path -> provenance record
    limitations: list[str] = field(default_factory=list)  # sentences measured on the data
    # sentences after the card's summary on how the data was made, from the settings its artifacts record
    notes: list[str] = field(default_factory=list)
    licences: list[tuple[str, Licence]] = field(default_factory=list)  # licences found in the data (images)
    sort_by: tuple[str, ...] = ()
    features: dict[str, Feature] = field(default_factory=dict)  # column -> declared type
    # config -> registry key of its language where the config is not named by it; None: no language
    config_languages: dict[str, str | None] = field(default_factory=dict)
    # why this build has no tables (its profile cannot build the dataset): the card folder then says only that
    skipped: str | None = None

    def language(self, config: str) -> str | None:
        return self.config_languages.get(config, config)


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset: what its card reads and says, and how the audit reports it."""

    name: str  # card folder and Hub dataset name, a key of REGISTRY
    pretty_name: str
    summary: str  # the card's first paragraph: what a row is, what each column means
    artifacts: tuple[str, ...]  # what the card reads: `paths` names, or `name/file` inside one
    read: str  # "module:function" (Paths) -> DatasetTables
    task_categories: tuple[str, ...]
    citations: tuple[str, ...]  # BibTeX keys in resources/citations.bib
    licences: tuple[tuple[str, Licence], ...] = ()  # (what it covers, licence) for parts without a row source
    # "module:function" (Paths, [source names]) -> [SourceInfo], for tables whose rows carry a `source`;
    # a source it does not know stops the card (it cannot tell that row's licence)
    source_licences: str | None = None
    # "module:function" (audit slice) -> [sentences] for the card's known limitations
    audit_notes: str | None = None
    limitations: tuple[str, ...] = ()
    # what in the rows is machine output and by which model (the Croissant card's preprocessing protocol);
    # None: no machine translation, every text is from its source
    machine_translated: str | None = None
    tags: tuple[str, ...] = ("multilingual",)
    split: str = "test"
    config_unit: str = "language"  # what one config holds, for the card's body
    audit: AuditSection | None = None


@dataclass(frozen=True)
class LanguageView:
    """The languages a set of stages maps (babelforge.core.languages: a view of the registry). Every
    dataset has the view of its name (its card's, its evaluations'); an area may declare others (the
    raw caption sets the evaluations read). The `language_view` stage writes each one's registry rows."""

    name: str
    # what the languages are read from, as dvc.yaml names a dep (`${paths.languages}`, a raw file): 1 or 2
    reads: tuple[str, ...]
    # "module:function" (the files `reads` names, params.yaml) -> the registry keys (English is added to every
    # view: every dataset's source side)
    keys: str
    # params its keys depend on besides the files (`captions.input.targets`)
    params: tuple[str, ...] = ()


# name -> "module:attribute" of every LanguageView in an area's dataset.py: found, never listed by hand.
LANGUAGE_VIEWS: dict[str, str] = _discovered("LanguageView")


def language_view(name: str) -> LanguageView:
    return _declared(LANGUAGE_VIEWS, LanguageView, name, "language view")


# A published dataset on the Hugging Face Hub, as the eval commands take one: hf:ORG/NAME@REVISION.
HUB_PREFIX = "hf:"


def is_hub(text: str) -> bool:
    """Whether a command-line value names a Hub dataset (hf:ORG/NAME@REVISION), not a path."""
    return text.startswith(HUB_PREFIX)


def names() -> list[str]:
    return list(REGISTRY)


def spec(name: str) -> DatasetSpec:
    return _declared(REGISTRY, DatasetSpec, name, "dataset")


def _declared(found: Mapping[str, str], kind: type, name: str, what: str) -> Any:
    """The `kind` declared under `name` (in an area's dataset.py); one line naming the known names otherwise."""
    if name not in found:
        raise BabelforgeError(
            f"{what} {name!r} is not declared in an area's dataset.py (builders/<area>/dataset.py); "
            f"known: {', '.join(found)}"
        )
    declared = imported(found[name])
    if not isinstance(declared, kind) or declared.name != name:
        raise BabelforgeError(f"{found[name]}: not the {kind.__name__} of {name!r}")
    return declared


def specs() -> list[DatasetSpec]:
    return [spec(name) for name in REGISTRY]


def artifact_path(paths: Any, artifact: str) -> Path:
    """`labels` -> paths.labels; `captions/selected.parquet` -> paths.captions / selected.parquet."""
    name, _, rest = artifact.partition("/")
    if not hasattr(paths, name):
        raise BabelforgeError(f"artifact {artifact!r}: {name!r} is not a name in the `paths:` group")
    base = Path(getattr(paths, name))
    return base / rest if rest else base


def slice_path(paths: Any, name: str) -> Path:
    """The audit's slice of dataset `name`: what its card takes from the audit."""
    return Path(paths.audit) / SLICES / f"{name}.json"


def input_digest(path: str | Path) -> str | None:
    """sha256 of an artifact as it is now (a file's bytes, a folder's `directory_hash`), None when absent:
    the audit records it of the input it summarised (a slice's `input`), a card compares it with its own."""
    path = Path(path)
    if path.is_dir():
        return directory_hash(path)
    return sha256_file(path) if path.is_file() else None


@functools.cache
def _bibtex(path: Path) -> Mapping[str, str]:
    text = path.read_text(encoding="utf-8")
    starts = [match.start() for match in re.finditer(r"^@\w+\{", text, re.M)] + [len(text)]
    entries = {}
    for start, end in zip(starts, starts[1:]):
        entry = text[start:end].strip()
        entries[re.match(r"@\w+\{([^,\s]+),", entry).group(1)] = entry
    return entries


def citation(key: str, path: Path = CITATIONS) -> str:
    """The BibTeX entry `key` of resources/citations.bib."""
    entries = _bibtex(path)
    if key not in entries:
        raise BabelforgeError(f"{path}: no BibTeX entry {key!r}; add it there")
    return entries[key]


def artifact_provenance(path: str | Path, what: str) -> dict:
    """The provenance record of a built table; one line saying which stage to run when it is not built."""

    if not Path(path).exists():
        raise BabelforgeError(f"{path}: {what} not built; run its stage first (`dvc repro`)")
    return read_provenance(path)


def read_artifact(path: str | Path, what: str):
    """(DataFrame, provenance) of a built table; one line saying which stage to run when it is not built."""

    provenance = artifact_provenance(path, what)
    return read_table(path), provenance


def per_language_lazy(path: str | Path, split: str, columns: list[str]) -> dict[str, dict[str, LazySplit]]:
    """`per_language` of a Parquet artifact without reading it whole: the rows per language
    counted from its `lang` column, each language's rows (only `columns`) read when written."""

    return {
        lang: {split: LazySplit(rows, functools.partial(_language_rows, path, columns, lang))}
        for lang, rows in sorted(value_counts(path, "lang").items())
    }


def _language_rows(path: str | Path, columns: list[str], lang: str):
    """One language's rows of an artifact, without the artifact's schema metadata (its
    provenance goes into the card once, not into every config's file)."""

    return read_arrow(path, columns, ("lang", lang)).replace_schema_metadata(None)


def per_language(table, split: str, columns: list[str]) -> dict[str, dict[str, Any]]:
    """{lang: {split: its rows}}: one config per language of a table with a `lang` column."""
    return {lang: {split: part[columns].reset_index(drop=True)} for lang, part in table.groupby("lang", sort=True)}
