"""Dataset cards: Hugging Face README.md (YAML front matter + body) generated from the data.

Pure: everything here takes plain data (a dataset spec, per-config row counts, source counts,
provenance records, licence records) and returns strings or dicts. Reading the artifacts and
writing `build/hub/<dataset>/` is `card_stage.py`'s job; what each dataset says is its spec
(builders/core/datasets.py lists them).

Licences are decided per *source of each row*, never per dataset by assumption: a dataset whose
rows carry a `source` names each source's licence through its spec; parts without a row source
(images, templates, source captions) carry the licences the spec or the data state.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from babelforge.core.datasets import ClassLabel, DatasetSpec, Feature, Image, Value, citation
from babelforge.core.licences import HF_LICENSES, Licence, SourceInfo
from babelforge.core.provenance import SAMPLE_MODELS
from babelforge.publish.croissant import FILE_NAME as CROISSANT_FILE

SIZE_CATEGORIES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
)
FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)
# A card built from the `sample` profile's artifacts says so at the top and in its tags: its rows
# come from random tiny models. `publish` reads the tag and refuses such a card unless --allow-sample.
SAMPLE_TAG = "sample-build"
SAMPLE_BANNER = (
    "> **This is a SAMPLE build, not the benchmark.** babelforge's `sample` profile made it offline with "
    f"{SAMPLE_MODELS}: its rows exercise the pipeline and are not data to study or report. "
    "The benchmark is the build of the `full` profile."
)


@dataclass
class ConfigStats:
    """One config (one language): rows, group, and row counts per source."""

    name: str
    rows: int
    language_tag: str | None  # None: a config of no language (MVL-SIB's images)
    group: str | None = None
    sources: Mapping[str, int] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)  # split -> path in the repo
    precision: str | None = None  # expected share of correct rows, with its interval (labels: precision.py)


def size_category(rows: int) -> str:
    for bound, name in SIZE_CATEGORIES:
        if rows < bound:
            return name
    return "n>100M"


def front_matter(
    spec: DatasetSpec,
    configs: Sequence[ConfigStats],
    licences: Sequence[Licence],
    default_config: str | None,
    profile: str | None = None,
) -> dict[str, Any]:
    """The YAML metadata block: licences, languages, size, tasks, one config per language; the tag
    SAMPLE_TAG when the artifacts' `profile` is `sample`."""
    ids = sorted({licence.hf_id for licence in licences})
    metadata: dict[str, Any] = {
        "pretty_name": spec.pretty_name,
        "license": ids[0] if len(ids) == 1 else ids,
    }
    if "other" in ids:
        # Hub rule: a custom licence needs a name and a link; the link is the generated file
        # listing every source's licence.
        metadata["license_name"] = "babelforge-per-source" if len(licences) > 1 else _slug(licences[0].name)
        metadata["license_link"] = "LICENSES.md"
    metadata.update(
        {
            "language": sorted({config.language_tag for config in configs if config.language_tag}),
            "multilinguality": "multilingual" if len(configs) > 1 else "monolingual",
            "size_categories": [size_category(sum(config.rows for config in configs))],
            "task_categories": list(spec.task_categories),
            "tags": [*spec.tags, *([SAMPLE_TAG] if profile == "sample" else [])],
            "configs": [
                {
                    "config_name": config.name,
                    "data_files": [{"split": split, "path": path} for split, path in sorted(config.files.items())],
                    **({"default": True} if config.name == default_config else {}),
                }
                for config in configs
            ],
        }
    )
    return metadata


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_card(
    spec: DatasetSpec,
    metadata: Mapping[str, Any],
    configs: Sequence[ConfigStats],
    sources: Sequence[SourceInfo],
    provenance: Mapping[str, Any],
    limitations: Sequence[str],
    part_licences: Sequence[tuple[str, Licence]] = (),
    profile: str | None = None,
    notes: Sequence[str] = (),
) -> str:
    """README.md: YAML front matter + a body generated from the data. `part_licences`: (what it
    covers, licence) of the parts without a row source (the spec's, then those found in the data);
    `profile`: the artifacts' build profile (`sample`: SAMPLE_BANNER at the top); `notes`: paragraphs
    after the summary on how the data was made (from the settings the artifacts record)."""

    total = sum(config.rows for config in configs)
    lines = [
        "---",
        yaml.safe_dump(dict(metadata), sort_keys=False, allow_unicode=True, width=1000).rstrip("\n"),
        "---",
        "",
        *([SAMPLE_BANNER, ""] if profile == "sample" else []),
        f"# {spec.pretty_name}",
        "",
        spec.summary,
        "",
        *(line for note in notes for line in (note, "")),
        f"{len(configs)} config{'s' if len(configs) != 1 else ''} (one per {spec.config_unit}), {total:,} rows, "
        f"split `{spec.split}`. Load one with:",
        "",
        "```python",
        "from datasets import load_dataset",
        f'ds = load_dataset("<repo>", "{configs[0].name if configs else "<config>"}", split="{spec.split}")',
        "```",
        "",
        "## Languages",
        "",
    ]
    lines += _languages_table(configs)
    lines += ["", "## Licences", ""]
    if sources:
        lines += ["Each row keeps its `source`; its licence is that source's (full list in `LICENSES.md`):", ""]
    lines += ["| source | title | licence | rows |", "| --- | --- | --- | ---: |"]
    rows_per_source: dict[str, int] = {}
    for config in configs:
        for source, count in config.sources.items():
            rows_per_source[source] = rows_per_source.get(source, 0) + count
    for info in sources:
        licence = f"[{_md(info.licence.name)}]({info.licence.url})" if info.licence.url else _md(info.licence.name)
        lines.append(f"| {_md(info.source)} | {_md(info.title)} | {licence} | {rows_per_source.get(info.source, 0)} |")
    for applies_to, licence in part_licences:
        named = f"[{_md(licence.name)}]({licence.url})" if licence.url else _md(licence.name)
        lines.append(f"| {_md(applies_to)} | | {named} | |")
    lines += ["", "## Build provenance", "", "Built by babelforge; recorded in the artifacts' metadata:", ""]
    lines += _provenance_lines(provenance)
    lines += ["", "## Known limitations", ""]
    lines += [f"- {item}" for item in [*limitations, *spec.limitations]]
    lines += ["", "## Citation", "", "```bibtex"]
    lines += ["\n\n".join(citation(key) for key in spec.citations)]
    lines += ["```", ""]
    return "\n".join(lines)


