"""What every evaluation stage shares: the `eval.common` settings, flags, models, inputs, results.

An evaluation stage is a module `eval/<task>_stage.py` with a typed `Config` (its group
`eval.<task>` plus `common`, the `eval.common` group, and the `paths:` group) and
`run(config)`; the command `babelforge eval_<task>` runs it (builders/cli.py COMMANDS).
Heavy libraries are imported inside the functions that use them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from babelforge.core.config import Paths, as_params, from_group, setting, stage_paths
from babelforge.core.determinism import runtime
from babelforge.core.device import resolve_device
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import write_json
from babelforge.core.languages import UnknownLanguageError, read_registry, registry
from babelforge.core.progress import info
from babelforge.core.provenance import provenance
from babelforge.eval.cache import EvalRunnerConfig, ImageEmbeddingCache
from babelforge.eval.images import read_caption_images
from babelforge.eval.models import load_model
from babelforge.eval.report import dataset_version, run_document
from babelforge.lexicon.wordnet import read_imagenet_classes

# XTD10 names Japanese `jp`; every other caption-set code is ISO 639-1.
CAPTION_CODE_ALIASES = {"jp": "ja"}


@dataclass(frozen=True)
class ModelSpec:
    """One model of `eval.common.models`."""

    id: str = setting("", "a Hub id (pin its `revision`) or a local model directory")
    revision: str | None = setting(None, "the Hub commit sha; a local directory is hashed instead")


@dataclass(frozen=True)
class CommonConfig:
    """The `eval.common` group: settings every evaluation stage shares."""

    GROUP = "eval.common"
    seed: int = setting(0, "bootstrap / control-subset seed, recorded in every result row")
    device: str = setting("auto", "auto (cuda when present, fp16; else cpu, fp32), cpu, cuda or cuda:<n>")
    threads: int | None = setting(
        1, "torch CPU threads (sample 1: tiny models are fastest on one; null: torch's default)"
    )
    cache: str = setting(
        ".cache/eval/image_embeddings",
        "image embeddings per model + revision + image set + precision (not a DVC output)",
    )
    registry: str | None = setting(None, "language registry TSV (null: resources/languages.tsv)")
    models: list[ModelSpec] = setting(
        [ModelSpec(f"models/tiny_clip/s{seed}") for seed in (0, 1, 2)],
        "models to evaluate, one at a time (sample: the tiny CLIPs; full: Hub ids with pinned revisions)",
    )


@dataclass(frozen=True)
class ImageStageConfig:
    """The settings every eval stage that encodes images shares (zero-shot, retrieval, clipscore,
    MVL-SIB); each stage's Config adds its own group's fields to these."""

    common: CommonConfig = from_group(CommonConfig, "eval.common", "settings every eval stage shares")
    runner: EvalRunnerConfig = from_group(EvalRunnerConfig, "eval.runner", "how images are encoded (eval.runner)")
    profile: str = from_group(str, "profile", "the build profile")
    paths: Paths = stage_paths()


# ---------------------------------------------------------------- flags shared by the stages


def model_spec(text: str) -> dict:
    """`--model ID[@REVISION]` -> an `eval.common.models` entry."""
    model, _, revision = text.partition("@")
    if not model:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a Hub id or a model directory, optionally @<revision>")
    return {"id": model, "revision": revision or None}


class ExtendCommaList(argparse.Action):
    """A repeatable flag whose values may also be comma lists: `--language de --language fr,it`."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = list(getattr(namespace, self.dest, None) or [])
        items += [item.strip() for item in str(values).split(",") if item.strip()]
        setattr(namespace, self.dest, items)


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        dest="eval.common.models",
        action="append",
        type=model_spec,
        metavar="ID[@REVISION]",
        help="evaluate this model instead of eval.common.models (repeatable; a Hub id needs @<sha>)",
    )
    parser.add_argument(
        "--device", dest="eval.common.device", metavar="DEVICE", help="auto, cpu, cuda or cuda:<n> (eval.common.device)"
    )
    parser.add_argument(
        "--runner",
        dest="eval.runner.runner",
        choices=["local", "ray"],
        metavar="{local,ray}",
        help="where images are encoded: local (this process) or ray (eval.runner.runner)",
    )


