"""`babelforge`: one subcommand per pipeline stage.

The command table below names each stage's module without importing it, so
`babelforge --help` stays fast; a stage module is imported only when it runs.
Each stage module defines `configure(parser)` (its arguments) and `run(args) -> int`.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

# name -> (module, one-line help). Keep in pipeline order.
COMMANDS: dict[str, tuple[str, str]] = {
    "fetch": ("babelforge.core.fetch", "copy or download upstream sources into data/raw/ (sha256-checked)"),
    "wordnet": ("babelforge.lexicon.wordnet_stage", "resolve the ImageNet-1k wnids to WordNet 3.0 synsets + knowledge"),
    "senses": ("babelforge.lexicon.senses_stage", "collect multilingual senses of the 1,000 synsets (OMW or BabelNet)"),
    "labels": ("babelforge.babel_imagenet.labels_stage", "filter and select Babel-ImageNet labels per language"),
    "nllb": ("babelforge.translation.nllb_stage", "convert NLLB to CTranslate2 once (tiny local model in sample)"),
    "prompts": ("babelforge.babel_imagenet.prompts_stage", "translate the 80 CLIP templates per label language"),
    "mvl_sib_images": ("babelforge.mvl_sib.images_stage", "fetch, verify (sha256) and thumbnail the MVL-SIB topic images"),
    "mvl_sib": ("babelforge.mvl_sib.stage", "assemble MVL-SIB tasks for every SIB-200 language"),
    "mvl_sib_check": ("babelforge.mvl_sib.check_stage", "check MVL-SIB: rows, topic and label-position balance"),
    "geo_pool": ("babelforge.mvl_sib.geo_stage", "select geo-diverse image pools per language (XM3600 method)"),
    "captions_kiwi_model": ("babelforge.captions.kiwi_model_stage", "build the tiny COMETKiwi checkpoint (sample profile)"),
    "captions_plan": ("babelforge.captions.plan_stage", "before captions_translate/tag: shards, pairs, hypotheses, output size, time"),
    "captions_translate": ("babelforge.captions.translate_stage", "translate English captions n-best with NLLB"),
    "captions_tag": ("babelforge.captions.tag_stage", "tag caption translations: langid, script, copy, repetition, chrF, COMETKiwi"),
    "captions_select": ("babelforge.captions.select_stage", "keep the best checked translation per caption; quality percentiles"),
    "audit": ("babelforge.audit.audit_stage", "per-language quality report of the labels (JSON + HTML + plots)"),
    "card": ("babelforge.publish.card_stage", "build a dataset's Hugging Face card folder (Parquet + README.md)"),
    "diff": ("babelforge.audit.diff_stage", "changelog between two label releases (files or git revisions)"),
    "review": ("babelforge.audit.review_stage", "review sheet of a language: export <lang> | import <sheet> (into resources/reviews)"),
    "publish": ("babelforge.publish.publish_stage", "publish a built card to the Hugging Face Hub (outside dvc repro)"),
    "taggers": ("babelforge.core.taggers_stage", "list the registered taggers: versions, columns, the stages that run them"),
    # eval/: one module per stage (`eval/<task>_stage.py`, command and DVC stage `eval_<task>`) and per tool.
    "eval_tiny_clip": ("babelforge.eval.tiny_clip_stage", "build the tiny random CLIP models of the sample profile (no network)"),
    "eval_images": ("babelforge.eval.images_stage", "draw the sample profile's image sets (ImageNet-style folder + caption images)"),
    "eval_zeroshot": ("babelforge.eval.zeroshot_stage", "Babel-ImageNet zero-shot classification per language"),
    "eval_retrieval": ("babelforge.eval.retrieval_stage", "text<->image recall@1/5/10 per caption set and language"),
    "eval_clipscore": ("babelforge.eval.clipscore_stage", "CLIPScore / RefCLIPScore / pairwise accuracy per caption set and language"),
    "eval_mvl_sib": ("babelforge.eval.mvl_sib_stage", "MVL-SIB accuracy per task, k and language"),
    "eval_report": ("babelforge.eval.report_stage", "merged results CSV, DVC metrics and the plots (PNG, SVG, PDF)"),
    "eval_clipscore_pairs": ("babelforge.eval.clipscore_pairs_stage", "CLIP-S (foil, RefCLIP-S) per row of a TSV of image-caption pairs"),
    "eval_correlate": ("babelforge.eval.correlate_stage", "Pearson / Spearman / Kendall tau-b / tau-c between two columns, with CIs"),
    "eval_cider": ("babelforge.eval.cider_stage", "CIDEr-D of candidate captions against references, tokenised by script"),
    "eval_export": ("babelforge.eval.export_stage", "Babel-ImageNet labels + prompts in CLIP_benchmark's layout"),
}


# Stages whose numbers come from CTranslate2, torch or numpy kernels: the CLI pins the CPU
# instruction set (params.yaml nllb.cpu_isa, builders/core/determinism.py) before importing
# them, since the libraries read it when they load. Each lists nllb.cpu_isa in dvc.yaml.
PINNED_STAGES = frozenset({
    "nllb", "prompts", "captions_kiwi_model", "captions_translate", "captions_tag",
    "eval_tiny_clip", "eval_zeroshot", "eval_retrieval", "eval_clipscore", "eval_mvl_sib",
    "eval_clipscore_pairs",
})


def pin_cpu_for(argv: list[str]) -> None:
    """Set the CPU-pinning environment from the params the stage will load (`--params`, `--set`)."""
    from babelforge.core.config import override
    from babelforge.core.determinism import cpu_isa_from_params, pin_cpu
    from babelforge.core.params import DEFAULT_PARAMS, load_params

    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--params", default=DEFAULT_PARAMS)
    early.add_argument("--set", action="append", default=[])
    known, _ = early.parse_known_args(argv)
    params = load_params(known.params) if Path(known.params).exists() else {}
    pin_cpu(cpu_isa_from_params(override(params, known.set)))


def _top_parser() -> argparse.ArgumentParser:
    width = max(map(len, COMMANDS))
    parser = argparse.ArgumentParser(
        prog="babelforge",
        description="Build, version, audit and publish multilingual vision-and-language benchmarks.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="stages:\n" + "\n".join(f"  {name:<{width}} {text}" for name, (_, text) in COMMANDS.items())
        + "\n\nRun `babelforge <stage> --help` for a stage's options.",
    )
    parser.add_argument("--version", action="store_true", help="print the package version")
    parser.add_argument("command", nargs="?", choices=list(COMMANDS), metavar="stage")
    return parser


def stage_parser(name: str, module) -> argparse.ArgumentParser:
    """A stage's parser: its Config's settings in the help, `--params`, `--set`, `--debug`, its own flags.

    A stage module is either `Config` (a dataclass with `GROUP`) + `run(config)`, where its
    optional `configure(parser)` adds flags whose `dest` names a Config field (a flag given
    overrides params.yaml), or the older `configure(parser)` + `run(args)`.
    """
    from babelforge.core.params import DEFAULT_PARAMS

    help_text = COMMANDS[name][1]
    config_cls = getattr(module, "Config", None)
    epilog = None
    if config_cls is not None:
        from babelforge.core.config import describe

        epilog = f"settings (params.yaml group `{config_cls.GROUP}`, or --set KEY=VALUE):\n" + describe(config_cls)
    parser = argparse.ArgumentParser(prog=f"babelforge {name}", description=help_text, epilog=epilog,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    if config_cls is not None:
        parser.add_argument("--params", default=DEFAULT_PARAMS, help="params file (default: params.yaml)")
        parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                            help=f"override a setting for this run, e.g. --set {config_cls.GROUP}.<key>=<value> "
                                 "or --set paths.<name>=<path> (repeatable; values are YAML)")
    if hasattr(module, "configure"):
        module.configure(parser)
    return parser


def config_from_args(module, args: argparse.Namespace):
    """The stage's Config: params.yaml, then `--set`, then the stage's own flags that were given.

    A flag's `dest` is a key of the stage's group (`min_classes`) or a dotted key from the top
    of params.yaml (`paths.labels`), so every way in goes through the same typed loader.
    """
    from babelforge.core.config import load_config, override
    from babelforge.core.params import load_params

    config_cls = module.Config
    params = override(load_params(args.params), args.set)
    reserved = {"params", "set", "debug"}
    for key, value in vars(args).items():
        if key in reserved or value is None:
            continue
        parts = key.split(".") if "." in key else [*config_cls.GROUP.split("."), key]
        node = params
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return load_config(config_cls, params)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        parser = _top_parser()
        args, _ = parser.parse_known_args(argv)
        if args.version:
            import babelforge

            print(babelforge.__version__)
            return 0
        parser.print_help()
        return 0 if not argv or argv[0] in ("-h", "--help") else 2

    import importlib

    from babelforge.core.errors import BabelforgeError

    name, rest = argv[0], argv[1:]
    if name in PINNED_STAGES:
        try:
            pin_cpu_for(rest)
        except BabelforgeError as error:
            if "--debug" in rest:
                raise
            print(f"babelforge {name}: error: {error}", file=sys.stderr)
            return 1
    module = importlib.import_module(COMMANDS[name][0])
    parser = stage_parser(name, module)
    args = parser.parse_args(rest)
    try:
        if hasattr(module, "Config"):
            from babelforge.core.io import stage_lock, stage_outputs

            config = config_from_args(module, args)
            # one writer per output: a second run of the stage on the same outputs stops at once
            with stage_lock(name, stage_outputs(name, config)):
                return int(module.run(config) or 0)
        return int(module.run(args) or 0)
    except (BabelforgeError, OSError) as error:   # OSError: a full disk, a folder that cannot be written
        if args.debug:
            raise
        from babelforge.core.io import os_error_text

        text = (f"{str(error.filename) + ': ' if error.filename else ''}{os_error_text(error)}"
                if isinstance(error, OSError) else str(error))
        print(f"babelforge {name}: error: {text}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"babelforge {name}: interrupted; nothing partial was written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
