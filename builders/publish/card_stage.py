"""`babelforge card <dataset>`: build `build/hub/<dataset>/` (Parquet per config + README.md).

One config per language; each config's data is one Parquet file per split under `data/`.
The folder is built beside the target and swapped in whole, so a failed build leaves the
previous card (or none), never a mix. Inputs come from the `card:` group of params.yaml.

Datasets: babel-imagenet (labels), babel-imagenet-prompts, mvl-sib, mt-captions, knowledge. Each
reads its artifact(s) only when asked for, so a card can be built before the others exist.
"""
from __future__ import annotations

import argparse
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from builders.core.errors import BabelforgeError

DATASETS = ("babel-imagenet", "babel-imagenet-prompts", "mvl-sib", "mt-captions", "knowledge")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", choices=DATASETS, help="which dataset's card to build")
    parser.add_argument("--params", default="params.yaml", help="params file (uses its `card:` group)")
    parser.add_argument("--registry", default=None, help="language registry TSV (default: resources/languages.tsv)")


def run(args: argparse.Namespace) -> int:
    from builders.core.languages import read_registry, registry
    from builders.core.params import load_params, section
    from builders.core.progress import info

    config = section(load_params(args.params), "card")
    languages = read_registry(args.registry) if args.registry else registry()
    folder = build_card(args.dataset, config, languages)
    info(f"card: {args.dataset} -> {folder}/README.md")
    return 0


@dataclass
class DatasetData:
    """What a dataset builder hands the card: tables per config and split, plus facts."""

    spec: Any                                           # card.CardSpec
    tables: dict[str, dict[str, Any]]                   # config -> split -> DataFrame
    sources: dict[str, dict[str, int]] = field(default_factory=dict)  # config -> source -> rows
    groups: dict[str, str] = field(default_factory=dict)
    provenance: dict[str, dict] = field(default_factory=dict)  # artifact path -> provenance record
    limitations: list[str] = field(default_factory=list)
    sort_by: tuple[str, ...] = ()
    extra_files: dict[str, Path] = field(default_factory=dict)   # path in the repo -> file to copy
    # config -> registry key of its language, where the config is not named by the key itself
    config_languages: dict[str, str] = field(default_factory=dict)

    def language(self, config: str) -> str:
        return self.config_languages.get(config, config)


def build_card(dataset: str, config: dict[str, Any], languages) -> Path:
    """Build the card folder of `dataset`; returns it. Validates it before swapping it in."""
    from builders.core.io import atomic_directory, write_table, write_text
    from builders.publish import card

    inputs = config.get(dataset.replace("-", "_")) or {}
    data = BUILDERS[dataset](inputs, config)
    if not data.tables:
        raise BabelforgeError(f"card {dataset}: the input has no rows; build it first")
    omw = card.omw_sources(Path(config["omw_dir"])) if config.get("omw_dir") and Path(config["omw_dir"]).exists() else {}
    used_sources = sorted({source for counts in data.sources.values() for source in counts})
    try:
        source_infos = [card.source_info(source, omw) for source in used_sources]
    except ValueError as error:
        raise BabelforgeError(f"card {dataset}: {error}") from None
    limitations = data.limitations + audit_limitations(config.get("audit_summary"), dataset)

    target = Path(config["out"]) / dataset
    with atomic_directory(target) as staging:
        stats = []
        for name in sorted(data.tables):
            files = {}
            for split, table in sorted(data.tables[name].items()):
                path = f"data/{name}/{split}.parquet"
                write_table(table, staging / path, sort_by=data.sort_by)
                files[split] = path
            rows = sum(len(table) for table in data.tables[name].values())
            stats.append(card.ConfigStats(name=name, rows=rows,
                                          language_tag=_language_tag(languages, data.language(name)),
                                          group=data.groups.get(data.language(name)),
                                          sources=data.sources.get(name, {}), files=files))
        for repo_path, source_path in sorted(data.extra_files.items()):
            (staging / repo_path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source_path, staging / repo_path)
        licences = [info.licence for info in source_infos] + [licence for _, licence in data.spec.extra_licences]
        default = next((name for name in sorted(data.tables) if data.language(name) == "eng_Latn"), None)
        metadata = card.front_matter(data.spec, stats, licences, default)
        write_text(card.render_card(data.spec, metadata, stats, source_infos, data.provenance, limitations),
                   staging / "README.md")
        write_text(card.render_licences(source_infos, data.spec.extra_licences), staging / "LICENSES.md")
        problems = card.validate_card(staging)
        if problems:
            raise BabelforgeError(f"card {dataset}: generated card is invalid: {problems[0]}")
    return target


def _language_tag(languages, key: str) -> str:
    """Hub language tag (ISO 639-1 where one exists, else 639-3) of a registry key."""
    language = languages.get(key)
    return language.iso639_1 or language.iso639_3


