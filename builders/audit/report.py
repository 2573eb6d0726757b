"""Render the audit: one JSON per language, static HTML pages (no server; a little inline script sorts
and filters a language's labels), the review sheets, PNG plots.

Rendering functions take the plain records `checks.audit_language` produces (plus display
rows) and return strings; `write_report` is the only function here that touches files.
Every piece of data is HTML-escaped: labels come in any script and may contain `<` or `&`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from babelforge.audit.checks import CHECKS, source_family
from babelforge.audit.review_sheet import STALE, alternatives, label_agreement, review_text, row_flags
from babelforge.audit.sections import plots as section_plots
from babelforge.audit.sections import titles
from babelforge.babel_imagenet.candidates import SET_ASIDE
from babelforge.babel_imagenet.precision import MEASURED, PRIOR, Estimate
from babelforge.core.datasets import SectionPlot
from babelforge.core.io import atomic_directory, atomic_path, write_json, write_text
from babelforge.core.provenance import SAMPLE_MODELS

SCORE_DOC = (
    "quality score = 100 &times; coverage &times; (1 &minus; min(1, &Sigma;<sub>c</sub> w<sub>c</sub> "
    "&middot; flagged<sub>c</sub> / classes kept)), coverage = classes kept / {total}; "
    "weights w<sub>c</sub> per check: {weights}. Languages are ranked by it, highest first."
)
# the labels' own plots; a dataset's section may add one (AuditSection.plot), drawn after these
PLOTS = {
    "classes_per_language.png": "Classes kept per language, by resource group",
    "source_mix.png": "Source mix (share of labels per source family) by resource group",
}
GROUP_ORDER = ("high", "mid", "low", "very-low")

# The pages' static files, in assets/ beside this module (package data: pyproject.toml ships them in the
# wheel), inlined into every page. The style of every page:
STYLE_FILE = "report.css"
# Filters and sorting of a language page's labels table: plain DOM, no library. The filter state lives in
# the URL fragment (`#flag=any&review=unreviewed&sort=agreement`), so a filtered view is a link.
LABELS_SCRIPT_FILE = "report.js"
# Sorting of the index's languages table by a clicked header (the label precision column, the score...).
INDEX_SCRIPT_FILE = "index.js"
# The table sorting both pages share (a function the two scripts above call), inlined before them.
SORT_SCRIPT_FILE = "sort_table.js"


@functools.cache
def asset(name: str) -> str:
    """The text of a static file of the report (`assets/<name>`), inlined into the pages."""
    return resources.files(__package__).joinpath("assets").joinpath(name).read_text(encoding="utf-8")


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)}</title>\n<style>\n{asset(STYLE_FILE)}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def _cell(value: Any, numeric: bool = False, attrs: str = "") -> str:
    text = "" if value is None else str(value)
    css = ' class="num"' if numeric else ""
    return f"<td{css}{attrs}>{escape(text)}</td>"


def _clipped_cell(value: Any) -> str:
    """A text cell cut to its column's width on screen (report.css `td.clip`), the whole text its title:
    a long language name or source list widened the index past a 1280 px screen."""
    text = "" if value is None else str(value)
    return f'<td class="clip" title="{escape(text)}">{escape(text)}</td>'


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "\n".join("<tr>" + "".join(row) + "</tr>" for row in rows)
    return f"<table>\n<tr>{head}</tr>\n{body}\n</table>"


def _mapping_table(mapping: Mapping[str, Any], key: str, value: str) -> str:
    return _table([key, value], [[_cell(k), _cell(v, numeric=isinstance(v, (int, float)))] for k, v in mapping.items()])


def page_name(lang: str) -> str:
    return f"{lang}.html"


def sheet_name(lang: str) -> str:
    """The language's review sheet in the report folder (`babelforge review export` writes the same)."""
    return f"{lang}.review.csv"


# --- index -------------------------------------------------------------------------------------


