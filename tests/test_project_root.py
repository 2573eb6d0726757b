"""Paths in params.yaml resolve from the project root wherever a command runs; paths on the command line
from the working folder. Real `babelforge` runs (subprocesses) in small projects under tmp."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from babelforge.cli import seen_from
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import write_table
from babelforge.core.params import find_params, project_root
from tests.project import command_env

PARAMS = {
    "profile": "sample",
    "fetch": {"mirror": "../mirror", "sources": ["clip-templates"]},  # a path setting outside `paths:`
    "paths": {"raw": "data/raw", "labels": "data/babel_imagenet/labels.parquet", "metrics": "metrics"},
    "eval": {"export": {"out_dir": "build/clip_benchmark"}},
}


def tiny_project(folder: Path, shared_data: Path) -> Path:
    """`folder/proj`: dvc.yaml (what makes it a project), params.yaml with relative paths, a labels
    table where paths.labels says, an empty `sub/`; the source mirror beside it, at `folder/mirror`."""
    root = folder / "proj"
    (root / "sub").mkdir(parents=True)
    (root / "dvc.yaml").write_text("stages: {}\n", encoding="utf-8")
    (root / "params.yaml").write_text(yaml.safe_dump(PARAMS), encoding="utf-8")
    templates = folder / "mirror" / "imagenet" / "clip_templates_en.txt"
    templates.parent.mkdir(parents=True)
    shutil.copy2(shared_data / "imagenet" / "clip_templates_en.txt", templates)
    rows = [
        {"class_idx": c, "wnid": wnid, "lang": lang, "label": f"{lang} {c}", "source": "test", "rank": 0}
        for lang in ("deu_Latn", "eng_Latn")
        for c, wnid in ((0, "n01440764"), (1, "n01443537"))
    ]
    write_table(pd.DataFrame(rows), root / PARAMS["paths"]["labels"], sort_by=["lang", "class_idx"])
    return root


def babelforge(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["babelforge", *args], cwd=cwd, env=command_env(), capture_output=True, text=True, timeout=300
    )


def ok(cwd: Path, *args: str) -> str:
    result = babelforge(cwd, *args)
    assert result.returncode == 0, f"babelforge {' '.join(args)} in {cwd}:\n{result.stderr[-2000:]}"
    return result.stderr


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# fetch reads fetch.mirror and writes paths.raw; eval_export reads paths.labels and writes eval.export.out_dir
STAGES = (("fetch",), ("eval_export",))


@pytest.fixture(scope="module")
def from_the_root(tmp_path_factory, shared_data) -> dict[str, bytes]:
    """What the stages write when run from the project root, as `dvc repro` runs them."""
    root = tiny_project(tmp_path_factory.mktemp("at-root"), shared_data)
    for stage in STAGES:
        ok(root, *stage)
    return files(root)


@pytest.mark.parametrize("params", [["--params", "../params.yaml"], []], ids=["params-given", "params-found"])
def test_a_stage_run_from_a_subfolder_writes_what_a_run_from_the_root_writes(
    tmp_path, shared_data, from_the_root, params
):
    root = tiny_project(tmp_path, shared_data)
    for stage in STAGES:
        ok(root / "sub", *stage, *params)
    written = files(root)
    assert written == from_the_root  # the same files, byte for byte (provenance included), none in sub/
    assert "data/raw/imagenet/clip_templates_en.txt" in written and "build/clip_benchmark/export.json" in written


def test_paths_on_the_command_line_are_taken_from_the_working_folder(tmp_path, shared_data, from_the_root):
    root = tiny_project(tmp_path, shared_data)
    sub = root / "sub"
    ok(sub, "fetch", "--params", "../params.yaml", "--out", "raw", "--mirror", "../../mirror")
    labels = "../" + PARAMS["paths"]["labels"]
    log = ok(sub, "eval_export", "--params", "../params.yaml", "--labels", labels, "--out", str(tmp_path / "out"))
    assert files(sub / "raw") == {
        name.removeprefix("data/raw/"): data for name, data in from_the_root.items() if name.startswith("data/raw/")
    }
    exported = files(tmp_path / "out")
    manifest = json.loads(exported.pop("export.json"))
    assert manifest["provenance"]["params"]["eval.export"].pop("out_dir") == str(tmp_path / "out")
    at_root = {
        name.removeprefix("build/clip_benchmark/"): data
        for name, data in from_the_root.items()
        if name.startswith("build/clip_benchmark/")
    }
    root_manifest = json.loads(at_root.pop("export.json"))
    root_manifest["provenance"]["params"]["eval.export"].pop("out_dir")
    # the labels given as ../data/... are the project's labels: the same record as from the root
    assert exported == at_root and manifest == root_manifest
    assert not (root / "data" / "raw").exists() and not (root / "build").exists()
    assert f"-> {tmp_path / 'out'}" in log


def test_outside_any_project_without_params_is_one_clear_error(tmp_path):
    result = babelforge(tmp_path, "eval_export")
    assert result.returncode == 1
    assert result.stderr == (
        f"babelforge eval_export: error: no params.yaml in {tmp_path.resolve()} or a folder above it: "
        "run inside a babelforge project, or pass --params FILE\n"
    )


def test_the_params_file_and_the_root_are_found_as_git_finds_its_repository(tmp_path):
    project = tmp_path / "proj"
    deep = project / "a" / "b"
    deep.mkdir(parents=True)
    (project / "params.yaml").write_text("profile: sample\n")
    with pytest.raises(BabelforgeError, match="no params.yaml in"):
        find_params("params.yaml", start=deep)  # a params.yaml alone does not make a project
    (project / "dvc.yaml").write_text("stages: {}\n")
    assert find_params("params.yaml", start=deep) == project.resolve() / "params.yaml"
    assert project_root("../../params.yaml", start=deep) == project.resolve()
    assert project_root("a/variant.yaml", start=project) == project.resolve()  # a params file inside the project
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    assert project_root(scratch / "params.yaml", start=deep) == deep.resolve()  # outside a project: here
    with pytest.raises(BabelforgeError, match="none.yaml: no params file"):
        find_params("none.yaml", start=deep)


def test_a_command_line_path_is_rewritten_as_seen_from_the_root(tmp_path):
    root, here = tmp_path / "proj", tmp_path / "proj" / "sub"
    assert seen_from(root, here, "out.json") == "sub/out.json"
    assert seen_from(root, here, "../data/labels.parquet") == "data/labels.parquet"
    assert seen_from(root, here, "..") == "."
    assert seen_from(root, here, "../../elsewhere") == str(tmp_path / "elsewhere")  # outside: absolute
    assert seen_from(root, here, "/abs/file") == "/abs/file"


def test_from_a_subfolder_the_project_params_file_is_no_ad_hoc_setting(tmp_path, monkeypatch):
    """An eval run from a subfolder with the project's own params.yaml (given as ../params.yaml, or
    found) is the stage's own run, not a run with another params file (which goes to a run folder)."""

    from babelforge.cli import at_project_root, stage_parser
    from babelforge.core.stages import load

    root = tmp_path / "proj"
    (root / "sub" / "my_clip").mkdir(parents=True)
    (root / "sub" / "my_clip" / "config.json").write_text("{}")  # a transformers model folder
    (root / "dvc.yaml").write_text("stages: {}\n")
    (root / "params.yaml").write_text(yaml.safe_dump(PARAMS))
    monkeypatch.chdir(root / "sub")
    parser = stage_parser(load("eval_zeroshot"))
    for given in (["--params", "../params.yaml"], []):
        args = parser.parse_args([*given, "--out", "z.json", "--model", "my_clip", "--model", "org/clip@abc"])
        with at_project_root(parser, args):
            assert Path.cwd() == root.resolve()
            assert args.params == "params.yaml" and args.out == "sub/z.json"
            models = getattr(args, "eval.common.models")
            assert models == [{"id": "sub/my_clip", "revision": None}, {"id": "org/clip", "revision": "abc"}]
        assert Path.cwd() == (root / "sub").resolve()