def audit_limitations(summary_path: str | None, dataset: str) -> list[str]:
    """Known limitations measured by the audit (only for the labels, which it audits)."""
    from builders.core.io import read_json

    if dataset != "babel-imagenet" or not summary_path or not Path(summary_path).exists():
        return []
    summary = read_json(summary_path)
    languages = summary.get("languages", {})
    low = sorted(lang for lang, entry in languages.items() if entry.get("group") == "very-low")
    items = [f"The audit counted {summary.get('errors', 0)} error rows and {summary.get('warnings', 0)} warning rows "
             f"over {len(languages)} languages (reports/audit/index.html of the build)."]
    if low:
        items.append(f"{len(low)} languages have at most 100 classes (group very-low); "
                     "their accuracy is not comparable to full 1,000-class languages.")
    return items


def _read(path: str | None, what: str):
    from builders.core.io import read_provenance, read_table

    if not path or not Path(path).exists():
        raise BabelforgeError(f"{path or what}: {what} not built; run its stage first (`dvc repro`)")
    return read_table(path), read_provenance(path)


def _split_by_language(table, split: str, columns: list[str]) -> dict[str, dict[str, Any]]:
    return {
        lang: {split: part[columns].reset_index(drop=True)}
        for lang, part in table.groupby("lang", sort=True)
    }


def _babel_imagenet(inputs: dict[str, Any], config: dict[str, Any]) -> DatasetData:
    from builders.core.io import read_table
    from builders.publish import card

    labels, provenance = _read(inputs.get("labels"), "labels")
    columns = [c for c in ("class_idx", "wnid", "label", "source", "is_duplicate") if c in labels.columns]
    groups = {}
    if inputs.get("languages") and Path(inputs["languages"]).exists():
        table = read_table(inputs["languages"], columns=["lang", "group"])
        groups = dict(zip(table["lang"], table["group"]))
    n_duplicates = int(labels["is_duplicate"].sum()) if "is_duplicate" in labels.columns else 0
    spec = card.CardSpec(
        dataset="babel-imagenet",
        pretty_name="Babel-ImageNet labels",
        summary=("ImageNet-1k class labels in many languages, built without machine translation: each class's "
                 "WordNet 3.0 synset is mapped to its multilingual senses; senses equal to an English lemma and "
                 "machine-translated senses are dropped, and the first remaining sense becomes the label. Each row is "
                 "one class of one language: `class_idx` (ImageNet-1k index), `wnid`, `label`, `source` (which "
                 "resource gave the sense; it decides the row's licence)."),
        task_categories=["zero-shot-image-classification", "image-classification"],
        citations=["babel_imagenet", "babelnet", "omw", "wordnet"],
        limitations=[
            "Labels are the first remaining sense of the source, not checked by a native speaker; "
            "a sense may be rare, archaic or too general for the class.",
            "Only labels are provided, not images: pair them with the ImageNet-1k validation set.",
        ] + ([f"{n_duplicates} rows share their label with another class of the same language "
              "(`is_duplicate`); such classes cannot be told apart by text alone."] if n_duplicates else []),
    )
    tables = _split_by_language(labels, spec.split, columns)
    sources = {lang: dict(part["source"].value_counts().sort_index()) for lang, part in labels.groupby("lang")}
    return DatasetData(spec, tables, {k: {s: int(n) for s, n in v.items()} for k, v in sources.items()},
                       groups, {inputs["labels"]: provenance}, sort_by=("class_idx",))


def _table_per_language(path: str | None, what: str, spec, sort_by: tuple[str, ...]) -> DatasetData:
    """A dataset that is one table with a `lang` column: one config per language."""
    table, provenance = _read(path, what)
    columns = [c for c in table.columns if c != "lang"]
    return DatasetData(spec, _split_by_language(table, spec.split, columns), provenance={path: provenance},
                       sort_by=tuple(c for c in sort_by if c in columns))


def _prompts(inputs: dict[str, Any], config: dict[str, Any]) -> DatasetData:
    from builders.publish import card

    spec = card.CardSpec(
        dataset="babel-imagenet-prompts",
        pretty_name="Babel-ImageNet prompts",
        summary=("The 80 CLIP prompt templates machine-translated into each label language with NLLB-200, "
                 "with the class slot `{}` kept; `strategy` says how the slot survived translation, `fallback` "
                 "marks prompts where it was appended instead."),
        task_categories=["zero-shot-image-classification"],
        citations=["babel_imagenet", "nllb"],
        extra_licences=[("English templates", card.Licence("MIT (CLIP prompt templates)", "mit",
                                                           "https://opensource.org/licenses/MIT"))],
        limitations=["Translations are machine output (NLLB-200, whose weights are CC-BY-NC-4.0); "
                     "check the validity flags before use."],
    )
    return _table_per_language(inputs.get("prompts"), "prompts", spec, ("prompt_set", "template_id"))


