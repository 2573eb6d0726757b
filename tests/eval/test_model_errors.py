"""Every model-spec error is one line with its real cause (issue 50 item 5), on tiny real models of each
family built with the family's own library: a family prefix on another family's folder (said while the
flags are read, before anything asks a library or the Hub), a Hub id without its revision (one line for
every family), a revision on a local folder (refused for every family), towers whose vectors differ in
size (from config.json before torch is imported where it states them, else measured at load, before any stage
reads its inputs), SigLIP's real output size, and `eval_paper --as` taking the spec as it
was given to `--model`."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from babelforge.cli import main
from babelforge.core.errors import BabelforgeError
from babelforge.eval.families import FAMILIES, check_folder_family, marker_file, parse_spec
from babelforge.eval.families.hf import stated_dims
from babelforge.eval.flags import model_spec
from babelforge.eval.models import check_stated_dims, load_model
from babelforge.eval.paper.compare import match_models, parse_aliases, setup_differences
from babelforge.eval.paper.tables import read_models
from tests.eval.test_models import save_siglip
from tests.eval.tiny_text_only import DIM, build_tiny_mclip_legacy
from tests.shared import built_once

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def legacy_dir(tmp_path_factory):
    return built_once(tmp_path_factory, "tiny-mclip-legacy", lambda folder: build_tiny_mclip_legacy(folder / "legacy"))


@pytest.fixture
def family_dirs(tiny_clip_dir, tiny_mclip_dir, tiny_st_dir, open_clip_bpe_dir, legacy_dir):
    """One folder of each family, as its own library saved it."""
    return {
        "hf": tiny_clip_dir,
        "mclip": tiny_mclip_dir,
        "st": tiny_st_dir,
        "open_clip": open_clip_bpe_dir,
        "mclip_legacy": legacy_dir,
    }


@pytest.fixture
def no_network(monkeypatch):
    """Any connection attempt fails loudly: an error that asked the Hub would say so instead."""

    def refuse(*args, **kwargs):
        raise AssertionError("a connection was attempted")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


def cli_error(tmp_path, capsys, *args) -> str:
    """The stderr of `babelforge eval_zeroshot ARGS` run where there is no project: a flag's error
    comes before anything is read."""
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(["eval_zeroshot", *args]) == 1
    finally:
        os.chdir(cwd)
    return capsys.readouterr().err


def spec_of(family: str, folder, image) -> str:
    return f"{family}:{folder}" + (f"+{image}" if FAMILIES[family].text_only else "")


@pytest.mark.parametrize(
    "given, actual",
    [
        ("mclip", "hf"),  # the case: ~55 s of Hub retries, 46 lines, a modelBase error
        ("hf", "open_clip"),  # a transformers type guessed from the folder's name
        ("hf", "mclip"),
        ("st", "hf"),  # sentence-transformers loaded a CLIP as a mean-pooled text model without a word
        ("open_clip", "st"),
        ("hf", "mclip_legacy"),
        ("mclip_legacy", "mclip"),
    ],
)
def test_a_prefix_on_another_familys_folder_is_one_line_naming_what_it_is(
    given, actual, family_dirs, tiny_clip_dir, no_network, tmp_path, capsys
):
    folder = family_dirs[actual]
    spec = spec_of(given, folder, tiny_clip_dir)
    error = cli_error(tmp_path, capsys, "--model", spec, "--language", "de")
    assert error.count("\n") == 1, error
    assert error.startswith(
        f"babelforge eval_zeroshot: error: model spec {spec!r}: {folder} is not a checkpoint of the {given} family"
    ), error
    assert error.rstrip().endswith(f"write {actual}:{folder}"), error


def test_each_family_accepts_its_own_folder_and_declares_the_file_it_is_known_by(family_dirs, tmp_path):
    """The marker file (the module's MARKER_FILE, what `eval_paper --plan` asks the cache for) is one the
    family's own folders have and cannot do without."""
    for name, folder in family_dirs.items():
        check_folder_family(str(folder), name, str(folder))  # no error
        assert (folder / marker_file(name)).is_file(), name
        copy = shutil.copytree(folder, tmp_path / name)
        (copy / marker_file(name)).unlink()
        with pytest.raises(BabelforgeError, match=f"is not a checkpoint of the {name} family"):
            check_folder_family(str(copy), name, str(copy))


def test_a_local_folder_never_asks_the_hub_for_what_it_names(
    tiny_mclip_dir, tiny_clip_dir, no_network, monkeypatch, tmp_path
):
    """A local M-CLIP folder whose text model (config.json modelBase) is a Hub id not in the cache: one
    line at once, the network not even tried (HF_HUB_OFFLINE unset: the Hub would be asked otherwise)."""
    import json

    from huggingface_hub import constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    folder = shutil.copytree(tiny_mclip_dir, tmp_path / "mclip")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "modelBase": "babelforge/no-such-xlmr"}))
    with pytest.raises(BabelforgeError) as error:
        load_model(f"mclip:{folder}+{tiny_clip_dir}", device="cpu")
    assert str(error.value) == (
        f"model mclip:{folder}+{tiny_clip_dir}: its text model babelforge/no-such-xlmr (config.json modelBase): "
        "its config.json is not in the Hugging Face cache, and a local folder loads without the network; "
        "pre-fill the cache (huggingface-cli download babelforge/no-such-xlmr) or name a local folder there"
    )


