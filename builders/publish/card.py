"""Dataset cards: Hugging Face README.md (YAML front matter + body) generated from the data.

Pure: everything here takes plain data (per-config row counts, source counts, provenance
records, licence records) and returns strings or dicts. Reading the artifacts and writing
`build/hub/<dataset>/` is `card_stage.py`'s job.

Licences are decided per *source of each row*, never per dataset by assumption:
BabelNet-derived labels carry the BabelNet non-commercial licence; OMW-derived ones the
licence of the wordnet (or Wiktionary / CLDR) they came from, read from the OMW data's own
`index.toml`, `.tab` headers and LICENSE files; SIB-200 / Flores-200 text is CC-BY-SA-4.0.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

# Hugging Face licence identifiers this module may emit (hf.co/docs/hub/repositories-licenses).
HF_LICENSES = frozenset({
    "apache-2.0", "mit", "cc-by-3.0", "cc-by-4.0", "cc-by-sa-3.0", "cc-by-sa-4.0", "odc-by",
    "cc-by-nc-sa-3.0", "gfdl", "cc0-1.0", "other",
})
SIZE_CATEGORIES = (
    (1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"),
)
FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)


@dataclass(frozen=True)
class Licence:
    """One licence a part of the data is under."""

    name: str                 # human-readable, e.g. "CC BY 3.0"
    hf_id: str                # Hugging Face identifier, or "other"
    url: str | None = None


BABELNET = Licence("BabelNet Non-Commercial License", "other", "https://babelnet.org/license")
WIKTIONARY = Licence("CC BY-SA 3.0 (Wiktionary; also GFDL)", "cc-by-sa-3.0",
                     "https://creativecommons.org/licenses/by-sa/3.0/")
CLDR = Licence("Unicode License (CLDR data)", "other", "https://www.unicode.org/license.txt")
SIB200 = Licence("CC BY-SA 4.0 (SIB-200 / Flores-200 text)", "cc-by-sa-4.0",
                 "https://creativecommons.org/licenses/by-sa/4.0/")
WORDNET = Licence("WordNet 3.0 License (Princeton)", "other", "https://wordnet.princeton.edu/license-and-commercial-use")


def licence_from_text(text: str) -> Licence:
    """Map a licence URL or name as OMW writes it (`https://creativecommons.org/licenses/by/3.0/`,
    `CC BY SA 3.0`, `wordnet`, `MIT`...) to a Licence. Unknown texts stay `other`, named as given."""
    raw = text.strip()
    key = re.sub(r"[^a-z0-9.]+", " ", raw.lower()).strip()
    # every element (nc, nd, sa) counts: dropping one would state a more permissive licence
    cc = re.search(r"\b(by(?: (?:nc|nd|sa))*)\b(?: (\d\.\d))?", key)
    if "creativecommons" in key or key.startswith("cc "):
        if cc:
            kind, version = cc.group(1).replace(" ", "-"), cc.group(2)
            name = f"CC {kind.upper()}" + (f" {version}" if version else "")
            hf_id = f"cc-{kind}-{version}" if version and f"cc-{kind}-{version}" in HF_LICENSES else "other"
            url = f"https://creativecommons.org/licenses/{kind}/{version + '/' if version else ''}"
            return Licence(name + ("" if version else " (version not stated)"), hf_id, url)
    if re.search(r"\bcc0\b|publicdomain zero", key):
        return Licence("CC0 1.0", "cc0-1.0", "https://creativecommons.org/publicdomain/zero/1.0/")
    if "apache" in key:
        return Licence("Apache-2.0", "apache-2.0", "https://opensource.org/licenses/Apache-2.0")
    if re.search(r"\bmit\b", key):
        return Licence("MIT", "mit", "https://opensource.org/licenses/MIT")
    if "odc by" in key:
        return Licence("ODC-By", "odc-by", "http://opendefinition.org/licenses/odc-by/")
    if "cecill" in key:
        return Licence("CeCILL-C", "other", "http://www.cecill.info/licenses/Licence_CeCILL-C_V1-en.html")
    if key in ("wordnet", "wordnet license"):
        return Licence("WordNet License (Princeton-style, per wordnet)", "other", None)
    return Licence(raw, "other", raw if raw.startswith("http") else None)


@dataclass(frozen=True)
class SourceInfo:
    """A source of rows: its licence and how to cite it."""

    source: str               # as in the data: `omw:cow`, `wikt`, `cldr`, `WIKI`...
    title: str
    licence: Licence
    citation: str | None = None


def omw_sources(omw_dir: Path) -> dict[str, SourceInfo]:
    """Every OMW project in an OMW data folder (upstream layout: `index.toml`, `wns/<project>/`),
    keyed by the `source` value the labels carry (`omw:<project>`, `wikt`, `cldr`).

    The licence of a wordnet comes from `index.toml` (the package whose `source` lies in its
    folder), else from the `.tab` header's licence field; Wiktionary and CLDR have their own.
    """
    import tomllib

    index_path = omw_dir / "index.toml"
    packages: dict[str, Any] = {}
    if index_path.exists():
        packages = tomllib.loads(index_path.read_text(encoding="utf-8")).get("packages", {})
    by_project: dict[str, list[Mapping[str, Any]]] = {}
    for package in packages.values():
        match = re.match(r"wns/([^/]+)/", str(package.get("source", "")))
        if match:
            by_project.setdefault(match.group(1), []).append(package)
    infos: dict[str, SourceInfo] = {}
    wns = omw_dir / "wns"
    for folder in sorted(p for p in wns.iterdir() if p.is_dir()) if wns.is_dir() else []:
        project = folder.name
        citation = _read_citation(folder / "citation.bib")
        if project == "wikt":
            infos["wikt"] = SourceInfo("wikt", "Wiktionary (via OMW)", WIKTIONARY, citation)
            continue
        if project == "cldr":
            infos["cldr"] = SourceInfo("cldr", "Unicode CLDR (via OMW)", CLDR, citation)
            continue
        listed = by_project.get(project, [])
        if listed:
            texts = sorted({str(p.get("license", "")) for p in listed})
            title = " / ".join(sorted({str(p.get("label", project)) for p in listed}))
        else:
            headers = [_tab_header(tab) for tab in sorted(folder.glob("wn-data-*.tab"))]
            texts = sorted({h[3] for h in headers if h and len(h) > 3})
            title = next((h[0] for h in headers if h), project)
        if not texts:
            continue  # a folder with no data in this copy (e.g. only a README)
        licence = licence_from_text(texts[0]) if len(texts) == 1 else Licence(
            " / ".join(licence_from_text(t).name for t in texts), "other", None)
        infos[f"omw:{project}"] = SourceInfo(f"omw:{project}", title, licence, citation)
    return infos


def _tab_header(path: Path) -> list[str] | None:
    with path.open(encoding="utf-8") as handle:
        first = handle.readline().rstrip("\n")
    return [part.strip() for part in first[1:].split("\t")] if first.startswith("#") else None


def _read_citation(path: Path) -> str | None:
    if not path.exists():
        return None
    text = path.read_text(encoding="utf-8", errors="replace")
    start = text.find("@")
    return text[start:].strip() if start >= 0 else None


# English labels are the CLIP class names (source `clip`), published with CLIP under MIT.
CLIP_NAMES = SourceInfo("clip", "OpenAI CLIP ImageNet class names (English)",
                        Licence("MIT (OpenAI CLIP)", "mit", "https://github.com/openai/CLIP/blob/main/LICENSE"))


def source_info(source: str, omw: Mapping[str, SourceInfo]) -> SourceInfo:
    """Licence and citation for one `source` value: `clip` for the English names, OMW ones
    from the OMW data, all others are BabelNet source names (WIKI, WN, WIKIDATA...) under
    BabelNet's licence."""
    if source == CLIP_NAMES.source:
        return CLIP_NAMES
    if source in omw:
        return omw[source]
    if source.startswith("omw:") or source in ("wikt", "cldr"):
        raise ValueError(f"source {source!r} is not in the OMW data given (card.omw_dir); cannot tell its licence")
    return SourceInfo(source, f"BabelNet ({source})", BABELNET, CITATIONS["babelnet"])


