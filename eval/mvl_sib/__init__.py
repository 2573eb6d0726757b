"""MVL-SIB with a dual encoder, accuracy per task, k and language: `metric` (options scored against the
mean of the references), `rows` (a model x task tables), `stage` (`babelforge eval_mvl_sib`), `task` (its
spec)."""