HUB_PARTS = [
    ("hf", "org/clip"),
    ("mclip", "org/mclip"),
    ("st", "org/st"),
    ("mclip_legacy", "org/legacy"),
    ("open_clip", "hf-hub:org/oc"),
]


@pytest.mark.parametrize("family, repo", HUB_PARTS, ids=[family for family, _ in HUB_PARTS])
def test_a_hub_id_without_its_revision_is_the_same_line_for_every_family(
    family, repo, tiny_clip_dir, no_network, tmp_path, capsys
):
    error = cli_error(tmp_path, capsys, "--model", spec_of(family, repo, tiny_clip_dir))
    assert error == (
        f"babelforge eval_zeroshot: error: model {family}:{repo}: no folder {repo} here, and as a Hub model no "
        f"revision pinned; give {family}:{repo}@<commit sha> (`babelforge pins --update` looks up the commit of a "
        "model listed in params.yaml eval.common.models)\n"
    )


def test_an_image_tower_without_its_revision_is_said_the_same_way(tiny_st_dir, no_network, tmp_path, capsys):
    error = cli_error(tmp_path, capsys, "--model", f"st:{tiny_st_dir}+org/clip")
    assert "error: model hf:org/clip: no folder org/clip here, and as a Hub model no revision pinned" in error
    error = cli_error(tmp_path, capsys, "--model", f"st:{tiny_st_dir}+open_clip:ViT-B-32")
    assert error.endswith(
        "error: model open_clip:ViT-B-32: no revision pinned; give open_clip:ViT-B-32@<pretrained tag> "
        "(open_clip.list_pretrained())\n"
    )


@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_revision_on_a_local_folder_is_refused_for_every_family(family, family_dirs, tiny_clip_dir):
    folder = family_dirs[family]
    image = f"+{tiny_clip_dir}" if FAMILIES[family].text_only else ""
    refused = f"{folder} is a local folder, loaded as its files are now (results record their sha256)"
    with pytest.raises(BabelforgeError, match="drop @abc123") as error:
        model_spec(f"{family}:{folder}@abc123{image}")
    assert refused in str(error.value)
    with pytest.raises(BabelforgeError, match=r"drop `revision: abc123` from its params.yaml"):
        parse_spec(f"{family}:{folder}{image}", revision="abc123")
    if image:  # the image tower's folder is refused a revision too
        with pytest.raises(BabelforgeError, match="drop @abc123"):
            model_spec(f"{family}:{folder}+{tiny_clip_dir}@abc123")


