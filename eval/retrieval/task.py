"""The retrieval task's spec: what the report reads of its run documents (babelforge.eval.tasks)."""

from babelforge.eval.tasks import EvalTask

TASK = EvalTask(
    name="retrieval",
    summary="text<->image recall@k per caption set and language",
    key="ret",
    headline=(("mean_recall", "recall"), ("t2i_r@1", "t2i_r1"), ("i2t_r@1", "i2t_r1")),
)
