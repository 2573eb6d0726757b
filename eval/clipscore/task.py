"""The CLIPScore task's spec: what the report reads of its run documents (babelforge.eval.tasks)."""

from babelforge.eval.tasks import EvalTask

TASK = EvalTask(
    name="clipscore",
    summary="CLIPScore, RefCLIPScore and pairwise accuracy per caption set and language",
    key="cs",
    headline=(("clipscore", "clipscore"), ("ref_clipscore", "ref"), ("pairwise_accuracy", "pair_acc")),
)
