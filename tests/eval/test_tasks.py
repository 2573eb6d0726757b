"""The eval task registry (babelforge.eval.tasks): each task declared once, in its own folder, and the
report, the `eval.report.tasks` setting and the headline metrics derived from it.

A toy task, written to tmp_path as a package of its own and registered by one entry, shows up in the
report's merged CSV and headline metrics with nothing of eval/report edited
(docs/adding_an_eval_task.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pandas as pd
import pytest
import yaml

from babelforge.commands import COMMANDS
from babelforge.core.config import load_config
from babelforge.core.errors import BabelforgeError
from babelforge.eval import tasks
from babelforge.eval.documents import run_document
from babelforge.eval.tasks import EvalTask

# The tasks of today; a new task folder joins the registry without a line here.
FOUR = ["clipscore", "mvl_sib", "retrieval", "zeroshot"]


def test_the_registry_finds_the_four_tasks_each_in_its_folder(repo_root):
    # every folder of eval/ with a task.py, by name: eval.report.tasks' default
    assert tasks.names() == sorted(path.parent.name for path in (repo_root / "eval").glob("*/task.py"))
    assert set(FOUR) <= set(tasks.names())
    for reference, spec in zip(tasks.REGISTRY, tasks.tasks(), strict=True):
        assert reference == f"babelforge.eval.{spec.name}.task:TASK"
        assert tasks.task(spec.name) is spec and tasks.find(spec.name) is spec
        # its command runs the stage module beside the spec
        assert spec.command == f"eval_{spec.name}"
        assert COMMANDS[spec.command].module == f"babelforge.eval.{spec.name}.{spec.name}_stage"


def test_each_spec_declares_what_the_report_reads():
    clipscore, mvl_sib, retrieval, zeroshot = (tasks.task(name) for name in FOUR)
    assert zeroshot.key == "zs" and zeroshot.dataset == "babel_imagenet" and zeroshot.split_by == "prompt_set"
    assert zeroshot.headline == (
        ("top1_100", "top1_100"),
        ("top1_norm", "top1_norm"),
        ("top1", "top1"),
        ("chance_top1", "chance"),
        ("top5", "top5"),
    )
    assert dict(zeroshot.split_keys) == {
        "translated": "tr",
        "english": "en",
        "english-fallback": "en_fb",
        "label": "lbl",
        "label-fallback": "lbl_fb",
    }
    assert retrieval.key == "ret" and retrieval.dataset is None and retrieval.split_by is None
    assert retrieval.headline == (("mean_recall", "recall"), ("t2i_r@1", "t2i_r1"), ("i2t_r@1", "i2t_r1"))
    assert clipscore.key == "cs" and clipscore.dataset is None and clipscore.split_by is None
    assert clipscore.headline == (
        ("clipscore", "clipscore"),
        ("ref_clipscore", "ref"),
        ("pairwise_accuracy", "pair_acc"),
    )
    assert mvl_sib.key == "mvl" and mvl_sib.dataset == "mvl_sib" and mvl_sib.headline == (("accuracy", "acc"),)
    assert all(spec.summary for spec in tasks.tasks())
    # the groups: the task's own dataset is not repeated, the split value by its short name
    assert zeroshot.group("babel_imagenet", "english-fallback") == "zs_en_fb"
    assert zeroshot.group("babel_imagenet", "label-fallback+knowledge") == "zs_label-fallback+knowledge"
    assert retrieval.group("xtd") == "ret_xtd" and mvl_sib.group("mvl_sib") == "mvl"


def test_headline_names_fit_a_terminal_column():
    """Every headline name after the model (`zs_en_fb.top1_norm`) is at most 30 characters."""
    names = [
        f"{spec.group(dataset, split)}.{short}"
        for spec in tasks.tasks()
        for dataset in ("xflickrco", spec.dataset or "xflickrco")
        for split in [key for key, _ in spec.split_keys] or [None]
        for _, short in spec.headline
    ]
    assert max(len(name) for name in names) <= 30, max(names, key=len)


def test_listing_the_tasks_imports_no_stage_and_no_heavy_library():
    code = (
        "import sys; from babelforge.eval import tasks; tasks.tasks(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'numpy', 'pandas', 'PIL') "
        "or m.endswith(('.stage', '.rows', '.metric'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _report_config(repo_root, tasks_setting, **paths):
    from babelforge.eval.report.report_stage import Config

    params = yaml.safe_load((repo_root / "params.yaml").read_text(encoding="utf-8"))
    params["eval"]["report"]["tasks"] = tasks_setting
    params["paths"] = {**params["paths"], **paths}
    return load_config(Config, params)


def test_an_unknown_task_is_one_line_naming_the_known_ones(repo_root):
    assert _report_config(repo_root, ["mvl_sib", "zeroshot"]).tasks == ["mvl_sib", "zeroshot"]
    with pytest.raises(BabelforgeError) as error:
        _report_config(repo_root, ["zeroshot", "zeroshoot"])
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("params.yaml: eval.report.tasks[1] is 'zeroshoot'; one of ")
    assert all(repr(name) in message for name in FOUR)
    with pytest.raises(BabelforgeError, match=rf"^unknown eval task 'nope'; known: {', '.join(tasks.names())} \("):
        tasks.task("nope")
    assert tasks.find("nope") is None


def test_the_report_config_defaults_to_every_registered_task():
    from babelforge.eval.report.report_stage import Config

    assert Config().tasks == tasks.names()


def test_a_registered_object_that_is_not_a_spec_is_named(monkeypatch):
    found = tasks.REGISTRY
    monkeypatch.setattr(tasks, "REGISTRY", (*found, "babelforge.eval.tasks:names"))
    with pytest.raises(BabelforgeError, match=r"^babelforge.eval.tasks:names: not an EvalTask"):
        tasks.names()
    monkeypatch.setattr(tasks, "REGISTRY", (*found, "babelforge.eval.zeroshot.task:TASK"))
    with pytest.raises(BabelforgeError, match="declared twice"):
        tasks.names()


# ---------------------------------------------------------------- a toy task, registered in the test

TOY_TASK = '''
"""The toy task's spec."""

