"""Licences of published data: the record every dataset spec and card uses, and one reader of
licence texts as sources write them (URLs, `CC BY SA 3.0`, `MIT`...).

Pure: no file is read here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Hugging Face licence identifiers a card may state (hf.co/docs/hub/repositories-licenses).
HF_LICENSES = frozenset(
    {
        "apache-2.0",
        "mit",
        "cc-by-3.0",
        "cc-by-4.0",
        "cc-by-sa-3.0",
        "cc-by-sa-4.0",
        "odc-by",
        "cc-by-nc-sa-3.0",
        "gfdl",
        "cc0-1.0",
        "other",
    }
)


@dataclass(frozen=True)
class Licence:
    """One licence a part of the data is under."""

    name: str  # human-readable, e.g. "CC BY 3.0"
    hf_id: str  # Hugging Face identifier, or "other"
    url: str | None = None


@dataclass(frozen=True)
class SourceInfo:
    """A source of rows (the value of a table's `source` column): its licence and how to cite it."""

    source: str  # as in the data: `omw:cow`, `wikt`, `cldr`, `WIKI`, `review:anna`...
    title: str
    licence: Licence
    citation: str | None = None  # BibTeX


def licence_from_text(text: str) -> Licence:
    """Map a licence URL or name as sources write it (`https://creativecommons.org/licenses/by/3.0/`,
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
