"""Draw a blind judging sheet of chosen labels (issue 48): uniformly at random, 24 per language.

Run from the repo root: `.venv/bin/python benchmarks/judged_sample.py [--out judged_sheet.tsv]`.
Writes a TSV with only lang, wnid, the class's English name and WordNet lemmas, its WordNet 3.0
gloss and the chosen label. It reads no other column of labels.parquet (no p_correct, source,
candidates or their count): a judge who sees them is no longer blind. The judged result is
tests/babel_imagenet/judged_labels_blind.tsv (test data, not shipped).

Pairs (lang, wnid) already in one of the judged files are skipped, so the three sets are disjoint.

`--switches` draws the sheet of item 3 instead: the classes where the lexicon layer, fitted on the other
languages' judged labels, would choose another label than the rules (label_precision.held_out_switches on
a rules build, `--data`): every label of those classes that has no verdict yet where the other label has
one, and both labels of SWITCH_SAMPLE classes drawn at random from those with none, all rows shuffled, so
the judge cannot tell which label each side chose.
The seed and the languages are fixed here so the draw can be repeated on the same build; the
sheet's first line names the md5 of the labels.parquet it was drawn from.
"""

from __future__ import annotations

import csv
import hashlib
import random
from pathlib import Path

import pandas as pd
from bench_cli import benchmark_parser

SEED = 4825
PER_LANGUAGE = 24
LANGUAGES = (
    "deu_Latn",
    "fra_Latn",
    "spa_Latn",
    "ita_Latn",
    "por_Latn",
    "nld_Latn",
    "pol_Latn",
    "rus_Cyrl",
    "jpn_Jpan",
    "zho_Hans",
    "ind_Latn",
    "tur_Latn",
    "swe_Latn",
    "ces_Latn",
)
LABELS = Path("data/babel_imagenet/labels.parquet")
WORDNET = Path("data/wordnet/imagenet1k.parquet")
OWN_JUDGED = Path("tests/babel_imagenet/judged_labels.tsv")
SHARED_JUDGED = Path("../shared/judged/labels_judged_2026-11-25.tsv")
SWITCH_SAMPLE = 40  # classes with no verdict on either label, both labels judged
# The only columns read from labels.parquet: the rest would unblind the judge.
BLIND_COLUMNS = ["lang", "wnid", "label"]


def judged_pairs(own: Path, shared: Path) -> set[tuple[str, str]]:
    """(lang, wnid) pairs already judged: the own file has both columns, the shared one an id lang:wnid."""
    pairs = set()
    with own.open(encoding="utf-8") as f:
        rows = csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t")
        pairs |= {(r["lang"], r["wnid"]) for r in rows}
    with shared.open(encoding="utf-8") as f:
        rows = csv.DictReader(f, delimiter="\t")
        pairs |= {tuple(r["id"].split(":", 1)) for r in rows}
    return pairs


def draw(labels: pd.DataFrame, skip: set[tuple[str, str]], languages, per_language: int, seed: int) -> pd.DataFrame:
    """Per language, a uniform sample without replacement of the classes not in skip (sorted first,
    so the draw depends on the seed and the rows, not on the file's row order)."""
    rng = random.Random(seed)
    picked = []
    for lang in languages:
        wnids = sorted(w for w in labels.loc[labels["lang"] == lang, "wnid"] if (lang, w) not in skip)
        if len(wnids) < per_language:
            raise SystemExit(f"judged_sample: {lang} has {len(wnids)} unjudged classes, fewer than {per_language}")
        picked += [(lang, w) for w in rng.sample(wnids, per_language)]
    order = pd.DataFrame(picked, columns=["lang", "wnid"])
    return order.merge(labels, on=["lang", "wnid"], how="left")


def switch_sheet(switches: pd.DataFrame, judged: dict, sample: int, seed: int) -> pd.DataFrame:
    """lang, wnid, label rows to judge (see the module doc): the unjudged side of half-judged classes and
    both sides of `sample` unjudged ones, in a seeded random order."""
    rng = random.Random(seed)
    rows, unjudged = [], []
    for lang, wnid, rules, learned in switches.itertuples(index=False):
        missing = [label for label in (rules, learned) if (lang, wnid, label) not in judged]
        if len(missing) == 1:
            rows.append((lang, wnid, missing[0]))
        elif missing:
            unjudged.append((lang, wnid, rules, learned))
    for lang, wnid, *labels in rng.sample(sorted(unjudged), min(sample, len(unjudged))):
        rows += [(lang, wnid, label) for label in labels]
    rng.shuffle(rows)
    return pd.DataFrame(rows, columns=BLIND_COLUMNS)


def main() -> None:
    ap = benchmark_parser(__doc__)
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--wordnet", type=Path, default=WORDNET)
    ap.add_argument("--out", type=Path, default=Path("judged_sheet.tsv"))
    ap.add_argument("--switches", action="store_true", help="draw item 3's sheet (classes the layer would relabel)")
    ap.add_argument(
        "--data", type=Path, help="with --switches: a rules build (default: build one, as label_precision.py)"
    )
    args = ap.parse_args()

    synsets = pd.read_parquet(args.wordnet, columns=["wnid", "clip_name", "lemmas", "definition"])
    if args.switches:
        import tempfile

        from label_precision import build_choice_table, held_out_switches, judged_verdicts, rules_build

        judged = judged_verdicts(SHARED_JUDGED)
        with tempfile.TemporaryDirectory() as folder:
            data = args.data or rules_build(Path(folder))
            labels = pd.read_parquet(data / "labels.parquet")
            args.labels = data / "labels.parquet"
            md5 = hashlib.md5(args.labels.read_bytes()).hexdigest()
            table = build_choice_table(pd.read_parquet(data / "candidates.parquet"), labels)
        sheet = switch_sheet(held_out_switches(table, judged), judged, SWITCH_SAMPLE, SEED)
    else:
        labels = pd.read_parquet(args.labels, columns=BLIND_COLUMNS)
        sheet = draw(labels, judged_pairs(OWN_JUDGED, SHARED_JUDGED), LANGUAGES, PER_LANGUAGE, SEED)
        md5 = hashlib.md5(args.labels.read_bytes()).hexdigest()
    sheet = sheet.merge(synsets, on="wnid", how="left")
    sheet["lemmas"] = sheet["lemmas"].map(" | ".join)
    sheet = sheet.rename(columns={"clip_name": "english", "definition": "gloss"})
    with args.out.open("w", encoding="utf-8", newline="") as f:
        what = f"{SWITCH_SAMPLE} unjudged switched classes" if args.switches else f"{PER_LANGUAGE} per language"
        f.write(f"# drawn from {args.labels} md5 {md5}, seed {SEED}, {what}\n")
        sheet[["lang", "wnid", "english", "lemmas", "gloss", "label"]].to_csv(f, sep="\t", index=False)
    print(f"{len(sheet)} rows -> {args.out}")


if __name__ == "__main__":
    main()
