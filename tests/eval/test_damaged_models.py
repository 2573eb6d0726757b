"""What a damaged model or a wrong file given to a flag does: one line naming the file.

Copies of the tiny real models (tests/eval/conftest.py) with their weights emptied or cut short fail
in one line naming the weights file, whether the spec comes from `--model` (while the flags are read)
or from params.yaml (when the model loads); a damage the check cannot see is still one line; a cached
Hub snapshot's damaged file says how to fetch it again. A revision on a local folder is refused
(it would pin nothing). `eval_paper`'s file flags say what they got and what they take.
"""

from __future__ import annotations

import shutil
import struct

import pandas as pd
import pytest

from babelforge.core.config import load_config
from babelforge.core.errors import BabelforgeError
from babelforge.eval.config import CommonConfig
from babelforge.eval.families import ModelRef, parse_spec
from babelforge.eval.flags import PARQUET, TEXT, file_kind, flag_file, flag_table, model_spec
from babelforge.eval.models import checkpoint_source, load_model
from babelforge.eval.tools.paper_stage import our_languages, read_runs


def damaged_copy(folder, tmp_path, weights: str, cut) -> tuple[str, str]:
    """A copy of a model folder with its weights file `weights` replaced by `cut(bytes)`: (folder, file)."""
    copy = tmp_path / "model"
    shutil.copytree(folder, copy)
    path = copy / weights
    path.write_bytes(cut(path.read_bytes()))
    return str(copy), str(path)


