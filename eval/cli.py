"""`babelforge eval <task>`: the evaluation stages and tools.

  tiny-clip   build the tiny random CLIP models of the sample profile (no network)
  images      draw the sample profile's image sets (ImageNet-style folder + caption images)
  zeroshot    Babel-ImageNet zero-shot classification per language   -> reports/eval/zeroshot.json
  retrieval   text<->image recall@1/5/10 per caption set and language -> reports/eval/retrieval.json
  clipscore   CLIPScore / RefCLIPScore / pairwise accuracy per language, or per row of a TSV
  mvl_sib     MVL-SIB accuracy per task, k and language               -> reports/eval/mvl_sib.json
  report      merged CSV, DVC metrics and the plots                   -> reports/eval/
  correlate   Pearson / Spearman / Kendall tau-b / tau-c between two columns (one or two TSVs)
  cider       CIDEr-D of candidate captions against references (TSV in, TSV + JSON out)

The stage tasks read the `eval:` group of params.yaml; heavy libraries are imported
only inside the functions that run.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from builders.core.errors import BabelforgeError

TASKS = ("tiny-clip", "images", "zeroshot", "retrieval", "clipscore", "mvl_sib", "report", "correlate", "cider")


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="task", required=True, metavar="task")
    for name, text in (
        ("tiny-clip", "build the tiny random CLIP models (eval.tiny_clip)"),
        ("images", "draw the sample image sets (eval.images)"),
        ("zeroshot", "zero-shot classification per language (eval.zeroshot)"),
        ("retrieval", "caption retrieval recall per language (eval.retrieval)"),
        ("clipscore", "CLIPScore per language (eval.clipscore) or per TSV row"),
        ("mvl_sib", "MVL-SIB accuracy per task, k, language (eval.mvl_sib)"),
        ("report", "merged CSV, metrics and plots (eval.report)"),
    ):
        task = sub.add_parser(name, help=text, description=text)
        task.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
        task.add_argument("--device", default=None, help="cuda / cpu (default: eval.device, auto)")

    clipscore = sub.choices["clipscore"]
    clipscore.add_argument("--pairs", help="TSV with image, caption [, foil] [, references (' ||| '-separated)]")
    clipscore.add_argument("--image-root", default=".", help="folder the TSV's image paths are relative to")
    clipscore.add_argument("--model", help="model directory or Hub id (default: first of eval.models)")
    clipscore.add_argument("--revision", help="Hub revision of --model")
    clipscore.add_argument("--out", help="per-row scores TSV (with --pairs)")

    correlate = sub.add_parser("correlate", help="correlation between two columns, with CIs")
    correlate.add_argument("tables", nargs="+", metavar="TABLE.tsv", help="one table (both columns) or two (joined)")
    correlate.add_argument("--x", required=True, help="column of the first table")
    correlate.add_argument("--y", required=True, help="column of the second (or the same) table")
    correlate.add_argument("--on", help="key columns to join two tables on, comma-separated")
    correlate.add_argument("--mirror", action="store_true", help="add every pair again with both values negated")
    correlate.add_argument("--scale-m", type=int, help="tau-c scale size m (default: fewer distinct values)")
    correlate.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples (default 1000)")
    correlate.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    correlate.add_argument("--json", help="write every coefficient, n and CI here")

    cider = sub.add_parser("cider", help="CIDEr-D of candidates against references")
    cider.add_argument("--candidates", required=True, help="TSV: key column(s) + caption")
    cider.add_argument("--references", required=True, help="TSV: key column(s) + caption, several rows per key")
    cider.add_argument("--on", required=True, help="key columns, comma-separated (e.g. image_id or lang,image_id)")
    cider.add_argument("--text", default="caption", help="caption column in both tables (default caption)")
    cider.add_argument("--group", help="compute corpus CIDEr-D per value of this key column (e.g. lang)")
    cider.add_argument("--baseline", help="second candidates TSV: adds cider_baseline and delta_cider")
    cider.add_argument("--out", help="per-item TSV (keys, cider[, cider_baseline, delta_cider])")
    cider.add_argument("--json", help="corpus scores per group as JSON")


def run(args: argparse.Namespace) -> int:
    handler = {
        "tiny-clip": run_tiny_clip, "images": run_images, "zeroshot": run_zeroshot,
        "retrieval": run_retrieval, "clipscore": run_clipscore, "mvl_sib": run_mvl_sib,
        "report": run_report, "correlate": run_correlate, "cider": run_cider,
    }[args.task]
    return handler(args)


# ---------------------------------------------------------------- shared plumbing

def _params(args) -> dict:
    """The `eval:` group, every `{sample: ..., full: ...}` choice resolved by the `profile:` line."""
    from builders.core.params import load_params, profile_section

    return profile_section(load_params(args.params), "eval")


def _reports_dir(params: dict) -> Path:
    return Path(params.get("reports", "reports/eval"))


def _models(params: dict, device: str | None):
    """Load each model of eval.models, one at a time (a generator keeps one in memory)."""
    from eval.models import load_model

    if params.get("threads"):
        import torch

        # Tiny models on a shared CPU run faster on one thread than on contended several.
        torch.set_num_threads(int(params["threads"]))
    specs = params.get("models") or []
    if not specs:
        raise BabelforgeError("params.yaml eval.models is empty; list models as {id: <hub id or path>, revision: <sha>}")
    for spec in specs:
        spec = spec if isinstance(spec, dict) else {"id": str(spec)}
        yield load_model(str(spec["id"]), spec.get("revision"), device or params.get("device"))


def _cache(params: dict):
    from eval.cache import ImageEmbeddingCache

    return ImageEmbeddingCache(params.get("cache", ".cache/eval/image_embeddings"))


def _provenance(stage: str, params: dict, sources: dict, models: list) -> dict:
    from builders.core.provenance import provenance

    return provenance(f"eval {stage}", params=params, sources=sources,
                      models={m["model"]: m["revision"] for m in models})


def _write_run(task: str, rows: list[dict], params: dict, task_params: dict, sources: dict) -> Path:
    from builders.core.io import write_json
    from builders.core.progress import info
    from eval.report import run_document

    models = [{"model": r["model"], "revision": r["revision"]} for r in rows]
    document = run_document(task, rows, _provenance(task, task_params, sources, models))
    path = write_json(document, _reports_dir(params) / f"{task}.json")
    info(f"eval {task}: {len(rows)} rows -> {path}")
    return path


def _require(path: str | Path, what: str, stage: str) -> Path:
    path = Path(path)
    if not path.exists():
        raise BabelforgeError(f"{what} {path} is missing; build it first (dvc repro {stage}) or fix params.yaml eval")
    return path


def _require_images(path: str | Path, setting: str) -> Path:
    path = Path(path)
    if not path.exists():
        raise BabelforgeError(f"image folder {path} is missing; provide it (full profile) or set params.yaml "
                              f"eval.{setting} (sample profile: dvc repro eval_images)")
    return path


def _seed(params: dict) -> int:
    return int(params.get("seed", 0))


def _caption_language_resolver(params: dict):
    from builders.core.languages import REGISTRY_PATH, read_registry, registry
    from eval.runs import CAPTION_CODE_ALIASES

    path = Path(params.get("registry") or REGISTRY_PATH)
    if not path.is_file():
        raise BabelforgeError(f"language registry {path} is missing; caption-set codes are mapped to registry keys "
                              "through it (set params.yaml eval.registry or add resources/languages.tsv)")
    languages = read_registry(path) if params.get("registry") else registry()

    def resolve(code: str) -> str:
        return languages.lookup(CAPTION_CODE_ALIASES.get(code, code), "iso639_1").key

    return resolve


# ---------------------------------------------------------------- build steps

def run_tiny_clip(args) -> int:
    from builders.core.progress import info
    from eval.models import build_tiny_clip

    config = _params(args).get("tiny_clip", {})
    out = Path(config.get("out", "models/tiny_clip"))
    for seed in config.get("seeds", [0]):
        path = build_tiny_clip(out / f"s{seed}", seed=int(seed), image_size=int(config.get("image_size", 32)))
        info(f"eval tiny-clip: seed {seed} -> {path}")
    return 0


def run_images(args) -> int:
    import json

    from builders.core.progress import info
    from eval.images import write_sample_images

    config = _params(args).get("images", {})
    classes, n_classes = _imagenet_classes(), int(config.get("n_classes", 100))
    chosen = classes[:: max(1, len(classes) // n_classes)][:n_classes]
    names: list[str] = []
    for caption_file in config.get("caption_sets", []):
        data = json.loads(_require(caption_file, "caption set", "fetch").read_text(encoding="utf-8"))
        names.extend(n for n in data["images"][: int(config.get("caption_images", 100))] if n not in names)
    written = write_sample_images(config.get("out", "data/eval/images"), chosen, int(config.get("per_class", 2)),
                                  names, size=int(config.get("size", 64)))
    info(f"eval images: {written['imagenet']} class images ({len(chosen)} classes), {written['captions']} caption images")
    return 0


def _imagenet_classes() -> list[tuple[int, str]]:
    from builders.lexicon.wordnet import read_imagenet_classes

    return [(c.class_idx, c.wnid) for c in read_imagenet_classes()]


# ---------------------------------------------------------------- evaluation stages

def run_zeroshot(args) -> int:
    from builders.core.io import read_table
    from builders.core.progress import info
    from eval.images import read_classification_set
    from eval.report import dataset_version
    from eval.runs import labels_by_language, translated_templates, zeroshot_rows

    params = _params(args)
    config = params.get("zeroshot", {})
    labels_path = _require(config.get("labels", "data/babel_imagenet/labels.parquet"), "labels table", "labels")
    labels = labels_by_language(read_table(labels_path), bool(config.get("drop_duplicate_labels", False)))
    if config.get("languages"):
        unknown = sorted(set(config["languages"]) - set(labels))
        if unknown:
            raise BabelforgeError(f"eval.zeroshot.languages: {', '.join(unknown)} have no labels in {labels_path}")
        labels = {lang: labels[lang] for lang in config["languages"]}
    prompts_path = Path(config.get("prompts", "data/babel_imagenet/prompts.parquet"))
    translated = translated_templates(read_table(prompts_path)) if prompts_path.exists() else {}
    if not prompts_path.exists():
        info(f"eval zeroshot: no {prompts_path}; every language uses the {config.get('fallback', 'english')} fallback")
    english = _english_templates(config)
    knowledge = _knowledge(config) if config.get("knowledge") else None
    image_set = read_classification_set(
        _require_images(config.get("images", "data/eval/images/imagenet"), "zeroshot.images"),
        {wnid: idx for idx, wnid in _imagenet_classes()},
    )
    image_set_hash = image_set.content_hash()
    labels_version = dataset_version(labels_path)
    cache = _cache(params)
    rows = []
    for model in _models(params, args.device):
        rows += zeroshot_rows(
            model, image_set, cache, labels, english, translated,
            prompt_sets=config.get("prompt_sets", ["translated"]), fallback=config.get("fallback", "english"),
            knowledge=knowledge, max_templates=config.get("max_templates"),
            control_classes=int(config.get("control_classes", 100)),
            control_repeats=int(config.get("control_repeats", 10)),
            seed=_seed(params), dataset_version=labels_version, image_set_hash=image_set_hash,
        )
        info(f"eval zeroshot: {model.name} done ({len(labels)} languages; image cache hits {cache.hits}, misses {cache.misses})")
    sources = {"labels": labels_version, "prompts": dataset_version(prompts_path),
               "images": "sha256:" + image_set_hash}
    _write_run("zeroshot", rows, params, config, sources)
    return 0


def _english_templates(config: dict) -> list[str]:
    from builders.babel_imagenet.prompts import read_templates

    default = Path(__file__).resolve().parents[1] / "resources" / "clip_templates_en.txt"
    return read_templates(_require(config.get("english_templates") or default, "template list", "prompts"))


def _knowledge(config: dict) -> dict[int, str]:
    from builders.core.io import read_table

    table = read_table(_require(config.get("wordnet", "data/wordnet/imagenet1k.parquet"), "WordNet table", "wordnet"))
    return {int(c): str(d) for c, d in zip(table["class_idx"], table["definition"]) if d}


def _caption_sets(config: dict) -> list[tuple[str, Path, dict]]:
    import json

    sets = []
    for path in config.get("caption_sets", []):
        path = _require(path, "caption set", "fetch")
        data = json.loads(path.read_text(encoding="utf-8"))
        languages = config.get("languages")
        captions = {code: caps for code, caps in data["captions"].items() if not languages or code in languages}
        sets.append((path.stem, path, {"images": data["images"], "captions": captions}))
    return sets


def _caption_image_set(config: dict, dataset: str, names: list[str], task: str):
    """The images of caption set `dataset`: `images` is one folder, or {dataset: folder}."""
    from eval.images import read_caption_images

    folder = config.get("images", "data/eval/images/captions")
    if isinstance(folder, dict):
        if dataset not in folder:
            raise BabelforgeError(f"params.yaml eval: no image folder for caption set {dataset!r} (has: {', '.join(folder)})")
        folder = folder[dataset]
    limit = config.get("max_images")
    return read_caption_images(_require_images(folder, f"{task}.images"), names[:limit] if limit else names)


def _run_caption_task(args, task: str, rows_for, **defaults) -> int:
    """Shared loop of retrieval and clipscore: every model x caption set of eval.<task>.

    `rows_for(model, image_set, cache, captions, dataset, resolve_lang, seed=, dataset_version=, **options)`
    -> rows, where `options` are the `defaults` keys as set in eval.<task>.
    """
    from eval.report import dataset_version

    params = _params(args)
    config = params.get(task, {})
    options = {key: config.get(key, default) for key, default in defaults.items()}
    resolve = _caption_language_resolver(params)
    sets = [(name, data, dataset_version(path)) for name, path, data in _caption_sets(config)]
    image_sets = {name: _caption_image_set(config, name, data["images"], task) for name, data, _ in sets}
    cache = _cache(params)
    rows = []
    for model in _models(params, args.device):  # inputs are checked before any model loads
        for name, data, version in sets:
            rows += rows_for(model, image_sets[name], cache, data["captions"], name, resolve, seed=_seed(params),
                             dataset_version=version, **options)
    _write_run(task, rows, params, config, {name: version for name, _, version in sets})
    return 0


def run_retrieval(args) -> int:
    from eval.runs import retrieval_rows

    return _run_caption_task(args, "retrieval", retrieval_rows, chunk=1024)


def run_clipscore(args) -> int:
    if args.pairs:
        return _clipscore_pairs(args)
    from eval.runs import clipscore_rows

    return _run_caption_task(args, "clipscore", clipscore_rows, reference_lang="en")


def _read_tsv(path: str | Path):
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise BabelforgeError(f"table {path} does not exist")
    try:
        # Cells are read as written: "NA" or "nan" may be a caption or a language code, and an
        # empty cell stays an empty string (numeric columns go through pd.to_numeric).
        return pd.read_csv(path, sep="\t", keep_default_na=False)
    except Exception as error:  # pandas raises several parser error types
        raise BabelforgeError(f"table {path}: not a readable TSV ({error})") from None


def _key_columns(option: str | None) -> list[str]:
    """`--on a,b` -> ["a", "b"]."""
    return [k.strip() for k in option.split(",") if k.strip()] if option else []


def _check_columns(table, columns, name) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise BabelforgeError(f"{name}: no column {', '.join(map(repr, missing))} (has: {', '.join(table.columns)})")


def _clipscore_pairs(args) -> int:
    """Per-row CLIP-S (and foil / RefCLIP-S) for a TSV: the input of VALSE or human-rating checks."""
    import numpy as np

    from builders.core.io import atomic_path
    from eval.clipscore import clip_score, encode_reference_sets, pairwise_accuracy, ref_clip_score
    from eval.models import load_model

    table = _read_tsv(args.pairs)
    _check_columns(table, ["image", "caption"], args.pairs)
    # Empty cells are empty texts, never the string "nan".
    texts = {c: table[c].fillna("").astype(str) for c in ("caption", "foil", "references") if c in table.columns}
    for column in ("caption", "foil"):
        if column in texts and (texts[column].str.strip() == "").any():
            row = int((texts[column].str.strip() == "").idxmax()) + 2  # 1-based, after the header
            raise BabelforgeError(f"{args.pairs}:{row}: empty {column}; every row needs one")
    model = load_model(args.model, args.revision, args.device) if args.model else next(_models(_params(args), args.device))
    image_emb = model.encode_images([Path(args.image_root) / p for p in table["image"]])
    text_emb = model.encode_texts(list(texts["caption"]))
    table["clipscore"] = clip_score(image_emb, text_emb)
    summary = {"model": model.name, "revision": model.revision, "n": len(table),
               "clipscore": float(table["clipscore"].mean())}
    if "foil" in texts:
        table["foil_clipscore"] = clip_score(image_emb, model.encode_texts(list(texts["foil"])))
        summary["pairwise_accuracy"] = pairwise_accuracy(table["clipscore"], table["foil_clipscore"])
    if "references" in texts:
        refs = [[r for r in value.split(" ||| ") if r.strip()] for value in texts["references"]]
        table["ref_clipscore"] = ref_clip_score(image_emb, text_emb, encode_reference_sets(model.encode_texts, refs))
        summary["ref_clipscore"] = float(np.nanmean(table["ref_clipscore"]))
    for key, value in summary.items():
        print(f"{key}\t{value}")
    if args.out:
        with atomic_path(args.out) as tmp:
            table.to_csv(tmp, sep="\t", index=False, lineterminator="\n", float_format="%.6f")
    return 0


def run_mvl_sib(args) -> int:
    from builders.core.io import read_table
    from eval.images import IMAGE_SUFFIXES, ImageSet
    from eval.report import dataset_version
    from eval.runs import mvl_sib_rows

    params = _params(args)
    config = params.get("mvl_sib", {})
    root = _require(config.get("data", "data/mvl_sib"), "MVL-SIB folder", "mvl_sib")
    image_root = _require(root / config.get("images", "images"), "MVL-SIB image folder", "mvl_sib")
    image_files = tuple(sorted(p.name for p in image_root.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES))
    image_set = ImageSet(image_root, image_files)
    languages, configs = config.get("languages"), config.get("configs")
    tables = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and p != image_root):
        if configs and folder.name not in configs:
            continue
        for file in sorted(folder.glob("*.parquet")):
            if not languages or file.stem in languages:
                tables[(folder.name, file.stem)] = read_table(file)
    if not tables:
        raise BabelforgeError(f"{root}: no <task>_k<k>/<lang>.parquet tables for eval.mvl_sib.configs/languages")
    cache = _cache(params)
    rows = []
    version = dataset_version(root)
    for model in _models(params, args.device):
        rows += mvl_sib_rows(model, tables, image_set, cache, seed=_seed(params), dataset_version=version)
    _write_run("mvl_sib", rows, params, config, {"mvl_sib": version})
    return 0


# ---------------------------------------------------------------- report

def run_report(args) -> int:
    from builders.core.io import read_json, read_table, write_json
    from builders.core.progress import info
    from eval import report

    params = _params(args)
    config = params.get("report", {})
    out = _reports_dir(params)
    documents = []
    for task in config.get("tasks", ["zeroshot", "retrieval", "clipscore", "mvl_sib"]):
        path = out / f"{task}.json"
        if path.exists():
            documents.append(read_json(path))
        else:
            info(f"eval report: no {path}; left out")
    frame = report.merge_rows(documents)
    if frame.empty:
        raise BabelforgeError(f"no evaluation results under {out}; run the eval stages first")
    report.write_csv(frame, out / "results.csv")
    write_json(report.summary_metrics(frame), out / "metrics.json")

    plots = out / "plots"
    zeroshot = frame[frame["task"] == "zeroshot"]
    retrieval = frame[frame["task"] == "retrieval"]
    if not zeroshot.empty:
        languages_path = Path(params.get("zeroshot", {}).get("languages_table", "data/babel_imagenet/languages.parquet"))
        if languages_path.exists():
            languages = read_table(languages_path)
        else:
            languages = zeroshot.groupby("lang", as_index=False)["n_classes"].max()
        by_language = zeroshot[["model", "prompt_set", "lang", "n_classes", "top1", "top1_100"]]
        report.write_csv(by_language.sort_values(["model", "prompt_set", "n_classes", "lang"]),
                         plots / "zeroshot_by_language.csv")
        report.plot_accuracy_by_language(zeroshot, languages, plots / "zeroshot_by_language.png")
    if not zeroshot.empty and not retrieval.empty:
        pairs = report.benchmark_vs_retrieval(zeroshot, retrieval)
        report.write_csv(pairs, plots / "zeroshot_vs_retrieval.csv")
        report.plot_benchmark_vs_retrieval(pairs, plots / "zeroshot_vs_retrieval.png",
                                           "Babel-ImageNet top-1", "retrieval mean recall")
        correlations = report.per_language_correlation(pairs, int(config.get("min_models", 3)))
        report.write_csv(correlations, plots / "correlation_by_language.csv")
        report.plot_correlation_heatmap(correlations, plots / "correlation_by_language.png")
    info(f"eval report: {len(frame)} rows -> {out / 'results.csv'}, metrics.json, plots/")
    return 0


# ---------------------------------------------------------------- tools

def run_correlate(args) -> int:
    from builders.core.io import write_json
    from eval.correlation import correlate, format_table, join_columns

    if len(args.tables) > 2:
        raise BabelforgeError(f"correlate takes one or two tables, got {len(args.tables)}")
    keys = _key_columns(args.on)
    if args.scale_m is not None and args.scale_m < 2:
        raise BabelforgeError(f"--scale-m {args.scale_m}: a rating scale has at least 2 levels")
    left = _read_tsv(args.tables[0])
    join_report = None
    if len(args.tables) == 2:
        if not keys:
            raise BabelforgeError("two tables need --on KEY[,KEY...] to be joined")
        joined, join_report = join_columns(left, _read_tsv(args.tables[1]), args.x, args.y, keys)
        x, y = joined["x"], joined["y"]
        print(join_report.describe(Path(args.tables[0]).name, Path(args.tables[1]).name))
    else:
        _check_columns(left, [args.x, args.y], args.tables[0])
        x, y = left[args.x], left[args.y]
    import pandas as pd

    x, y = pd.to_numeric(x, errors="coerce"), pd.to_numeric(y, errors="coerce")
    usable = x.notna() & y.notna()
    if (~usable).any():
        print(f"left out {int((~usable).sum())} rows with an empty or non-numeric value")
    x, y = x[usable].to_numpy(float), y[usable].to_numpy(float)
    if len(x) < 3:
        raise BabelforgeError(f"only {len(x)} usable pairs; a correlation needs at least 3")
    results = correlate(x, y, scale_m=args.scale_m, mirror=args.mirror, n_boot=args.n_boot, seed=args.seed)
    print(f"x = {args.x}, y = {args.y}{' (mirrored: every pair also negated)' if args.mirror else ''}")
    print(format_table(results))
    if args.json:
        from eval.report import json_safe

        document = {
            "tables": list(args.tables), "x": args.x, "y": args.y, "on": keys, "mirror": args.mirror,
            "n_pairs": int(len(x)), "n_boot": args.n_boot, "seed": args.seed,
            "join": None if join_report is None else {
                "n_left": join_report.n_left, "n_right": join_report.n_right, "n_joined": join_report.n_joined,
                "dropped_left": [list(k) for k in join_report.dropped_left],
                "dropped_right": [list(k) for k in join_report.dropped_right]},
            "coefficients": {name: r.as_dict() for name, r in results.items()},
        }
        write_json(json_safe(document), args.json)
    return 0


def run_cider(args) -> int:
    from builders.core.io import atomic_path, write_json
    from eval.cider import cider_d

    keys = _key_columns(args.on)
    group_column = args.group
    if group_column and group_column not in keys:
        raise BabelforgeError(f"--group {group_column} must be one of the --on keys ({', '.join(keys)})")
    references = _read_tsv(args.references)
    _check_columns(references, [*keys, args.text], args.references)
    lookup = {}
    for key, text in zip(references[keys].itertuples(index=False), references[args.text].astype(str)):
        if text.strip():  # an empty reference cell is no reference
            lookup.setdefault(tuple(key), []).append(text)

    def score(path: str):
        candidates = _read_tsv(path)
        _check_columns(candidates, [*keys, args.text], path)
        if candidates.duplicated(keys).any():
            raise BabelforgeError(f"{path}: more than one candidate for some {','.join(keys)}; one caption per item")
        item_keys = [tuple(row) for row in candidates[keys].itertuples(index=False)]
        missing = [k for k in item_keys if k not in lookup]
        if missing:
            raise BabelforgeError(f"{path}: {len(missing)} items have no reference in {args.references} "
                                  f"(first: {'/'.join(map(str, missing[0]))})")
        per_item, corpus = {}, {}
        groups = sorted({k[keys.index(group_column)] for k in item_keys}) if group_column else [None]
        for group in groups:
            members = [i for i, k in enumerate(item_keys) if group is None or k[keys.index(group_column)] == group]
            total, scores = cider_d([str(candidates[args.text].iloc[i]) for i in members],
                                    [lookup[item_keys[i]] for i in members])
            corpus["all" if group is None else str(group)] = total
            per_item.update({item_keys[i]: s for i, s in zip(members, scores)})
        return per_item, corpus

    per_item, corpus = score(args.candidates)
    document = {"candidates": args.candidates, "references": args.references, "on": keys, "cider_d": corpus}
    columns = {"cider": per_item}
    if args.baseline:
        base_items, base_corpus = score(args.baseline)
        document["baseline"] = args.baseline
        document["cider_d_baseline"] = base_corpus
        document["delta_cider"] = {g: corpus[g] - base_corpus.get(g, float("nan")) for g in corpus}
        columns["cider_baseline"] = base_items
        columns["delta_cider"] = {k: per_item[k] - base_items[k] for k in per_item if k in base_items}
    for group, value in corpus.items():
        delta = f"\tdelta {document['delta_cider'][group]:+.4f}" if args.baseline else ""
        print(f"{group}\tCIDEr-D {value:.4f}{delta}")
    if args.out:
        lines = ["\t".join([*keys, *columns])]
        for key in sorted(per_item, key=lambda k: tuple(map(str, k))):
            lines.append("\t".join([*map(str, key), *(f"{columns[c].get(key, float('nan')):.6f}" for c in columns)]))
        with atomic_path(args.out) as tmp:
            tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if args.json:
        write_json(document, args.json)
    return 0