def profile_note(profile: str | None) -> str:
    """The index's line on the build profile the labels record; a sample build stands out."""
    if profile == "sample":
        return (
            '<p class="sample"><strong>Build profile: sample.</strong> A SAMPLE build made with '
            f"{escape(SAMPLE_MODELS)}: not the benchmark.</p>"
        )
    if profile is None:
        return '<p class="muted">Build profile: not recorded in labels.parquet.</p>'
    return f"<p>Build profile: {escape(profile)}.</p>"


def render_index(summary: Mapping[str, Any]) -> str:
    """The index: documented score, ranked languages linking to their pages, optional sections, plots."""
    weights = ", ".join(f"{escape(k)} {v}" for k, v in sorted(summary["score_weights"].items()))
    ranked = sorted(summary["languages"].items(), key=lambda item: (-item[1]["quality_score"], item[0]))
    rows = []
    for position, (lang, entry) in enumerate(ranked, start=1):
        rows.append(
            [
                _cell(position, numeric=True),
                f'<td><a href="{escape(page_name(lang))}">{escape(lang)}</a></td>',
                _clipped_cell(entry.get("name")),
                _cell(entry.get("group")),
                _cell(entry["classes_kept"], numeric=True),
                _cell(entry["errors"], numeric=True),
                _cell(entry["warnings"], numeric=True),
                _cell(f"{entry['quality_score']:.2f}", numeric=True),
                _precision_cell(entry.get("label_precision")),
                *_review_cells(entry.get("reviews")),
                _clipped_cell(", ".join(f"{k} {v}" for k, v in list(entry["source_mix"].items())[:3])),
            ]
        )
    inputs = "".join(f"<li>{escape(name)}: {escape(status)}</li>" for name, status in sorted(summary["inputs"].items()))
    every_plot = {**PLOTS, **section_plots()}
    plots = "".join(
        f'<h3>{escape(caption)}</h3><img src="{escape(name)}" alt="{escape(caption)}">'
        for name, caption in every_plot.items()
        if name in summary.get("plots", [])
    )
    missing_plots = [caption for name, caption in every_plot.items() if name not in summary.get("plots", [])]
    if missing_plots:
        plots += '<p class="muted">Not plotted (input not built): ' + escape("; ".join(missing_plots)) + "</p>"
    body = (
        "<h1>Babel-ImageNet label audit</h1>\n"
        f"{profile_note(summary.get('profile'))}\n"
        f"<p>{len(ranked)} languages; {summary['errors']} error rows, {summary['warnings']} warning rows "
        f"(severities in <code>params.yaml</code> <code>audit.severity</code>); "
        f'all figures in <a href="summary.json">summary.json</a>.</p>\n'
        # the language ranking is what the page is for: it opens the page; how the score is made, the
        # inputs and the datasets' overviews (MVL-SIB has a row per task and k) come after it
        "<h2>Languages</h2>\n"
        "<p>Columns explained below the table; hover a cell for its whole text. Click a header to sort.</p>\n"
        + _sortable_table(
            [
                ("#", True),
                ("language", False),
                ("name", False),
                ("group", False),
                ("classes", True),
                ("errors", True),
                ("warnings", True),
                ("score", True),
                ("label precision", True),
                # short headers, each row one line: 25+ languages on the first 1280 x 800 screen
                ("reviewed", True),
                ("changed", True),
                ("stale", True),
                ("top sources", False),
            ],
            rows,
        )
        + f"\n<p>{SCORE_DOC.format(total=summary['total_classes'], weights=weights)}</p>\n"
        + f"<p>{PRECISION_DOC}</p>\n<p>{REVIEW_COLUMNS_DOC}</p>\n"
        + f"<h2>Inputs</h2><ul>{inputs}</ul>\n"
        + _overviews(summary)
        + f"\n<h2>Plots</h2>\n{plots}"
        + f"\n<script>\n{asset(SORT_SCRIPT_FILE)}{asset(INDEX_SCRIPT_FILE)}</script>"
    )
    return _page("Babel-ImageNet label audit", body)


PRECISION_DOC = (
    "Label precision: the expected share of a language's labels that are right, with its 95 % interval; "
    "<em>estimated</em> from each label's p_correct (its source's learned precision in the language, the "
    "class's other sources, its rule flags), or <em>measured</em> from a reviewed random sample "
    "(<code>babelforge review export LANG --sample N</code>)."
)