EMPTY = (lambda data: b"", "empty (0 bytes)")
CUT = (lambda data: data[: len(data) // 2], "cut short: its tensors need ")


@pytest.mark.parametrize(("cut", "says"), [EMPTY, CUT], ids=["empty", "cut"])
def test_a_damaged_clip_is_one_line_at_the_flag_and_at_load(tiny_clip_dir, tmp_path, cut, says):
    folder, weights = damaged_copy(tiny_clip_dir, tmp_path, "model.safetensors", cut)
    line = f"weights file {weights}: {says}"
    with pytest.raises(BabelforgeError) as flag:
        model_spec(folder)
    with pytest.raises(BabelforgeError) as load:
        load_model(folder, device="cpu")
    for error in (flag, load):
        assert str(error.value).startswith(line), str(error.value)
        assert str(error.value).endswith(f"the model folder {folder} is damaged: copy or build it again")


def test_a_damaged_open_clip_is_one_line(open_clip_bpe_dir, tmp_path):
    folder, weights = damaged_copy(open_clip_bpe_dir, tmp_path, "open_clip_model.safetensors", CUT[0])
    with pytest.raises(BabelforgeError, match=f"^weights file {weights}: cut short: its tensors need "):
        load_model(folder, device="cpu")


def test_a_damaged_image_tower_of_a_text_only_model_is_one_line(tiny_st_dir, tiny_clip_dir, tmp_path):
    image, weights = damaged_copy(tiny_clip_dir, tmp_path, "model.safetensors", EMPTY[0])
    with pytest.raises(BabelforgeError, match=f"^weights file {weights}: empty"):
        load_model(f"st:{tiny_st_dir}+{image}", device="cpu")


def test_what_the_check_cannot_see_is_still_one_line_naming_the_model(tiny_clip_dir, tmp_path):
    """A header with a dtype safetensors does not know, every length right: the library's error."""

    def unknown_dtype(data: bytes) -> bytes:
        (length,) = struct.unpack("<Q", data[:8])
        header = data[8 : 8 + length].replace(b'"F32"', b'"Q32"', 1)
        return data[:8] + header + data[8 + length :]

    folder, _ = damaged_copy(tiny_clip_dir, tmp_path, "model.safetensors", unknown_dtype)
    model_spec(folder)  # the lengths agree: nothing to say while the flags are read
    with pytest.raises(BabelforgeError) as error:
        load_model(folder, device="cpu")
    assert str(error.value).startswith(f"model {folder}: a weights file cannot be read (")
    assert "\n" not in str(error.value)


def test_a_damaged_file_of_a_cached_hub_snapshot_says_how_to_fetch_it_again(tiny_clip_dir, tmp_path, monkeypatch):
    snapshot, weights = damaged_copy(tiny_clip_dir, tmp_path, "model.safetensors", CUT[0])
    monkeypatch.setattr("babelforge.eval.models.pinned_folder", lambda repo, revision, filename: snapshot)
    ref = ModelRef("hf", "org/clip", "0" * 40)
    with pytest.raises(BabelforgeError) as error:
        checkpoint_source(ref)
    assert str(error.value).startswith(f"weights file {weights}: cut short")
    assert str(error.value).endswith(
        f"it is in the Hugging Face cache: delete that snapshot (huggingface-cli delete-cache) and fetch it "
        f"again (huggingface-cli download org/clip --revision {'0' * 40})"
    )


# ---------------------------------------------------------------- a revision on a local folder


def test_a_revision_on_a_local_folder_is_refused_in_one_line(tiny_clip_dir):
    folder = str(tiny_clip_dir)
    with pytest.raises(BabelforgeError) as flag:
        model_spec(f"{folder}@deadbeef")
    assert str(flag.value) == (
        f"model spec '{folder}@deadbeef': {folder} is a local folder, loaded as its files are now (results "
        "record their sha256) and not at a revision; drop @deadbeef, or name the Hub id to load a revision"
    )
    with pytest.raises(BabelforgeError, match=r"drop `revision: deadbeef` from its params.yaml eval.common.models"):
        load_model(folder, revision="deadbeef", device="cpu")
    with pytest.raises(BabelforgeError, match=r"is a local folder, .* drop @deadbeef"):
        parse_spec(f"st:{folder}@deadbeef+open_clip:ViT-B-32@openai")


def test_a_params_entry_with_a_revision_on_a_folder_is_refused_as_the_settings_are_read(tiny_clip_dir):
    params = {"eval": {"common": {"models": [{"id": f"hf:{tiny_clip_dir}", "revision": "deadbeef"}]}}}
    with pytest.raises(BabelforgeError, match=r"drop `revision: deadbeef` from its params.yaml eval.common.models"):
        load_config(CommonConfig, params)
    params["eval"]["common"]["models"] = [{"id": "openai/clip-vit-base-patch32", "revision": "deadbeef"}]
    assert load_config(CommonConfig, params).models[0].revision == "deadbeef"


def test_a_hub_id_keeps_its_revision_and_a_folder_without_one_loads(tiny_clip_dir):
    assert parse_spec("openai/clip-vit-base-patch32@deadbeef").revision == "deadbeef"
    assert parse_spec("open_clip:ViT-B-32@openai").revision == "openai"
    assert load_model(str(tiny_clip_dir), device="cpu").revision.startswith("sha256:")


# ---------------------------------------------------------------- flags that name a file


@pytest.mark.parametrize(
    ("head", "tail", "kind"),
    [
        (b"", b"", "an empty file"),
        (b"PAR1" + bytes(20), b"PAR1", PARQUET),
        (b"PAR1" + bytes(20), b"\0\0\0\0", "a Parquet file cut short (its closing PAR1 is missing)"),
        (b"PAR1", b"PAR1", "a Parquet file cut short (its closing PAR1 is missing)"),
        (b"profile: sample\n", b"ple\n", TEXT),
        ("Größe\tКошка\n".encode() + "猫".encode()[:2], b"", TEXT),  # a character cut at the sniff's end
        (b"\x89PNG\r\n\x1a\n\0\0", b"", "a PNG image"),
        (b"\x1f\x8b\x08", b"", "gzip-compressed data"),
        (b"PK\x03\x04", b"", "a zip archive"),
        (b"caf\xe9\n", b"", "binary data"),  # Latin-1
        (b"a\0b", b"", "binary data"),
    ],
)
def test_file_kind_says_what_a_file_is(head, tail, kind):
    assert file_kind(head, tail) == kind


def test_flag_file_names_the_flag_the_file_and_what_it_takes(tmp_path):
    (tmp_path / "params.yaml").write_text("profile: sample\n")
    with pytest.raises(BabelforgeError) as error:
        flag_file("--languages", str(tmp_path / "params.yaml"), PARQUET, "a languages table")
    assert str(error.value) == (
        f"--languages {tmp_path / 'params.yaml'}: UTF-8 text, not a Parquet file; expected a languages table"
    )
    with pytest.raises(BabelforgeError, match=r": a folder, not a file; expected a languages table$"):
        flag_file("--languages", str(tmp_path), PARQUET, "a languages table")
    with pytest.raises(BabelforgeError, match=r"none.parquet: no such file; expected a languages table$"):
        flag_file("--languages", str(tmp_path / "none.parquet"), PARQUET, "a languages table")
    assert flag_file("--run", str(tmp_path / "params.yaml"), TEXT, "a run") == tmp_path / "params.yaml"


def test_flag_table_wants_its_columns_and_a_readable_footer(tmp_path):
    pd.DataFrame({"lang": ["deu_Latn"], "n_classes": [3]}).to_parquet(tmp_path / "languages.parquet")
    pd.DataFrame({"lang": ["deu_Latn"], "label": ["Hund"]}).to_parquet(tmp_path / "labels.parquet")
    assert flag_table("--languages", str(tmp_path / "languages.parquet"), ("lang", "n_classes"), "x")
    with pytest.raises(BabelforgeError, match=r"labels.parquet: a Parquet table without the column 'n_classes'; "):
        flag_table("--languages", str(tmp_path / "labels.parquet"), ("lang", "n_classes"), "x")
    data = (tmp_path / "languages.parquet").read_bytes()
    (tmp_path / "damaged.parquet").write_bytes(data[:4] + bytes(len(data) - 8) + data[-4:])  # magic kept, footer gone
    with pytest.raises(BabelforgeError, match=r"^--languages .*damaged.parquet: not a readable Parquet file"):
        flag_table("--languages", str(tmp_path / "damaged.parquet"), ("lang",), "x")


def test_eval_paper_languages_takes_only_a_languages_table(tmp_path):
    pd.DataFrame({"lang": ["fra_Latn", "deu_Latn"], "n_classes": [3, 4]}).to_parquet(tmp_path / "languages.parquet")
    assert our_languages(str(tmp_path / "languages.parquet")) == ["fra_Latn", "deu_Latn"]
    (tmp_path / "params.yaml").write_text("profile: sample\n")
    with pytest.raises(BabelforgeError, match=r"^--languages .*params.yaml: UTF-8 text, not a Parquet file; expected "):
        our_languages(str(tmp_path / "params.yaml"))


def test_eval_paper_run_refuses_what_is_not_text_and_a_csv_undecodable_further_on(tmp_path):
    png = tmp_path / "results.csv"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(32))
    with pytest.raises(BabelforgeError, match=r"results.csv: a PNG image, not UTF-8 text; expected a run JSON"):
        read_runs([str(png)])
    late = tmp_path / "late.csv"  # text for the sniff, Latin-1 past it
    late.write_bytes(b"task,model,lang\n" + b"zeroshot,m,deu_Latn\n" * 500 + b"zeroshot,caf\xe9,fra_Latn\n")
    with pytest.raises(BabelforgeError) as error:
        read_runs([str(late)])
    assert str(error.value).startswith(f"--run {late}: not a readable CSV (")
    assert str(error.value).endswith(
        "expected a run JSON of eval_zeroshot / eval_retrieval, or eval_report's results.csv"
    )
