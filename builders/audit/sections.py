"""The audit's per-dataset sections, looped over the dataset registry (builders/core/datasets.py).

A registered dataset whose spec has an `AuditSection` with a reader gets a section in every
language's record (its input absent: "not built"); the labels are the audit's own rows. The
readers and their summaries live in the datasets' areas (`builders/<area>/audit_section.py`), named by
the specs and returning a `babelforge.core.sections.Section`: this module only loops over them,
and knows no dataset. The audit also writes one *slice* per registered dataset,
`<paths.audit>/datasets/<name>.json`: what it found about that dataset alone (a section's entries
for the languages of its own input, `Section.languages`, not the labels'), so a dataset's card
depends on its own slice and is not rebuilt when another dataset's data or audit figures change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from babelforge.core.datasets import SectionPlot, artifact_path, input_digest, specs
from babelforge.core.declarations import imported
from babelforge.core.errors import BabelforgeError
from babelforge.core.sections import NOT_BUILT, Section


def audited():
    """(spec, its AuditSection) of every registered dataset the audit reports in a section, registry order."""

    return [(spec, spec.audit) for spec in specs() if spec.audit is not None and spec.audit.reader is not None]


def read_all(path_of: Callable[[Any], Any]) -> dict[str, Section | None]:
    """{section key: Section, or None when its input is not built}; `path_of(section)` is its input's path."""

    return {section.key: imported(section.reader)(path_of(section)) for _, section in audited()}


def language_records(read: Mapping[str, Section | None], lang: str) -> dict[str, Any]:
    return {
        key: section.language(lang) if section is not None else {"status": NOT_BUILT} for key, section in read.items()
    }


def input_status(read: Mapping[str, Section | None]) -> dict[str, str]:
    return {key: "built" if section is not None else NOT_BUILT for key, section in read.items()}


def overviews(read: Mapping[str, Section | None]) -> dict[str, Any]:
    """summary.json's entry per section that has an overview."""
    return {
        section.key: read[section.key].overview() if read[section.key] is not None else {"status": NOT_BUILT}
        for _, section in audited()
        if section.overview
    }


def slices(
    summary: Mapping[str, Any],
    records: Mapping[str, Mapping[str, Any]],
    read: Mapping[str, Section | None],
    paths: Any = None,
) -> dict[str, dict[str, Any]]:
    """What the audit found per registered dataset: the labels' error and warning counts and
    per-language figures; a section's entries for the languages of its own input (and its
    overview), whatever languages the labels have, so a labels-only change leaves the slice of
    every other dataset byte-identical (and DVC skips its card); for a dataset the audit does
    not report, only that. With `paths`, an audited slice records the input it summarised
    (`input`: the artifact and its `input_digest`), so a card refuses a slice of another build."""

    found: dict[str, dict[str, Any]] = {}
    for spec in specs():
        section = spec.audit
        if section is None:
            found[spec.name] = {"dataset": spec.name, "audited": False}
        elif section.reader is None:
            found[spec.name] = {
                "dataset": spec.name,
                "audited": True,
                "errors": summary["errors"],
                "warnings": summary["warnings"],
                "languages": summary["languages"],
            }
        else:
            entry = {
                "dataset": spec.name,
                "audited": True,
                "section": section.key,
                "status": summary["inputs"][section.key],
                "languages": _own_languages(section.key, read[section.key], records),
            }
            if section.overview:
                entry["overview"] = summary[section.key]
            found[spec.name] = entry
        if section is not None and paths is not None:
            digest = input_digest(artifact_path(paths, section.artifact))
            found[spec.name]["input"] = {"artifact": section.artifact, "sha256": digest}
    return found


def _own_languages(
    key: str, section: Section | None, records: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """{lang: the section's entry} of every language of the section's input (none when it is not
    built); an entry the audit already made for a label language is reused, not computed again."""

    if section is None:
        return {}
    if section.languages is None:
        raise BabelforgeError(
            f"audit section {key!r}: its reader returns a Section without `languages`; the dataset's "
            "slice lists the languages of its own input (babelforge.core.sections.Section)"
        )
    return {
        lang: records[lang][key] if lang in records else section.language(lang)
        for lang in sorted(set(section.languages()))
    }


def titles() -> list[tuple[str, str]]:
    """(section key, heading) of each section, for the language pages."""
    return [(section.key, section.title) for _, section in audited()]


def plots() -> dict[str, str]:
    """{PNG file: title} of each section's plot on the index, registry order."""
    return {section.plot.file: section.plot.title for _, section in audited() if section.plot is not None}


def distributions(read: Mapping[str, Section | None]) -> list[tuple[SectionPlot, dict[str, dict[str, Any]]]]:
    """(plot, {lang: box-plot statistics}) of each built section that has a plot."""
    found = []
    for _, section in audited():
        read_section = read[section.key]
        if section.plot is not None and read_section is not None and read_section.distribution:
            found.append((section.plot, read_section.distribution()))
    return found
