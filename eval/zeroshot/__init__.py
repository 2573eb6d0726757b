"""Zero-shot classification on Babel-ImageNet per language: `metric` (class embeddings, top-k, the
fixed-100 control, template choice), `rows` (a model x languages x prompt sets), `stage` (`babelforge eval_zeroshot`),
`task` (its spec)."""