def test_resources_are_the_projects_own_with_the_packages_as_the_default(tmp_path):
    """A project's resources/ wins over the package's (whose checkout the venv may belong to), file by file."""
    from babelforge.core.resources import RESOURCES, resource

    root = tmp_path / "proj"
    (root / "resources").mkdir(parents=True)
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "dvc.yaml").write_text("stages: {}\n", encoding="utf-8")
    (root / "params.yaml").write_text(yaml.safe_dump(PARAMS), encoding="utf-8")
    own = (RESOURCES / "languages.tsv").read_text(encoding="utf-8") + "zzz_Latn\tTestish\tzzz\tLatn\tLatn" + "\t" * 5
    (root / "resources" / "languages.tsv").write_text(own + "\tFalse\tFalse\tFalse\tFalse\n", encoding="utf-8")
    for start in (root, root / "sub" / "deeper"):
        assert resource("languages.tsv", start) == root / "resources" / "languages.tsv"
        assert resource("imagenet1k_classes.tsv", start) == RESOURCES / "imagenet1k_classes.tsv"  # not in the project
    assert resource("languages.tsv", tmp_path) == RESOURCES / "languages.tsv"  # outside any project
    # a real command run in the project's subfolder reads the project's registry
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from babelforge.core.languages import registry; print(registry().get('zzz_Latn').name)",
        ],
        cwd=root / "sub",
        env=command_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0 and result.stdout.strip() == "Testish", result.stderr[-2000:]
