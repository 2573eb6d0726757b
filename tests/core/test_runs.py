"""The eval command line never clobbers (issue 25): a run with other models, languages or settings
and no --out goes to runs/<model>-<UTC time>/, leaving the DVC-tracked results byte for byte as they
were; `--set` names only what a command reads; a --model folder that is not there is the first error."""

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from babelforge.cli import main, settable
from babelforge.commands import COMMANDS
from babelforge.core.config import check_assignments
from babelforge.core.errors import BabelforgeError
from babelforge.core.runs import given_settings, run_folder, run_name, run_outputs
from babelforge.core.stages import load
from babelforge.eval.flags import model_spec
from babelforge.eval.tasks import names
from tests.eval.conftest import write_babel_imagenet_tables, write_sample_project

TASKS = tuple(names())  # every registered eval task (babelforge.eval.tasks)
NOON = datetime(2025, 3, 4, 12, 5, 6, tzinfo=UTC)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project whose tracked eval outputs were built as dvc.yaml runs the stages (no flags), one model."""
    root = write_sample_project(tmp_path_factory.mktemp("runs-project"))
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["eval"]["tiny_clip"]["seeds"] = [0]
    params["eval"]["common"]["models"] = [{"id": "models/tiny_clip/s0"}]
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert main(["eval_tiny_clip"]) == 0 and main(["eval_images"]) == 0
        write_babel_imagenet_tables(root)
        for task in (*TASKS, "report"):
            assert main([f"eval_{task}"]) == 0, task
        assert not (root / "runs").exists()  # the stages' own runs write the tracked outputs
        yield root
    finally:
        os.chdir(cwd)


def tracked(root: Path) -> dict[str, bytes]:
    """Every file of the tracked eval outputs (reports/eval, metrics), by path."""
    files = [p for folder in ("reports/eval", "metrics") for p in (root / folder).rglob("*") if p.is_file()]
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


def new_run(root: Path, before: set[str]) -> Path:
    made = sorted(set(os.listdir(root / "runs")) - before)
    assert len(made) == 1, made
    return root / "runs" / made[0]


def runs(root: Path) -> set[str]:
    return set(os.listdir(root / "runs")) if (root / "runs").is_dir() else set()


# ---------------------------------------------------------------- item 1: the run folder


def test_the_users_command_writes_a_run_folder_and_leaves_the_tracked_results(project, capsys):
    before, folders = tracked(project), runs(project)
    assert main(["eval_zeroshot", "--model", "models/tiny_clip/s0", "--language", "de,ja"]) == 0
    assert tracked(project) == before  # reports/eval/zeroshot.json (every language) byte for byte
    folder = new_run(project, folders)
    assert re.fullmatch(r"s0-\d{8}-\d{6}(-\d+)?", folder.name)
    rows = json.loads((folder / "zeroshot.json").read_text())["rows"]
    assert [r["lang"] for r in rows] == ["deu_Latn", "jpn_Jpan"]
    assert f"an ad-hoc run, written to runs/{folder.name}/" in capsys.readouterr().err


@pytest.mark.parametrize(
    "task, argv",
    [
        ("zeroshot", ["--set", "eval.zeroshot.max_templates=1"]),
        ("retrieval", ["--language", "de"]),
        ("clipscore", ["--device", "cpu"]),
        ("mvl_sib", ["--model", "models/tiny_clip/s0"]),
    ],
)
def test_any_override_of_a_task_goes_to_a_run_folder(project, task, argv):
    before, folders = tracked(project), runs(project)
    assert main([f"eval_{task}", *argv]) == 0
    assert tracked(project) == before
    folder = new_run(project, folders)
    assert [p.name for p in folder.iterdir()] == [f"{task}.json"]
    assert json.loads((folder / f"{task}.json").read_text())["rows"]


def test_an_ad_hoc_report_keeps_the_tracked_csv_plots_and_headline_metrics(project):
    before, folders = tracked(project), runs(project)
    assert main(["eval_report", "--set", "eval.report.tasks=[zeroshot]"]) == 0
    assert tracked(project) == before  # results.csv, plots/ and metrics/eval.json
    folder = new_run(project, folders)
    assert folder.name.startswith("report-")
    assert {p.name for p in folder.iterdir()} == {"results.csv", "plots", "eval.json"}
    assert set(json.loads((folder / "eval.json").read_text())) == {"profile", "s0"}  # s0: the display name


@pytest.mark.parametrize(
    "stage, setting, inside, tracked_folder",
    [
        ("tiny_clip", "eval.tiny_clip.seeds=[1]", "tiny_clip/s1/config.json", "models/tiny_clip"),
        ("images", "eval.images.n_classes=2", "images/imagenet", "data/eval/images"),
    ],
)
def test_the_sample_inputs_built_with_other_settings_go_to_a_run_folder(
    project, stage, setting, inside, tracked_folder
):
    def files():
        return {p: p.read_bytes() for p in (project / tracked_folder).rglob("*") if p.is_file()}

    before, folders = files(), runs(project)
    assert main([f"eval_{stage}", "--set", setting]) == 0
    assert files() == before
    folder = new_run(project, folders)
    assert folder.name.startswith(f"{stage}-") and (folder / inside).exists()


def test_the_stages_own_run_still_writes_the_tracked_output(project, repo_root):
    # what dvc.yaml runs: the bare command, no flag
    dvc = yaml.safe_load((repo_root / "dvc.yaml").read_text())["stages"]
    assert all(dvc[f"eval_{task}"]["cmd"] == f"babelforge eval_{task}" for task in (*TASKS, "report"))
    target = project / "reports" / "eval" / "zeroshot.json"
    content, folders = target.read_bytes(), runs(project)
    target.unlink()
    assert main(["eval_zeroshot"]) == 0
    assert target.read_bytes() == content and runs(project) == folders


def test_out_still_names_the_file_and_never_a_tracked_one_in_an_ad_hoc_run(project, capsys):
    before, folders = tracked(project), runs(project)
    assert main(["eval_zeroshot", "--language", "de", "--out", "mine.json"]) == 0
    assert (project / "mine.json").is_file() and runs(project) == folders
    capsys.readouterr()
    assert main(["eval_zeroshot", "--language", "de", "--out", "reports/eval/zeroshot.json"]) == 1
    err = capsys.readouterr().err
    assert "is a DVC-tracked output of eval_zeroshot; a run with --language writes elsewhere" in err
    assert tracked(project) == before


def test_a_failed_ad_hoc_run_leaves_no_run_folder(project, capsys):
    folders = runs(project)
    assert main(["eval_zeroshot", "--language", "swh"]) == 1
    assert "unknown language 'swh'" in capsys.readouterr().err
    assert runs(project) == folders


def test_the_rule():
    outputs = {"out": "zeroshot.json"}
    folder = Path("runs/s0-20250304-120506")
    assert run_outputs({}, "out", outputs, folder) == {}  # the stage's own run: its tracked output
    assert run_outputs({"languages": ["de"]}, "out", outputs, folder) == {"out": f"{folder}/zeroshot.json"}
    assert run_outputs({"languages": ["de"], "out": "x.json"}, "out", outputs, folder) == {}
    # eval_report: --out is its input folder; its results and headline metrics then go there
    report = {"out": "", "paths.metrics": ""}
    assert run_outputs({"paths.eval_reports": "r"}, "paths.eval_reports", report, folder) == {
        "out": "r",
        "paths.metrics": "r",
    }
    assert run_outputs({"min_languages": 2, "paths.metrics": "m"}, "paths.eval_reports", report, folder) == {
        "out": str(folder)
    }


def test_settings_given_on_the_command_line():
    values = {"debug": True, "params": "params.yaml", "set": ["eval.zeroshot.out=a.json"], "languages": ["de"]}
    defaults = {"debug": False, "params": "params.yaml", "set": [], "languages": None, "out": None}
    assert given_settings(values, defaults, values["set"], "eval.zeroshot") == {"out": "a.json", "languages": ["de"]}


def test_run_folder_names():
    assert run_name(["models/tiny_clip/s0"], "eval_zeroshot") == "s0"
    assert run_name(["openai/clip-vit-base-patch32", "models/my_clip/"], "eval_zeroshot") == "clip-vit-base-patch32+1"
    assert run_name([], "eval_report") == "report"
    assert run_folder("s0", NOON) == Path("runs/s0-20250304-120506")
    assert run_folder("s0", NOON, {"s0-20250304-120506"}) == Path("runs/s0-20250304-120506-2")


# ---------------------------------------------------------------- item 2: --set names what the command reads


def test_set_of_another_stages_group_is_an_error(project, capsys):
    before, folders = tracked(project), runs(project)
    assert main(["eval_zeroshot", "--set", "labels.min_classes=20"]) == 1
    assert capsys.readouterr().err == (
        "babelforge eval_zeroshot: error: --set labels.min_classes: not a setting of this command; it takes "
        "eval.zeroshot.*, eval.common.*, paths.*, eval.runner.*, profile, build.cpu_isa\n"
    )
    assert tracked(project) == before and runs(project) == folders


def test_every_param_dvc_yaml_gives_a_stage_is_settable(repo_root):
    """Except the keys a command without a params.yaml group of its own declares (`Stage(params=...)`)
    and reads from params.yaml as DVC runs it: the language views' `captions.input.*`."""
    for stage in yaml.safe_load((repo_root / "dvc.yaml").read_text())["stages"].values():
        stage = stage.get("do", stage)
        command = stage["cmd"].split()[1]
        declared = load(command)
        accepted = settable(declared.config, COMMANDS[command].pinned)
        read_from_the_file = declared.params if not declared.in_params_yaml else ()
        for key in stage.get("params", []):
            if key not in (read_from_the_file or ()):
                check_assignments([f"{key}=1"], accepted)  # no error: dvc's params are what the stage reads


