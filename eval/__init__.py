"""`babelforge.eval`: evaluations of what the pipeline built (the folder `eval/`).

A folder is a task or a place; a module at the top is shared run machinery. Every command
`babelforge eval_<name>` is declared in its module (`STAGE = Stage(...)`, babelforge.core.stages).

Tasks, one folder each: `task` (its `EvalTask` spec; `tasks` finds every folder with one), `metric`
(pure math on arrays), `rows` (a loaded model and plain tables in, result rows out), `<task>_stage` (`Config` +
`configure` + `run` + `STAGE`: params and files in, run document out); docs/adding_an_eval_task.md adds
one. The tasks of today (a new one describes itself in its spec and needs no line here)::

    zeroshot/    Babel-ImageNet zero-shot per language          eval_zeroshot
    retrieval/   text<->image recall@k per caption set          eval_retrieval
    clipscore/   CLIPScore, RefCLIPScore, pairwise accuracy     eval_clipscore
    mvl_sib/     MVL-SIB accuracy per task, k and language      eval_mvl_sib
    report/      merged CSV, headline metrics, plots            eval_report (the run JSONs of every task in `tasks`)

Other places::

    export/      Babel-ImageNet labels + prompts in CLIP_benchmark's layout     eval_export
    paper/       the papers' tables, a run beside them, the suite's plan        (eval_paper: tools/paper_stage.py)
    sample/      the sample profile's tiny CLIPs and drawn image sets           eval_tiny_clip, eval_images
    tools/       argparse tools over files, each beside its metric              eval_cider, eval_correlate,
                                                                                eval_clipscore_pairs, eval_paper, pins

Shared run machinery (imports no task)::

    tasks        the task registry: EvalTask (a task as the report sees it), REGISTRY (every folder with a
                 task.py, as "module:object" strings found without importing; a spec imported when asked for)
    config       CommonConfig (`eval.common`), ModelSpec, EvalStageConfig (every eval stage), ImageStageConfig
    flags        --model / --device / --runner, --language, --out
    languages    language codes -> registry keys
    inputs       input files and image folders checked; the class list; models loaded; the cache opened
    models       the DualEncoder every family gives, load_model(spec): the model of a spec loaded by its family
    families/    model families, one module each (hf: CLIP/SigLIP/AltCLIP/VisionTextDualEncoder, open_clip,
                 mclip, st) and the spec [FAMILY:]ID[@REVISION][+IMAGE_SPEC] (FAMILIES, parse_spec)
    cache        the on-disk image-embedding cache (shards), EvalRunnerConfig (`eval.runner`)
    images       image sets: reading, content hash
    similarity   L2 normalisation, rank of the best positive (ties pessimistic)
    labels       Babel-ImageNet labels and templates as zero-shot and export read them
    published    a published dataset (a built card folder, hf:ORG/NAME@REVISION) read without building
    captions     caption sets and their images; every model x caption set of a caption task
    documents    the run document: ROW_KEYS, dataset versions, rows + provenance
    results      a run written (results_path, write_run) and printed (the results table)
    plots        paper figure style, byte-stable PNG / SVG / PDF
    pins         every remote input of a profile, its pin and the pin's home; what the profile still needs
                 (the command: tools/pins_stage.py, `babelforge pins`)

Direction: tasks, places and tools import the shared modules; shared modules import no task; a
task imports no other task (`tools.clipscore_pairs` uses `clipscore.metric`).
"""
