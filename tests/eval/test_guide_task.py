"""The example task of docs/adding_an_eval_task.md runs as the page writes it.

Its Python blocks that start with `# eval/align/<file>` are the whole task; this copies them into a task
folder that `babelforge.eval` finds (its package path extended for the test, as a folder of `eval/` would
be), registers the spec as the registry does, and runs the stage on the sample project with the tiny CLIP:
the page cannot drift from the code (a renamed helper, a changed signature, a config base).
"""

from __future__ import annotations

import json
import re
import sys

import numpy as np
import pytest

from babelforge.core.config import load_config
from babelforge.core.params import load_params
from babelforge.eval import tasks
from babelforge.eval.config import EvalStageConfig, ImageStageConfig
from tests.imports import REPO

GUIDE = REPO / "docs" / "adding_an_eval_task.md"
BLOCK = re.compile(r"```python\n# (eval/align/[\w.]+)\n(.*?)```", re.DOTALL)


def guide_files() -> dict[str, str]:
    """{path in the project: the file's text} of each Python block the guide names by its first line."""
    return {path: text for path, text in BLOCK.findall(GUIDE.read_text(encoding="utf-8"))}


@pytest.fixture
def guide_task(tmp_path, monkeypatch):
    """`babelforge.eval.align` from the guide's blocks, registered beside the real tasks."""
    import babelforge.eval

    folder = tmp_path / "eval"
    for path, text in guide_files().items():
        (folder / path.removeprefix("eval/")).parent.mkdir(parents=True, exist_ok=True)
        (folder / path.removeprefix("eval/")).write_text(text, encoding="utf-8")
    (folder / "align" / "__init__.py").write_text('"""The guide\'s example task."""\n', encoding="utf-8")
    monkeypatch.setattr(babelforge.eval, "__path__", [*babelforge.eval.__path__, str(folder)])
    monkeypatch.setattr(tasks, "REGISTRY", (*tasks.REGISTRY, "babelforge.eval.align.task:TASK"))
    yield folder / "align"
    for module in [name for name in sys.modules if name.startswith("babelforge.eval.align")]:
        del sys.modules[module]


def test_the_guide_holds_the_whole_task():
    assert sorted(guide_files()) == [
        "eval/align/align_stage.py",
        "eval/align/metric.py",
        "eval/align/rows.py",
        "eval/align/task.py",
    ]


@pytest.mark.slow
def test_the_guide_task_runs_on_the_sample_project(guide_task, stage_project, tiny_clip_dir):
    from babelforge.eval.align.align_stage import STAGE, Config, run
    from babelforge.eval.align.metric import nearest_match_accuracy

    # the metric as the page writes it: a name nearest its own English name scores, a tie does not
    names = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    english = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    assert nearest_match_accuracy(names, english) == pytest.approx(1 / 3)

    # a text-only task: no eval.runner (image encoding) in its settings
    assert issubclass(Config, EvalStageConfig) and not issubclass(Config, ImageStageConfig)
    assert "runner" not in Config.__dataclass_fields__
    # its languages come from its view of the registry, never from resources/languages.tsv as a dep
    assert STAGE.view_deps() == ["${paths.language_views}/babel-imagenet.tsv"]
    assert not [dep for dep in STAGE.deps if "languages.tsv" in dep]
    assert tasks.task("align").command == STAGE.name == "eval_align"

    params = load_params(stage_project / "params.yaml")
    params["eval"]["common"]["models"] = [{"id": str(tiny_clip_dir)}]
    params["eval"]["align"] = {"languages": ["de", "fy", "jpn_Jpan"]}  # codes the registry resolves
    config = load_config(Config, params)
    assert run(config) == 0

    document = json.loads((stage_project / config.paths.eval_reports / "align.json").read_text(encoding="utf-8"))
    assert document["task"] == "align"
    rows = {row["lang"]: row for row in document["rows"]}
    # write_babel_imagenet_tables: German has the first 8 classes, Frisian every second, Japanese the others
    assert {lang: row["n_classes"] for lang, row in rows.items()} == {"deu_Latn": 8, "fry_Latn": 6, "jpn_Jpan": 6}
    for row in rows.values():
        assert row["chance"] == pytest.approx(1 / row["n_classes"], abs=1e-4) and 0 <= row["accuracy"] <= 1
        assert row["dataset"] == "babel_imagenet" and row["prompt_set"] == "names"