def _languages_table(configs: Sequence[ConfigStats]) -> list[str]:
    """One row per config; the group, precision and sources columns only where some config has one."""
    columns = [
        ("config", "---", lambda c: c.name),
        ("language tag", "---", lambda c: c.language_tag or ""),
        ("group", "---", lambda c: c.group or ""),
        ("rows", "---:", lambda c: str(c.rows)),
        ("expected precision", "---", lambda c: _md(c.precision or "")),
        (
            "sources",
            "---",
            lambda c: ", ".join(
                f"{_md(source)} {count}"
                for source, count in sorted(c.sources.items(), key=lambda item: (-item[1], item[0]))
            ),
        ),
    ]
    shown = [
        column
        for column in columns
        if column[0] not in ("group", "expected precision", "sources") or any(column[2](config) for config in configs)
    ]
    lines = [
        "| " + " | ".join(name for name, _, _ in shown) + " |",
        "| " + " | ".join(align for _, align, _ in shown) + " |",
    ]
    lines += ["| " + " | ".join(cell(config) for _, _, cell in shown) + " |" for config in configs]
    return lines


# A provenance mapping longer than this (as JSON) that holds further mappings is split into one
# bullet per key: the labels' senses record one entry per wordnet file, 110 KB on one line otherwise.
INLINE_JSON = 200


def _provenance_lines(provenance: Mapping[str, Any]) -> list[str]:
    if not provenance:
        return ["- (the artifacts carry no provenance record)"]
    lines = []
    for artifact, record in sorted(provenance.items()):
        if not record:
            lines.append(f"- `{artifact}`: no provenance record in the file")
            continue
        lines.append(f"- `{artifact}`: stage `{record.get('stage')}`, babelforge {record.get('version')}")
        if record.get("build"):
            lines += _value_lines("build", record["build"], "  ")
        for name, source in sorted((record.get("sources") or {}).items()):
            lines += _value_lines(f"source `{name}`", source, "  ")
        for role, model in sorted((record.get("models") or {}).items()):
            lines += _value_lines(f"model `{role}`", model, "  ")
        if record.get("params"):
            lines += _value_lines("params", record["params"], "  ")
    return lines


def _value_lines(label: str, value: Any, indent: str) -> list[str]:
    """`- label: `json`` when short or flat (a record of plain values), else `- label:` and a bullet per key."""

    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    nested = isinstance(value, Mapping) and any(isinstance(item, Mapping) for item in value.values())
    if len(text) <= INLINE_JSON or not nested:
        return [f"{indent}- {label}: `{text}`"]
    lines = [f"{indent}- {label}:"]
    for key, item in sorted(value.items()):
        lines += _value_lines(f"`{key}`", item, indent + "  ")
    return lines


