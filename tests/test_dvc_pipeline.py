"""`dvc repro` on a copy of the project: up-to-date stages are skipped, a params change reruns only its stage."""

import subprocess

import pytest
import yaml

from tests.project import REPO, command_env, copy_project, guide_block, keep_built_stages, run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(tmp_path_factory, shared_data):
    """A git+DVC copy of the working tree, with params pointing at the mirror."""
    copy = tmp_path_factory.mktemp("project")
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["fetch"]["mirror"] = str(shared_data)
    copy_project(copy)
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    env = command_env(copy)
    return copy, env


def test_repro_twice_then_params_change_reruns_only_labels(project):
    copy, env = project
    first = run(["dvc", "repro", "labels"], copy, env)
    assert "Running stage 'labels'" in first and "Running stage 'senses'" in first
    assert (copy / "data" / "babel_imagenet" / "labels.parquet").exists()
    second = run(["dvc", "repro", "labels"], copy, env)
    assert "Running stage" not in second
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["labels"]["min_classes"] = 50
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    third = run(["dvc", "repro", "labels"], copy, env)
    assert "Running stage 'labels'" in third
    assert "Running stage 'senses'" not in third and "Running stage 'wordnet'" not in third


def test_a_review_change_reruns_labels_and_not_what_it_reads(project):
    copy, env = project
    run(["dvc", "repro", "labels"], copy, env)
    review = copy / "resources" / "reviews" / "deu_Latn.tsv"
    review.write_text(
        "wnid\tdecision\tlabel\treviewer\tdate\tnote\nn02883205\treplace\tQuerbinder\tanna\t2025-01-14\t\n",
        encoding="utf-8",
    )
    try:
        changed = run(["dvc", "repro", "labels"], copy, env)
        assert "Running stage 'labels'" in changed
        assert "Running stage 'senses'" not in changed and "Running stage 'wordnet'" not in changed
        assert bow_tie_label(copy) == "Querbinder"
        assert "Running stage" not in run(["dvc", "repro", "labels"], copy, env)
    finally:
        review.unlink()
    # back to no review: DVC restores the earlier labels from its run cache (or reruns the stage)
    restored = run(["dvc", "repro", "labels"], copy, env)
    assert "Running stage 'senses'" not in restored and "Stage 'labels' didn't change" not in restored
    assert bow_tie_label(copy) == "Fliege"


def test_an_experiment_is_undone_as_the_compare_runs_guide_says(project):
    """`dvc exp run -S` in the workspace, the guide's check (one line of params.yaml changed), then its
    undo block verbatim: the committed settings, lock and labels are back, nothing reruns."""
    copy, env = project
    run(["dvc", "repro", "labels"], copy, env)
    assert "labels" in keep_built_stages(copy, env)
    # params.yaml as the project keeps it, in DVC's form (the fixtures here rewrite it with PyYAML)
    from dvc.utils.hydra import apply_overrides

    apply_overrides(copy / "params.yaml", [])
    run(["dvc", "repro", "labels"], copy, env)
    run(["git", "add", "-A"], copy, env)
    run(["git", "commit", "-qm", "the build"], copy, env)
    labels = copy / "data" / "babel_imagenet" / "labels.parquet"
    committed = labels.read_bytes(), (copy / "params.yaml").read_bytes()

    run(["dvc", "exp", "run", "-S", "labels.min_classes=60", "labels"], copy, env)
    assert "1 file changed, 1 insertion(+), 1 deletion(-)" in run(["git", "diff", "--stat", "params.yaml"], copy, env)
    assert labels.read_bytes() != committed[0]

    undo = run(["bash", "-ec", guide_block("compare-runs.md", "## Undo it")], copy, env)
    assert "Running stage" not in undo
    assert (labels.read_bytes(), (copy / "params.yaml").read_bytes()) == committed
    assert run(["git", "status", "--porcelain"], copy, env) == ""
    assert "Data and pipelines are up to date." in run(["dvc", "status", "labels"], copy, env)


def bow_tie_label(copy) -> str:
    import pandas as pd

    labels = pd.read_parquet(copy / "data" / "babel_imagenet" / "labels.parquet")
    return labels.set_index(["lang", "wnid"]).loc[("deu_Latn", "n02883205"), "label"]


def test_full_profile_without_key_fails_at_once_naming_the_variable(project):
    copy, env = project
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["profile"] = "full"
    path = copy / "params-full.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    env = {k: v for k, v in env.items() if k != "BABELNET_KEY"}
    run(["babelforge", "wordnet", "--params", str(path), "--out", "data/wn-full.parquet"], copy, env)
    result = subprocess.run(
        [
            "babelforge",
            "senses",
            "--params",
            str(path),
            "--wordnet",
            "data/wn-full.parquet",
            "--out",
            "data/senses-full",
        ],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "BABELNET_KEY" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (copy / "data" / "senses-full").exists()
