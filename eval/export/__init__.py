"""Babel-ImageNet in CLIP_benchmark's layout: `clip_benchmark` (the two files, pure), `stage`
(`babelforge eval_export`)."""
