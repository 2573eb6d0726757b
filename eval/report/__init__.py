"""The merged report of every task's run document: `merge` (one table, the headline metrics), `metric`
(zero-shot vs retrieval pairs and correlations), `figures` (the plots), `stage` (`babelforge eval_report`).

It reads the tasks' run JSONs (files), never a task's modules."""
