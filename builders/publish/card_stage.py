"""`babelforge card <dataset>`: build `<paths.hub>/<dataset>/` (Parquet per config + README.md).

Every dataset of the registry (builders/core/datasets.py) has a card; what it reads, says and
is licensed under is its spec. One config per language (or per task and language); each
config's data is one Parquet file per split under `data/`, with the spec's column types as
Hugging Face features. The folder is built beside the target and swapped in whole, so a
failed build leaves the previous card (or none), never a mix. A card reads its dataset's
artifacts and the audit's slice of that dataset only, so it is rebuilt when they change. A slice
that summarised another build of the dataset's input (its recorded `input` digest differs from the
input's now: a card run after a rebuild without the audit) is refused with one line.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from babelforge.core.config import setting
from babelforge.core.datasets import LazySplit, artifact_path, input_digest, names, slice_path, spec, specs
from babelforge.core.declarations import imported
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import atomic_directory, read_json, write_json, write_table, write_text
from babelforge.core.languages import registry
from babelforge.core.progress import info, progress
from babelforge.core.provenance import build_profile
from babelforge.core.stages import Paths, Stage, padded_item, stage_paths
from babelforge.publish import card, croissant
from babelforge.publish.card import arrow_type, hf_features


@dataclass(frozen=True)
class Config:
    """The `card` group of params.yaml: which dataset; what it reads and writes is in `paths`."""

    GROUP = "card"
    dataset: str | None = setting(None, "which dataset's card to build (a name in builders/core/datasets.py)")
    paths: Paths = stage_paths()


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", choices=names(), help="which dataset's card to build")


def run(config: Config) -> int:

    if config.dataset is None:
        raise BabelforgeError("card: name the dataset, e.g. `babelforge card babel-imagenet`")
    folder = build_card(spec(config.dataset), config.paths, registry())
    if (folder / "README.md").is_file():  # a skipped dataset's folder has none, and said so
        info(f"card: {config.dataset} -> {folder}/README.md")
    return 0


def build_card(spec, paths: Paths, languages) -> Path:
    """Build the card folder of the dataset `spec` under `paths.hub`; returns it. Validates it before swapping it in."""

    started = time.monotonic()
    audit = fresh_audit(spec, paths)  # before reading the data: another build's audit is refused at once
    data = imported(spec.read)(paths)
    if data.skipped:
        return skipped_card(spec, paths, data.skipped)
    if not data.tables:
        raise BabelforgeError(f"card {spec.name}: the input has no rows; build it first")
    source_infos = _source_infos(spec, paths, data)
    notes = imported(spec.audit_notes)(audit) if spec.audit_notes and audit else []
    limitations = notes + data.limitations
    part_licences = [*spec.licences, *data.licences]

    target = Path(paths.hub) / spec.name
    rows = sum(len(table) for splits in data.tables.values() for table in splits.values())
    configs = f"{len(data.tables)} config" + ("s" if len(data.tables) != 1 else "")
    info(f"card {spec.name}: writing {configs}, {rows:,} rows")
    with atomic_directory(target) as staging:
        stats, config_files = [], []
        for name in progress(sorted(data.tables), desc=f"card {spec.name}", total=len(data.tables), unit="config"):
            files, columns = {}, {}
            for split, table in sorted(data.tables[name].items()):
                path = f"data/{name}/{split}.parquet"
                table = table.read() if isinstance(table, LazySplit) else table
                schema = write_config_table(table, staging / path, data.features, data.sort_by)
                files[split] = path
                columns.update({field.name: croissant.column(field.name, field.type) for field in schema})
            language = data.language(name)
            config_files.append(croissant.ConfigFiles(name, files, language, list(columns.values())))
            stats.append(
                card.ConfigStats(
                    name=name,
                    rows=sum(len(table) for table in data.tables[name].values()),
                    language_tag=_language_tag(languages, language) if language else None,
                    group=data.groups.get(language) if language else None,
                    precision=data.precision.get(language) if language else None,
                    sources=data.sources.get(name, {}),
                    files=files,
                )
            )
        licences = [info.licence for info in source_infos] + [licence for _, licence in part_licences]
        default = next((name for name in sorted(data.tables) if data.language(name) == "eng_Latn"), None)
        # the profile the artifacts record: a card of a sample build carries the banner and the tag
        profile = build_profile(data.provenance.values())
        metadata = card.front_matter(spec, stats, licences, default, profile)
        text = card.render_card(
            spec, metadata, stats, source_infos, data.provenance, limitations, part_licences, profile, data.notes
        )
        write_text(text, staging / "README.md")
        write_text(card.render_licences(source_infos, part_licences), staging / "LICENSES.md")
        tags = {
            config.language: croissant.language_tag(config.language, _language_tag(languages, config.language))
            for config in config_files
            if config.language
        }
        croissant_metadata = croissant.croissant(
            spec,
            config_files,
            tags,
            source_infos,
            part_licences,
            data.provenance,
            limitations + list(spec.limitations),
            data.notes,
            profile,
            card.SAMPLE_BANNER,
            metadata["tags"],
        )
        write_json(croissant_metadata, staging / croissant.FILE_NAME)
        problems = card.validate_card(staging)
        if problems:
            raise BabelforgeError(f"card {spec.name}: generated card is invalid: {problems[0]}")
    info(f"card {spec.name}: {configs} in {time.monotonic() - started:.0f} s")
    return target


SKIPPED_NOTE = "SKIPPED.md"  # the one file of the card folder of a dataset its build profile cannot build


def skipped_card(spec, paths: Paths, reason: str) -> Path:
    """The card folder of a dataset this build skipped: one note saying why, no README.md, so
    `publish` refuses it (no card to validate) and nothing passes it off as the dataset."""

    target = Path(paths.hub) / spec.name
    with atomic_directory(target) as staging:
        write_text(f"# {spec.pretty_name}: not built\n\nThis build skipped it: {reason}.\n", staging / SKIPPED_NOTE)
    info(f"card {spec.name}: skipped (not built in this profile: {reason})")
    return target


def fresh_audit(spec, paths: Paths) -> dict[str, Any]:
    """The audit's slice of the dataset ({} when the audit is not built); one that summarised another
    build of its input raises. A slice recording no input (hand-made) is taken as it is."""

    path = slice_path(paths, spec.name)
    if not path.exists():
        return {}
    found = read_json(path)
    recorded = found.get("input")
    if recorded:
        now = input_digest(artifact_path(paths, recorded["artifact"]))
        if now != recorded["sha256"]:
            seen = (recorded["sha256"] or "none")[:12]
            raise BabelforgeError(
                f"card {spec.name}: {path} summarises another build of {recorded['artifact']} (sha256 {seen}, "
                f"now {(now or 'none')[:12]}); rebuild the audit first (`dvc repro audit`, or `babelforge audit`)"
            )
    return found


def _source_infos(spec, paths: Paths, data) -> list:
    """Licence of every row source in the data; a source the spec cannot license stops the card."""

    used = sorted({source for counts in data.sources.values() for source in counts})
    if not used:
        return []
    if spec.source_licences is None:
        raise BabelforgeError(
            f"card {spec.name}: rows carry sources ({', '.join(used[:3])}...) but the spec "
            "names no source_licences function; cannot tell their licences"
        )
    try:
        return imported(spec.source_licences)(paths, used)
    except ValueError as error:
        raise BabelforgeError(f"card {spec.name}: {error}") from None


def write_config_table(table, path: Path, features: dict[str, Any], sort_by: tuple[str, ...]):
    """One config's split (a DataFrame or an Arrow table) as Parquet: sorted, declared columns cast to their feature's Arrow
    type and described in the `huggingface` schema metadata, which `datasets` reads back. Returns the written schema."""

    import pyarrow as pa

    arrow = table if isinstance(table, pa.Table) else pa.Table.from_pandas(table, preserve_index=False)
    declared = {column: feature for column, feature in features.items() if column in arrow.column_names}
    for column, feature in sorted(declared.items()):
        index = arrow.column_names.index(column)
        arrow = arrow.set_column(index, column, arrow.column(column).cast(arrow_type(feature)))
    if declared:
        metadata = dict(arrow.schema.metadata or {})
        metadata[b"huggingface"] = json.dumps({"info": {"features": hf_features(declared)}}, sort_keys=True).encode()
        arrow = arrow.replace_schema_metadata(metadata)
    write_table(arrow, path, sort_by=sort_by)
    return arrow.schema


def _language_tag(languages, key: str) -> str:
    """Hub language tag (ISO 639-1 where one exists, else 639-3) of a registry key."""
    language = languages.get(key)
    return language.iso639_1 or language.iso639_3


def artifact_dep(artifact: str) -> str:
    """A spec's artifact (`labels`, `captions/selected.parquet`) as dvc.yaml names it (`${paths.labels}`)."""
    name, _, inside = artifact.partition("/")
    return "${paths." + name + "}" + (f"/{inside}" if inside else "")