def add_language_flag(parser: argparse.ArgumentParser, group: str) -> None:
    parser.add_argument(
        "--language",
        dest="languages",
        action=ExtendCommaList,
        metavar="LANG[,LANG...]",
        help=f"only these languages (repeatable or a comma list; a registry key such as deu_Latn, "
        f"an ISO 639-1 or a BabelNet code; {group}.languages)",
    )


def add_out_flag(parser: argparse.ArgumentParser, task: str) -> None:
    parser.add_argument(
        "--out",
        dest="out",
        metavar="FILE",
        help=f"results JSON to write (eval.{task}.out; default <paths.eval_reports>/{task}.json)",
    )


def results_path(config, task: str) -> Path:
    """Where a task writes its run JSON: `out` when set, else `<paths.eval_reports>/<task>.json`."""
    return Path(config.out) if config.out else Path(config.paths.eval_reports) / f"{task}.json"


# ---------------------------------------------------------------- languages


def language_registry(common: CommonConfig):

    if common.registry is None:
        return registry()
    path = Path(common.registry)
    if not path.is_file():
        raise BabelforgeError(
            f"language registry {path} is missing; set params.yaml eval.common.registry "
            "or leave it null for resources/languages.tsv"
        )
    return read_registry(path)


def language_resolver(common: CommonConfig) -> Callable[[str], str]:
    """code -> registry key, for a registry key (deu_Latn), ISO 639-1 (de), BabelNet (DE) or caption-set code (jp)."""

    languages = language_registry(common)

    def resolve(code: str) -> str:
        code = CAPTION_CODE_ALIASES.get(code, code)
        for system, value in (("key", code), ("iso639_1", code.lower()), ("babelnet", code.upper())):
            try:
                return languages.lookup(value, system).key
            except UnknownLanguageError:
                continue
        raise BabelforgeError(
            f"unknown language {code!r}: give a registry key (deu_Latn), an ISO 639-1 code (de) "
            "or a BabelNet code (DE) of resources/languages.tsv"
        )

    return resolve


def requested_languages(languages: Sequence[str] | None, resolve: Callable[[str], str]) -> list[str] | None:
    """The registry keys of a `languages` setting (None: every language), in the order given."""
    if languages is None:
        return None
    return list(dict.fromkeys(resolve(code) for code in languages))


# ---------------------------------------------------------------- inputs


def require(path: str | Path, what: str, stage: str) -> Path:
    path = Path(path)
    if not path.exists():
        raise BabelforgeError(f"{what} {path} is missing; build it first (dvc repro {stage}) or fix params.yaml")
    return path


def require_images(path: str | Path, setting_name: str) -> Path:
    path = Path(path)
    if not path.exists():
        raise BabelforgeError(
            f"image folder {path} is missing; provide it (full profile) or set params.yaml "
            f"{setting_name} (sample profile: dvc repro eval_images)"
        )
    return path


def imagenet_classes() -> list[tuple[int, str]]:

    return [(c.class_idx, c.wnid) for c in read_imagenet_classes()]


# ---------------------------------------------------------------- models and the embedding cache


def load_models(common: CommonConfig) -> Iterator:
    """Each model of `common.models`, loaded one at a time (a generator keeps one in memory)."""

    if not common.models:
        raise BabelforgeError(
            "params.yaml eval.common.models is empty; list models as {id: <hub id or path>, "
            "revision: <sha>} or pass --model"
        )
    if common.threads:
        import torch

        # Tiny models on a shared CPU run faster on one thread than on contended several.
        torch.set_num_threads(common.threads)
    device = resolve_device(common.device)
    for spec in common.models:
        yield load_model(spec.id, spec.revision, device)


def image_cache(common: CommonConfig, runner: EvalRunnerConfig):
    """The image-embedding cache of `common.cache`, encoding on the `eval.runner` runner; use it
    as a context manager (a Ray it starts is shut down at the end)."""

    return ImageEmbeddingCache(common.cache, runner, threads=common.threads)


# ---------------------------------------------------------------- results


def plain(value: Any) -> Any:
    """Settings as JSON-able values (nested dataclasses and lists of them included)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value


def stage_params(config) -> dict:
    """What a run records of its settings: the profile, `eval.common` and the task's own group."""

    return {
        "profile": config.profile,
        "eval.common": plain(as_params(config.common)),
        config.GROUP: plain(as_params(config)),
    }


