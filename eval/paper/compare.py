"""Our run beside the paper: per model and language ours, the paper's and ours − paper; Table 2's
group averages over the languages both have; and what differs in the setup, said in words.

Plain data in and out: our rows are the result rows of run documents (or of eval_report's
results.csv) with their `task`; the paper's scores come from `babelforge.eval.paper.tables`. Our
metrics are fractions, the papers print percent: ours are multiplied by 100 before any difference.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

from babelforge.core.errors import BabelforgeError
from babelforge.eval.families import parse_spec
from babelforge.eval.paper.tables import GROUP_COLUMNS, METRICS, PaperModel

SCALE = 100.0  # our fractions -> the papers' percent
COLUMNS = (
    "model",
    "paper_model",
    "matched_by",
    "dataset",
    "lang",
    "code",
    "prompt_set",
    "metric",
    "ours",
    "paper",
    "diff",
    "n_classes",
    "paper_classes",
    "group",
)
GROUP_ROW_COLUMNS = (
    "model",
    "paper_model",
    "matched_by",
    "prompt_set",
    "group",
    "n_languages",
    "paper_languages",
    "ours",
    "paper",
    "diff",
    "table2",
)


def our_name(model: PaperModel) -> str | None:
    """The `model` our rows give a paper model: its spec's name (the spec without revisions; a
    transformers model's bare Hub id). None when the spec does not parse."""
    try:
        return parse_spec(model.spec, model.revision or None).name
    except BabelforgeError:
        return None


def parse_aliases(pairs: Iterable[str]) -> dict[str, str]:
    """`--as SHORT=MODEL` values -> {paper short name: our model}."""
    aliases = {}
    for pair in pairs:
        short, equals, model = pair.partition("=")
        if not equals or not short.strip() or not model.strip():
            raise BabelforgeError(
                f"--as {pair!r}: write it as SHORT=MODEL (a paper model's short name = a model of the run)"
            )
        aliases[short.strip()] = model.strip()
    return aliases


def run_model(spec: str, ours: Sequence[str]) -> str | None:
    """The model of the run that `spec` names (None when none): as the run names it, or written as it
    was given to `--model` (with its family, its revisions, a folder however it is spelled), which
    names the same model once parsed."""
    if spec in ours:
        return spec
    wanted = spec_key(spec)
    return next((model for model in ours if wanted is not None and spec_key(model) == wanted), None)


def spec_key(spec: str) -> str | None:
    """What a spec names, however it is written: its name (no revisions) with its folders absolute;
    None when it does not parse."""
    try:
        return parse_spec(spec).absolute().name
    except BabelforgeError:
        return None


def match_models(
    models: Sequence[PaperModel], our_models: Iterable[str], aliases: Mapping[str, str] | None = None
) -> list[tuple[str, str, str]]:
    """[(our model, paper short name, how: "spec" or "--as")]: a paper model whose spec names one of
    our models, and each `--as` pair (checked: a known paper model, a model of the run)."""
    ours = sorted(set(our_models))
    shorts = {model.short for model in models}
    pairs = []
    for short, spec in (aliases or {}).items():
        if short not in shorts:
            raise BabelforgeError(
                f"--as {short}={spec}: no paper model {short!r}; the paper's: {', '.join(sorted(shorts))}"
            )
        model = run_model(spec, ours)
        if model is None:
            raise BabelforgeError(f"--as {short}={spec}: the run has no model {spec!r}; its models: {', '.join(ours)}")
        pairs.append((model, short, "--as"))
    for model in models:
        name = our_name(model)
        if name in ours and (name, model.short, "--as") not in pairs:
            pairs.append((name, model.short, "spec"))
    return sorted(pairs)


