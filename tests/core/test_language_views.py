"""Language views: a stage that maps only its data's languages reads (and depends on) the registry's rows
for them, so a language added to the registry reruns only the stages whose data has it."""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml

from babelforge.commands import COMMANDS
from babelforge.core.datasets import LANGUAGE_VIEWS, language_view, names
from babelforge.core.declarations import imported
from babelforge.core.errors import BabelforgeError
from babelforge.core.languages import (
    ENGLISH,
    REGISTRY_PATH,
    VIEWS_ENVIRONMENT,
    language_views,
    read_registry,
    registry,
    view_text,
)
from babelforge.core.stages import load
from babelforge.pipeline.language_view_stage import view_items, view_keys
from tests.project import REPO

REGISTRY_TEXT = REGISTRY_PATH.read_text(encoding="utf-8")
# The stages that find out which languages have data: they read the whole registry.
WHOLE_REGISTRY = {"senses", "labels", "xm3600", "language_view"}


def write_view(folder, name, keys):
    path = folder / f"{name}.tsv"
    path.write_text(view_text(REGISTRY_TEXT, keys), encoding="utf-8")
    return path


def test_a_view_is_the_registry_rows_of_its_keys_byte_for_byte_in_registry_order():
    lines = REGISTRY_TEXT.splitlines(keepends=True)
    text = view_text(REGISTRY_TEXT, ["zul_Latn", "deu_Latn", "aau_Latn"])
    by_key = {line.split("\t")[0]: line for line in lines[1:]}
    assert text == lines[0] + by_key["aau_Latn"] + by_key["deu_Latn"] + by_key["zul_Latn"]
    assert view_text(REGISTRY_TEXT, []) == lines[0]  # the header alone: a readable, empty registry


def test_a_view_of_a_key_the_registry_lacks_names_it():
    with pytest.raises(BabelforgeError, match=r"language view: xxx_Latn, yyy_Latn not in the registry"):
        view_text(REGISTRY_TEXT, ["deu_Latn", "yyy_Latn", "xxx_Latn"])


def test_inside_language_views_the_registry_is_their_rows_merged_and_after_them_the_whole(tmp_path):
    whole = len(registry())
    first = write_view(tmp_path, "a", ["deu_Latn", "fra_Latn"])
    second = write_view(tmp_path, "b", ["fra_Latn", "eng_Latn"])
    with language_views([first, second]):
        assert os.environ[VIEWS_ENVIRONMENT] == os.pathsep.join([str(first), str(second)])
        assert registry().keys() == ["deu_Latn", "eng_Latn", "fra_Latn"]
        assert registry().get("fra_Latn") == read_registry().get("fra_Latn")
        with pytest.raises(BabelforgeError, match="unknown"):
            registry().resolve("ita_Latn")  # a language the stage's data does not have
    assert VIEWS_ENVIRONMENT not in os.environ and len(registry()) == whole
    with language_views([]):  # no views: the whole registry, nothing set
        assert VIEWS_ENVIRONMENT not in os.environ and len(registry()) == whole


def test_a_missing_view_is_one_line_saying_what_writes_it(tmp_path):
    with pytest.raises(BabelforgeError, match=r"language view .*gone\.tsv not found: `dvc repro` writes it"):
        with language_views([tmp_path / "gone.tsv"]):
            pass
    assert VIEWS_ENVIRONMENT not in os.environ


def test_every_dataset_has_the_view_of_its_name_and_every_view_one_stage():
    assert set(names()) <= set(LANGUAGE_VIEWS)
    assert set(view_items()) == set(LANGUAGE_VIEWS)
    for name in LANGUAGE_VIEWS:
        assert language_view(name).name == name


def test_only_the_stages_finding_languages_depend_on_the_whole_registry():
    """Every other stage that maps languages depends on its views: adding a language reruns it
    only when the language enters its data."""
    dvc = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))
    whole = set()
    for name, body in dvc["stages"].items():
        deps = (body.get("do") or body)["deps"]
        if "resources/languages.tsv" in deps:
            whole.add(name)
    assert whole == WHOLE_REGISTRY
    viewing = {name for name in COMMANDS if load(name).languages}
    assert viewing >= {"prompts", "audit", "card", "captions_translate", "captions_tag", "eval_zeroshot"}
    for name in viewing:
        deps = (dvc["stages"][name].get("do") or dvc["stages"][name])["deps"]
        assert [dep for dep in deps if "language_views" in dep] == load(name).view_deps()