def render_licences(sources: Sequence[SourceInfo], extra: Sequence[tuple[str, Licence]]) -> str:
    """LICENSES.md: every source, its licence and its citation."""
    lines = ["# Licences", "", "Rows carry a `source` column; each row is under the licence of its source.", ""]
    for info in sources:
        lines += [
            f"## {info.source}: {info.title}",
            "",
            f"Licence: {info.licence.name}" + (f" <{info.licence.url}>" if info.licence.url else ""),
            "",
        ]
        if info.citation:
            lines += ["```bibtex", info.citation, "```", ""]
    for applies_to, licence in extra:
        lines += [f"## {applies_to}", "", f"Licence: {licence.name}" + (f" <{licence.url}>" if licence.url else ""), ""]
    return "\n".join(lines)


def hf_features(features: Mapping[str, Feature]) -> dict[str, dict[str, Any]]:
    """Declared column types as Hugging Face `datasets` feature dicts (`Features.to_dict()`'s form)."""
    return {column: _hf_feature(feature) for column, feature in sorted(features.items())}


def _hf_feature(feature: Feature) -> dict[str, Any]:
    if isinstance(feature, ClassLabel):
        return {"names": list(feature.names), "_type": "ClassLabel"}
    if isinstance(feature, Image):
        return {"_type": "Image"}
    if isinstance(feature, Value):
        return {"dtype": feature.dtype, "_type": "Value"}
    raise TypeError(f"not a card feature: {feature!r}")


def arrow_type(feature: Feature):
    """The Arrow type `datasets` stores a feature as (its features only apply to columns of that type)."""
    import pyarrow as pa

    if isinstance(feature, ClassLabel):
        return pa.int64()
    if isinstance(feature, Image):
        return pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    if isinstance(feature, Value):
        return pa.type_for_alias(feature.dtype)
    raise TypeError(f"not a card feature: {feature!r}")


def is_sample_build(folder: Path) -> bool:
    """Whether the built card in `folder` is tagged SAMPLE_TAG (a build of the `sample` profile)."""

    readme = folder / "README.md"
    match = FRONT_MATTER.match(readme.read_text(encoding="utf-8")) if readme.is_file() else None
    try:
        metadata = yaml.safe_load(match.group(1)) if match else None
    except yaml.YAMLError:
        return False  # an unreadable front matter: validate_card reports it
    tags = metadata.get("tags") if isinstance(metadata, Mapping) else None
    return isinstance(tags, list) and SAMPLE_TAG in tags


def validate_card(folder: Path) -> list[str]:
    """Offline checks of a built card folder; returns the problems found (empty = valid).

    croissant.json is there; README.md has YAML front matter with the metadata the Hub expects, licence ids it knows
    (a custom one has name + link), unique config names, and every data file present.
    """

    readme = folder / "README.md"
    if not readme.exists():
        return [f"{readme}: missing"]
    if not (folder / CROISSANT_FILE).exists():
        return [f"{folder / CROISSANT_FILE}: missing (a card built before the Croissant metadata: rebuild it)"]
    match = FRONT_MATTER.match(readme.read_text(encoding="utf-8"))
    if not match:
        return [f"{readme}: no YAML front matter (--- ... --- at the top)"]
    try:
        metadata = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as error:
        return [f"{readme}: front matter is not valid YAML ({error})"]
    problems = []
    for key in ("pretty_name", "license", "language", "size_categories", "task_categories", "configs"):
        if not metadata.get(key):
            problems.append(f"{readme}: front matter lacks `{key}`")
    licences = metadata.get("license") or []
    licences = [licences] if isinstance(licences, str) else licences
    for licence in licences:
        if licence not in HF_LICENSES:
            problems.append(f"{readme}: licence id {licence!r} is not a Hub licence id")
    if "other" in licences:
        for key in ("license_name", "license_link"):
            if not metadata.get(key):
                problems.append(f"{readme}: licence `other` needs `{key}`")
        link = metadata.get("license_link")
        if link and not str(link).startswith("http") and not (folder / str(link)).exists():
            problems.append(f"{readme}: license_link {link} is not a file of the dataset")
    names = [config.get("config_name") for config in metadata.get("configs") or []]
    if len(names) != len(set(names)):
        problems.append(f"{readme}: config names repeat")
    for config in metadata.get("configs") or []:
        for entry in config.get("data_files") or []:
            if not (folder / entry["path"]).exists():
                problems.append(f"{readme}: config {config.get('config_name')}: data file {entry['path']} missing")
        if not config.get("data_files"):
            problems.append(f"{readme}: config {config.get('config_name')} has no data_files")
    return problems
