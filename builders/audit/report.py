"""Render the audit: one JSON per language, static HTML pages (no server, no script), PNG plots.

Rendering functions take the plain records `checks.audit_language` produces (plus display
rows) and return strings; `write_report` is the only function here that touches files.
Every piece of data is HTML-escaped: labels come in any script and may contain `<` or `&`.
"""
from __future__ import annotations

import hashlib
from html import escape
from pathlib import Path
from typing import Any, Mapping, Sequence

from builders.audit.checks import CHECKS

SCORE_DOC = (
    "quality score = 100 &times; coverage &times; (1 &minus; min(1, &Sigma;<sub>c</sub> w<sub>c</sub> "
    "&middot; flagged<sub>c</sub> / classes kept)), coverage = classes kept / {total}; "
    "weights w<sub>c</sub> per check: {weights}. Languages are ranked by it, highest first."
)
PLOTS = {
    "classes_per_language.png": "Classes kept per language, by resource group",
    "source_mix.png": "Source mix (share of labels per source family) by resource group",
    "kiwi.png": "COMETKiwi score distribution of the selected caption translations",
}
GROUP_ORDER = ("high", "mid", "low", "very-low")
FLAGGED_ROWS_SHOWN = 500

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#eee}
tr.flagged td{background:#ffd6d6}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.flag{display:inline-block;background:#b00020;color:#fff;border-radius:3px;padding:0 .3em;margin:1px;font-size:.85em}
.flag.warning{background:#a05a00}.flag.info{background:#555}
.muted{color:#666}
img{max-width:100%;border:1px solid #ddd;margin:.5em 0}
"""


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def _cell(value: Any, numeric: bool = False, attrs: str = "") -> str:
    text = "" if value is None else str(value)
    css = ' class="num"' if numeric else ""
    return f"<td{css}{attrs}>{escape(text)}</td>"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "\n".join("<tr>" + "".join(row) + "</tr>" for row in rows)
    return f"<table>\n<tr>{head}</tr>\n{body}\n</table>"


def _mapping_table(mapping: Mapping[str, Any], key: str, value: str) -> str:
    return _table([key, value], [[_cell(k), _cell(v, numeric=isinstance(v, (int, float)))]
                                 for k, v in mapping.items()])


def page_name(lang: str) -> str:
    return f"{lang}.html"


# --- index -------------------------------------------------------------------------------------

def render_index(summary: Mapping[str, Any]) -> str:
    """The index: documented score, ranked languages linking to their pages, optional sections, plots."""
    weights = ", ".join(f"{escape(k)} {v}" for k, v in sorted(summary["score_weights"].items()))
    ranked = sorted(summary["languages"].items(), key=lambda item: (-item[1]["quality_score"], item[0]))
    rows = []
    for position, (lang, entry) in enumerate(ranked, start=1):
        rows.append([
            _cell(position, numeric=True),
            f'<td><a href="{escape(page_name(lang))}">{escape(lang)}</a></td>',
            _cell(entry.get("name")),
            _cell(entry.get("group")),
            _cell(entry["classes_kept"], numeric=True),
            _cell(entry["errors"], numeric=True),
            _cell(entry["warnings"], numeric=True),
            _cell(f'{entry["quality_score"]:.2f}', numeric=True),
            _cell(", ".join(f"{k} {v}" for k, v in list(entry["source_mix"].items())[:3])),
        ])
    inputs = "".join(
        f"<li>{escape(name)}: {escape(status)}</li>" for name, status in sorted(summary["inputs"].items())
    )
    plots = "".join(
        f'<h3>{escape(caption)}</h3><img src="{escape(name)}" alt="{escape(caption)}">'
        for name, caption in PLOTS.items() if name in summary.get("plots", [])
    )
    missing_plots = [caption for name, caption in PLOTS.items() if name not in summary.get("plots", [])]
    if missing_plots:
        plots += "<p class=\"muted\">Not plotted (input not built): " + escape("; ".join(missing_plots)) + "</p>"
    body = (
        "<h1>Babel-ImageNet label audit</h1>\n"
        f"<p>{len(ranked)} languages; {summary['errors']} error rows, {summary['warnings']} warning rows "
        f"(severities in <code>params.yaml</code> <code>audit.severity</code>); "
        f'all figures in <a href="summary.json">summary.json</a>.</p>\n'
        f"<p>{SCORE_DOC.format(total=summary['total_classes'], weights=weights)}</p>\n"
        f"<h2>Inputs</h2><ul>{inputs}</ul>\n"
        "<h2>Languages</h2>\n"
        + _table(["#", "language", "name", "group", "classes", "errors", "warnings", "score", "top sources"], rows)
        + f"\n<h2>Plots</h2>\n{plots}"
    )
    return _page("Babel-ImageNet label audit", body)


# --- language page -----------------------------------------------------------------------------

def _stable_order(lang: str, class_idx: int) -> str:
    """A per-language shuffle that is the same on every run (sampling without a RNG)."""
    return hashlib.sha256(f"{lang}:{class_idx}".encode()).hexdigest()


def sample_rows(
    lang: str, class_ids: Sequence[int], flags: Mapping[str, Any], sample_size: int
) -> list[int]:
    """Flagged classes first (by class index, at most FLAGGED_ROWS_SHOWN), then a stable
    sample of `sample_size` unflagged ones."""
    flagged = sorted(int(idx) for idx in flags)[:FLAGGED_ROWS_SHOWN]
    flagged_set = set(flagged)
    clean = sorted((idx for idx in class_ids if idx not in flagged_set), key=lambda idx: _stable_order(lang, idx))
    return flagged + sorted(clean[:sample_size])


def _flag_badges(entries: Sequence[Sequence[str]], severity: Mapping[str, str]) -> str:
    return "".join(
        f'<span class="flag {escape(severity.get(check, "warning"))}" title="{escape(CHECKS.get(check, check))}">'
        f"{escape(check)}: {escape(detail)}</span>"
        for check, detail in entries
    )


def render_language(
    lang: str,
    record: Mapping[str, Any],
    rows: Mapping[int, Mapping[str, Any]],
    english: Mapping[int, Mapping[str, str]],
    sample_size: int,
    html_lang: str | None = None,
) -> str:
    """One language's page. rows: {class_idx: {label, source}}; english: {class_idx: {name, definition}}."""
    severity = {check: entry["severity"] for check, entry in record["checks"].items()}
    check_rows = [
        [_cell(check), _cell(entry["severity"]), _cell(entry["count"], numeric=True), _cell(entry["meaning"])]
        for check, entry in record["checks"].items()
    ]
    lang_attr = f' lang="{escape(html_lang)}"' if html_lang else ""
    shown = sample_rows(lang, list(rows), record["flags"], sample_size)
    sample = []
    for idx in shown:
        row, eng = rows[idx], english.get(idx, {})
        entries = record["flags"].get(str(idx), [])
        cells = [
            _cell(idx, numeric=True),
            _cell(row["label"], attrs=f'{lang_attr} dir="auto"'),
            _cell(eng.get("name")),
            _cell(eng.get("definition")),
            _cell(row["source"]),
            f"<td>{_flag_badges(entries, severity)}</td>",
        ]
        sample.append(cells)
    sample_html = "\n".join(
        f'<tr class="{"flagged" if record["flags"].get(str(idx)) else "clean"}" id="class-{idx}">' + "".join(cells) + "</tr>"
        for idx, cells in zip(shown, sample)
    )
    n_flagged = len(record["flags"])
    langid = record["langid"]
    langid_note = (
        f"langid ({escape(str(langid.get('code')))}) disagrees on {langid['disagree']} labels, "
        f"{langid['disagree_confident']} of them confidently (&ge; {langid['policy']['min_chars']} characters and "
        f"p &ge; {langid['policy']['min_probability']}). Labels are mostly one or two words, where langid is "
        "unreliable: read these as hints, not verdicts."
        if langid.get("status") == "checked" else f"langid: {escape(str(langid.get('reason', 'not checked')))}."
    )
    sections = []
    from builders.audit.sections import titles

    for name, title in [*titles(), ("reference", "Reference release")]:
        sections.append(f"<h2>{title}</h2>\n{_optional_section(record.get(name))}")
    body = (
        f'<p><a href="index.html">&larr; all languages</a> &middot; <a href="{escape(lang)}.json">checks as JSON</a></p>\n'
        f"<h1>{escape(lang)} &mdash; {escape(str(record.get('name', '')))}</h1>\n"
        f"<p>group {escape(str(record.get('group')))}; {record['classes_kept']} classes kept; "
        f"quality score {record['quality_score']:.2f}; {record['errors']} error rows, {record['warnings']} warning rows.</p>\n"
        "<h2>Checks</h2>\n" + _table(["check", "severity", "rows", "meaning"], check_rows)
        + f"\n<p>{langid_note}</p>\n"
        + f"\n<h2>Labels</h2>\n<p>{n_flagged} flagged rows first"
        + (f" (first {FLAGGED_ROWS_SHOWN} shown)" if n_flagged > FLAGGED_ROWS_SHOWN else "")
        + f", then a fixed sample of up to {sample_size} unflagged rows.</p>\n"
        "<table>\n<tr><th>class</th><th>label</th><th>English name</th><th>WordNet definition</th>"
        f"<th>source</th><th>flags</th></tr>\n{sample_html}\n</table>\n"
        "<h2>Senses dropped</h2>\n" + _mapping_table(record["dropped"], "reason", "senses")
        + "\n<h2>Source mix</h2>\n" + _mapping_table(record["source_mix"], "source", "labels")
        + "\n" + "\n".join(sections)
    )
    return _page(f"{lang} label audit", body)


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Nested mappings as (dotted key, leaf value) pairs, for a two-column table."""
    if isinstance(value, Mapping) and value:
        items: list[tuple[str, Any]] = []
        for key, inner in value.items():
            items.extend(_flatten(inner, f"{prefix}.{key}" if prefix else str(key)))
        return items
    return [(prefix, value)]


def _optional_section(section: Mapping[str, Any] | None) -> str:
    if not section:
        return '<p class="muted">not built</p>'
    if section.get("status") not in ("built", "compared"):
        return f'<p class="muted">{escape(str(section.get("status")))}</p>'
    return _table(["measure", "value"], [[_cell(k), _cell(v, numeric=isinstance(v, (int, float)))]
                                         for k, v in _flatten(section) if k != "status"])


# --- plots -------------------------------------------------------------------------------------

def _save_png(fig, path: Path) -> None:
    """PNG without the matplotlib version/date metadata, so reruns are byte-identical."""
    from builders.core.io import atomic_path

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
        ax.bar(xs, [ordered[i][1]["classes_kept"] for i in xs], width=1.0, color=colors[group],
               label=f"{group} ({len(xs)})")
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

    from builders.audit.checks import source_family

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


def plot_kiwi(scores: Mapping[str, Sequence[float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    langs = sorted(scores)
    fig, ax = plt.subplots(figsize=(max(6, len(langs) * 0.6), 4))
    ax.boxplot([list(scores[lang]) for lang in langs], tick_labels=langs, showfliers=False)
    ax.set_ylabel("COMETKiwi score")
    ax.set_title(PLOTS["kiwi.png"])
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
    kiwi_scores: Mapping[str, Sequence[float]] | None,
    slices: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Write plots, `<lang>.json`, `<lang>.html`, `summary.json`, `index.html` and each dataset's
    slice `datasets/<name>.json` (builders/audit/sections.py) as the folder `out_dir`.

    The report is built in a folder beside `out_dir` and swapped in whole: a failed run leaves
    the previous report, and the folder holds exactly this run's files (no stale pages).
    """
    from builders.core.io import atomic_directory, write_json, write_text

    with atomic_directory(out_dir) as staging:
        plots = ["classes_per_language.png", "source_mix.png"]
        plot_classes_per_language(summary["languages"], staging / plots[0])
        plot_source_mix(summary["languages"], staging / plots[1])
        if kiwi_scores:
            plot_kiwi(kiwi_scores, staging / "kiwi.png")
            plots.append("kiwi.png")
        summary["plots"] = plots
        for lang, record in records.items():
            write_json(record, staging / f"{lang}.json")
            write_text(pages[lang], staging / page_name(lang))
        write_json(summary, staging / "summary.json")
        for name, found in (slices or {}).items():
            write_json(found, staging / "datasets" / f"{name}.json")
        write_text(render_index(summary), staging / "index.html")
