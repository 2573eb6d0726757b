"""The command-line tools over files named on their command line (no params group, outside `dvc repro`),
each beside its metric: `cider` + `cider_d` (`babelforge eval_cider`), `correlate` + `correlation`
(`babelforge eval_correlate`), `clipscore_pairs` (`babelforge eval_clipscore_pairs`, CLIPScore from
`babelforge.eval.clipscore.metric`); `tsv` reads their tables."""
