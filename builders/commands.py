"""The command table: every `babelforge <name>` command, as data.

Read by the CLI (dispatch, `--help`, the CPU pin), by `babelforge taggers`, by the tests and by
the generated reference docs. A command's module is named, never imported here, so reading the
table costs nothing; the module defines `Config` + `run(config)` (a stage with a params group)
or `configure(parser)` + `run(args)` (a tool over files named on its command line).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["stage", "tool"]


@dataclass(frozen=True)
class Command:
    name: str
    module: str
    help: str
    # stage: a dvc.yaml stage runs it (`dvc repro`); tool: run by hand, outside `dvc repro`.
    kind: Kind
    # Numbers from CTranslate2, torch or numpy kernels: the CLI pins the CPU instruction set
    # (params.yaml nllb.cpu_isa, babelforge.core.determinism) before importing the module, since
    # the libraries read it when they load. Each pinned stage lists nllb.cpu_isa in dvc.yaml.
    pinned: bool = False


_TABLE = (
    # pipeline order
    Command(
        "fetch",
        "babelforge.pipeline.fetch_stage",
        "copy or download upstream sources into data/raw/ (sha256-checked)",
        "stage",
    ),
    Command(
        "wordnet",
        "babelforge.lexicon.wordnet_stage",
        "resolve the ImageNet-1k wnids to WordNet 3.0 synsets + knowledge",
        "stage",
    ),
    Command(
        "senses",
        "babelforge.lexicon.senses_stage",
        "collect multilingual senses of the 1,000 synsets (OMW or BabelNet)",
        "stage",
    ),
    Command(
        "labels",
        "babelforge.babel_imagenet.labels_stage",
        "filter and select Babel-ImageNet labels per language",
        "stage",
    ),
    Command(
        "nllb",
        "babelforge.translation.nllb_stage",
        "convert NLLB to CTranslate2 once (tiny local model in sample)",
        "stage",
        pinned=True,
    ),
    Command(
        "prompts",
        "babelforge.babel_imagenet.prompts_stage",
        "translate the 80 CLIP templates per label language",
        "stage",
        pinned=True,
    ),
    Command(
        "mvl_sib_images",
        "babelforge.mvl_sib.images_stage",
        "fetch, verify (sha256) and thumbnail the MVL-SIB topic images",
        "stage",
    ),
    Command("mvl_sib", "babelforge.mvl_sib.stage", "assemble MVL-SIB tasks for every SIB-200 language", "stage"),
    Command(
        "mvl_sib_check",
        "babelforge.mvl_sib.check_stage",
        "check MVL-SIB: rows, topic and label-position balance",
        "stage",
    ),
    Command(
        "geo_pool",
        "babelforge.mvl_sib.geo_stage",
        "select geo-diverse image pools per language (XM3600 method)",
        "tool",
    ),
    Command(
        "captions_kiwi_model",
        "babelforge.captions.kiwi_model_stage",
        "build the tiny COMETKiwi checkpoint (sample profile)",
        "stage",
        pinned=True,
    ),
    Command(
        "captions_plan",
        "babelforge.captions.plan_stage",
        "before captions_translate/tag: shards, pairs, hypotheses, output size, time",
        "tool",
    ),
    Command(
        "captions_translate",
        "babelforge.captions.translate_stage",
        "translate English captions n-best with NLLB",
        "stage",
        pinned=True,
    ),
    Command(
        "captions_tag",
        "babelforge.captions.tag_stage",
        "tag caption translations: langid, script, copy, repetition, chrF, COMETKiwi",
        "stage",
        pinned=True,
    ),
    Command(
        "captions_select",
        "babelforge.captions.select_stage",
        "keep the best checked translation per caption; quality percentiles",
        "stage",
    ),
    Command(
        "audit",
        "babelforge.audit.audit_stage",
        "per-language quality report of the labels (JSON + HTML + plots)",
        "stage",
    ),
    Command(
        "card",
        "babelforge.publish.card_stage",
        "build a dataset's Hugging Face card folder (Parquet + README.md)",
        "stage",
    ),
    Command(
        "diff", "babelforge.audit.diff_stage", "changelog between two label releases (files or git revisions)", "tool"
    ),
    Command(
        "review",
        "babelforge.audit.review_stage",
        "review sheet of a language: export <lang> | import <sheet> (into resources/reviews)",
        "tool",
    ),
    Command(
        "publish",
        "babelforge.publish.publish_stage",
        "publish a built card to the Hugging Face Hub (outside dvc repro)",
        "tool",
    ),
    Command(
        "taggers",
        "babelforge.pipeline.taggers_stage",
        "list the registered taggers: versions, columns, the stages that run them",
        "tool",
    ),
    # babelforge.eval: command and DVC stage `eval_<name>`; module babelforge.eval.<name>.stage (a folder of its
    # own: the tasks, export), babelforge.eval.sample.<name> (the sample profile's inputs) or
    # babelforge.eval.tools.<name> (the argparse tools)
    Command(
        "eval_tiny_clip",
        "babelforge.eval.sample.tiny_clip",
        "build the tiny random CLIP models of the sample profile (no network)",
        "stage",
        pinned=True,
    ),
    Command(
        "eval_images",
        "babelforge.eval.sample.images",
        "draw the sample profile's image sets (ImageNet-style folder + caption images)",
        "stage",
    ),
    Command(
        "eval_zeroshot",
        "babelforge.eval.zeroshot.stage",
        "Babel-ImageNet zero-shot classification per language",
        "stage",
        pinned=True,
    ),
    Command(
        "eval_retrieval",
        "babelforge.eval.retrieval.stage",
        "text<->image recall@1/5/10 per caption set and language",
        "stage",
        pinned=True,
    ),
    Command(
        "eval_clipscore",
        "babelforge.eval.clipscore.stage",
        "CLIPScore / RefCLIPScore / pairwise accuracy per caption set and language",
        "stage",
        pinned=True,
    ),
    Command(
        "eval_mvl_sib",
        "babelforge.eval.mvl_sib.stage",
        "MVL-SIB accuracy per task, k and language",
        "stage",
        pinned=True,
    ),
    Command(
        "eval_report",
        "babelforge.eval.report.stage",
        "merged results CSV, DVC metrics and the plots (PNG, SVG, PDF)",
        "stage",
    ),
    Command(
        "eval_clipscore_pairs",
        "babelforge.eval.tools.clipscore_pairs",
        "CLIP-S (foil, RefCLIP-S) per row of a TSV of image-caption pairs",
        "tool",
        pinned=True,
    ),
    Command(
        "eval_correlate",
        "babelforge.eval.tools.correlate",
        "Pearson / Spearman / Kendall tau-b / tau-c between two columns, with CIs",
        "tool",
    ),
    Command(
        "eval_cider",
        "babelforge.eval.tools.cider",
        "CIDEr-D of candidate captions against references, tokenised by script",
        "tool",
    ),
    Command(
        "eval_paper",
        "babelforge.eval.tools.paper",
        "a run beside the papers' published numbers, or --plan: the paper suite's models, images, GPU-hours",
        "tool",
    ),
    Command(
        "eval_export",
        "babelforge.eval.export.stage",
        "Babel-ImageNet labels + prompts in CLIP_benchmark's layout",
        "tool",
    ),
)

# name -> Command, in pipeline order
COMMANDS: dict[str, Command] = {command.name: command for command in _TABLE}


def pinned_stages() -> frozenset[str]:
    return frozenset(name for name, command in COMMANDS.items() if command.pinned)
