"""Croissant metadata (MLCommons Croissant 1.1 with its Responsible-AI vocabulary) of a built card.

`croissant.json` sits beside the card's README.md: it describes the same Parquet files as record
sets a Croissant reader (`mlcroissant`) loads from the card folder, offline, and says what the
card says about where the rows come from (sources, their licences, the models that made machine
output, the build's profile) in the fields the Croissant RAI extension defines for it.

Pure: everything here takes plain data (the spec, the configs' files and column types, the
licence and provenance records the card uses) and returns a JSON-ready dict; card_stage.py writes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from babelforge.core.datasets import DatasetSpec, citation
from babelforge.core.licences import Licence, SourceInfo

CROISSANT = "http://mlcommons.org/croissant/1.1"
CROISSANT_RAI = "http://mlcommons.org/croissant/RAI/1.0"
FILE_NAME = "croissant.json"
PARQUET = "application/x-parquet"

# The JSON-LD context of Croissant 1.1 (as the spec and mlcroissant write it), plus `prov` for the sources.
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "cr": "http://mlcommons.org/croissant/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileObject": "cr:fileObject",
    "fileProperty": "cr:fileProperty",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "prov": "http://www.w3.org/ns/prov#",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}


@dataclass(frozen=True)
class Column:
    """One column of a config's Parquet file, as Croissant types it."""

    name: str
    data_type: str  # sc:Text, sc:Integer, sc:Float, sc:Boolean, sc:ImageObject
    is_array: bool = False


@dataclass(frozen=True)
class ConfigFiles:
    """One config of the card: its files (split -> path in the folder), its language and its columns."""

    name: str
    files: Mapping[str, str]
    language: str | None  # registry key (`deu_Latn`); None: a config of no language
    columns: Sequence[Column]


def record_set_name(config: str, language: str | None, dataset: str) -> str:
    """Which record set a config's rows belong to: configs `<task>.<lang>` share their task's,
    configs named by their language share the dataset's, a config of no language is its own."""

    if language is not None and config.endswith(f".{language}"):
        return config[: -len(language) - 1]
    return dataset if language is not None else config


def language_tag(key: str, primary: str) -> str:
    """BCP-47 tag of a registry key: its Hub language tag (ISO 639-1, else 639-3) with the script."""
    return f"{primary}-{key.partition('_')[2]}" if "_" in key else primary


def croissant(
    spec: DatasetSpec,
    configs: Sequence[ConfigFiles],
    language_tags: Mapping[str, str],
    sources: Sequence[SourceInfo],
    part_licences: Sequence[tuple[str, Licence]],
    provenance: Mapping[str, Any],
    limitations: Sequence[str],
    notes: Sequence[str] = (),
    profile: str | None = None,
    sample_banner: str | None = None,
    keywords: Sequence[str] = (),
) -> dict[str, Any]:
    """The card's Croissant metadata: one file set and one record set per group of configs with the same
    columns (see record_set_name), each record carrying its config and language; the RAI fields from the
    spec, the sources' licences and the provenance records. `language_tags`: registry key -> BCP-47 tag."""

    licences = _licences(sources, part_licences)
    versions = sorted({str(record["version"]) for record in provenance.values() if (record or {}).get("version")})
    sample = profile == "sample"
    description = spec.summary if not sample or not sample_banner else f"{_plain(sample_banner)} {spec.summary}"
    metadata: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": [CROISSANT, CROISSANT_RAI],
        "name": spec.name,
        "alternateName": spec.pretty_name,
        "description": description,
        "license": sorted({licence.url or licence.name for _, licence in licences}),
        "citeAs": "\n\n".join(citation(key) for key in spec.citations),
        "keywords": [*spec.task_categories, *keywords],
        "isLiveDataset": False,
        # the babelforge version that built it (no date: the same inputs give the same bytes on any day)
        **({"version": versions[0]} if len(versions) == 1 else {}),
        "inLanguage": sorted({language_tags[c.language] for c in configs if c.language in language_tags}),
        "creator": {"@type": "sc:Organization", "name": "babelforge"},
        "distribution": [],
        "recordSet": [],
        # Responsible AI (Croissant RAI 1.0)
        "rai:dataCollection": " ".join([spec.summary, *notes]),
        "rai:dataCollectionRawData": "; ".join(f"{what}: {licence.name}" for what, licence in licences),
        "rai:machineAnnotationTools": _models(provenance),
        "rai:dataPreprocessingProtocol": spec.machine_translated
        or "No machine translation: every text comes from its source as published.",
        "rai:dataLimitations": [*([_plain(sample_banner)] if sample and sample_banner else []), *limitations],
        "rai:dataUseCases": (
            "None beyond exercising the babelforge pipeline: this is a sample build made with random tiny models."
            if sample
            else f"Evaluation of multilingual vision-and-language models ({', '.join(spec.task_categories)})."
        ),
        "prov:wasDerivedFrom": [_derived_from(what, licence) for what, licence in licences],
        "prov:wasGeneratedBy": _generated_by(provenance),
    }
    groups: dict[str, list[ConfigFiles]] = {}
    for config in configs:
        groups.setdefault(record_set_name(config.name, config.language, spec.name), []).append(config)
    for name, members in groups.items():
        file_set, record_set = _record_set(name, members, spec.name)
        metadata["distribution"].append(file_set)
        metadata["recordSet"].append(record_set)
    return metadata


