"""The zero-shot task's spec: what the report reads of its run documents (babelforge.eval.tasks)."""

from babelforge.eval.tasks import EvalTask

# The comparable numbers lead: top1_100 (a fixed 100-class control) and top1_norm (chance-normalised
# top-1) do not move when a label set gains or loses small languages; top1 does (chance is 1 / classes).
# balanced_accuracy is left out: it equals top1 whenever every class has as many images (ImageNet's
# validation set: 50 each).
TASK = EvalTask(
    name="zeroshot",
    summary="Babel-ImageNet zero-shot classification per language",
    key="zs",
    headline=(
        ("top1_100", "top1_100"),
        ("top1_norm", "top1_norm"),
        ("top1", "top1"),
        ("chance_top1", "chance"),
        ("top5", "top5"),
    ),
    dataset="babel_imagenet",
    # a language evaluated with two fallback sets must not count twice in one mean: each set is its own group
    split_by="prompt_set",
    split_keys=(
        ("translated", "tr"),
        ("english", "en"),
        ("english-fallback", "en_fb"),
        ("label", "lbl"),
        ("label-fallback", "lbl_fb"),
    ),
)
