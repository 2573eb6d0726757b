"""Licences of the lexical sources a label can come from, decided per source name.

BabelNet-derived senses carry the BabelNet non-commercial licence; OMW-derived ones the
licence of the wordnet (or Wiktionary / CLDR) they came from, read from the OMW data's own
`index.toml`, `.tab` headers and LICENSE files; the English CLIP class names are MIT. A name
none of these knows is an error: its rows' licence cannot be told.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from babelforge.core.datasets import citation
from babelforge.core.licences import Licence, SourceInfo, licence_from_text
from babelforge.lexicon.babelnet import KNOWN_SOURCES

BABELNET = Licence("BabelNet Non-Commercial License", "other", "https://babelnet.org/license")
WIKTIONARY = Licence(
    "CC BY-SA 3.0 (Wiktionary; also GFDL)", "cc-by-sa-3.0", "https://creativecommons.org/licenses/by-sa/3.0/"
)
CLDR = Licence("Unicode License (CLDR data)", "other", "https://www.unicode.org/license.txt")
WORDNET = Licence(
    "WordNet 3.0 License (Princeton)", "other", "https://wordnet.princeton.edu/license-and-commercial-use"
)
# English labels are the CLIP class names (source `clip`), published with CLIP under MIT.
CLIP_NAMES = SourceInfo(
    "clip",
    "OpenAI CLIP ImageNet class names (English)",
    Licence("MIT (OpenAI CLIP)", "mit", "https://github.com/openai/CLIP/blob/main/LICENSE"),
)


def omw_sources(omw_dir: Path) -> dict[str, SourceInfo]:
    """Every OMW project in an OMW data folder (upstream layout: `index.toml`, `wns/<project>/`),
    keyed by the `source` value the senses carry (`omw:<project>`, `wikt`, `cldr`).

    The licence of a wordnet comes from `index.toml` (the package whose `source` lies in its
    folder), else from the `.tab` header's licence field; Wiktionary and CLDR have their own.
    """

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
        licence = (
            licence_from_text(texts[0])
            if len(texts) == 1
            else Licence(" / ".join(licence_from_text(t).name for t in texts), "other", None)
        )
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


def sense_source_info(source: str, omw: Mapping[str, SourceInfo]) -> SourceInfo:
    """Licence and citation of one sense source: `clip` (the English names), the OMW ones from
    the OMW data, BabelNet's own source names (`WIKI`, `WN`, ...: `babelnet.KNOWN_SOURCES`)
    under BabelNet's licence. Anything else raises ValueError naming the source."""

    if source == CLIP_NAMES.source:
        return CLIP_NAMES
    if source in omw:
        return omw[source]
    if source.startswith("omw:") or source in ("wikt", "cldr"):
        raise ValueError(f"source {source!r} is not in the OMW data given (paths.omw); cannot tell its licence")
    if source.upper() in KNOWN_SOURCES:
        return SourceInfo(source, f"BabelNet ({source})", BABELNET, citation("navigli-ponzetto-2012-babelnet"))
    raise ValueError(
        f"source {source!r} is not a known sense source (clip, omw:<project>, wikt, cldr or a "
        "BabelNet source name in builders/lexicon/babelnet.py); cannot tell its licence"
    )
