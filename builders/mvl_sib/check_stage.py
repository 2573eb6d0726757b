"""`babelforge mvl_sib_check`: per language and task config, rows, topic balance and
label-position balance, and whether the ids are identical to every other language.

Prints one compact summary (the per-language lines only with --per-language, or for
languages with a problem); the full per-language table goes to `<paths.mvl_sib_reports>/check.json`,
the headline figures to `<paths.metrics>/mvl_sib.json` (a DVC metric tracked by git). Exit 1 when
any check fails.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_json, read_provenance, read_table, write_json
from babelforge.core.metrics import write_metrics
from babelforge.core.progress import progress
from babelforge.core.provenance import profile_of_record
from babelforge.core.stages import Paths, Stage, stage_paths
from babelforge.mvl_sib.settings import CheckSettings

REPORT_FILE = "check.json"
METRICS_NAME = "mvl_sib"

# Columns that must be identical in every language (everything except texts).
ID_COLUMNS = (
    "instance_id",
    "sentence_id",
    "topic",
    "label",
    "ref_image_ids",
    "ref_sentence_ids",
    "option_sentence_ids",
    "option_image_ids",
    "option_topics",
)


@dataclass(frozen=True)
class Config(CheckSettings):
    """The `mvl_sib.check` group of params.yaml; reads `paths.mvl_sib`, writes `paths.mvl_sib_reports`."""

    GROUP = "mvl_sib.check"
    paths: Paths = stage_paths()


def check_config_file(path, n_options: int):
    """(rows, label-position counts, topic counts) of one task file, and its id columns."""
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    table = pq.read_table(path, columns=[name for name in ID_COLUMNS if name in schema.names])
    labels = table.column("label").to_numpy()
    counts = [int((labels == position).sum()) for position in range(n_options)]
    topics = table.column("topic").value_counts().to_pylist()
    result = {
        "rows": table.num_rows,
        "labels": counts,
        "topics": {item["values"]: int(item["counts"]) for item in sorted(topics, key=lambda x: x["values"])},
    }
    return result, table


def check_all(out_dir) -> tuple[dict, dict, dict, list[str]]:
    """(per-language table, summary, label-count variants per config, problems) for an assembled MVL-SIB folder."""

    out_dir = Path(out_dir)
    if not (out_dir / "instances.parquet").is_file():
        raise BabelforgeError(f"{out_dir}: no instances.parquet; run `babelforge mvl_sib` first")
    instances = read_table(out_dir / "instances.parquet", columns=["topic", "positive_image_ids", "negative_image_ids"])
    expected_rows = len(instances)
    expected_topics = dict(sorted(Counter(instances["topic"]).items()))
    configs = sorted(p.parent.name for p in out_dir.glob("*/task.json"))
    if not configs:
        raise BabelforgeError(f"{out_dir}: no task configs (<task>_k<k>/task.json)")
    languages = sorted({p.stem for config in configs for p in (out_dir / config).glob("*.parquet")})

    table: dict[str, dict] = {lang: {} for lang in languages}
    problems: list[str] = []
    referenced = {
        image
        for column in ("positive_image_ids", "negative_image_ids")
        for images in instances[column]
        for image in images
    }
    missing_images = sorted(image for image in referenced if not (out_dir / "images" / f"{image}.jpg").is_file())
    if missing_images:
        problems.append(f"images/{missing_images[0]}: {len(missing_images)} referenced image file(s) missing")
    reference: dict[str, tuple[str, object]] = {}
    for config in configs:
        n_options = int(read_json(out_dir / config / "task.json")["n_options"])
        for lang in progress(languages, desc=f"check {config}", total=len(languages), unit="lang"):
            path = out_dir / config / f"{lang}.parquet"
            if not path.is_file():
                problems.append(f"{config}/{lang}: missing")
                continue
            result, ids = check_config_file(path, n_options)
            first = reference.setdefault(config, (lang, ids))
            result["parallel"] = ids.equals(first[1])
            table[lang][config] = result
            if result["rows"] != expected_rows:
                problems.append(f"{config}/{lang}: {result['rows']} rows, expected {expected_rows}")
            if max(result["labels"]) - min(result["labels"]) > 1:
                problems.append(f"{config}/{lang}: label positions unbalanced {result['labels']}")
            if result["topics"] != expected_topics:
                problems.append(f"{config}/{lang}: topic counts differ from instances.parquet")
            if not result["parallel"]:
                problems.append(f"{config}/{lang}: ids or labels differ from {first[0]}")

    variants = {
        config: sorted({tuple(table[lang][config]["labels"]) for lang in languages if config in table[lang]})
        for config in configs
    }
    all_counts = [count for per_config in variants.values() for variant in per_config for count in variant]
    summary = {
        "languages": len(languages),
        "configs": len(configs),
        "rows_per_language_per_config": expected_rows,
        "rows_total": sum(entry["rows"] for per_lang in table.values() for entry in per_lang.values()),
        "topics_per_language": expected_topics,
        "label_position_min": min(all_counts, default=0),
        "label_position_max": max(all_counts, default=0),
        "problems": len(problems),
    }
    return table, summary, variants, problems


def headline(summary: dict) -> dict:
    """The summary's scalar figures (the topic counts stay in check.json: one column each in `dvc exp show`)."""
    return {key: value for key, value in summary.items() if not isinstance(value, dict)}


