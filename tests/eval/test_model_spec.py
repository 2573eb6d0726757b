"""The model spec, [FAMILY:]ID[@REVISION][+IMAGE_SPEC]: parsing, the family of a folder by its files,
the names results and caches use, and the one-line errors (no model is loaded here)."""

import json

import pytest

from babelforge.core.errors import BabelforgeError
from babelforge.eval.families import FAMILIES, PAIRED_IMAGE_TOWERS, ModelRef, family, parse_spec, split_family
from babelforge.eval.flags import model_spec
from babelforge.eval.models import first_line, folder_like, missing_folder, text_length_limit, unloadable


def folder(root, name: str, files: dict[str, str]):
    path = root / name
    path.mkdir(parents=True)
    for file, text in files.items():
        (path / file).write_text(text)
    return path


@pytest.fixture
def folders(tmp_path):
    """One folder of each family, as its library saves one."""
    return {
        "open_clip": folder(tmp_path, "oc", {"open_clip_config.json": "{}"}),
        "st": folder(tmp_path, "st", {"modules.json": "[]", "config.json": json.dumps({"model_type": "xlm-roberta"})}),
        "mclip": folder(tmp_path, "mc", {"config.json": json.dumps({"model_type": "M-CLIP"})}),
        "mclip_legacy": folder(
            tmp_path, "mcl", {"config.json": json.dumps({"model_type": "bert"}), "M-BERT Linear Weights.pkl": ""}
        ),
        "hf": folder(tmp_path, "clip", {"config.json": json.dumps({"model_type": "clip"})}),
    }


def test_a_hub_id_without_family_is_transformers_and_keeps_its_bare_name():
    ref = parse_spec("openai/clip-vit-base-patch32@3d74acf")
    assert ref == ModelRef("hf", "openai/clip-vit-base-patch32", "3d74acf")
    assert ref.name == "openai/clip-vit-base-patch32"  # as before families: caches and results keep their keys
    assert ref.text() == "hf:openai/clip-vit-base-patch32@3d74acf"
    assert parse_spec(ref.text()) == ref


def test_a_params_revision_pins_an_id_written_without_one():
    assert parse_spec("openai/clip", revision="abc").revision == "abc"
    assert parse_spec("openai/clip@abc", revision="abc").revision == "abc"
    with pytest.raises(BabelforgeError, match="pinned at abc and at def; keep one"):
        parse_spec("openai/clip@abc", revision="def")


def test_open_clip_names_hf_hub_ids_and_tags():
    assert parse_spec("open_clip:xlm-roberta-base-ViT-B-32@laion5b_s13b_b90k") == ModelRef(
        "open_clip", "xlm-roberta-base-ViT-B-32", "laion5b_s13b_b90k"
    )
    # open_clip's own prefix needs no family; the revision is the commit after the last part
    assert parse_spec("hf-hub:laion/CLIP-ViT-B-32@abc") == ModelRef("open_clip", "hf-hub:laion/CLIP-ViT-B-32", "abc")
    assert parse_spec("open_clip:hf-hub:laion/x").name == "open_clip:hf-hub:laion/x"


def test_a_folder_is_the_family_its_files_say(folders):
    for name, path in folders.items():
        paired = "+open_clip:ViT-B-32@openai" if FAMILIES[name].text_only else ""
        assert parse_spec(f"{path}{paired}").family == name, name
    empty = folder(folders["hf"].parent, "empty", {})
    with pytest.raises(BabelforgeError, match="no family recognises its files"):
        parse_spec(str(empty))


def test_text_only_families_take_an_image_tower_published_ones_by_default(folders):
    ref = parse_spec("mclip:M-CLIP/XLM-Roberta-Large-Vit-B-32@abc")
    assert ref.image == parse_spec(PAIRED_IMAGE_TOWERS["M-CLIP/XLM-Roberta-Large-Vit-B-32"])
    assert ref.name == "mclip:M-CLIP/XLM-Roberta-Large-Vit-B-32+open_clip:ViT-B-32"
    assert ref.text() == "mclip:M-CLIP/XLM-Roberta-Large-Vit-B-32@abc+open_clip:ViT-B-32@openai"
    assert parse_spec(ref.text()) == ref
    own = parse_spec(f"{folders['st']}+{folders['hf']}")
    assert (own.family, own.image.family, own.image.id) == ("st", "hf", str(folders["hf"]))
    with pytest.raises(
        BabelforgeError, match=r"a mclip checkpoint is a text encoder; name the image tower .*\+IMAGE_SPEC"
    ):
        parse_spec(str(folders["mclip"]))
    with pytest.raises(BabelforgeError, match="is for text-only families"):
        parse_spec(f"{folders['hf']}+{folders['open_clip']}")
    with pytest.raises(BabelforgeError, match="cannot have an image tower of its own"):
        parse_spec(f"{folders['st']}+{folders['mclip']}+{folders['hf']}")