def test_a_stage_fills_its_foreach_key_into_its_views():
    card = load("card")

    class Paths:
        language_views = "build/languages"

    class Config:
        dataset = "mvl-sib"
        paths = Paths

    assert [path.as_posix() for path in card.view_files(Config)] == ["build/languages/mvl-sib.tsv"]
    assert card.view_deps() == ["${paths.language_views}/${key}.tsv"]


def test_the_caption_views_read_the_real_caption_sets(shared_data, tmp_path):
    """XTD10 and xFlickrCO: eleven and eight languages, Indonesian only in xFlickrCO, Japanese under
    two codes (`jp`, `ja`); the MT-caption view adds the targets params.yaml names."""
    raw = tmp_path / "xtd"
    raw.mkdir()
    for name in ("xtd.json", "xflickrco.json"):
        (raw / name).symlink_to(shared_data / "xtd" / name)
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    params["captions"]["input"].update(path=str(raw / "xtd.json"), targets=["deu_Latn", "als_Latn"])
    reads, keys = view_keys("mt-captions", params)
    assert reads == [str(raw / "xtd.json")]
    assert keys == {
        *("eng_Latn", "deu_Latn", "spa_Latn", "fra_Latn", "ita_Latn", "jpn_Jpan"),
        *("kor_Hang", "pol_Latn", "rus_Cyrl", "tur_Latn", "zho_Hans", "als_Latn"),
    }
    captions = language_view("caption-sets")
    files = [str(raw / "xtd.json"), str(raw / "xflickrco.json")]
    found = set(imported(captions.keys)(files, params))
    assert "ind_Latn" in found and "jpn_Jpan" in found and ENGLISH in found and len(found) == 12


def test_the_views_of_a_built_checkout_read_back_as_registries(tmp_path):
    """`babelforge language_view` writes a registry that reads: English and the view's languages."""
    import pandas as pd

    pd.DataFrame({"lang": ["deu_Latn", "fin_Latn"]}).to_parquet(tmp_path / "languages.parquet")
    params = {"paths": {"languages": str(tmp_path / "languages.parquet")}}
    reads, keys = view_keys("babel-imagenet", params)
    assert reads == [str(tmp_path / "languages.parquet")] and keys == {"deu_Latn", "fin_Latn", ENGLISH}
    view = write_view(tmp_path, "babel-imagenet", keys)
    assert read_registry(view).keys() == ["deu_Latn", "eng_Latn", "fin_Latn"]
    result = subprocess.run(
        ["git", "check-ignore", "-q", "build/languages/babel-imagenet.tsv"], cwd=REPO, capture_output=True
    )
    assert result.returncode == 0, "views are build outputs: git ignores them"


def test_the_stage_writes_the_view_of_the_params_it_finds(tmp_path, monkeypatch, shared_data):
    """`babelforge language_view mt-captions` in a project whose params name a caption input and
    two targets: the view holds the input's languages and the targets, and reads back."""
    import dataclasses

    from babelforge.core.stages import Paths
    from babelforge.pipeline.language_view_stage import Config, run

    project = tmp_path / "project"
    project.mkdir()
    inputs = {"format": "xtd", "path": str(shared_data / "xtd" / "xflickrco.json"), "source": "eng_Latn"}
    params = {"profile": "sample", "captions": {"input": {**inputs, "targets": ["deu_Latn", "als_Latn"]}}}
    (project / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    (project / "dvc.yaml").write_text("stages: {}\n", encoding="utf-8")
    monkeypatch.chdir(project)
    paths = dataclasses.replace(Paths(), language_views=str(tmp_path / "views"))
    assert run(Config(view="mt-captions", paths=paths)) == 0
    written = read_registry(tmp_path / "views" / "mt-captions.tsv").keys()
    xflickrco = ["deu_Latn", "eng_Latn", "ind_Latn", "jpn_Jpan", "rus_Cyrl", "spa_Latn", "tur_Latn", "zho_Hans"]
    assert written == sorted({*xflickrco, "als_Latn"})
    with pytest.raises(BabelforgeError, match="name the view"):
        run(Config(paths=paths))