def run(config: Config) -> int:

    out_dir = Path(config.paths.mvl_sib)
    report = Path(config.paths.mvl_sib_reports) / REPORT_FILE
    table, summary, variants, problems = check_all(out_dir)
    write_json({"summary": summary, "label_positions": variants, "languages": table, "problems": problems}, report)
    # the profile the checked build was made with, as its instances table records it
    profile = profile_of_record(read_provenance(out_dir / "instances.parquet"))
    write_metrics(headline(summary), config.paths.metrics, METRICS_NAME, profile=profile)

    configs = sorted({name for per_lang in table.values() for name in per_lang})
    print(
        f"MVL-SIB check of {out_dir}: {summary['languages']} languages × {summary['configs']} task configs "
        f"({', '.join(configs)})"
    )
    print(
        f"  rows per language and config: {summary['rows_per_language_per_config']} expected; "
        f"{summary['rows_total']:,} rows in all"
    )
    print(
        "  topic balance (rows per topic, every language): "
        + ", ".join(f"{topic} {count}" for topic, count in summary["topics_per_language"].items())
    )
    print("  label positions A/B/C/D per language:")
    for name in configs:
        shown = " | ".join("/".join(str(c) for c in v) for v in variants[name])
        same = "same in every language" if len(variants[name]) == 1 else f"{len(variants[name])} variants"
        print(f"    {name:<8} {shown}  ({same})")
    bad_langs = sorted({problem.split("/")[1].split(":")[0] for problem in problems} & set(table))
    for lang in sorted(table) if config.per_language else bad_langs:
        entries = table[lang]
        rows = sorted({entry["rows"] for entry in entries.values()})
        spread = max((max(e["labels"]) - min(e["labels"]) for e in entries.values()), default=0)
        parallel = all(entry["parallel"] for entry in entries.values())
        topics_ok = all(entry["topics"] == summary["topics_per_language"] for entry in entries.values())
        print(
            f"  {lang}: configs {len(entries)}, rows {'/'.join(map(str, rows))}, "
            f"topics {'as expected' if topics_ok else 'DIFFER'}, label spread {spread}, "
            f"parallel {'yes' if parallel else 'NO'}"
        )
    if problems:
        print(f"  {len(problems)} problem(s), first: " + "; ".join(problems[:5]))
        return 1
    print(f"  all checks passed; per-language table: {report}")
    return 0


STAGE = Stage(
    "mvl_sib_check",
    "check MVL-SIB: rows, topic and label-position balance",
    run,
    config=Config,
    flags={
        "--mvl-sib": ("paths.mvl_sib", "the assembled MVL-SIB"),
        "--out": ("paths.mvl_sib_reports", f"folder for {REPORT_FILE}, the per-language table"),
        "--metrics": ("paths.metrics", f"writes {METRICS_NAME}.json there"),
        "--per-language": "per_language",
    },
    deps=("${paths.mvl_sib}",),
    outs=("${paths.mvl_sib_reports}/check.json",),
    metrics=("${paths.metrics}/mvl_sib.json",),
    docs="docs/datasets/mvl-sib.md",
    owns={
        "mvl_sib_reports": ("reports/mvl_sib", "MVL-SIB balance check"),
    },
)