REVIEW_COLUMNS_DOC = (
    "Reviewed: the share of a language's labels a person has reviewed; changed: the share a review "
    "changed; stale: accepted labels the rules no longer pick (<code>resources/reviews/</code>)."
)


def _sortable_table(headers: Sequence[tuple[str, bool]], rows: Sequence[Sequence[str]]) -> str:
    """A table whose headers sort it (INDEX_SCRIPT_FILE): (header, numeric) pairs."""
    head = "".join(
        f'<th data-key="{index}"{" data-numeric" if numeric else ""} title="sort by {escape(name)}">{escape(name)}</th>'
        for index, (name, numeric) in enumerate(headers)
    )
    body = "\n".join("<tr>" + "".join(row) + "</tr>" for row in rows)
    return f'<table class="sortable">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>'


def precision_text(entry: Mapping[str, Any] | None) -> str:
    """`64.9 % [56.3-73.0] estimated`, `77.4 % [64.9-88.0] measured (40 reviewed)`; "" when not stated."""
    if not entry:
        return ""
    return Estimate(entry["precision"], entry["low"], entry["high"], entry["basis"], entry["judged"]).text()


# The index's short word for each basis of a precision figure (the whole statement is the cell's title).
SHORT_BASIS = {PRIOR: "prior only"}


def _precision_cell(entry: Mapping[str, Any] | None) -> str:
    """The index's label precision cell on one line (`77.4 % 64.9-88.0 measured (40)`), sorted by the
    figure itself; the whole statement (precision_text) is its title. The whole statement in the cell,
    `89.0 % [72.0-98.5] prior only (no source overlap)`, wrapped to four lines: 6 languages a screen.
    The interval is 95 % (PRECISION_DOC says so under the table)."""
    if not entry:
        return _cell("", numeric=True, attrs=' data-sort="-1"')
    basis = SHORT_BASIS.get(entry["basis"], entry["basis"])
    if entry["basis"] == MEASURED:
        basis += f" ({entry['judged']})"
    interval = f"{100 * entry['low']:.1f}-{100 * entry['high']:.1f}"
    return (
        f'<td class="num" data-sort="{entry["precision"]}" title="{escape(precision_text(entry))}">'
        f"{100 * entry['precision']:.1f} % <small>{interval}</small> {escape(basis)}</td>"
    )


def _precision_line(entry: Mapping[str, Any] | None) -> str:
    """The language page's line on its share of correct labels (languages.parquet, precision.py)."""
    if not entry:
        return ""
    line = (
        f"<p>Label precision {escape(precision_text(entry))}: about {entry['expected_wrong']:.0f} labels expected wrong"
    )
    if entry["basis"] == "measured":
        line += f" (the p_correct estimate said {100 * entry['estimated']:.1f} %)"
    if entry.get("by_source"):
        line += f"; reviewed by source: {escape(entry['by_source'])}"
    return line + ".</p>\n"


def _overviews(summary: Mapping[str, Any]) -> str:
    """Each section's overview across languages (summary.json's entry under its key), e.g. the MT
    captions input's rows read, kept, quarantined per reason and truncated."""
    parts = []
    for key, title in titles():
        overview = summary.get(key)
        if isinstance(overview, Mapping):
            parts.append(f"<h2>{escape(title)}: overview</h2>\n{_optional_section(overview)}\n")
    return "".join(parts)


def _review_cells(reviews: Mapping[str, Any] | None) -> list[str]:
    """Reviewed %, changed % and stale reviews of one language (index columns)."""
    if not reviews:
        return [_cell(""), _cell(""), _cell("")]
    return [
        _cell(f"{100 * reviews['reviewed_share']:.1f}%", numeric=True),
        _cell(f"{100 * reviews['changed_share']:.1f}%", numeric=True),
        _cell(reviews["stale"], numeric=True),
    ]


# --- language page -----------------------------------------------------------------------------