def write_run(task: str, rows: list[dict], config, sources: Mapping[str, str], path: Path) -> Path:
    """The run JSON of one task: its rows and the provenance record."""

    models = {r["model"]: r["revision"] for r in rows}
    record = provenance(f"eval_{task}", params=stage_params(config), sources=dict(sources), models=models)

    device = resolve_device(config.common.device)
    record["device"] = device
    record["runtime"] = runtime(device, "float16" if device.startswith("cuda") else "float32")
    write_json(run_document(task, rows, record), path)
    info(f"eval_{task}: {len(rows)} rows -> {path}")
    return path


def format_results(rows: Sequence[Mapping], columns: Sequence[str]) -> str:
    """A fixed-width table of `columns` (absent or NaN cells blank, numbers to 4 decimals)."""

    def cell(value) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return ""
        if isinstance(value, float):
            return f"{value:.4f}"
        return str(value)

    body = [[cell(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in body]) for i, c in enumerate(columns)]
    numeric = [all(not r[i] or _is_number(r[i]) for r in body) for i in range(len(columns))]

    def line(cells):
        return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)).rstrip()

    return "\n".join([line(columns), line(["-" * w for w in widths]), *(line(r) for r in body)])


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def print_results(rows: Sequence[Mapping], columns: Sequence[str]) -> None:
    """The results table on stdout (status lines go to stderr)."""
    print(format_results(rows, columns))


# ---------------------------------------------------------------- caption sets (retrieval, clipscore)


def read_caption_sets(caption_sets: Sequence[str], keep: Callable[[str], bool]) -> list[tuple[str, Path, dict]]:
    """(name, path, {images, captions}) per caption-set JSON, captions only of codes `keep` accepts."""

    sets = []
    for path in caption_sets:
        path = require(path, "caption set", "fetch")
        data = json.loads(path.read_text(encoding="utf-8"))
        captions = {code: caps for code, caps in data["captions"].items() if keep(code)}
        sets.append((path.stem, path, {"images": data["images"], "captions": captions}))
    return sets


def caption_image_set(
    images: str | Mapping[str, str], dataset: str, names: Sequence[str], max_images: int | None, setting_name: str
):
    """The images of caption set `dataset`: `images` is one folder, or {caption set: folder}."""

    folder = images
    if not isinstance(folder, str):
        if dataset not in folder:
            raise BabelforgeError(
                f"params.yaml {setting_name}: no image folder for caption set {dataset!r} (has: {', '.join(folder)})"
            )
        folder = folder[dataset]
    return read_caption_images(require_images(folder, setting_name), names[:max_images] if max_images else names)


def caption_task_rows(
    config, task: str, rows_for: Callable, helper_codes: Sequence[str] = (), **options
) -> tuple[list[dict], dict]:
    """Every model x caption set of a caption task (retrieval, clipscore): (rows, sources).

    `rows_for(model, image_set, cache, captions, dataset, resolve_lang, seed=, dataset_version=, **options)`.
    Captions of `helper_codes` (clipscore's reference language) are read even when `languages`
    leaves them out; their rows are then dropped. Inputs are checked before any model loads.
    """

    resolve = language_resolver(config.common)
    wanted = requested_languages(config.languages, resolve)
    sets = [
        (name, data, dataset_version(path))
        for name, path, data in read_caption_sets(
            config.caption_sets, lambda code: wanted is None or code in helper_codes or resolve(code) in wanted
        )
    ]
    if wanted is not None:
        found = {resolve(code) for _, data, _ in sets for code in data["captions"] if resolve(code) in wanted}
        missing = [lang for lang in wanted if lang not in found]
        if missing:
            raise BabelforgeError(
                f"eval.{task}.languages: {', '.join(missing)} have no captions in {', '.join(config.caption_sets)}"
            )
    image_sets = {
        name: caption_image_set(config.images, name, data["images"], config.max_images, f"eval.{task}.images")
        for name, data, _ in sets
    }
    rows: list[dict] = []
    with image_cache(config.common, config.runner) as cache:
        for model in load_models(config.common):
            for name, data, version in sets:
                rows += rows_for(
                    model,
                    image_sets[name],
                    cache,
                    data["captions"],
                    name,
                    resolve,
                    seed=config.common.seed,
                    dataset_version=version,
                    **options,
                )
    if wanted is not None:
        rows = [row for row in rows if row["lang"] in wanted]
    return rows, {name: version for name, _, version in sets}
