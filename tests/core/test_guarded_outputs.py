"""Outputs cannot land on tracked data (issue 35): a stage's outputs are put back unless it succeeds
(`OutputGuard`), and an `--out` may not lie, after symlinks, in another stage's DVC-tracked output nor
outside the project and the temp folder unless `--out-anywhere` (`babelforge.core.runs.out_problem`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from babelforge.cli import main
from babelforge.core.io import write_text
from babelforge.core.output_guard import OutputGuard
from babelforge.core.runs import changed_inputs, out_problem, overlapping, replace_problem, tracked_outputs
from babelforge.core.written_records import (
    WrittenRecords,
    file_stats,
    git_tracked_files,
    not_written_by,
    read_written_record,
    record_path,
    written_record,
)
from tests.project import tree_digests
from tests.reliability.workspace import leftovers

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def built(tmp_path) -> Path:
    """A folder output of three files and a file output, as a stage left them."""
    for name in ("a.txt", "b.txt", "sub/c.txt"):
        write_text(f"old {name}\n", tmp_path / "out" / name)
    write_text("old summary\n", tmp_path / "summary.json")
    return tmp_path


# --- OutputGuard ------------------------------------------------------------------------------------


def test_a_stage_that_fails_mid_write_leaves_its_outputs_byte_identical(built):
    before = tree_digests(built)
    with pytest.raises(RuntimeError, match="half way"), OutputGuard([built / "out", built / "summary.json"]):
        write_text("new a\n", built / "out" / "a.txt")  # replaced, as every writer does
        (built / "out" / "b.txt").unlink()
        write_text("new d\n", built / "out" / "d.txt")
        write_text("new summary\n", built / "summary.json")
        raise RuntimeError("stopped half way")
    assert tree_digests(built) == before
    assert leftovers(built) == []


def test_a_failed_exit_code_puts_back_too_and_a_success_keeps_the_new_version(built):
    with OutputGuard([built / "out"]):  # never committed: a stage that returned non-zero
        shutil.rmtree(built / "out")
    assert (built / "out" / "sub" / "c.txt").read_text() == "old sub/c.txt\n"
    with OutputGuard([built / "out", built / "summary.json"]) as guard:
        write_text("new a\n", built / "out" / "a.txt")
        write_text("new summary\n", built / "summary.json")
        guard.commit()
    assert (built / "out" / "a.txt").read_text() == "new a\n"
    assert (built / "summary.json").read_text() == "new summary\n"
    assert leftovers(built) == []


def test_an_output_that_was_not_there_is_left_as_the_stage_left_it(tmp_path):
    """Nothing tracked to protect: committed shards stay for a rerun to resume."""
    with pytest.raises(RuntimeError), OutputGuard([tmp_path / "new"]):
        write_text("shard\n", tmp_path / "new" / "shard-00000.json")
        raise RuntimeError
    assert (tmp_path / "new" / "shard-00000.json").is_file()


def test_the_kept_copy_shares_the_files_bytes_and_keeps_their_modes(built):
    os.chmod(built / "out", 0o755)
    with OutputGuard([built / "out"]) as guard:
        kept = guard.kept[built / "out"]
        assert kept.name.startswith(".out.") and kept.name.endswith(".old")
        assert os.path.samefile(kept / "a.txt", built / "out" / "a.txt")  # a hard link, no bytes copied
        guard.commit()
    assert not kept.exists()
    assert oct((built / "out").stat().st_mode & 0o777) == "0o755"


# --- what an --out may name --------------------------------------------------------------------------


def test_tracked_outputs_fill_dvc_yaml_paths_from_params():
    dvc = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    tracked = tracked_outputs(dvc, params)
    assert tracked["labels"][:2] == [params["paths"]["labels"], params["paths"]["languages"]]
    assert f"{params['paths']['metrics']}/labels.json" in tracked["labels"]  # metrics are tracked outputs too
    assert tracked["captions_tag"] == [f"{params['paths']['captions']}/attributes"]
    assert tracked["card@mt-captions"] == [f"{params['paths']['hub']}/mt-captions"]  # a foreach stage per key
    synthetic = {"stages": {"x": {"outs": ["${paths.nowhere}/a", "${paths.here}/b"]}}}
    assert tracked_outputs(synthetic, {"paths": {"here": "h"}}) == {"x": ["h/b"]}  # an unknown setting: left out
    listed = {
        "stages": {"card": {"foreach": ["a", "b"], "do": {"outs": ["hub/${item}"], "metrics": ["m/${key}.json"]}}}
    }
    assert tracked_outputs(listed, {}) == {"card@a": ["hub/a", "m/a.json"], "card@b": ["hub/b", "m/b.json"]}


def test_out_problem_names_the_tracked_output_an_out_lands_in(tmp_path):
    (tmp_path / "data" / "mvl_sib").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "data" / "mvl_sib")
    tracked = {str(tmp_path / "data" / "mvl_sib"): "mvl_sib", str(tmp_path / "data" / "x.parquet"): "labels"}
    allowed = [tmp_path]
    problem = out_problem(str(tmp_path / "link"), [str(tmp_path / "link" / "source")], tracked, allowed)
    assert problem == f"data/mvl_sib lies in {tmp_path}/data/mvl_sib, a DVC-tracked output of mvl_sib"
    # a written output that holds another stage's output (an --out of the whole data folder)
    problem = out_problem(str(tmp_path / "data"), [str(tmp_path / "data")], tracked, allowed)
    assert problem is not None and "holds" in problem
    # the --out folder itself may hold them when what the stage writes there does not (paths.captions)
    assert out_problem(str(tmp_path / "data"), [str(tmp_path / "data" / "source")], tracked, allowed) is None
    assert out_problem(str(tmp_path / "data" / "x.parquet.d"), [], tracked, allowed) is None  # a mere prefix
    # a tracked output outside the project (an absolute path in params.yaml) is named as it is
    elsewhere = {str(tmp_path / "shared" / "images"): "eval_images"}
    problem = out_problem(str(tmp_path / "shared" / "images" / "x"), [], elsewhere, [tmp_path / "data"])
    assert (
        problem == f"{tmp_path}/shared/images/x lies in {tmp_path}/shared/images, a DVC-tracked output of eval_images"
    )


def test_overlapping_names_a_tracked_output_a_target_holds_or_lies_in(tmp_path):
    """The older rule for an ad-hoc run's --out over the stage's own tracked outputs (refuse_tracked_out)."""
    output = tmp_path / "data" / "x.parquet"
    assert overlapping([tmp_path / "data"], [output]) == str(output)  # the target folder holds it
    assert overlapping([output / "part"], [output]) == str(output)  # the target lies in it
    assert overlapping([tmp_path / "data" / "y.parquet"], [output]) is None
    # the --out itself is no setting the run changes; every other given setting is, outputs aside
    assert changed_inputs({"out": "o", "model": "m", "summary": "s"}, "out", {"summary": "s.json"}) == ["model"]


def test_out_problem_refuses_outside_the_allowed_folders_after_dot_dots(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    escaped = str(project / ".." / ".." / "x.parquet")
    problem = out_problem(escaped, [escaped], {}, [project])
    assert problem == f"{tmp_path.parent}/x.parquet is outside the project folder"
    problem = out_problem("/etc/x.parquet", [], {}, [project, tmp_path])
    assert problem == f"/etc/x.parquet is outside the project folder and the temp folder ({tmp_path})"
    assert out_problem(escaped, [escaped], {}, [project, tmp_path.parent]) is None


# --- the command line --------------------------------------------------------------------------------


@pytest.fixture()
def project(tmp_path, monkeypatch):
    """A project folder (dvc.yaml, params.yaml) with a built MVL-SIB folder and a link to it."""
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy2(REPO / "dvc.yaml", root / "dvc.yaml")
    shutil.copy2(REPO / "params.yaml", root / "params.yaml")
    (root / "resources").symlink_to(REPO / "resources")
    write_text("built\n", root / "data" / "mvl_sib" / "instances.parquet")
    (root / "link").symlink_to(root / "data" / "mvl_sib")
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize(
    "out, problem",
    [
        ("data/mvl_sib/wordnet.parquet", "lies in data/mvl_sib, a DVC-tracked output of mvl_sib"),
        ("link/wordnet.parquet", "lies in data/mvl_sib, a DVC-tracked output of mvl_sib"),  # through a link
        ("/etc/babelforge-wordnet.parquet", "is outside the project"),
    ],
)
def test_an_out_into_tracked_data_or_outside_is_refused_with_both_ways_out(project, capsys, out, problem):
    before = tree_digests(project / "data")
    assert main(["wordnet", "--out", out]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if ": error: " in line]
    assert len(errors) == 1 and errors[0].startswith(f"babelforge wordnet: error: --out {out}: ")
    assert problem in errors[0]
    assert errors[0].endswith("name another --out, or pass --out-anywhere to write there all the same")
    assert tree_digests(project / "data") == before
    assert not Path("/etc/babelforge-wordnet.parquet").exists()


def test_a_folder_out_through_a_link_to_a_tracked_folder_is_refused(project, capsys):
    assert main(["captions_translate", "--out", "link"]) == 1
    assert "lies in data/mvl_sib, a DVC-tracked output of mvl_sib" in capsys.readouterr().err
    assert sorted(p.name for p in (project / "data" / "mvl_sib").iterdir()) == ["instances.parquet"]


def test_out_anywhere_lets_the_run_go_on(project, capsys):
    """Past the check the stage runs, saying in one line where it writes all the same: here it stops at its
    own first problem, not at the --out."""
    target = Path(tempfile.gettempdir()).parent / "nonexistent-folder" / "wordnet.parquet"
    assert main(["wordnet", "--out", str(target), "--out-anywhere", "--set", "wordnet.classes=none.tsv"]) == 1
    notice, error = capsys.readouterr().err.splitlines()
    assert notice == (
        f"babelforge wordnet: --out-anywhere: {target} is outside the project folder and the temp folder "
        f"({tempfile.gettempdir()}); writing there all the same"
    )
    assert error.startswith("babelforge wordnet: error: ") and "none.tsv" in error


# --- what an --out may replace (issue 46) --------------------------------------------------------------


def test_not_written_by_trusts_only_the_same_commands_record_of_those_files():
    files = {"a.json": (10, 1), "sub/b.json": (20, 2)}
    record = written_record("eval_export", "/o", files, complete=True)
    assert not_written_by("eval_export", "/o", record, files) == []
    assert not_written_by("eval_export", "/o", record, {**files, "notes.txt": (3, 3)}) == ["notes.txt"]
    assert not_written_by("eval_export", "/o", record, {**files, "a.json": (11, 1)}) == ["a.json"]  # changed since
    assert not_written_by("eval_export", "/o", record, {"a.json": (10, 1)}) == []  # a file removed: nothing lost
    assert not_written_by("xm3600", "/o", record, files) == ["a.json", "sub/b.json"]  # another command's
    assert not_written_by("eval_export", "/elsewhere", record, files) == ["a.json", "sub/b.json"]
    assert not_written_by("eval_export", "/o", None, files) == ["a.json", "sub/b.json"]
    assert not_written_by("eval_export", "/o", None, {}) == []  # nothing there
    # a run that stopped half way left files its record could not list: its rerun resumes them
    started = written_record("eval_export", "/o", {}, complete=False)
    assert not_written_by("eval_export", "/o", started, {**files, "shard-1": (5, 5)}) == []


def test_replace_problem_names_an_input_git_tracked_files_or_someone_elses(tmp_path):
    release = tmp_path / "release"
    inputs = {"data/release": release, "resources/languages.tsv": tmp_path / "resources" / "languages.tsv"}

    def problem(target, git=(), foreign=()):
        return replace_problem("xm3600", target, "OUT", inputs, list(git), list(foreign))

    assert problem(release) == "OUT is an input of xm3600 (the run would replace what it reads)"
    assert problem(tmp_path / "resources") == "OUT holds resources/languages.tsv, an input of xm3600"
    assert problem(release / "images") == "OUT lies in data/release, an input of xm3600"
    assert problem(tmp_path / "docs", git=["a.md", "b.md", "c.md", "d.md"]) == (
        "OUT holds files git tracks (a.md, b.md, c.md and 1 more)"
    )
    assert problem(tmp_path / "x.json", git=["."]) == "OUT is a file git tracks"
    # a review folder: its tracked README and a sheet not committed yet, both named
    assert problem(tmp_path / "reviews", git=["README.md"], foreign=["README.md", "deu_Latn.tsv"]) == (
        "OUT holds files git tracks (README.md), among 2 files babelforge xm3600 did not write "
        "(README.md, deu_Latn.tsv)"
    )
    assert (
        problem(tmp_path / "out", foreign=["notes.txt"])
        == "OUT holds 1 file babelforge xm3600 did not write (notes.txt)"
    )
    assert problem(tmp_path / "out.parquet", foreign=["."]) == "OUT is a file babelforge xm3600 did not write"
    assert problem(tmp_path / "out") is None


def git_repo(root: Path) -> Path:
    """`root` as a git work tree with everything in it committed."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@e"
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "tracked"]):
        subprocess.run(["git", *command], cwd=root, env=env, check=True, capture_output=True)
    return root