LABEL_COLUMNS = (  # key, header, numeric
    ("class", "class", True),
    ("label", "label", False),
    ("english", "English name", False),
    ("gloss", "WordNet gloss", False),
    ("source", "source", False),
    ("agreement", "sources agreeing", True),
    ("review", "review", False),
    ("alternatives", "alternatives", True),
    ("flags", "flags", True),
)


def _flag_badges(entries: Sequence[Sequence[str]], severity: Mapping[str, str]) -> str:
    return "".join(
        f'<span class="flag {escape(severity.get(check, "warning"))}" title="{escape(CHECKS.get(check, check))}">'
        f"{escape(check)}: {escape(detail)}</span>"
        for check, detail in entries
    )


def _alternatives_cell(options: Sequence[Mapping[str, Any]], attrs: str) -> str:
    items = "".join(
        f'<li><span{attrs}>{escape(str(c["label"]))}</span> <span class="muted" title="{escape(SET_ASIDE.get(c["set_aside"], ""))}">'
        f"{escape(str(c['source']))} &middot; {escape(c['set_aside'])} &middot; {int(c['agreement'])}</span></li>"
        for c in options
    )
    return f'<td data-sort="{len(options)}">' + (f'<ul class="alts">{items}</ul>' if items else "") + "</td>"


def _select(name: str, label: str, options: Sequence[tuple[str, str]]) -> str:
    choices = "".join(f'<option value="{escape(value)}">{escape(text)}</option>' for value, text in options)
    return f'<label>{escape(label)} <select id="filter-{name}">{choices}</select></label>'


def _labels_table(
    lang: str,
    record: Mapping[str, Any],
    rows: Mapping[int, Mapping[str, Any]],
    english: Mapping[int, Mapping[str, Any]],
    candidates: Mapping[int, Sequence[Mapping[str, Any]]],
    lang_attr: str,
) -> str:
    """Every class of the language: flagged rows first, filter controls, sortable headers."""
    severity = {check: entry["severity"] for check, entry in record["checks"].items()}
    severity[STALE] = "warning"
    flags = {idx: row_flags(rows[idx], record["flags"].get(str(idx), [])) for idx in rows}
    order = sorted(rows, key=lambda idx: (not flags[idx], idx))
    body = []
    for position, idx in enumerate(order):
        row, eng, options = rows[idx], english.get(idx, {}), candidates.get(idx, [])
        others = alternatives(options, row["label"])
        names = " ".join(dict.fromkeys(check for check, _ in flags[idx]))
        review = review_text(row)
        cells = [
            _cell(idx, numeric=True),
            _cell(row["label"], attrs=f'{lang_attr} dir="auto"'),
            _cell(eng.get("name")),
            _cell(eng.get("definition")),
            _cell(row["source"]),
            _cell(label_agreement(options, row["label"]), numeric=True),
            _cell(review),
            _alternatives_cell(others, f'{lang_attr} dir="auto"'),
            f'<td data-sort="{len(flags[idx])}">{_flag_badges(flags[idx], severity)}</td>',
        ]
        body.append(
            f'<tr class="{"flagged" if flags[idx] else "clean"}" id="class-{idx}" data-order="{position}" '
            f'data-flags="{escape(names)}" data-source="{escape(str(row["source"]))}" '
            f'data-reviewed="{escape(str(row.get("review_decision") or ""))}">' + "".join(cells) + "</tr>"
        )
    head = "".join(
        f'<th data-key="{key}"{" data-numeric" if numeric else ""} title="sort by {escape(text)}">{escape(text)}</th>'
        for key, text, numeric in LABEL_COLUMNS
    )
    checks = [check for check in [*CHECKS, STALE] if any(check == c for entries in flags.values() for c, _ in entries)]
    sources: dict[str, int] = {}
    for row in rows.values():
        sources[str(row["source"])] = sources.get(str(row["source"]), 0) + 1
    controls = " ".join(
        [
            _select(
                "flag",
                "flags",
                [("", "all rows"), ("any", "flagged"), ("none", "not flagged")] + [(check, check) for check in checks],
            ),
            _select(
                "source", "source", [("", "all sources")] + [(s, f"{s} ({n})") for s, n in sorted(sources.items())]
            ),
            _select("review", "review", [("", "all"), ("reviewed", "reviewed"), ("unreviewed", "not reviewed")]),
        ]
    )
    return (
        f'<p class="controls">{controls} <span id="shown">{len(rows)} of {len(rows)} classes shown</span></p>\n'
        f'<table id="labels">\n<thead><tr>{head}</tr></thead>\n<tbody>\n' + "\n".join(body) + "\n</tbody>\n</table>\n"
    )