from babelforge.eval.tasks import EvalTask

TASK = EvalTask(
    name="toy",
    summary="a toy score per language",
    key="ty",
    headline=(("score", "score"), ("hits", "hit")),
    dataset="toyset",
    split_by="variant",
    split_keys=(("plain", "p"),),
)
'''


@pytest.fixture
def toy_task(tmp_path, monkeypatch):
    """The toy task as a package on sys.path, added to the registry as a task folder would be."""
    package = tmp_path / "src" / "toytask"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""A toy eval task."""\n')
    (package / "task.py").write_text(textwrap.dedent(TOY_TASK).lstrip())
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.setattr(tasks, "REGISTRY", (*tasks.REGISTRY, "toytask.task:TASK"))
    yield tasks.task("toy")
    for module in [name for name in sys.modules if name == "toytask" or name.startswith("toytask.")]:
        del sys.modules[module]


def _row(dataset, lang, variant, **values):
    base = {"model": "models/m", "revision": "sha256:0", "dataset": dataset, "dataset_version": "sha256:1"}
    return {**base, "lang": lang, "prompt_set": "none", "seed": 0, "variant": variant, **values}


def test_a_toy_task_shows_up_in_the_report(toy_task, tmp_path, repo_root):
    from babelforge.eval.report.report_stage import run

    assert isinstance(toy_task, EvalTask) and tasks.names()[-1] == "toy" and set(FOUR) < set(tasks.names())
    reports, metrics = tmp_path / "reports", tmp_path / "metrics"
    reports.mkdir()
    rows = [
        _row("toyset", "deu_Latn", "plain", score=0.5, hits=2),
        _row("toyset", "fra_Latn", "plain", score=0.25, hits=4),
        _row("toyset", "deu_Latn", "odd", score=1.0, hits=0),
        _row("other", "deu_Latn", "plain", score=0.75, hits=1),
    ]
    record = {"build": {"profile": "full"}}
    (reports / "toy.json").write_text(json.dumps(run_document("toy", rows, record)))
    retrieval = _row("xtd", "deu_Latn", "plain", mean_recall=0.5)
    (reports / "retrieval.json").write_text(json.dumps(run_document("retrieval", [retrieval], record)))

    config = _report_config(
        repo_root,
        tasks.names(),  # the setting accepts the toy: it is checked against the registry when read
        eval_reports=str(reports),
        metrics=str(metrics),
        languages=str(tmp_path / "absent.parquet"),
    )
    assert run(config) == 0
    frame = pd.read_csv(reports / "results.csv")
    assert sorted(set(frame["task"])) == ["retrieval", "toy"] and (frame["task"] == "toy").sum() == 4
    headline = json.loads((metrics / "eval.json").read_text())["m"]
    # its own dataset not repeated, the split column's values apart, a value without a short name as it is
    assert headline["ty_p"] == {"score": 0.375, "hit": 3.0, "langs": 2}
    assert headline["ty_odd"] == {"score": 1.0, "hit": 0.0, "langs": 1}
    assert headline["ty_other_p"] == {"score": 0.75, "hit": 1.0, "langs": 1}
    assert headline["ret_xtd"] == {"recall": 0.5, "langs": 1}


def test_a_task_folder_is_found_without_a_line_anywhere(tmp_path, monkeypatch):
    """The registry is every folder of eval/ with a task.py: a new folder is a new task."""
    (tmp_path / "geo").mkdir()
    (tmp_path / "geo" / "task.py").write_text("")
    (tmp_path / "shared_place").mkdir()  # a place without a spec is no task
    monkeypatch.setattr(tasks, "__file__", str(tmp_path / "tasks.py"))
    assert tasks._discovered() == ("babelforge.eval.geo.task:TASK",)


@pytest.mark.parametrize(
    "fields",
    [
        {"name": "geo-task", "key": "geo"},  # the name is the command's suffix and a file name: an identifier
        {"name": "geo", "key": "g-o"},  # the key starts a headline group
        {"name": "geo", "key": "geo", "split_keys": (("a", "b"),)},  # a split's short names need its column
    ],
)
def test_a_spec_that_cannot_name_its_outputs_is_refused(fields):
    with pytest.raises(BabelforgeError, match="eval task"):
        EvalTask(**{"summary": "s", "headline": (("x", "x"),), **fields})
    assert EvalTask(name="geo", summary="s", key="geo", headline=(("x", "x"),)).command == "eval_geo"