def card_items() -> dict[str, dict[str, str]]:
    """One dvc.yaml stage per dataset of the registry, `card@<dataset>`: `data`, `more` and `licences` are
    the artifacts its spec reads (a DVC template takes a fixed list of deps, so a dataset with fewer
    artifacts repeats its last one); the card also reads the audit's slice of its dataset."""
    items = {}
    for found in specs():
        deps = [artifact_dep(artifact) for artifact in found.artifacts]
        items[found.name] = padded_item(f"dataset {found.name}'s artifacts", deps, CARD_ITEM_KEYS)
    return items


CARD_ITEM_KEYS = ("data", "more", "licences")  # the card template's deps: ${item.data}, ${item.more}, ...


STAGE = Stage(
    "card",
    "build a dataset's Hugging Face card folder (Parquet + README.md)",
    run,
    config=Config,
    flags={
        "--out": ("paths.hub", "folder of the card folders to write"),
    },
    configure=configure,
    deps=(
        "${item.data}",
        "${item.more}",
        "${item.licences}",
        "${paths.audit}/datasets/${key}.json",
        "resources/citations.bib",
    ),
    languages=("${key}",),
    key_setting="dataset",
    outs=("${paths.hub}/${key}",),
    params=(),
    foreach=card_items(),
    cmd_args="${key}",
    docs="docs/guides/publish.md",
    in_params_yaml=False,
    owns={
        "hub": ("build/hub", "dataset card folders, one per dataset"),
    },
)