def _reviews_section(lang: str, reviews: Mapping[str, Any] | None, english: Mapping[int, Mapping[str, Any]]) -> str:
    """Who reviewed what and when, and the coverage it gives."""
    if not reviews or not reviews.get("classes"):
        return '<p class="muted">no reviews</p>'
    lines = [
        f"<p>{reviews['reviewed']} of {reviews['classes']} classes reviewed ({100 * reviews['reviewed_share']:.1f}%), "
        f"{reviews['changed']} changed by a review ({100 * reviews['changed_share']:.1f}%), "
        f"{reviews['rejected']} rejected, {reviews['stale']} stale (accepted, but the rules now pick another label). "
        f"Decisions live in <code>resources/reviews/{escape(lang)}.tsv</code>; "
        f'<a href="{escape(sheet_name(lang))}" download>the review sheet</a> takes new ones.</p>'
    ]
    decisions = reviews.get("decisions", [])
    if decisions:
        rows = [
            [
                _cell(d["class_idx"], numeric=True),
                _cell(english.get(d["class_idx"], {}).get("name")),
                _cell(d["decision"]),
                _cell(d["label"]),
                _cell(d["rule_label"]),
                _cell(d["reviewer"]),
                _cell(d["date"]),
                _cell("stale" if d["stale"] else ""),
                _cell(d["note"]),
            ]
            for d in decisions
        ]
        lines.append(
            _table(
                ["class", "English name", "decision", "label", "rules' label", "reviewer", "date", "stale", "note"],
                rows,
            )
        )
    return "\n".join(lines)


def render_language(
    lang: str,
    record: Mapping[str, Any],
    rows: Mapping[int, Mapping[str, Any]],
    english: Mapping[int, Mapping[str, str]],
    candidates: Mapping[int, Sequence[Mapping[str, Any]]] | None = None,
    html_lang: str | None = None,
) -> str:
    """One language's page: checks, reviews, then every class with its alternatives.

    rows: {class_idx: labels.parquet row}; english: {class_idx: {name, definition}};
    candidates: {class_idx: candidates.parquet rows} (None: candidates not built).
    """
    check_rows = [
        [_cell(check), _cell(entry["severity"]), _cell(entry["count"], numeric=True), _cell(entry["meaning"])]
        for check, entry in record["checks"].items()
    ]
    lang_attr = f' lang="{escape(html_lang)}"' if html_lang else ""
    n_flagged = len(record["flags"])
    langid = record["langid"]
    langid_note = (
        f"langid ({escape(str(langid.get('code')))}) disagrees on {langid['disagree']} labels, "
        f"{langid['disagree_confident']} of them confidently (&ge; {langid['policy']['min_chars']} characters and "
        f"p &ge; {langid['policy']['min_probability']}). Labels are mostly one or two words, where langid is "
        "unreliable: read these as hints, not verdicts."
        if langid.get("status") == "checked"
        else f"langid: {escape(str(langid.get('reason', 'not checked')))}."
    )
    sections = []

    for name, title in [*titles(), ("reference", "Reference release")]:
        sections.append(f"<h2>{title}</h2>\n{_optional_section(record.get(name))}")
    alternatives_note = (
        "Alternatives: every other candidate sense of the class, with its source, the rule that set it aside "
        "and how many sources give the same lemma."
        if candidates is not None
        else "Alternatives: not built (candidates.parquet is missing)."
    )
    body = (
        f'<p><a href="index.html">&larr; all languages</a> &middot; <a href="{escape(lang)}.json">checks as JSON</a>'
        f' &middot; <a href="{escape(sheet_name(lang))}" download>review sheet (CSV)</a></p>\n'
        f"<h1>{escape(lang)} &mdash; {escape(str(record.get('name', '')))}</h1>\n"
        f"<p>group {escape(str(record.get('group')))}; {record['classes_kept']} classes kept; "
        f"quality score {record['quality_score']:.2f}; {record['errors']} error rows, {record['warnings']} warning rows.</p>\n"
        + _precision_line(record.get("label_precision"))
        + "<h2>Checks</h2>\n"
        + _table(["check", "severity", "rows", "meaning"], check_rows)
        + f"\n<p>{langid_note}</p>\n"
        + "<h2>Reviews</h2>\n"
        + _reviews_section(lang, record.get("reviews"), english)
        + f"\n<h2>Labels</h2>\n<p>All {len(rows)} classes, the {n_flagged} flagged by a check first. "
        "Click a header to sort; the filters and the order are kept in the address, so a view can be linked. "
        f"{alternatives_note}</p>\n"
        + _labels_table(lang, record, rows, english, candidates or {}, lang_attr)
        + "<h2>Senses dropped</h2>\n"
        + _mapping_table(record["dropped"], "reason", "senses")
        + "\n<h2>Source mix</h2>\n"
        + _mapping_table(record["source_mix"], "source", "labels")
        + "\n"
        + _source_trust_section(record.get("source_trust"))
        + "\n".join(sections)
        + f"\n<script>\n{asset(SORT_SCRIPT_FILE)}{asset(LABELS_SCRIPT_FILE)}</script>"
    )
    return _page(f"{lang} label audit", body)