def _plain(markdown: str) -> str:
    """A card sentence without its Markdown (quote marker, emphasis, code ticks)."""
    return re.sub(r"[*`]", "", markdown.lstrip("> ")).strip()


def _licences(sources: Sequence[SourceInfo], part_licences: Sequence[tuple[str, Licence]]) -> list:
    """(what it covers, licence): each row source, then each part without a row source."""
    return [(f"source `{info.source}` ({info.title})", info.licence) for info in sources] + list(part_licences)


def _derived_from(what: str, licence: Licence) -> dict[str, Any]:
    return {"@type": "sc:CreativeWork", "name": what, "license": licence.url or licence.name}


def _models(provenance: Mapping[str, Any]) -> list[str]:
    """Every model the artifacts record (role: id, revision), once."""
    found = set()
    for record in provenance.values():
        for role, model in sorted(((record or {}).get("models") or {}).items()):
            if isinstance(model, Mapping):
                named = model.get("id") or model.get("name") or model.get("path") or ""
                revision = model.get("revision")
                found.add(f"{role}: {named}" + (f" (revision {revision})" if revision else ""))
            else:
                found.add(f"{role}: {model}")
    return sorted(found)


def _generated_by(provenance: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One activity per stage that wrote an artifact the card read: its name and babelforge version."""
    stages = sorted(
        {((record or {}).get("stage"), (record or {}).get("version")) for record in provenance.values()}
        - {(None, None)},
        key=str,
    )
    return [{"@type": "prov:Activity", "name": f"babelforge {stage} ({version})"} for stage, version in stages]


def _record_set(name: str, configs: Sequence[ConfigFiles], dataset: str) -> tuple[dict, dict]:
    """The file set of a group of configs and its record set: a field per column, plus the config and
    the language read from each file's path (`data/<config>/<split>.parquet`)."""

    file_set_id = f"{name}-files"
    file_set = {
        "@type": "cr:FileSet",
        "@id": file_set_id,
        "name": file_set_id,
        "encodingFormat": PARQUET,
        "includes": sorted(path for config in configs for path in config.files.values()),
    }
    columns: dict[str, Column] = {}
    for config in configs:
        for column in config.columns:
            columns.setdefault(column.name, column)
    # the config and the language of a record, read from its file's path (named `card_*` where the table
    # has a column of that name: a field name must be unique in its record set)
    from_path = {"fileSet": {"@id": file_set_id}, "extract": {"fileProperty": "fullpath"}}
    patterns = {"config": r"^data/([^/]+)/[^/]+\.parquet$"}
    if any(config.language for config in configs):
        patterns["language"] = r"^data/([^/.]+)/" if name == dataset else rf"^data/{re.escape(name)}\.([^/]+)/"
    fields = [
        _field(name, f"card_{key}" if key in columns else key, "sc:Text", {**from_path, "transform": {"regex": regex}})
        for key, regex in patterns.items()
    ]
    for column in columns.values():
        source: dict[str, Any] = {"fileSet": {"@id": file_set_id}, "extract": {"column": column.name}}
        if column.data_type == "sc:ImageObject":
            source["transform"] = {"jsonPath": "bytes"}  # stored as {bytes, path}, as `datasets` writes images
        fields.append(_field(name, column.name, column.data_type, source, column.is_array))
    record_set = {"@type": "cr:RecordSet", "@id": name, "name": name, "field": fields}
    return file_set, record_set


def _field(record_set: str, name: str, data_type: str, source: dict, is_array: bool = False) -> dict[str, Any]:
    field = {"@type": "cr:Field", "@id": f"{record_set}/{name}", "name": name, "dataType": data_type, "source": source}
    if is_array:
        field.update({"isArray": True, "arrayShape": "-1"})
    return field


def column(name: str, arrow_type) -> Column:
    """A Parquet column's Croissant type from its Arrow type (lists: their items' type, as an array)."""

    import pyarrow as pa

    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return Column(name, column(name, arrow_type.value_type).data_type, is_array=True)
    if pa.types.is_struct(arrow_type) and {"bytes", "path"} <= {field.name for field in arrow_type}:
        return Column(name, "sc:ImageObject")
    if pa.types.is_null(arrow_type):
        return Column(name, "sc:Text")  # every value null (an empty list's items): nothing to type
    if pa.types.is_boolean(arrow_type):
        return Column(name, "sc:Boolean")
    if pa.types.is_integer(arrow_type):
        return Column(name, "sc:Integer")
    if pa.types.is_floating(arrow_type):
        return Column(name, "sc:Float")
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return Column(name, "sc:Text")
    raise TypeError(f"column {name!r}: no Croissant type for Arrow type {arrow_type}")