# Citations of the works the datasets come from (BibTeX).
CITATIONS = {
    "babel_imagenet": """@inproceedings{geigle-etal-2024-babel,
  title = {Babel-ImageNet: Massively Multilingual Evaluation of Vision-and-Language Representations},
  author = {Geigle, Gregor and Timofte, Radu and Glava{\\v{s}}, Goran},
  booktitle = {Proceedings of the 62nd Annual Meeting of the Association for Computational Linguistics},
  year = {2024}
}""",
    "babelnet": """@article{navigli-ponzetto-2012-babelnet,
  title = {BabelNet: The automatic construction, evaluation and application of a wide-coverage multilingual semantic network},
  author = {Navigli, Roberto and Ponzetto, Simone Paolo},
  journal = {Artificial Intelligence},
  volume = {193},
  pages = {217--250},
  year = {2012}
}""",
    "omw": """@inproceedings{bond-foster-2013-linking,
  title = {Linking and Extending an Open Multilingual Wordnet},
  author = {Bond, Francis and Foster, Ryan},
  booktitle = {Proceedings of the 51st Annual Meeting of the Association for Computational Linguistics},
  pages = {1352--1362},
  year = {2013}
}""",
    "wordnet": """@article{miller-1995-wordnet,
  title = {WordNet: A Lexical Database for English},
  author = {Miller, George A.},
  journal = {Communications of the ACM},
  volume = {38},
  number = {11},
  pages = {39--41},
  year = {1995}
}""",
    "sib200": """@inproceedings{adelani-etal-2024-sib,
  title = {SIB-200: A Simple, Inclusive, and Big Evaluation Dataset for Topic Classification in 200+ Languages and Dialects},
  author = {Adelani, David Ifeoluwa and others},
  booktitle = {Proceedings of the 18th Conference of the European Chapter of the Association for Computational Linguistics},
  year = {2024}
}""",
    "nllb": """@article{nllb-2022,
  title = {No Language Left Behind: Scaling Human-Centered Machine Translation},
  author = {{NLLB Team}},
  journal = {arXiv preprint arXiv:2207.04672},
  year = {2022}
}""",
    "mvl_sib": """@article{schmidt-etal-2025-mvlsib,
  title = {MVL-SIB: A Massively Multilingual Vision-Language Benchmark for Cross-Modal Topical Matching},
  author = {Schmidt, Fabian David and Schneider, Florian and Biemann, Chris and Glava{\\v{s}}, Goran},
  journal = {arXiv preprint arXiv:2502.12852},
  year = {2025}
}""",
}


