"""`babelforge labels`: filtered, selected Babel-ImageNet labels and the language table."""
from __future__ import annotations

import argparse

from builders.core.params import DEFAULT_PARAMS


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--params", default=DEFAULT_PARAMS, help="params file (groups `profile`, `senses`, `labels`)")
    parser.add_argument("--wordnet", default="data/wordnet/imagenet1k.parquet")
    parser.add_argument("--senses-dir", default="data/senses")
    parser.add_argument("--out-dir", default="data/babel_imagenet")
    parser.add_argument("--quiet", action="store_true", help="no per-language summary on stdout")


def labels_frame(choices, classes):
    """Rows of labels.parquet from LabelChoices (only chosen labels) and the class table."""
    import pandas as pd

    from builders.babel_imagenet.labels import duplicate_flags

    by_synset = {row.synset: (row.class_idx, row.wnid) for row in classes.itertuples()}
    rows = [
        {
            "class_idx": by_synset[c.synset][0], "wnid": by_synset[c.synset][1], "lang": c.lang, "label": c.label,
            "source": c.source, "rank": c.rank, "n_senses": c.n_senses, "n_dropped_english": c.n_dropped_english,
            "n_dropped_mt": c.n_dropped_mt, "n_dropped_low_precision": c.n_dropped_low_precision,
            "used_low_precision": c.used_low_precision,
        }
        for c in choices if c.label is not None
    ]
    frame = pd.DataFrame(rows).sort_values(["lang", "class_idx"], kind="stable").reset_index(drop=True)
    frame["is_duplicate"] = [
        flag for _, group in frame.groupby("lang", sort=True) for flag in duplicate_flags(group["label"].tolist())
    ]
    for column in ("class_idx", "rank", "n_senses", "n_dropped_english", "n_dropped_mt", "n_dropped_low_precision"):
        frame[column] = frame[column].astype("int32")
    return frame


def languages_frame(choices, kept: dict[str, int]):
    """One row per kept language: class count, resource group, and what the filters dropped."""
    import pandas as pd

    from builders.babel_imagenet.labels import resource_group
    from builders.core.languages import registry

    totals: dict[str, list[int]] = {}
    for c in choices:
        if c.lang in kept:
            t = totals.setdefault(c.lang, [0, 0, 0, 0])
            t[0] += c.n_dropped_english
            t[1] += c.n_dropped_mt
            t[2] += c.n_dropped_low_precision
            t[3] += c.label is None
    languages = registry()
    return pd.DataFrame(
        [
            {
                "lang": lang, "name": languages.get(lang).name, "n_classes": n, "group": resource_group(n),
                "n_dropped_english": totals[lang][0], "n_dropped_mt": totals[lang][1],
                "n_dropped_low_precision": totals[lang][2], "n_classes_emptied": totals[lang][3],
            }
            for lang, n in kept.items()
        ]
    ).astype({"n_classes": "int32", "n_dropped_english": "int32", "n_dropped_mt": "int32",
              "n_dropped_low_precision": "int32", "n_classes_emptied": "int32"})


def summary_table(languages) -> str:
    header = f"{'lang':<16} {'classes':>7} {'group':<9} {'en-drop':>7} {'mt-drop':>7} {'lowp':>5}  name"
    lines = [header, "-" * len(header)]
    for row in languages.sort_values(["n_classes", "lang"], ascending=[False, True]).itertuples():
        lines.append(f"{row.lang:<16} {row.n_classes:>7} {row.group:<9} {row.n_dropped_english:>7} "
                     f"{row.n_dropped_mt:>7} {row.n_dropped_low_precision:>5}  {row.name}")
    counts = languages["group"].value_counts()
    lines.append(f"{len(languages)} languages: " + ", ".join(f"{g} {counts.get(g, 0)}"
                                                             for g in ("very-low", "low", "mid", "high")))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from builders.babel_imagenet.labels import (ENGLISH, choose_labels, english_lemma_keys, english_rows,
                                                kept_languages)
    from builders.core.errors import BabelforgeError
    from builders.core.io import read_provenance, read_table, write_table
    from builders.core.params import load_params, section
    from builders.core.progress import info
    from builders.core.provenance import provenance
    from builders.lexicon.senses import Sense
    from builders.lexicon.senses_stage import active_source

    params = load_params(args.params)
    group = section(params, "labels")
    classes = read_table(args.wordnet)
    source = active_source(params)
    senses_path = Path(args.senses_dir) / f"{source}.parquet"
    if not senses_path.exists():
        raise BabelforgeError(f"{senses_path}: no senses for source {source!r}; run `babelforge senses` first")
    senses_frame = read_table(senses_path)
    senses = [Sense(*row) for row in senses_frame.itertuples(index=False, name=None)]

    english = english_lemma_keys(list(classes["lemmas"]) + [[name] for name in classes["clip_name"]])
    low_precision = frozenset(group["low_precision_sources"])
    choices = choose_labels(senses, english, low_precision)
    kept = kept_languages(choices, group["min_classes"])
    choices = [c for c in choices if c.lang in kept]
    english_choices = english_rows(dict(zip(classes["synset"], classes["clip_name"])))
    kept[ENGLISH] = len(english_choices)
    all_choices = english_choices + choices

    labels = labels_frame(all_choices, classes)
    languages = languages_frame(all_choices, dict(sorted(kept.items())))
    record = provenance(
        "labels",
        params={"profile": params.get("profile", "sample"), "labels": group},
        sources={"senses": read_provenance(senses_path).get("sources", {}), "senses_file": senses_path.name},
    )
    out = Path(args.out_dir)
    write_table(labels, out / "labels.parquet", sort_by=["lang", "class_idx"], provenance=record)
    write_table(languages, out / "languages.parquet", sort_by=["lang"], provenance=record)
    if not args.quiet:
        print(summary_table(languages))
    info(f"labels: {len(labels)} labels in {len(languages)} languages -> {out}/labels.parquet, languages.parquet")
    return 0
