"""A damaged NLLB model is one line naming its weights file: the CTranslate2 model.bin emptied or cut
in half (CTranslate2 raised a RuntimeError traceback), and a checkpoint's safetensors cut short
before its conversion (a SafetensorError traceback)."""

from __future__ import annotations

import shutil

import pytest

from babelforge.core.errors import BabelforgeError
from babelforge.translation.nllb import NllbTranslator, convert_to_ctranslate2, resolve_model_dir


@pytest.fixture
def ct2_copy(tiny_nllb, tmp_path):
    copy = tmp_path / "nllb"
    shutil.copytree(resolve_model_dir(tiny_nllb), copy)
    return copy


def test_an_empty_model_bin_is_one_line(ct2_copy):
    (ct2_copy / "model.bin").write_bytes(b"")
    with pytest.raises(BabelforgeError) as error:
        NllbTranslator(ct2_copy, device="cpu")
    assert str(error.value) == (
        f"weights file {ct2_copy / 'model.bin'}: empty (0 bytes); convert it again: babelforge nllb (dvc repro nllb)"
    )


def test_a_model_bin_cut_in_half_is_one_line_with_ctranslate2s_reason(ct2_copy):
    weights = ct2_copy / "model.bin"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    with pytest.raises(BabelforgeError) as error:
        NllbTranslator(ct2_copy, device="cpu")
    message = str(error.value)
    assert message.startswith(f"weights file {weights}: CTranslate2 cannot load it on cpu (")
    assert message.endswith("); a damaged file? convert it again: babelforge nllb (dvc repro nllb)")
    assert "\n" not in message


def test_a_checkpoint_cut_short_is_refused_before_its_conversion(tiny_nllb, tmp_path):
    checkpoint = tmp_path / "hf"
    shutil.copytree(tiny_nllb / "hf", checkpoint)
    weights = checkpoint / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-100])
    with pytest.raises(BabelforgeError) as error:
        convert_to_ctranslate2(checkpoint, tmp_path / "ct2", "int8")
    assert str(error.value).startswith(f"weights file {weights}: cut short: its tensors need ")
    assert str(error.value).endswith(f"the checkpoint {checkpoint} is damaged: copy or fetch it again")
    assert not (tmp_path / "ct2").exists()