@dataclass
class CardSpec:
    """What a card says about one dataset, apart from what is computed from the data."""

    dataset: str
    pretty_name: str
    summary: str
    task_categories: Sequence[str]
    citations: Sequence[str]                       # keys of CITATIONS
    limitations: Sequence[str] = ()
    tags: Sequence[str] = ("multilingual",)
    split: str = "test"
    # licences of parts that carry no per-row source: (what they cover, licence)
    extra_licences: Sequence[tuple[str, Licence]] = ()
    config_unit: str = "language"                  # what one config holds, for the card's body


@dataclass
class ConfigStats:
    """One config (one language): rows, group, and row counts per source."""

    name: str
    rows: int
    language_tag: str
    group: str | None = None
    sources: Mapping[str, int] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)    # split -> path in the repo


def size_category(rows: int) -> str:
    for bound, name in SIZE_CATEGORIES:
        if rows < bound:
            return name
    return "n>100M"


def front_matter(
    spec: CardSpec, configs: Sequence[ConfigStats], licences: Sequence[Licence], default_config: str | None
) -> dict[str, Any]:
    """The YAML metadata block: licences, languages, size, tasks, one config per language."""
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
    metadata.update({
        "language": sorted({config.language_tag for config in configs}),
        "multilinguality": "multilingual" if len(configs) > 1 else "monolingual",
        "size_categories": [size_category(sum(config.rows for config in configs))],
        "task_categories": list(spec.task_categories),
        "tags": list(spec.tags),
        "configs": [
            {
                "config_name": config.name,
                "data_files": [{"split": split, "path": path} for split, path in sorted(config.files.items())],
                **({"default": True} if config.name == default_config else {}),
            }
            for config in configs
        ],
    })
    return metadata


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_card(
    spec: CardSpec,
    metadata: Mapping[str, Any],
    configs: Sequence[ConfigStats],
    sources: Sequence[SourceInfo],
    provenance: Mapping[str, Any],
    limitations: Sequence[str],
) -> str:
    """README.md: YAML front matter + a body generated from the data."""
    import yaml

    total = sum(config.rows for config in configs)
    lines = [
        "---",
        yaml.safe_dump(dict(metadata), sort_keys=False, allow_unicode=True, width=1000).rstrip("\n"),
        "---",
        "",
        f"# {spec.pretty_name}",
        "",
        spec.summary,
        "",
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
        "| config | language tag | group | rows | sources |",
        "| --- | --- | --- | ---: | --- |",
    ]
    for config in configs:
        mix = ", ".join(f"{_md(source)} {count}" for source, count in sorted(
            config.sources.items(), key=lambda item: (-item[1], item[0])))
        lines.append(f"| {config.name} | {config.language_tag} | {config.group or ''} | {config.rows} | {mix} |")
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
    for applies_to, licence in spec.extra_licences:
        named = f"[{_md(licence.name)}]({licence.url})" if licence.url else _md(licence.name)
        lines.append(f"| {_md(applies_to)} | | {named} | |")
    lines += ["", "## Build provenance", "",
              "Built by babelforge; recorded in the artifacts' metadata:", ""]
    lines += _provenance_lines(provenance)
    lines += ["", "## Known limitations", ""]
    lines += [f"- {item}" for item in [*limitations, *spec.limitations]]
    lines += ["", "## Citation", "", "```bibtex"]
    lines += ["\n\n".join(CITATIONS[key] for key in spec.citations)]
    lines += ["```", ""]
    return "\n".join(lines)


