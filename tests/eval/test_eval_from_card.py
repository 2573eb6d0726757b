"""`eval_zeroshot` without building: on a built card folder or a Hub dataset (read with `datasets`)
and the user's image folder, outside any project, from the checkout or from an installed wheel.

A small project (tests/eval/conftest.py) is evaluated from its built tables; its labels and prompts
become card folders the way `babelforge card` builds them; the same model, images and settings on
the cards must give the same rows. The cards are a sample build, and the results say so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from babelforge.cli import main
from babelforge.core.datasets import spec
from babelforge.core.imagenet import read_imagenet_classes
from babelforge.core.io import read_table, write_table
from babelforge.core.languages import read_registry
from babelforge.core.provenance import provenance
from babelforge.core.stages import Paths
from babelforge.publish.card_stage import build_card
from tests.eval.conftest import write_babel_imagenet_tables, write_sample_project
from tests.imports import build_wheel
from tests.project import command_env

# the project's eval.zeroshot and eval.common settings that differ from the defaults a run outside a
# project starts from
# Outside a project a run takes the `full` profile's defaults (all 80 templates); the workspace is a sample
# project (2): the same settings on both sides.
SAME_SETTINGS = [
    "--set",
    "eval.zeroshot.max_templates=2",
    "--set",
    "eval.zeroshot.control_classes=5",
    "--set",
    "eval.zeroshot.control_repeats=3",
    "--set",
    "eval.common.device=cpu",
]
SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, tiny_clip_dir):
    """(project, cards folder, model): the project evaluated from its tables (reports/eval/workspace.json),
    its labels and prompts built as sample-build card folders under cards/."""
    root = write_sample_project(tmp_path_factory.mktemp("project"))
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert main(["eval_images"]) == 0
        write_babel_imagenet_tables(root)
        record = provenance("labels", {"profile": "sample"})
        base = root / "data" / "babel_imagenet"
        labels = read_table(base / "labels.parquet")
        labels["source"] = ["clip" if lang == "eng_Latn" else "WIKI" for lang in labels["lang"]]  # licences known
        # the card names classes by wnid (a ClassLabel): English labels for every class, the CLIP names
        english = {c.class_idx for c in read_imagenet_classes()} - set(
            labels[labels["lang"] == "eng_Latn"]["class_idx"]
        )
        extra = [
            {"class_idx": c.class_idx, "wnid": c.wnid, "lang": "eng_Latn", "label": c.clip_name, "source": "clip"}
            for c in read_imagenet_classes()
            if c.class_idx in english
        ]
        labels = pd.concat([labels, pd.DataFrame(extra)], ignore_index=True).fillna({"rank": 0, "is_duplicate": False})
        write_table(labels, base / "labels.parquet", sort_by=["lang", "class_idx"], provenance=record)
        write_table(read_table(base / "prompts.parquet"), base / "prompts.parquet", provenance=record)
        paths = Paths(
            labels=str(base / "labels.parquet"),
            prompts=str(base / "prompts.parquet"),
            hub=str(root / "cards"),
            omw=str(root / "no-omw"),
            audit=str(root / "no-audit"),
        )
        registry = read_registry(root / "resources" / "languages.tsv")
        for name in ("babel-imagenet", "babel-imagenet-prompts"):
            build_card(spec(name), paths, registry)
        out = root / "reports" / "eval" / "workspace.json"
        assert main(["eval_zeroshot", "--model", str(tiny_clip_dir), "--out", str(out)]) == 0
    finally:
        os.chdir(cwd)
    return root, root / "cards", tiny_clip_dir


def babelforge(cwd: Path, *args: str, env: dict | None = None, python: str = sys.executable):
    """`babelforge ARGS` in its own process (the `datasets` library is imported there, not here)."""
    return subprocess.run(
        [python, "-m", "babelforge.cli", *args],
        cwd=cwd,
        env={**command_env(), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


def card_run(cwd: Path, dataset: str, prompts: str, images: Path, model: Path, env=None, python=sys.executable):
    result = babelforge(
        cwd,
        "eval_zeroshot",
        "--dataset",
        dataset,
        "--prompts-dataset",
        prompts,
        "--images",
        str(images),
        "--model",
        str(model),
        "--out",
        "z.json",
        *SAME_SETTINGS,
        env={"HF_DATASETS_CACHE": str(cwd / "hf-datasets"), **(env or {})},
        python=python,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads((cwd / "z.json").read_text(encoding="utf-8")), result.stderr


def rows_without_version(document: dict) -> list[dict]:
    return [{k: v for k, v in row.items() if k != "dataset_version"} for row in document["rows"]]


@pytest.mark.slow
def test_a_card_folder_gives_the_rows_of_the_built_tables(workspace, tmp_path):
    root, cards, model = workspace
    outside = tmp_path / "elsewhere"  # no params.yaml here or above: the settings' defaults
    outside.mkdir()
    images = root / "data" / "eval" / "images" / "imagenet"
    document, log = card_run(
        outside, str(cards / "babel-imagenet"), str(cards / "babel-imagenet-prompts"), images, model
    )
    workspace_run = json.loads((root / "reports" / "eval" / "workspace.json").read_text(encoding="utf-8"))
    assert rows_without_version(document) == rows_without_version(workspace_run)
    assert [r["lang"] for r in document["rows"]] == ["deu_Latn", "eng_Latn", "fry_Latn", "jpn_Jpan"]
    assert {r["lang"]: r["prompt_set"] for r in document["rows"]}["deu_Latn"] == "translated"
    sources = document["provenance"]["sources"]
    assert sources["labels"].startswith(("sha256:", "md5:")) and sources["prompts"].startswith(("sha256:", "md5:"))
    assert {row["dataset_version"] for row in document["rows"]} == {sources["labels"]}
    # the cards are a sample build: the run says so, though outside a project it records profile full
    assert document["provenance"]["build"]["profile"] == "sample"
    assert document["provenance"]["params"]["profile"] == "full"
    assert "no params.yaml here or above" in log and "(a SAMPLE build)" in log


@pytest.mark.slow
def test_a_hub_dataset_is_read_at_its_revision_from_the_cache_offline(workspace, tmp_path):
    root, cards, model = workspace
    hub_cache = tmp_path / "hub"
    for name in ("babel-imagenet", "babel-imagenet-prompts"):  # the cache layout huggingface_hub writes
        repo = hub_cache / f"datasets--org--{name}"
        shutil.copytree(cards / name, repo / "snapshots" / SHA)
        (repo / "refs").mkdir()
        (repo / "refs" / "main").write_text(SHA)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    images = root / "data" / "eval" / "images" / "imagenet"
    env = {"HF_HUB_CACHE": str(hub_cache)}
    document, _ = card_run(
        outside, f"hf:org/babel-imagenet@{SHA}", f"hf:org/babel-imagenet-prompts@{SHA}", images, model, env
    )
    workspace_run = json.loads((root / "reports" / "eval" / "workspace.json").read_text(encoding="utf-8"))
    assert rows_without_version(document) == rows_without_version(workspace_run)
    assert document["provenance"]["sources"]["labels"] == f"hf:org/babel-imagenet@{SHA}"
    assert document["provenance"]["sources"]["prompts"] == f"hf:org/babel-imagenet-prompts@{SHA}"
    assert document["provenance"]["build"]["profile"] == "sample"

    # not in the cache, offline: one line at once, nothing written
    missing = babelforge(
        outside, "eval_zeroshot", "--dataset", f"hf:org/other@{SHA}", "--model", str(model), "--out", "y.json", env=env
    )
    assert missing.returncode == 1 and not (outside / "y.json").exists()
    assert missing.stderr.strip().splitlines()[1:] == [  # after the line on the settings' defaults
        f"babelforge eval_zeroshot: error: dataset hf:org/other@{SHA}: not in the Hugging Face cache and the Hub "
        "is unreachable (or HF_HUB_OFFLINE is set); fetch it once online (huggingface-cli download --repo-type "
        "dataset ORG/NAME --revision REVISION) or pass a built card folder"
    ]
    unpinned = babelforge(outside, "eval_zeroshot", "--dataset", "hf:org/babel-imagenet", "--model", str(model))
    assert unpinned.returncode == 1 and "no revision pinned" in unpinned.stderr


@pytest.mark.slow
def test_an_installed_wheel_finds_its_resources_outside_a_checkout(workspace, tmp_path):
    """The wheel installed into a folder of its own, first on the path (this environment's other
    packages after it): the package imported is the wheel's, and its resources are its own."""
    root, cards, model = workspace
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(build_wheel(tmp_path))],
        check=True,
        capture_output=True,
    )
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {"PYTHONPATH": str(site)}
    help_text = babelforge(outside, "eval_zeroshot", "--help", env=env)
    assert help_text.returncode == 0 and "--dataset DIR" in help_text.stdout
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import babelforge, babelforge.core.resources as r; print(babelforge.__file__); print(r.RESOURCES)",
        ],
        cwd=outside,
        env={**command_env(), "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        check=True,
    )
    package, resources = probe.stdout.split()
    assert Path(package).is_relative_to(site) and Path(resources) == site / "babelforge" / "resources"
    assert not (site / "babelforge" / "resources" / "reviews").exists()
    images = root / "data" / "eval" / "images" / "imagenet"
    document, _ = card_run(
        outside, str(cards / "babel-imagenet"), str(cards / "babel-imagenet-prompts"), images, model, env
    )
    workspace_run = json.loads((root / "reports" / "eval" / "workspace.json").read_text(encoding="utf-8"))
    assert rows_without_version(document) == rows_without_version(workspace_run)


def test_a_hub_dataset_is_no_path_to_rebase(tmp_path):
    """From a project's subfolder a DIR value is rewritten as seen from the root; hf:ORG/NAME@REV is not a path."""
    from babelforge.cli import rebased

    root, here = tmp_path, tmp_path / "sub"
    assert rebased(f"hf:org/babel-imagenet@{SHA}", True, root, here) == f"hf:org/babel-imagenet@{SHA}"
    assert rebased("build/hub/babel-imagenet", True, root, here) == "sub/build/hub/babel-imagenet"