def siglip_folder(folder, tokenizer_dir, text_projection: int, vision_hidden: int):
    """A tiny SigLIP whose text tower projects its 32-d hidden states to `text_projection` and whose
    image tower gives `vision_hidden`-d vectors, with the tiny CLIP's tokenizer."""
    import torch
    from transformers import AutoTokenizer

    torch.manual_seed(0)
    save_siglip(folder, text_projection=text_projection, vision_hidden=vision_hidden)
    AutoTokenizer.from_pretrained(tokenizer_dir).save_pretrained(folder)
    return folder


def test_siglip_gives_the_size_its_towers_output_not_its_hidden_size(tiny_clip_dir, tiny_mclip_dir, tmp_path):
    from PIL import Image

    folder = siglip_folder(tmp_path / "siglip16", tiny_clip_dir, text_projection=DIM, vision_hidden=DIM)
    model = load_model(str(folder), device="cpu")
    assert model.embedding_dim == DIM  # its text_config.hidden_size is 32
    assert model.encode_texts(["a dog"]).shape == (1, DIM)
    assert model.encode_images([Image.new("RGB", (40, 40), "red")]).shape == (1, DIM)
    paired = load_model(f"mclip:{tiny_mclip_dir}+{folder}", device="cpu")  # was refused as 32-d
    assert paired.embedding_dim == DIM and paired.encode_texts(["ein Hund"]).shape == (1, DIM)


@pytest.fixture
def odd_towers(tiny_clip_dir, tmp_path):
    """A tiny SigLIP whose text vectors are 32-d and its image vectors DIM-d."""
    return siglip_folder(tmp_path / "odd", tiny_clip_dir, text_projection=32, vision_hidden=DIM)


def test_towers_whose_vectors_differ_in_size_are_one_line_at_load(odd_towers):
    with pytest.raises(BabelforgeError) as error:
        load_model(str(odd_towers), device="cpu")
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"model {odd_towers}: its text tower gives 32-d vectors and its image tower {DIM}-d")