def _provenance_lines(provenance: Mapping[str, Any]) -> list[str]:
    if not provenance:
        return ["- (the artifacts carry no provenance record)"]
    import json

    lines = []
    for artifact, record in sorted(provenance.items()):
        if not record:
            lines.append(f"- `{artifact}`: no provenance record in the file")
            continue
        lines.append(f"- `{artifact}`: stage `{record.get('stage')}`, babelforge {record.get('version')}")
        for name, source in sorted((record.get("sources") or {}).items()):
            lines.append(f"  - source `{name}`: `{json.dumps(source, sort_keys=True, ensure_ascii=False)}`")
        for role, model in sorted((record.get("models") or {}).items()):
            lines.append(f"  - model `{role}`: `{json.dumps(model, sort_keys=True, ensure_ascii=False)}`")
        if record.get("params"):
            lines.append(f"  - params: `{json.dumps(record['params'], sort_keys=True, ensure_ascii=False)}`")
    return lines


def render_licences(sources: Sequence[SourceInfo], extra: Sequence[tuple[str, Licence]]) -> str:
    """LICENSES.md: every source, its licence and its citation."""
    lines = ["# Licences", "",
             "Rows carry a `source` column; each row is under the licence of its source.", ""]
    for info in sources:
        lines += [f"## {info.source}: {info.title}", "", f"Licence: {info.licence.name}"
                  + (f" <{info.licence.url}>" if info.licence.url else ""), ""]
        if info.citation:
            lines += ["```bibtex", info.citation, "```", ""]
    for applies_to, licence in extra:
        lines += [f"## {applies_to}", "", f"Licence: {licence.name}" + (f" <{licence.url}>" if licence.url else ""), ""]
    return "\n".join(lines)


def validate_card(folder: Path) -> list[str]:
    """Offline checks of a built card folder; returns the problems found (empty = valid).

    README.md has YAML front matter with the metadata the Hub expects, licence ids it knows
    (a custom one has name + link), unique config names, and every data file present.
    """
    import yaml

    readme = folder / "README.md"
    if not readme.exists():
        return [f"{readme}: missing"]
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
