"""What a dataset's audit section reader returns, and what the readers and the audit share.

A dataset's spec names its reader (`AuditSection.reader`, builders/core/datasets.py); the reader
lives in the dataset's area (`builders/<area>/audit_section.py`), takes its input's path and returns a
`Section`, or None when the input is not built. The audit (builders/audit/sections.py) loops
over the registry and calls them; neither side imports the other, both import this.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

NOT_BUILT = "not built"


@dataclass
class Section:
    """A read section input: the section of one language, and the overview across languages."""

    language: Callable[[str], dict[str, Any]]
    overview: Callable[[], dict[str, Any]] = dict
    # {lang: box-plot statistics} of the section's score, where it has one to plot (AuditSection.plot)
    distribution: Callable[[], dict[str, dict[str, Any]]] | None = None
    # the languages of the section's own input (required of a built section): the dataset's slice
    # holds `language(lang)` of these only, so the labels' languages changing leaves it, and the
    # dataset's card, as they are
    languages: Callable[[], Iterable[str]] | None = None


def source_mix(sources: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for source in sources:
        counts[source] = counts.get(source, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