def test_git_tracked_files_lists_what_git_tracks_at_or_under_a_path(tmp_path):
    write_text("guide\n", tmp_path / "docs" / "guides" / "a.md")
    write_text("guide\n", tmp_path / "docs" / "guides" / "deep" / "b [1].md")  # glob characters taken literally
    write_text("*.log\n", tmp_path / ".gitignore")
    git_repo(tmp_path)
    write_text("not yet added\n", tmp_path / "docs" / "guides" / "draft.md")
    write_text("ignored\n", tmp_path / "docs" / "guides" / "run.log")
    assert git_tracked_files(tmp_path / "docs" / "guides") == ["a.md", "deep/b [1].md"]
    assert git_tracked_files(tmp_path / "docs" / "guides" / "a.md") == ["."]
    assert git_tracked_files(tmp_path / "docs" / "guides" / "draft.md") == []
    assert git_tracked_files(tmp_path / "docs" / "new" / "x.json") == []  # not there yet
    assert git_tracked_files(tmp_path.parent / "elsewhere") == []  # not in a work tree


@pytest.fixture()
def records(tmp_path, monkeypatch):
    """The records of what --out runs wrote, kept in this test's own cache folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "babelforge" / "written"


def test_a_failed_run_leaves_a_record_only_where_it_left_work_to_resume(tmp_path, records):
    empty, shards = tmp_path / "empty", tmp_path / "shards"
    with pytest.raises(RuntimeError), WrittenRecords("captions_translate", [empty, shards], [empty, shards]) as made:
        made.start()
        write_text("shard\n", shards / "shard-00000.json")
        raise RuntimeError("stopped half way")
    assert not record_path(empty, records).exists()
    assert not_written_by("captions_translate", shards, read_written_record(shards), file_stats(shards)) == []
    with WrittenRecords("captions_translate", [shards], [shards]) as made:
        made.start()
        write_text("shard\n", shards / "shard-00001.json")
        made.commit()
    assert read_written_record(shards)["complete"] is True
    assert sorted(read_written_record(shards)["files"]) == ["shard-00000.json", "shard-00001.json"]


@pytest.fixture()
def tracked_project(project, records):
    """The command-line project as a git work tree: its guides and a review folder tracked, a review
    sheet not committed yet, the XM3600 release folder a user keeps elsewhere."""
    for name in ("evaluate.md", "publish.md"):
        write_text(f"# {name}\n", project / "docs" / "guides" / name)
    write_text("# reviews\n", project / "reviews" / "README.md")
    git_repo(project)
    write_text("lang\tdecision\n", project / "reviews" / "deu_Latn.tsv")
    write_text("{}\n", project / "release" / "fetch.json")
    return project


@pytest.mark.parametrize(
    "args, problem",
    [
        (["eval_export", "--out", "docs/guides", "--language", "de"], "docs/guides holds files git tracks"),
        (
            ["xm3600", "--out", "reviews"],
            "reviews holds files git tracks (README.md), among 2 files babelforge xm3600 did not write "
            "(README.md, deu_Latn.tsv)",
        ),
        (
            ["xm3600", "--set", "paths.xm3600_release=release", "--out", "release"],
            "release is an input of xm3600",
        ),
    ],
)
def test_an_out_that_would_replace_someones_work_is_refused(tracked_project, capsys, args, problem):
    before = tree_digests(tracked_project)
    assert main(args) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if ": error: " in line]
    assert len(errors) == 1 and errors[0].startswith(f"babelforge {args[0]}: error: --out ")
    assert problem in errors[0]
    assert errors[0].endswith("name another --out, or pass --out-anywhere to write there all the same")
    assert tree_digests(tracked_project) == before  # the uncommitted review sheet too


@pytest.fixture()
def labels_project(tmp_path, monkeypatch, records):
    """A folder with a labels table and its registry: what eval_export reads."""
    import pandas as pd

    from babelforge.core.io import write_table
    from tests.eval.conftest import REGISTRY_ROWS
    from tests.registry import write_registry

    write_registry(tmp_path / "resources" / "languages.tsv", REGISTRY_ROWS)
    labels = [
        {"class_idx": c, "lang": "eng_Latn", "label": f"thing {c}", "rank": 0, "is_duplicate": False} for c in range(3)
    ]
    write_table(pd.DataFrame(labels), tmp_path / "data" / "babel_imagenet" / "labels.parquet")
    (tmp_path / "params.yaml").write_text(
        yaml.safe_dump({"profile": "sample", "eval": {"common": {"registry": "resources/languages.tsv"}}})
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_rerun_into_its_own_out_works_and_someone_elses_file_stops_it(labels_project, capsys):
    out = labels_project / "cb"
    assert main(["eval_export", "--out", "cb"]) == 0
    assert main(["eval_export", "--out", "cb"]) == 0  # its own files: replaced without a word
    assert "--out-anywhere" not in capsys.readouterr().err
    write_text("my notes\n", out / "notes.txt")
    assert main(["eval_export", "--out", "cb"]) == 1
    assert "cb holds 1 file babelforge eval_export did not write (notes.txt)" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "my notes\n"
    (out / "notes.txt").unlink()
    write_text("edited by hand\n", out / "export.json")  # one of its files, changed since
    assert main(["eval_export", "--out", "cb"]) == 1
    assert "(export.json)" in capsys.readouterr().err
    assert (out / "export.json").read_text() == "edited by hand\n"
    # --out-anywhere replaces it, saying what in one line, and the files are the command's own again
    assert main(["eval_export", "--out", "cb", "--out-anywhere"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if "--out-anywhere" in line]
    assert lines == [
        "babelforge eval_export: --out-anywhere: cb holds 1 file babelforge eval_export did not write "
        "(export.json); replacing it all the same"
    ]
    assert main(["eval_export", "--out", "cb"]) == 0
    assert os.listdir(labels_project / "cb") and not any(name.startswith(".") for name in os.listdir(out))


def test_a_tool_without_settings_does_not_replace_a_file_git_tracks(tmp_path, monkeypatch, capsys):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "notes.txt").write_text("keep me\n")
    subprocess.run([*git, "add", "notes.txt"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "notes"], cwd=tmp_path, check=True)
    (tmp_path / "cand.tsv").write_text("key\tcaption\n1\ta dog\n")
    (tmp_path / "refs.tsv").write_text("key\tcaption\n1\ta dog\n1\ta cat\n")
    monkeypatch.chdir(tmp_path)
    cider = ["eval_cider", "--candidates", "cand.tsv", "--references", "refs.tsv", "--on", "key"]
    assert main([*cider, "--out", "notes.txt"]) == 1
    assert capsys.readouterr().err == (
        "babelforge eval_cider: error: --out notes.txt: notes.txt is a file git tracks; name another --out, "
        "or pass --out-anywhere to write there all the same\n"
    )
    assert (tmp_path / "notes.txt").read_text() == "keep me\n"
    assert main([*cider, "--out", "scores.tsv"]) == 0 and (tmp_path / "scores.tsv").read_text().startswith("key\t")
    assert main([*cider, "--out", "scores.tsv"]) == 0  # a file git does not track: written again
    assert main([*cider, "--out", "notes.txt", "--out-anywhere"]) == 0
    assert "--out-anywhere: notes.txt is a file git tracks; replacing it all the same" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text().startswith("key\tcider\n")
