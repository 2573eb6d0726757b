"""`babelforge eval_correlate`: Pearson / Spearman / Kendall tau-b / tau-c between two columns, with CIs.

A tool (outside `dvc repro`): one TSV with both columns, or two TSVs joined on key columns.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import write_json
from babelforge.core.numbers import Bounds, number_flag
from babelforge.core.stages import Stage
from babelforge.eval.documents import json_safe
from babelforge.eval.tools.correlation import correlate, format_table, join_columns
from babelforge.eval.tools.tsv import check_columns, key_columns, read_tsv


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tables", nargs="+", metavar="TABLE.tsv", help="one table (both columns) or two (joined)")
    parser.add_argument("--x", required=True, help="column of the first table")
    parser.add_argument("--y", required=True, help="column of the second (or the same) table")
    parser.add_argument("--on", help="key columns to join two tables on, comma-separated")
    parser.add_argument(
        "--mirror",
        action="store_true",
        help="add every pair again with both values negated (side-by-side data); "
        "n and p-values stay those of the real pairs",
    )
    parser.add_argument(
        "--doubled-p",
        action="store_true",
        help="with --mirror, also report scipy's p-value of the doubled sample (labelled)",
    )
    parser.add_argument(
        "--scale-m",
        type=number_flag(int, "--scale-m", Bounds(minimum=2)),
        help="tau-c scale size m (default: fewer distinct values)",
    )
    parser.add_argument(
        "--n-boot",
        type=number_flag(int, "--n-boot", Bounds(minimum=1)),
        default=1000,
        help="bootstrap resamples (default 1000)",
    )
    parser.add_argument(
        "--seed", type=number_flag(int, "--seed", Bounds(minimum=0)), default=0, help="bootstrap seed (default 0)"
    )
    parser.add_argument("--json", help="write every coefficient, n and CI here")


def run(args: argparse.Namespace) -> int:

    import pandas as pd

    if len(args.tables) > 2:
        raise BabelforgeError(f"correlate takes one or two tables, got {len(args.tables)}")
    if args.doubled_p and not args.mirror:
        raise BabelforgeError("--doubled-p is the p-value of a mirrored sample; give it with --mirror")
    keys = key_columns(args.on)
    if args.scale_m is not None and args.scale_m < 2:
        raise BabelforgeError(f"--scale-m {args.scale_m}: a rating scale has at least 2 levels")
    left = read_tsv(args.tables[0])
    join_report = None
    if len(args.tables) == 2:
        if not keys:
            raise BabelforgeError("two tables need --on KEY[,KEY...] to be joined")
        joined, join_report = join_columns(left, read_tsv(args.tables[1]), args.x, args.y, keys)
        x, y = joined["x"], joined["y"]
        print(join_report.describe(Path(args.tables[0]).name, Path(args.tables[1]).name))
    else:
        check_columns(left, [args.x, args.y], args.tables[0])
        x, y = left[args.x], left[args.y]
    x, y = pd.to_numeric(x, errors="coerce"), pd.to_numeric(y, errors="coerce")
    usable = x.notna() & y.notna()
    if (~usable).any():
        print(f"left out {int((~usable).sum())} rows with an empty or non-numeric value")
    x, y = x[usable].to_numpy(float), y[usable].to_numpy(float)
    if len(x) < 3:
        raise BabelforgeError(f"only {len(x)} usable pairs; a correlation needs at least 3")
    results = correlate(
        x, y, scale_m=args.scale_m, mirror=args.mirror, n_boot=args.n_boot, seed=args.seed, doubled_p=args.doubled_p
    )
    print(f"x = {args.x}, y = {args.y}{' (mirrored: every pair also negated)' if args.mirror else ''}")
    print(format_table(results))
    if args.json:
        document = {
            "tables": list(args.tables),
            "x": args.x,
            "y": args.y,
            "on": keys,
            "mirror": args.mirror,
            "n_pairs": int(len(x)),
            "n_boot": args.n_boot,
            "seed": args.seed,
            "join": None
            if join_report is None
            else {
                "n_left": join_report.n_left,
                "n_right": join_report.n_right,
                "n_joined": join_report.n_joined,
                "dropped_left": [list(k) for k in join_report.dropped_left],
                "dropped_right": [list(k) for k in join_report.dropped_right],
            },
            "coefficients": {name: r.as_dict() for name, r in results.items()},
        }
        write_json(json_safe(document), args.json)
    return 0


STAGE = Stage(
    "eval_correlate",
    "Pearson / Spearman / Kendall tau-b / tau-c between two columns, with CIs",
    run,
    configure=configure,
    tool=True,
    docs="docs/guides/evaluate.md",
)
