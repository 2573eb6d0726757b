"""The weights-file check (babelforge.core.weights) on files the libraries themselves write: each is
accepted whole; emptied, cut at any byte, lengthened or with a foreign header it is one line naming
what is wrong, and the library agrees that it cannot read it. The fuzz gives it any tensors and any
bytes: it never raises, and it never accepts what safetensors refuses for a length."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays
from safetensors import SafetensorError
from safetensors.numpy import load, save

from babelforge.core.errors import BabelforgeError
from babelforge.core.weights import check_weights, safetensors_problem, weights_problem

TENSORS = {"text.weight": np.arange(24, dtype=np.float32).reshape(4, 6), "text.bias": np.ones(3, np.float16)}


def library_refuses(data: bytes) -> bool:
    try:
        load(data)
    except SafetensorError:
        return True
    return False


def test_a_whole_file_passes_and_the_library_reads_it(tmp_path):
    path = tmp_path / "model.safetensors"
    path.write_bytes(save(TENSORS))
    assert weights_problem(path) is None
    assert set(load(path.read_bytes())) == set(TENSORS)


def test_every_cut_of_a_file_is_refused_and_the_library_refuses_it_too():
    whole = save(TENSORS)
    (length,) = struct.unpack("<Q", whole[:8])
    for size in range(len(whole)):
        problem = safetensors_problem(whole[:size], size)
        assert problem is not None, size
        assert library_refuses(whole[:size]), size
        if size == 0:
            assert problem == "empty (0 bytes)"
        elif size < 8:
            assert problem.startswith(f"cut short: {size} bytes, less than the 8-byte length")
        elif size < 8 + length:
            assert problem == f"cut short: its header says {length:,} bytes, {size - 8:,} follow the length"
        else:
            assert problem == f"cut short: its tensors need {len(whole) - 8 - length:,} bytes after the header, " + (
                f"{size - 8 - length:,} are there"
            )


def test_bytes_after_the_last_tensor_are_refused():
    whole = save(TENSORS)
    assert (
        safetensors_problem(whole + b"\0" * 5, len(whole) + 5)
        == "5 bytes after its last tensor (two files joined, or a foreign one?)"
    )
    assert library_refuses(whole + b"\0" * 5)


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (struct.pack("<Q", 4) + b"{nop", "its header is not JSON"),
        (struct.pack("<Q", 4) + b"nope", "no JSON header after its 8-byte length"),
        (struct.pack("<Q", 7) + b'{"w":1}', "its header does not list tensors with data_offsets"),
        (
            struct.pack("<Q", 29) + b'{"w":{"data_offsets":[0,-4]}}',
            "its header does not list tensors with data_offsets",
        ),
        (b"PK\x03\x04" + bytes(60), "not a safetensors file (no JSON header after its 8-byte length)"),
        (b"version https://git-lfs.github.com/spec/v1\n", "not a safetensors file (it starts with a header length"),
    ],
)
def test_a_foreign_file_named_safetensors_is_refused(data, says):
    problem = safetensors_problem(data, len(data))
    assert problem is not None and says in problem
    assert library_refuses(data)


def test_tensors_that_overlap_or_leave_a_gap_are_refused():
    header = (
        b'{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}}'
    )
    data = struct.pack("<Q", len(header)) + header + bytes(6)
    assert safetensors_problem(data, len(data)) == "not a safetensors file (tensor 'b' at bytes 2-6, expected from 4)"
    assert library_refuses(data)


def test_a_torch_zip_checkpoint_passes_whole_and_is_refused_cut_or_empty(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "pytorch_model.bin"
    torch.save({"w": torch.ones(8)}, path)
    assert weights_problem(path) is None
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) - 30])
    assert weights_problem(path).startswith("cut short or damaged: its zip archive cannot be read")
    with pytest.raises(RuntimeError):
        torch.load(path, weights_only=True)
    path.write_bytes(b"")
    assert weights_problem(path) == "empty (0 bytes)"


def test_a_weights_file_in_another_format_is_left_to_its_loader(tmp_path):
    path = tmp_path / "model.bin"  # CTranslate2's own format, or torch's legacy pickle stream
    path.write_bytes(b"\x06\x00\x00\x00" + bytes(100))
    assert weights_problem(path) is None


def test_check_weights_names_the_first_bad_file_of_a_folder_and_its_subfolders(tmp_path):
    (tmp_path / "0_Transformer").mkdir()
    (tmp_path / "model.safetensors").write_bytes(save(TENSORS))
    (tmp_path / "0_Transformer" / "model.safetensors").write_bytes(save(TENSORS)[:50])
    (tmp_path / "notes.txt").write_text("not weights")
    with pytest.raises(BabelforgeError) as error:
        check_weights(tmp_path, "fetch it again")
    assert str(error.value) == (
        f"weights file {tmp_path / '0_Transformer' / 'model.safetensors'}: cut short: its header says "
        f"{struct.unpack('<Q', save(TENSORS)[:8])[0]:,} bytes, 42 follow the length; fetch it again"
    )
    (tmp_path / "0_Transformer" / "model.safetensors").write_bytes(save(TENSORS))
    check_weights(tmp_path, "fetch it again")
    check_weights(tmp_path / "model.safetensors", "fetch it again")


# ---------------------------------------------------------------- fuzz

DTYPES = st.sampled_from([np.float32, np.float16, np.int64, np.int8, np.uint8, np.bool_])
TENSOR_SETS = st.dictionaries(
    st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=12).filter(
        lambda name: name != "__metadata__"
    ),
    DTYPES.flatmap(lambda dtype: arrays(dtype, array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))),
    max_size=5,
)


@settings(max_examples=200, deadline=None)
@given(TENSOR_SETS, st.data())
def test_any_file_safetensors_writes_passes_and_any_cut_of_it_is_refused(tensors, data):
    whole = save(tensors)
    assert safetensors_problem(whole, len(whole)) is None
    cut = data.draw(st.integers(0, len(whole) - 1))
    problem = safetensors_problem(whole[:cut], cut)
    assert problem is not None and "\n" not in problem
    assert library_refuses(whole[:cut])


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=200)
    | st.builds(lambda n, body: struct.pack("<Q", n) + body, st.integers(0, 300), st.binary(max_size=300))
)
def test_any_bytes_give_none_or_one_line_and_nothing_the_library_refuses_for_a_length(data):
    problem = safetensors_problem(data, len(data))  # never raises
    assert problem is None or (problem and "\n" not in problem)
    if problem is None:
        try:
            load(data)
        except SafetensorError as error:  # what this check leaves to the loader: dtypes, shapes
            assert "incomplete" not in str(error).lower() and "too small" not in str(error).lower(), error