def compare(
    rows: Sequence[Mapping],
    scores: Sequence[Mapping],
    models: Sequence[PaperModel],
    task: str,
    aliases: Mapping[str, str] | None = None,
) -> list[dict]:
    """One dict per (our model, paper model, our row) with a paper number: `COLUMNS`. Our rows of
    other tasks are left out; a row whose language (or caption set) the paper has no number for is
    not in the result (`coverage` counts both sides)."""
    rows = [row for row in rows if row.get("task") == task]
    paper = {(s["paper_model"], s["dataset"], s["lang"], s["metric"]): s for s in scores if s["value"] is not None}
    by_metric = task not in METRICS  # mclipscore: one number per model and metric, no language
    found = []
    for model, short, how in match_models(models, {row["model"] for row in rows}, aliases):
        for row in (row for row in rows if row["model"] == model):
            metrics = (
                sorted({s["metric"] for s in scores if s["paper_model"] == short}) if by_metric else [METRICS[task]]
            )
            for metric in metrics:
                key = (
                    (short, "human_ratings", None, metric)
                    if by_metric
                    else (short, row.get("dataset"), row.get("lang"), metric)
                )
                score = paper.get(key)
                value = row.get(metric)
                if score is None or value is None or value != value:  # NaN: not computed
                    continue
                ours = float(value) * SCALE
                found.append(
                    {
                        "model": model,
                        "paper_model": short,
                        "matched_by": how,
                        "dataset": score["dataset"],
                        "lang": score["lang"],
                        "code": score["code"],
                        "prompt_set": row.get("prompt_set"),
                        "metric": metric,
                        "ours": ours,
                        "paper": score["value"],
                        "diff": ours - score["value"],
                        "n_classes": row.get("n_classes"),
                        "paper_classes": score.get("num_classes"),
                        "group": score.get("group"),
                    }
                )
    return found


def coverage(rows: Sequence[Mapping], scores: Sequence[Mapping], comparison: Sequence[Mapping], task: str) -> dict:
    """Per paired model: the paper's languages (or numbers), ours, and both."""
    out = {}
    for (model, short), part in _groupby(comparison, ("model", "paper_model")).items():
        ours = {(r.get("dataset"), r.get("lang")) for r in rows if r.get("task") == task and r["model"] == model}
        theirs = {(s["dataset"], s["lang"]) for s in scores if s["paper_model"] == short and s["value"] is not None}
        both = {(r["dataset"], r["lang"]) for r in part}
        out[f"{model} ~ {short}"] = {"paper": len(theirs), "ours": len(ours), "both": len(both)}
    return out


def _groupby(items: Iterable[Mapping], keys: Sequence[str]) -> dict[tuple, list[Mapping]]:
    groups: dict[tuple, list[Mapping]] = defaultdict(list)
    for item in items:
        groups[tuple(item.get(key) for key in keys)].append(item)
    return dict(sorted(groups.items(), key=lambda kv: tuple(str(k) for k in kv[0])))


def group_averages(
    comparison: Sequence[Mapping],
    scores: Sequence[Mapping],
    models: Sequence[PaperModel],
    table2: Mapping[str, Mapping[str, float]],
) -> list[dict]:
    """Table 2's groups (very_low, low, mid, high, en) per paired model and prompt set: the mean of ours
    and of the paper's Tables 8-9 over the languages both have, their difference, and Table 2's
    own number (over all the paper's languages of the group: equal to `paper` only when we have them all)."""
    names = {model.short: model.table2_name for model in models}
    paper_counts = Counter((s["paper_model"], s["group"]) for s in scores if s.get("value") is not None)
    out = []
    for (model, short, how, prompt_set), part in _groupby(
        comparison, ("model", "paper_model", "matched_by", "prompt_set")
    ).items():
        for column, group in GROUP_COLUMNS.items():
            shared = [r for r in part if r["group"] == group]
            ours = statistics.fmean(r["ours"] for r in shared) if shared else None
            theirs = statistics.fmean(r["paper"] for r in shared) if shared else None
            out.append(
                {
                    "model": model,
                    "paper_model": short,
                    "matched_by": how,
                    "prompt_set": prompt_set,
                    "group": column,
                    "n_languages": len(shared),
                    "paper_languages": paper_counts.get((short, group), 0),
                    "ours": ours,
                    "paper": theirs,
                    "diff": None if ours is None else ours - theirs,
                    "table2": (table2.get(names.get(short, "")) or {}).get(column),
                }
            )
    return out


