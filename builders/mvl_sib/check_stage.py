"""`babelforge mvl_sib_check`: per language and task config, rows, topic balance and
label-position balance, and whether the ids are identical to every other language.

Prints one compact summary (the per-language lines only with --per-language, or for
languages with a problem); the full per-language table goes to `mvl_sib.check.report`,
the summary to `mvl_sib.check.summary` (a DVC metric). Exit 1 when any check fails.
"""
from __future__ import annotations

import argparse

# Columns that must be identical in every language (everything except texts).
ID_COLUMNS = ("instance_id", "sentence_id", "topic", "label", "ref_image_ids", "ref_sentence_ids",
              "option_sentence_ids", "option_image_ids", "option_topics")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--params", default="params.yaml", help="params file (group mvl_sib)")
    parser.add_argument("--out-dir", help="override mvl_sib.out_dir (the assembled MVL-SIB)")
    parser.add_argument("--report", help="override mvl_sib.check.report")
    parser.add_argument("--summary", help="override mvl_sib.check.summary")
    parser.add_argument("--per-language", action="store_true", help="print one line per language")


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
    from collections import Counter
    from pathlib import Path

    from builders.core.errors import BabelforgeError
    from builders.core.io import read_json, read_table
    from builders.core.progress import progress

    out_dir = Path(out_dir)
    if not (out_dir / "instances.parquet").is_file():
        raise BabelforgeError(f"{out_dir}: no instances.parquet; run `babelforge mvl_sib` first")
    instances = read_table(out_dir / "instances.parquet",
                           columns=["topic", "positive_image_ids", "negative_image_ids"])
    expected_rows = len(instances)
    expected_topics = dict(sorted(Counter(instances["topic"]).items()))
    configs = sorted(p.parent.name for p in out_dir.glob("*/task.json"))
    if not configs:
        raise BabelforgeError(f"{out_dir}: no task configs (<task>_k<k>/task.json)")
    languages = sorted({p.stem for config in configs for p in (out_dir / config).glob("*.parquet")})

    table: dict[str, dict] = {lang: {} for lang in languages}
    problems: list[str] = []
    referenced = {image for column in ("positive_image_ids", "negative_image_ids")
                  for images in instances[column] for image in images}
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


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from builders.core.io import write_json
    from builders.mvl_sib.settings import load_settings

    _, settings = load_settings(args.params)
    out_dir = Path(args.out_dir or settings["out_dir"])
    table, summary, variants, problems = check_all(out_dir)
    write_json({"summary": summary, "label_positions": variants, "languages": table, "problems": problems},
               args.report or settings["check"]["report"])
    write_json(summary, args.summary or settings["check"]["summary"])

    configs = sorted({config for per_lang in table.values() for config in per_lang})
    print(f"MVL-SIB check of {out_dir}: {summary['languages']} languages × {summary['configs']} task configs "
          f"({', '.join(configs)})")
    print(f"  rows per language and config: {summary['rows_per_language_per_config']} expected; "
          f"{summary['rows_total']:,} rows in all")
    print("  topic balance (rows per topic, every language): "
          + ", ".join(f"{topic} {count}" for topic, count in summary["topics_per_language"].items()))
    print("  label positions A/B/C/D per language:")
    for config in configs:
        shown = " | ".join("/".join(str(c) for c in v) for v in variants[config])
        same = "same in every language" if len(variants[config]) == 1 else f"{len(variants[config])} variants"
        print(f"    {config:<8} {shown}  ({same})")
    bad_langs = sorted({problem.split("/")[1].split(":")[0] for problem in problems} & set(table))
    for lang in sorted(table) if args.per_language else bad_langs:
        entries = table[lang]
        rows = sorted({entry["rows"] for entry in entries.values()})
        spread = max((max(e["labels"]) - min(e["labels"]) for e in entries.values()), default=0)
        parallel = all(entry["parallel"] for entry in entries.values())
        topics_ok = all(entry["topics"] == summary["topics_per_language"] for entry in entries.values())
        print(f"  {lang}: configs {len(entries)}, rows {'/'.join(map(str, rows))}, "
              f"topics {'as expected' if topics_ok else 'DIFFER'}, label spread {spread}, "
              f"parallel {'yes' if parallel else 'NO'}")
    if problems:
        print(f"  {len(problems)} problem(s), first: " + "; ".join(problems[:5]))
        return 1
    print(f"  all checks passed; per-language table: {args.report or settings['check']['report']}")
    return 0
