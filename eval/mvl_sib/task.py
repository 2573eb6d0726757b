"""The MVL-SIB task's spec: what the report reads of its run documents (babelforge.eval.tasks)."""

from babelforge.eval.tasks import EvalTask

TASK = EvalTask(
    name="mvl_sib",
    summary="MVL-SIB accuracy per task, k and language",
    key="mvl",
    headline=(("accuracy", "acc"),),
    dataset="mvl_sib",
)
