"""A run set beside the papers' published numbers (`babelforge eval_paper`, a tool run by hand): `tables` (the
papers' tables and models in `resources/papers/`, language codes through the registry), `compare` (ours vs the
paper per model and language, Table 2's group averages, what differs in the setup), `plan` (what the whole
paper suite needs here: models, languages, images, GPU-hours), `figure` (the plot), `stage` (the command)."""