def test_an_unknown_family_or_an_incomplete_spec_is_one_line_naming_the_families_and_the_syntax():
    for text in ("openclip:ViT-B-32@openai", "clip:models/x", "open_clip:", "openai/clip@", "st:x+", "@abc"):
        with pytest.raises(BabelforgeError) as error:
            parse_spec(text)
        message = str(error.value)
        assert "\n" not in message and "model families: open_clip, st, mclip, mclip_legacy, hf" in message, text
        assert "[FAMILY:]ID[@REVISION][+IMAGE_SPEC]" in message, text
    assert split_family("hf-hub:laion/x") == (None, "hf-hub:laion/x")
    assert split_family("open_clip:ViT-B-32") == ("open_clip", "ViT-B-32")


def test_a_folder_named_with_an_at_or_a_plus_is_all_id(tmp_path):
    odd = folder(tmp_path, "clip@v2+b", {"config.json": "{}"})
    assert parse_spec(str(odd)) == ModelRef("hf", str(odd))
    assert model_spec(str(odd)) == {"id": str(odd), "revision": None}


def test_the_model_flag_keeps_the_spec_as_written_with_its_revision_apart(folders):
    assert model_spec("openai/clip@abc") == {"id": "openai/clip", "revision": "abc"}
    assert model_spec("open_clip:ViT-B-32@openai") == {"id": "open_clip:ViT-B-32", "revision": "openai"}
    assert model_spec(str(folders["hf"])) == {"id": str(folders["hf"]), "revision": None}
    entry = model_spec(f"st:{folders['st']}+{folders['hf']}")
    assert entry == {"id": f"st:{folders['st']}+hf:{folders['hf']}", "revision": None}
    assert parse_spec(entry["id"], entry["revision"]) == parse_spec(f"st:{folders['st']}+{folders['hf']}")


def test_what_cannot_load_is_said_before_any_library_is_asked(tmp_path):
    assert unloadable(parse_spec("openai/clip")).startswith(
        "model hf:openai/clip: no folder openai/clip here, and as a Hub model no revision pinned"
    )
    assert "@<pretrained tag>" in unloadable(parse_spec("open_clip:ViT-B-32"))
    assert "dvc repro eval_tiny_clip" in unloadable(parse_spec("models/tiny_clip/none"))
    assert unloadable(parse_spec("openai/clip@abc")) is None
    assert missing_folder(parse_spec("./nothing/here")) == "no such folder: ./nothing/here"
    (tmp_path / "file").write_text("x")
    assert missing_folder(parse_spec(str(tmp_path / "file"))) == f"not a folder: {tmp_path / 'file'}"
    for spec in ("open_clip:ViT-B-32", "openai/clip", "st:org/st+open_clip:ViT-B-32@openai"):
        # the --model flag says what loading would: a missing revision, one line for every family
        assert missing_folder(parse_spec(spec)) == unloadable(parse_spec(spec)), spec


def test_the_text_limit_is_the_shortest_real_one():
    assert text_length_limit(77, 10**30) == 77
    assert text_length_limit(514, 512) == 512
    assert text_length_limit(16, 16) == 16
    assert text_length_limit(None, 0) is None
    assert text_length_limit(999_999, 1_000_000) == 999_999  # a tokenizer's 1e6 or more is no limit
    assert text_length_limit(1_000_000) is None


def test_an_id_that_can_only_be_a_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    assert folder_like("models/my_clip")  # its first part is a folder here
    assert folder_like("./clip") and folder_like("/abs/clip") and folder_like("clip/") and folder_like("a/b/c")
    assert not folder_like("openai/clip-vit-base-patch32") and not folder_like("clip-vit")
    assert not folder_like("my_clip/models")  # owner/name: a Hub id, though `models` is a folder here


def test_a_librarys_error_becomes_its_first_line():
    assert first_line(OSError("no file named x\nsee the docs")) == "no file named x"
    assert first_line(ValueError("")) == "ValueError"
    assert first_line(ValueError("\n  spaced  \n")) == "spaced"
    assert len(first_line(ValueError("x" * 400))) == 300


def test_a_family_is_looked_up_by_name():
    assert family("open_clip").library == "open_clip_torch"
    assert family("st").text_only and not family("hf").text_only
    with pytest.raises(
        BabelforgeError, match=r"^unknown model family 'clip'; model families: open_clip, st, mclip, mclip_legacy, hf"
    ):
        family("clip")