def setup_differences(
    rows: Sequence[Mapping],
    comparison: Sequence[Mapping],
    task: str,
    profile: str | None,
    settings: Mapping | None = None,
    aliases: Mapping[str, str] | None = None,
) -> list[str]:
    """What differs between our run and the paper's, one sentence each: the run's profile, stand-in
    models, label sets (our class count per language vs the paper's), prompts, class subsets, images."""
    settings = settings or {}
    lines = []
    if profile == "sample":
        lines.append(
            "NOT COMPARABLE: a sample-profile run (tiny random models, drawn stand-in images, sample labels); "
            "its numbers only exercise this comparison, they say nothing about the paper's models"
        )
    elif profile is None:
        lines.append("the run's profile is unknown (results.csv carries no provenance): check the runs it merged")
    else:
        lines.append(f"the run's profile: {profile}")
    ours = sorted({row["model"] for row in rows})
    for short, spec in sorted((aliases or {}).items()):
        model = run_model(spec, ours) or spec  # the run's name of it, however --as wrote the spec
        lines.append(f"stand-in: our {model} is put beside the paper's {short} (--as); it is not the paper's model")
    if not comparison:
        lines.append("no language of the run has a paper number for a paired model")
    if task == "zeroshot":
        lines += _label_lines(comparison)
        lines += _prompt_lines(rows)
        lines.append(
            "class subsets: each language is scored over the classes it has a label for, ours over our label "
            "set's, the paper's over its release's; another class count changes chance (1 / classes) and the "
            "difficulty, so top-1 compares only where the counts agree (top1_norm and top1_100 are ours only)"
        )
        images = settings.get("images")
        counts = sorted({int(r["n_images"]) for r in rows if r.get("task") == task and r.get("n_images") is not None})
        lines.append(
            "images: the paper used the ImageNet-1k validation set (50,000 images, 50 per class); ours: "
            + (f"{images!r}, " if images else "")
            + (f"{counts[0]:,}-{counts[-1]:,} images per language" if counts else "image count unknown")
            + (" (drawn stand-ins, not ImageNet)" if profile == "sample" else "")
        )
    elif task == "retrieval":
        limit = settings.get("max_images")
        lines.append(
            "images and captions: the paper used the full test sets (xFlickrCO 2,000 images, XM3600 3,600, XTD "
            "1,000); ours: "
            + (f"the first {limit} images of each caption set" if limit else "every image of each set")
            + (" (drawn stand-ins)" if profile == "sample" else "")
        )
    else:
        lines.append(
            "the paper's numbers are correlations of CLIPScore with human ratings; ours must be the same "
            "correlations on the same rating sets (VICR, Expert, CrowdFlower, Composite) to compare"
        )
    return [sentence(line) for line in lines]


def sentence(text: str) -> str:
    """A statement of the setup as a sentence: it ends in a full stop (a line without one read as cut off)."""
    return text if text.endswith((".", "!", "?")) else text + "."


def _label_lines(comparison: Sequence[Mapping]) -> list[str]:
    pairs = {r["lang"]: (r["n_classes"], r["paper_classes"]) for r in comparison if r.get("paper_classes")}
    if not pairs:
        return []
    same = sum(1 for ours, theirs in pairs.values() if ours == theirs)
    fewer = sorted((lang for lang, (ours, theirs) in pairs.items() if ours is not None and ours < theirs))
    more = sorted((lang for lang, (ours, theirs) in pairs.items() if ours is not None and ours > theirs))
    ratio = statistics.median(ours / theirs for ours, theirs in pairs.values() if ours)
    return [
        f"labels: our label set is not the paper's release: of {len(pairs)} languages, {same} have the paper's "
        f"class count, {len(fewer)} fewer, {len(more)} more (median ours/paper {ratio:.2f}); "
        "each language's two counts are in the per-language table, `n_classes` ours and `paper_classes` the paper's"
    ]


def _prompt_lines(rows: Sequence[Mapping]) -> list[str]:
    zeroshot = [r for r in rows if r.get("task") == "zeroshot"]
    used = Counter(str(r.get("prompt_set")) for r in zeroshot)
    templates = sorted({int(r["n_templates"]) for r in zeroshot if r.get("n_templates") is not None})
    sets = ", ".join(f"{name} ({n} rows)" for name, n in sorted(used.items()))
    counts = f"{templates[0]}-{templates[-1]}" if len(templates) > 1 else (str(templates[0]) if templates else "?")
    return [
        f"prompts: ours {sets}, {counts} templates per class; these tables do not record the paper's prompts "
        "(see its setup section): read a difference with that in mind"
    ]