def test_towers_a_config_states_apart_are_refused_before_torch_is_imported(odd_towers):
    # the same line as the measured check, but from config.json alone: torch's import is the seconds
    script = (
        "import sys\n"
        "from babelforge.core.errors import BabelforgeError\n"
        "from babelforge.eval.models import load_model\n"
        "try:\n"
        f"    load_model({str(odd_towers)!r}, device='cpu')\n"
        "except BabelforgeError as error:\n"
        "    print(error)\n"
        "print('torch imported' if 'torch' in sys.modules else 'torch not imported')\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    line, imported = out.splitlines()
    assert line.startswith(f"model {odd_towers}: its text tower gives 32-d vectors and its image tower {DIM}-d")
    assert imported == "torch not imported"


def test_the_sizes_a_transformers_config_states(tmp_path):
    def folder(config) -> Path:
        path = tmp_path / str(len(list(tmp_path.iterdir())))
        path.mkdir()
        (path / "config.json").write_text(json.dumps(config))
        return path

    siglip = {"model_type": "siglip", "text_config": {"hidden_size": 32}, "vision_config": {"hidden_size": 48}}
    assert stated_dims(folder(siglip)) == (32, 48)  # text: its hidden size when no projection is set
    siglip["text_config"]["projection_size"] = 48
    assert stated_dims(folder(siglip)) == (48, 48)  # text: its head's projection, not its hidden size
    assert stated_dims(folder({"model_type": "clip", "projection_dim": 24})) == (24, 24)
    assert stated_dims(folder({"model_type": "siglip", "text_config": {"hidden_size": 32}})) is None
    assert stated_dims(folder({"model_type": "clip"})) is None  # not stated: measured at load
    assert stated_dims(folder([1, 2])) is None
    assert stated_dims(tmp_path / "absent") is None


def test_a_paired_spec_is_left_to_the_measured_check(odd_towers, tiny_mclip_dir):
    # the config of the image part says nothing of the text part's size: only the load can tell
    check_stated_dims(parse_spec(f"mclip:{tiny_mclip_dir}+{odd_towers}"))  # no error before the load


STAGES_WITH_MODELS = ["eval_zeroshot", "eval_retrieval", "eval_mvl_sib", "eval_clipscore"]


def stage_error(stage: str, folder, capsys, *models) -> str:
    """The stderr of `babelforge STAGE --model ...` under the project's params.yaml, run in an empty
    `folder`: none of the inputs its settings name is there, so a model checked only after the inputs
    are read would be refused with the first missing input instead."""
    folder.mkdir()
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        flags = [flag for model in models for flag in ("--model", str(model))]
        assert main([stage, "--params", str(REPO / "params.yaml"), *flags]) == 1
    finally:
        os.chdir(cwd)
    return capsys.readouterr().err


@pytest.mark.parametrize("stage", STAGES_WITH_MODELS)
def test_towers_whose_vectors_differ_are_refused_before_a_stage_reads_its_inputs(stage, odd_towers, tmp_path, capsys):
    err = stage_error(stage, tmp_path / "empty", capsys, odd_towers)
    assert err.count("\n") == 1, err
    assert err.startswith(f"babelforge {stage}: error: model {odd_towers}: its text tower gives 32-d vectors"), err


def test_every_model_of_a_run_is_checked_before_the_first_is_scored(odd_towers, tiny_clip_dir, tmp_path, capsys):
    """The second model's towers are refused before the inputs are read and the first model scored."""
    err = stage_error("eval_retrieval", tmp_path / "empty", capsys, tiny_clip_dir, odd_towers)
    assert err.startswith(f"babelforge eval_retrieval: error: model {odd_towers}: its text tower gives 32-d"), err


def test_the_measured_size_is_each_familys_real_output(family_dirs, tiny_clip_dir):
    from PIL import Image

    for name, folder in family_dirs.items():
        model = load_model(spec_of(name, folder, tiny_clip_dir), device="cpu")
        texts = model.encode_texts(["a photo of a dog", "ein Foto"])
        images = model.encode_images([Image.new("RGB", (48, 48), "blue")])
        assert texts.shape[1] == images.shape[1] == model.embedding_dim == DIM, name
        assert np.isfinite(texts @ images.T).all(), name


def test_as_takes_the_spec_given_to_model(tiny_clip_dir):
    """`--as SHORT=SPEC` pairs the run's model whichever way the spec was written: as given to `--model`
    (family prefix, revisions, a folder spelt relative or with a trailing slash), not only as the run
    names it."""
    models = read_models("babel-imagenet")
    folder = str(tiny_clip_dir)
    open_clip = "open_clip:xlm-roberta-base-ViT-B-32"
    ours = {folder, open_clip}
    written = [
        f"hf:{folder}",
        f"{folder}/",
        os.path.relpath(folder),
        folder,
    ]
    for spec in written:
        assert match_models(models, ours, parse_aliases([f"NS-base={spec}"]))[0] == (folder, "NS-base", "--as"), spec
    rows = [{"model": model, "task": "zeroshot"} for model in ours]
    said = setup_differences(rows, [], "zeroshot", "full", {}, parse_aliases([f"NS-base=hf:{folder}/"]))
    assert f"stand-in: our {folder} is put beside the paper's NS-base (--as); it is not the paper's model." in said
    pairs = match_models(models, ours, parse_aliases([f"OC B-32={open_clip}@laion5b_s13b_b90k"]))
    assert (open_clip, "OC B-32", "--as") in pairs
    with pytest.raises(BabelforgeError, match=r"the run has no model 'open_clip:ViT-B-32@openai'; its models: "):
        match_models(models, ours, parse_aliases(["OC B-32=open_clip:ViT-B-32@openai"]))
