"""The whole paper suite, planned offline: which paper models load here (spec parses, revision pinned,
files in the Hugging Face cache), the languages (the paper's and ours), the images and texts to encode,
and the GPU-hours that takes at a given rate (an estimate, never a measurement).

`plan` is pure: whether a Hub repo is cached is asked of the `cached` function it is given
(`hub_cached`: huggingface_hub's cache, no network).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.eval.families import marker_file, parse_spec
from babelforge.eval.paper.tables import PaperModel

# The image sets each task encodes once per model (a language reuses them: the embedding cache), and how
# many captions an image has per language. Sizes of the papers' test sets.
IMAGE_SETS = {
    "zeroshot": {"babel_imagenet": (50_000, 0, "ImageNet-1k validation, 50 images per class")},
    "retrieval": {
        "xflickrco": (2_000, 1, "xFlickrCO test: 1,000 Flickr30k + 1,000 COCO images"),
        "xm3600": (3_600, 2, "Crossmodal-3600: 3,600 images, about 2 captions per image and language"),
        "xtd": (1_000, 1, "XTD: 1,000 COCO images"),
    },
    "correlation": {
        "human_ratings": (0, 0, "the rating sets' images (VICR, Expert, CrowdFlower, Composite): not counted here")
    },
}
TEMPLATES = 80  # CLIP's prompt templates (resources/clip_templates_en.txt), one text per class and template
# Assumed rates, not measured here (no GPU on the machine that wrote them): a ViT-B/32-class dual encoder in
# fp16 on one data-centre GPU, images decoded and resized by a few CPU workers; larger towers (ViT-L/14,
# ViT-H/14, XLM-R large) are several times slower. Measure yours (time one eval_zeroshot language) and pass
# --images-per-second / --texts-per-second.
DEFAULT_IMAGES_PER_SECOND = 500.0
DEFAULT_TEXTS_PER_SECOND = 2_000.0
SHA = re.compile(r"[0-9a-f]{40}")


def hub_cached(cache_dir: str | Path | None = None) -> Callable[[str, str | None, str | None], bool]:
    """(repo, commit or None, file or None) -> whether the Hugging Face cache holds it: that file at that
    commit; with no file, a snapshot of that commit (what `pins --check` asks); with no commit (a repo an
    open_clip tag or an image tower names), any snapshot of the repo."""
    from huggingface_hub import constants, try_to_load_from_cache

    root = Path(cache_dir or constants.HF_HUB_CACHE)

    def cached(repo: str, commit: str | None, filename: str | None) -> bool:
        if commit and filename:
            return isinstance(try_to_load_from_cache(repo, filename, revision=commit, cache_dir=root), str)
        snapshots = root / f"models--{repo.replace('/', '--')}" / "snapshots"
        folder = snapshots / commit if commit else snapshots
        return folder.is_dir() and any(folder.iterdir())

    return cached


def model_status(model: PaperModel, cached: Callable[[str, str | None, str | None], bool]) -> tuple[bool, str]:
    """(ready, one line): ready to load here, or why not."""
    if not model.loads:
        return False, f"its format does not load: {model.reason}"
    try:
        ref = parse_spec(model.spec, model.revision or None)
    except BabelforgeError as error:
        return False, f"its spec does not parse: {error}"
    if not ref.revision:
        return False, (
            "needs its revision pinned: `babelforge pins --update` (where the Hub is reachable) writes its "
            f"commit into resources/papers/models.tsv (column revision), or write it as "
            f"{model.spec.partition('+')[0]}@<commit sha>"
        )
    missing = []
    for i, repo in enumerate(model.hub_repos):
        commit = ref.revision if i == 0 and SHA.fullmatch(ref.revision) else None
        if not cached(repo, commit, marker_file(ref.family) if commit else None):
            missing.append(f"{repo}@{commit[:12]}" if commit else repo)
    if missing:
        return False, (
            f"not in the Hugging Face cache: {', '.join(missing)} (fill the cache where the Hub is reachable: "
            "huggingface-cli download REPO)"
        )
    return True, ref.text()


def plan(
    models: Sequence[PaperModel],
    scores: Sequence[Mapping],
    unmapped: Sequence[str],
    task: str,
    cached: Callable[[str, str | None, str | None], bool],
    our_languages: Iterable[str] | None = None,
    images_per_second: float = DEFAULT_IMAGES_PER_SECOND,
    texts_per_second: float = DEFAULT_TEXTS_PER_SECOND,
) -> dict:
    """The suite of one paper and task: `models` (each ready or refused, one line), `languages`,
    `work` (images and texts per model, estimated GPU-hours for every paper model and for the ready ones)."""
    if images_per_second <= 0 or texts_per_second <= 0:
        raise BabelforgeError("--images-per-second and --texts-per-second must be positive rates")
    entries = []
    for model in models:
        ready, line = model_status(model, cached)
        entries.append(
            {"short": model.short, "spec": model.spec_text(), "family": model.family, "ready": ready, "line": line}
        )

    langs = sorted({s["lang"] for s in scores if s["lang"]})
    languages = {"paper": len(langs) + len(unmapped), "mapped": len(langs), "unmapped": list(unmapped)}
    if our_languages is not None:
        ours = set(our_languages)
        languages |= {
            "ours": len(ours),
            "both": len(ours & set(langs)),
            "paper_only": sorted(set(langs) - ours),
            "ours_only": len(ours - set(langs)),
        }

    sets = IMAGE_SETS.get(task, {})
    images = sum(n for n, _, _ in sets.values())
    if task == "zeroshot":
        classes = {s["lang"] or s["code"]: s["num_classes"] for s in scores}
        texts = sum(classes.values()) * TEMPLATES
    else:
        per_set = {}
        for s in scores:
            per_set.setdefault(s["dataset"], set()).add(s["code"])
        texts = sum(sets[name][0] * sets[name][1] * len(codes) for name, codes in per_set.items() if name in sets)
    hours = (images / images_per_second + texts / texts_per_second) / 3600
    ready = sum(entry["ready"] for entry in entries)
    return {
        "task": task,
        "models": entries,
        "languages": languages,
        "image_sets": {name: {"images": n, "what": what} for name, (n, _, what) in sets.items()},
        "work": {
            "images_per_model": images,
            "texts_per_model": texts,
            "images_per_second": images_per_second,
            "texts_per_second": texts_per_second,
            "gpu_hours_per_model": hours,
            "gpu_hours_all": hours * len(entries),
            "gpu_hours_ready": hours * ready,
            "note": "an estimate from the rates given (defaults: assumed, not measured), one model at a time, "
            "images encoded once per model and reused by every language",
        },
    }


def plan_lines(result: Mapping) -> list[str]:
    """The plan as the command prints it."""
    lines = []
    for entry in result["models"]:
        lines.append(f"{'ready' if entry['ready'] else 'refused':8} {entry['short']}: {entry['line']}")
    lang = result["languages"]
    text = f"languages: the paper's {lang['paper']}, {lang['mapped']} in the registry"
    if lang["unmapped"]:
        text += f"; not in the registry (left out, not dropped silently): {', '.join(lang['unmapped'])}"
    if "ours" in lang:
        text += f"; ours {lang['ours']}, in both {lang['both']}, the paper's only {len(lang['paper_only'])}"
    lines.append(text)
    for name, entry in result["image_sets"].items():
        lines.append(f"images: {name}: {entry['images']:,} ({entry['what']})")
    work = result["work"]
    lines.append(
        f"estimate: {work['images_per_model']:,} images + {work['texts_per_model']:,} texts per model at "
        f"{work['images_per_second']:g} images/s and {work['texts_per_second']:g} texts/s = "
        f"{work['gpu_hours_per_model']:.2f} GPU-hours per model; {work['gpu_hours_all']:.1f} for all "
        f"{len(result['models'])} models, {work['gpu_hours_ready']:.1f} for the ready ones ({work['note']})"
    )
    return lines