def test_settable_groups_follow_the_config():
    from babelforge.eval.export.export_stage import Config as Export
    from babelforge.eval.report.report_stage import Config as Report

    assert settable(Report) == ["eval.report.*", "paths.*", "profile"]
    assert settable(Export) == ["eval.export.*", "eval.common.*", "paths.*", "profile"]
    with pytest.raises(BabelforgeError, match="--set eval.zeroshot.max_templates: not a setting"):
        check_assignments(["eval.zeroshot.max_templates=1"], settable(Report))
    check_assignments(["eval.report=null", "profile=full"], settable(Report))


# ---------------------------------------------------------------- item 3: a missing --model folder


@pytest.mark.parametrize("spec", ["models/my_clip", "./my_clip", "/no/such/clip", "a/b/c"])
def test_a_missing_model_folder_is_the_first_error(tmp_path, capsys, spec):
    (tmp_path / "models").mkdir()  # the project's models/ folder, without my_clip in it
    cwd = os.getcwd()
    os.chdir(tmp_path)  # no params.yaml, no inputs: the folder is named before anything is read
    try:
        assert main(["eval_zeroshot", "--model", spec, "--language", "de,ja"]) == 1
    finally:
        os.chdir(cwd)
    assert capsys.readouterr().err == f"babelforge eval_zeroshot: error: no such folder: {spec}\n"


def test_hub_ids_and_folders_pass_the_model_flag(tmp_path):
    with pytest.raises(BabelforgeError, match=r"^model folder .*: no family recognises its files .*; model families: "):
        model_spec(str(tmp_path))  # a folder of no model: said while the flags are read
    (tmp_path / "config.json").write_text("{}")  # a transformers folder
    assert model_spec(str(tmp_path)) == {"id": str(tmp_path), "revision": None}
    with pytest.raises(BabelforgeError, match=r"is a local folder, loaded as its files are now .*; drop @x"):
        model_spec(f"{tmp_path}@x")  # a folder has no revisions: the pin is refused, not dropped
    assert model_spec("openai/clip-vit-base-patch32@3d74acf") == {
        "id": "openai/clip-vit-base-patch32",
        "revision": "3d74acf",
    }
    with pytest.raises(
        BabelforgeError,
        match=r"^model hf:nobody-clip-xyz: no folder nobody-clip-xyz here, and as a Hub model no revision pinned; ",
    ):
        model_spec("nobody-clip-xyz")