def _source_trust_section(trust: Mapping[str, Any] | None) -> str:
    """The sources' estimated precision and the order the agreement ranking used (labels.rules.learned_priority)."""
    if not trust:
        return ""
    origin = (
        f"learned from the sources' agreement in {trust['evidence_classes']} classes"
        if trust["order_from"] == "evidence"
        else f"labels.source_priority ({trust['evidence_classes']} classes of evidence: too few to learn one)"
    )
    return (
        "<h2>Source trust</h2>\n"
        f"<p>Source order {' &gt; '.join(escape(name) for name in trust['order']) or 'none'}, {escape(origin)}. Estimated precision: "
        "how often a source's first candidate is given by another source of the class (and matches a reviewed "
        "label), smoothed toward the source kind's estimate over all languages.</p>\n"
        + (_mapping_table(trust["precision"], "source", "precision") if trust["precision"] else "")
        + "\n"
    )


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Nested mappings as (dotted key, leaf value) pairs, for a two-column table (an empty one: "none",
    e.g. no quarantine reason)."""
    if isinstance(value, Mapping) and value:
        items: list[tuple[str, Any]] = []
        for key, inner in value.items():
            items.extend(_flatten(inner, f"{prefix}.{key}" if prefix else str(key)))
        return items
    return [(prefix, "none" if isinstance(value, Mapping) else value)]


def _optional_section(section: Mapping[str, Any] | None) -> str:
    if not section:
        return '<p class="muted">not built</p>'
    if section.get("status") not in ("built", "compared"):
        return f'<p class="muted">{escape(str(section.get("status")))}</p>'
    return _table(
        ["measure", "value"],
        [[_cell(k), _cell(v, numeric=isinstance(v, (int, float)))] for k, v in _flatten(section) if k != "status"],
    )


# --- plots -------------------------------------------------------------------------------------


def _save_png(fig, path: Path) -> None:
    """PNG without the matplotlib version/date metadata, so reruns are byte-identical."""

    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100, metadata={"Software": None})


def plot_classes_per_language(languages: Mapping[str, Mapping[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 4))
    ordered = sorted(languages.items(), key=lambda item: (-item[1]["classes_kept"], item[0]))
    colors = {group: plt.cm.viridis(i / max(1, len(GROUP_ORDER) - 1)) for i, group in enumerate(GROUP_ORDER)}
    for group in GROUP_ORDER:
        xs = [i for i, (_, entry) in enumerate(ordered) if entry.get("group") == group]
        ax.bar(
            xs,
            [ordered[i][1]["classes_kept"] for i in xs],
            width=1.0,
            color=colors[group],
            label=f"{group} ({len(xs)})",
        )
    ax.set_xlabel("languages, by classes kept")
    ax.set_ylabel("classes kept")
    ax.set_title(PLOTS["classes_per_language.png"])
    ax.legend(title="group")
    fig.tight_layout()
    _save_png(fig, path)
    plt.close(fig)


def plot_source_mix(languages: Mapping[str, Mapping[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    totals: dict[str, dict[str, int]] = {group: {} for group in GROUP_ORDER}
    for entry in languages.values():
        group_totals = totals.setdefault(str(entry.get("group")), {})
        for source, count in entry["source_mix"].items():
            family = source_family(source)
            group_totals[family] = group_totals.get(family, 0) + count
    groups = [group for group in totals if totals[group]]
    families = sorted({family for counts in totals.values() for family in counts})
    fig, ax = plt.subplots(figsize=(8, 4))
    bottoms = [0.0] * len(groups)
    for family in families:
        shares = [totals[g].get(family, 0) / sum(totals[g].values()) for g in groups]
        ax.bar(groups, shares, bottom=bottoms, label=family)
        bottoms = [b + s for b, s in zip(bottoms, shares)]
    ax.set_ylabel("share of labels")
    ax.set_title(PLOTS["source_mix.png"])
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1, 0.5))
    fig.tight_layout()
    _save_png(fig, path)
    plt.close(fig)


def plot_distribution(boxes: Mapping[str, Mapping[str, Any]], plot: SectionPlot, path: Path) -> None:
    """A section's score per language as box plots (`boxes`: its `Section.distribution`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    langs = sorted(boxes)
    fig, ax = plt.subplots(figsize=(max(6, len(langs) * 0.6), 4))
    ax.bxp([dict(boxes[lang]) for lang in langs], showfliers=False)
    ax.set_ylabel(plot.ylabel)
    ax.set_title(plot.title)
    ax.tick_params(axis="x", rotation=90)
    fig.tight_layout()
    _save_png(fig, path)
    plt.close(fig)


