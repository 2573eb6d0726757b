"""`babelforge eval_cider`: CIDEr-D of candidate captions against references (TSV in, TSV + JSON out).

A tool (outside `dvc repro`). Captions are tokenised by script (`babelforge.eval.tools.cider_d.TOKENIZATION`):
characters in unspaced scripts (Chinese, Japanese, Thai, ...), words elsewhere; the output
states which scripts each group was split into characters and which into words.
"""

from __future__ import annotations

import argparse

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import atomic_path, write_json
from babelforge.core.stages import Stage
from babelforge.eval.tools.cider_d import TOKENIZATION, cider_d, tokenization_report
from babelforge.eval.tools.tsv import check_columns, key_columns, read_tsv


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--candidates", required=True, help="TSV: key column(s) + caption")
    parser.add_argument("--references", required=True, help="TSV: key column(s) + caption, several rows per key")
    parser.add_argument("--on", required=True, help="key columns, comma-separated (e.g. image_id or lang,image_id)")
    parser.add_argument("--text", default="caption", help="caption column in both tables (default caption)")
    parser.add_argument("--group", help="compute corpus CIDEr-D per value of this key column (e.g. lang)")
    parser.add_argument("--baseline", help="second candidates TSV: adds cider_baseline and delta_cider")
    parser.add_argument("--out", help="per-item TSV (keys, cider[, cider_baseline, delta_cider])")
    parser.add_argument("--json", help="corpus scores per group, and the tokenisation, as JSON")


def run(args: argparse.Namespace) -> int:

    keys = key_columns(args.on)
    group_column = args.group
    if group_column and group_column not in keys:
        raise BabelforgeError(f"--group {group_column} must be one of the --on keys ({', '.join(keys)})")
    references = read_tsv(args.references)
    check_columns(references, [*keys, args.text], args.references)
    lookup: dict[tuple, list[str]] = {}
    for key, text in zip(references[keys].itertuples(index=False), references[args.text].astype(str)):
        if text.strip():  # an empty reference cell is no reference
            lookup.setdefault(tuple(key), []).append(text)
    scripts: dict[str, dict] = {}

    def score(path: str):
        candidates = read_tsv(path)
        check_columns(candidates, [*keys, args.text], path)
        if candidates.duplicated(keys).any():
            raise BabelforgeError(f"{path}: more than one candidate for some {','.join(keys)}; one caption per item")
        item_keys = [tuple(row) for row in candidates[keys].itertuples(index=False)]
        missing = [k for k in item_keys if k not in lookup]
        if missing:
            raise BabelforgeError(
                f"{path}: {len(missing)} items have no reference in {args.references} "
                f"(first: {'/'.join(map(str, missing[0]))})"
            )
        per_item, corpus = {}, {}
        groups = sorted({k[keys.index(group_column)] for k in item_keys}) if group_column else [None]
        for group in groups:
            members = [i for i, k in enumerate(item_keys) if group is None or k[keys.index(group_column)] == group]
            texts = [str(candidates[args.text].iloc[i]) for i in members]
            refs = [lookup[item_keys[i]] for i in members]
            total, item_scores = cider_d(texts, refs)
            name = "all" if group is None else str(group)
            corpus[name] = total
            scripts.setdefault(name, tokenization_report(texts + [r for rs in refs for r in rs]))
            per_item.update({item_keys[i]: s for i, s in zip(members, item_scores)})
        return per_item, corpus

    per_item, corpus = score(args.candidates)
    document = {
        "candidates": args.candidates,
        "references": args.references,
        "on": keys,
        "cider_d": corpus,
        "tokenization": TOKENIZATION,
        "scripts": scripts,
    }
    columns = {"cider": per_item}
    if args.baseline:
        base_items, base_corpus = score(args.baseline)
        document["baseline"] = args.baseline
        document["cider_d_baseline"] = base_corpus
        document["delta_cider"] = {g: corpus[g] - base_corpus.get(g, float("nan")) for g in corpus}
        columns["cider_baseline"] = base_items
        columns["delta_cider"] = {k: per_item[k] - base_items[k] for k in per_item if k in base_items}
    print(f"tokenisation: {TOKENIZATION}")
    for group, value in corpus.items():
        delta = f"\tdelta {document['delta_cider'][group]:+.4f}" if args.baseline else ""
        split = scripts[group]
        how = "; ".join(f"{kind}: {', '.join(found)}" for kind, found in split.items() if found) or "no letters"
        print(f"{group}\tCIDEr-D {value:.4f}{delta}\t({how})")
    if args.out:
        lines = ["\t".join([*keys, *columns])]
        for key in sorted(per_item, key=lambda k: tuple(map(str, k))):
            lines.append("\t".join([*map(str, key), *(f"{columns[c].get(key, float('nan')):.6f}" for c in columns)]))
        with atomic_path(args.out) as tmp:
            tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if args.json:
        write_json(document, args.json)
    return 0


STAGE = Stage(
    "eval_cider",
    "CIDEr-D of candidate captions against references, tokenised by script",
    run,
    configure=configure,
    tool=True,
    docs="docs/guides/evaluate.md",
)
