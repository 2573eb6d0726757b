"""CLIPScore, RefCLIPScore and pairwise accuracy per caption set and language: `metric` (the scores),
`rows` (a model x caption set), `stage` (`babelforge eval_clipscore`), `task` (its spec)."""