# --- writing -----------------------------------------------------------------------------------


def write_report(
    out_dir: Path,
    summary: dict[str, Any],
    records: Mapping[str, Mapping[str, Any]],
    pages: Mapping[str, str],
    distributions: Sequence[tuple[SectionPlot, Mapping[str, Mapping[str, Any]]]],
    slices: Mapping[str, Mapping[str, Any]] | None = None,
    sheets: Mapping[str, str] | None = None,
) -> None:
    """Write plots, `<lang>.json`, `<lang>.html`, `<lang>.review.csv` (the review sheets),
    `summary.json`, `index.html` and each dataset's slice `datasets/<name>.json`
    (builders/audit/sections.py) as the folder `out_dir`.

    The report is built in a folder beside `out_dir` and swapped in whole: a failed run leaves
    the previous report, and the folder holds exactly this run's files (no stale pages).
    """

    with atomic_directory(out_dir) as staging:
        plots = ["classes_per_language.png", "source_mix.png"]
        plot_classes_per_language(summary["languages"], staging / plots[0])
        plot_source_mix(summary["languages"], staging / plots[1])
        for plot, boxes in distributions:
            if boxes:
                plot_distribution(boxes, plot, staging / plot.file)
                plots.append(plot.file)
        summary["plots"] = plots
        for lang, record in records.items():
            write_json(record, staging / f"{lang}.json")
            write_text(pages[lang], staging / page_name(lang))
        for lang, sheet in (sheets or {}).items():
            write_text(sheet, staging / sheet_name(lang))
        write_json(summary, staging / "summary.json")
        for name, found in (slices or {}).items():
            write_json(found, staging / "datasets" / f"{name}.json")
        write_text(render_index(summary), staging / "index.html")