def _mvl_sib(inputs: dict[str, Any], config: dict[str, Any]) -> DatasetData:
    from builders.core.io import read_provenance, read_table
    from builders.publish import card

    root = Path(inputs.get("dir") or "data/mvl_sib")
    files = sorted(root.glob("*/*.parquet"))
    if not files:
        raise BabelforgeError(f"{root}: MVL-SIB not built (no <task>/<lang>.parquet); run its stage first")
    # One config per task config and language (`i2s_k1.fin_Latn`): the tasks have different
    # columns, and `datasets` casts every split of a config to one schema, so tasks cannot be
    # the splits of a language config.
    tables: dict[str, dict[str, Any]] = {}
    config_languages: dict[str, str] = {}
    for path in files:
        name = f"{path.parent.name}.{path.stem}"
        tables[name] = {"test": read_table(path)}
        config_languages[name] = path.stem
    extra_files, image_licences, image_note = _mvl_sib_images(root)
    spec = card.CardSpec(
        dataset="mvl-sib",
        pretty_name="MVL-SIB",
        summary=("Cross-modal topical matching in the SIB-200 languages: each instance couples a sentence with "
                 "same-topic images and sentences and other-topic distractors; one config per task and "
                 "language, `<task>_k<k>.<lang>` (images→sentence `i2s`, sentences→image `s2i` with k reference "
                 "items, topic→sentence `t2s`, sentences→topic `s2t`), `label` = position of the correct option. "
                 "Instances are identical across languages."),
        task_categories=["image-text-to-text", "text-classification"],
        citations=["mvl_sib", "sib200", "nllb"],
        extra_licences=[("SIB-200 / Flores-200 sentences", card.SIB200), *image_licences],
        limitations=[image_note, "Topics are as unevenly distributed as in SIB-200 (science/technology is the "
                                 "largest); use the balanced `label` positions, not topic frequency, as chance level."],
        config_unit="task and language",
    )
    return DatasetData(spec, tables, provenance={str(files[0]): read_provenance(files[0])}, extra_files=extra_files,
                       config_languages=config_languages)


def _mvl_sib_images(root: Path):
    """The topic images shipped with MVL-SIB (`images.parquet` + the files it lists), their
    licences as card entries, and a sentence for the limitations."""
    from builders.core.io import read_table
    from builders.publish import card

    table_path = root / "images.parquet"
    if not table_path.exists():
        return {}, [], "Images are referenced by id only: this build has no images.parquet."
    images = read_table(table_path)
    files = {"images.parquet": table_path}
    for relative in images["file"]:
        source = root / relative
        if not source.exists():
            raise BabelforgeError(f"{source}: listed in {table_path} but missing; rebuild MVL-SIB")
        files[str(relative)] = source
    licences = [(f"images ({int((images['licence'] == text).sum())})", card.licence_from_text(text))
                for text in sorted(images["licence"].unique())]
    note = (f"{len(images)} topic images are in `images/` (thumbnails), each with its URL, licence and attribution "
            "in `images.parquet`; options refer to them by `image_id`.")
    return files, licences, note


def _captions(inputs: dict[str, Any], config: dict[str, Any]) -> DatasetData:
    from builders.publish import card

    spec = card.CardSpec(
        dataset="mt-captions",
        pretty_name="Machine-translated captions with quality estimates",
        summary=("English captions machine-translated with n-best NLLB-200, hypotheses in the wrong language or "
                 "script dropped, the one COMETKiwi scores highest kept, with its score and per-language percentile."),
        task_categories=["image-to-text", "text-to-image"],
        citations=["nllb"],
        extra_licences=[("English source captions", card.Licence(
            "CC BY 4.0 (XTD10 / COCO captions)", "cc-by-4.0", "https://creativecommons.org/licenses/by/4.0/"))],
        limitations=["Translations are machine output; use the Kiwi percentile columns to split by quality."],
    )
    return _table_per_language(inputs.get("selected"), "selected captions", spec, ("caption_id",))


def _knowledge(inputs: dict[str, Any], config: dict[str, Any]) -> DatasetData:
    from builders.publish import card

    spec = card.CardSpec(
        dataset="knowledge",
        pretty_name="ImageNet-1k WordNet knowledge",
        summary=("Per ImageNet-1k class: WordNet 3.0 synset, English lemmas, definition and hypernym path "
                 "(ELEVATER-style external knowledge), keyed by `class_idx`, `wnid` and synset id."),
        task_categories=["zero-shot-image-classification"],
        citations=["wordnet"],
        tags=("wordnet", "imagenet"),
        extra_licences=[("definitions, lemmas, hypernyms", card.WORDNET),
                        ("`clip_name`", card.CLIP_NAMES.licence)],
        limitations=["English only; definitions are WordNet 3.0's and can be terse or dated."],
    )
    path = inputs.get("wordnet")
    table, provenance = _read(path, "WordNet knowledge")
    # one English table: a single config, named like every other English config
    return DatasetData(spec, {"eng_Latn": {spec.split: table}}, provenance={path: provenance}, sort_by=("class_idx",))


BUILDERS: dict[str, Callable[[dict, dict], DatasetData]] = {
    "babel-imagenet": _babel_imagenet,
    "babel-imagenet-prompts": _prompts,
    "mvl-sib": _mvl_sib,
    "mt-captions": _captions,
    "knowledge": _knowledge,
}
