"""The merged report of every task's run document: `merge` (one table, the headline metrics), `metric`
(zero-shot vs retrieval pairs and correlations), `figures` (the plots), `stage` (`babelforge eval_report`).

It reads the tasks' run JSONs (files) and what the task registry (babelforge.eval.tasks) declares of
each task, never a task's stage, rows or metric."""
