"""Eval caption sets and image folders under the one bad-row policy: a caption that cannot be
scored is quarantined and counted exactly as the captions input counts it (same reasons, same
numbers, fuzzed); a caption set that does not line up with its images, is cut off or holds
broken JSON is one line; an image file name that is not UTF-8 or a symlink loop is skipped with
its reason; an image list with a Latin-1 path is one line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from babelforge.captions.formats.xtd import read_xtd
from babelforge.core.bad_rows import BadRowPolicy, Quarantine
from babelforge.core.errors import BabelforgeError
from babelforge.core.languages import registry as project_registry
from babelforge.eval.captions import read_caption_sets
from babelforge.eval.images import read_file_list, read_imagenet_folder, screen_images
from babelforge.eval.sample.images_stage import draw_image
from tests.captions.test_reader_policy import xtd_document, xtd_entries

SKIP_ALL = BadRowPolicy("skip", 1.0)

# One bad caption of every kind the issue met in eval caption sets, in the raw JSON of an image's entry.
BAD_ENTRIES = [
    b'""',  # empty: used to be dropped uncounted
    b'"   "',
    b"42",  # a number: used to become the text "42"
    b'"a dog\\u0000 on grass"',  # a NUL: used to be kept
    b"null",  # used to be a traceback
    b'"caf\xe9 au lait"',  # bytes that are not UTF-8: idem
    b'["a good one", null]',  # a list with one bad caption: the good one stays
]


def english_only(code: str) -> bool:
    return code == "en"


def both_readers(path: Path, policy=SKIP_ALL):
    """(eval caption set's quarantine, captions input's quarantine) of the same file."""
    [(_, _, data, eval_quarantine)] = read_caption_sets([str(path)], english_only, policy)
    input_quarantine = Quarantine(policy, "captions")
    read_xtd(path, "eng_Latn", project_registry(), input_quarantine)
    return data, eval_quarantine, input_quarantine


def test_bad_captions_are_counted_as_the_captions_input_counts_them(tmp_path):
    path = tmp_path / "set.json"
    good = [json.dumps(f"a photo number {n}").encode() for n in range(40)]
    xtd_document(path, good[:10] + BAD_ENTRIES + good[10:])
    data, eval_quarantine, input_quarantine = both_readers(path)
    assert eval_quarantine.summary() == input_quarantine.summary()
    assert eval_quarantine.summary()["reasons"] == {
        "invalid_utf8": 1,
        "missing_caption": 3,
        "empty_caption": 2,
        "control_characters": 1,
    }
    assert [row.line for _, row in eval_quarantine.bad] == [row.line for _, row in input_quarantine.bad]
    english = data["captions"]["en"]
    assert len(english) == len(data["images"]) == 48
    assert english[10:17] == [[], [], [], [], [], [], ["a good one"]]  # the image stays, without the bad caption


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=xtd_entries)
def test_any_caption_bytes_are_counted_alike_by_both_readers(tmp_path_factory, entries):
    path = tmp_path_factory.mktemp("set") / "set.json"
    xtd_document(path, entries)
    data, eval_quarantine, input_quarantine = both_readers(path)
    assert eval_quarantine.summary() == input_quarantine.summary()
    kept = sum(len(captions) for captions in data["captions"]["en"])
    assert kept == eval_quarantine.kept and eval_quarantine.rows == kept + len(eval_quarantine.bad)


def test_fail_and_max_bad_fraction_apply_to_caption_sets(tmp_path):
    path = tmp_path / "set.json"
    xtd_document(path, [json.dumps(f"a photo number {n}").encode() for n in range(9)] + [b"null"])
    with pytest.raises(
        BabelforgeError, match=r"set.json \[en\]:10: no caption text \(missing_caption\).*on_bad_row is fail"
    ):
        read_caption_sets([str(path)], english_only, BadRowPolicy("fail", 0.0))
    with pytest.raises(
        BabelforgeError, match=r"1 of 11 captions are bad \(missing_caption 1\), more than max_bad_fraction"
    ):
        read_caption_sets([str(path)], english_only, BadRowPolicy("skip", 0.05))
    [(_, _, _, quarantine)] = read_caption_sets([str(path)], english_only, BadRowPolicy("skip", 0.1))
    assert quarantine.summary()["quarantined"] == 1


@pytest.mark.parametrize(
    "document, expected",
    [
        (
            b'{"images": ["a.jpg", "b.jpg"], "captions": {"en": [["a"]]}}',
            r"set.json: 1 en captions for 2 images; a caption set has one entry",
        ),
        (b'{"images": ["a.jpg", "b.jpg"], "captions": {"en": [["a"], ["b', r"set.json:1:\d+: not JSON .*cut off\?"),
        (b'{"images": ["a.jpg"], "captions": ["a"]}', r"set.json: not the XTD layout"),
        (b"\x1f\x8b\x08\x00", r"set.json: gzip-compressed bytes, not JSON"),
    ],
)
def test_a_caption_set_that_cannot_be_read_is_one_line(tmp_path, document, expected):
    path = tmp_path / "set.json"
    path.write_bytes(document)
    with pytest.raises(BabelforgeError, match=expected) as error:
        read_caption_sets([str(path)], english_only, SKIP_ALL)
    assert "\n" not in str(error.value)


# ---------------------------------------------------------------- image folders and lists


def picture(path: Path) -> None:
    draw_image("n01440764/0", 16).save(path, format="PNG")


def test_a_file_name_that_is_not_utf8_and_a_symlink_loop_are_skipped_with_their_reason(tmp_path):
    folder = tmp_path / "images" / "n01440764"
    folder.mkdir(parents=True)
    picture(folder / "0.png")
    latin1 = os.fsdecode(b"caf\xe9.png")  # a name with a byte that is not UTF-8
    picture(folder / latin1)
    (folder / "loop.png").symlink_to(folder / "loop.png")
    picture(folder / "z.png")
    image_set = read_imagenet_folder(tmp_path / "images", {"n01440764": 0})
    usable, quarantine = screen_images(image_set, SKIP_ALL, "images")
    assert usable.files == ("n01440764/0.png", "n01440764/z.png")
    assert [(row.reason, row.raw) for _, row in quarantine.bad] == [
        ("bad_file_name", "n01440764/caf\\xe9.png"),
        ("symlink_loop", "n01440764/loop.png"),
    ]
    assert all(row.raw.encode("utf-8") for _, row in quarantine.bad)  # a run JSON can hold them as text


def test_an_image_list_with_a_latin1_path_is_one_line(tmp_path):
    path = tmp_path / "list.tsv"
    path.write_bytes(b"a.png\t0\ncaf\xe9.png\t1\n")
    with pytest.raises(BabelforgeError, match=r"list.tsv:2: not UTF-8 .*save the list as UTF-8$"):
        read_file_list(path)


names = st.lists(
    st.binary(min_size=1, max_size=40).filter(
        lambda name: b"/" not in name and b"\0" not in name and name not in (b".", b"..")
    ),
    max_size=8,
    unique=True,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=names)
def test_any_file_name_bytes_in_an_image_folder_finish_with_every_image_counted(tmp_path_factory, names):
    """Image files named by arbitrary bytes (half of them pictures, half junk), and one good picture."""
    folder = tmp_path_factory.mktemp("images") / "n01440764"
    folder.mkdir()
    picture(folder / "good.png")
    for index, name in enumerate(names):
        path = folder / os.fsdecode(name + b".png")
        if index % 2:
            path.write_bytes(name)
        else:
            picture(path)
    image_set = read_imagenet_folder(folder.parent, {"n01440764": 0})
    usable, quarantine = screen_images(image_set, SKIP_ALL, "images")
    assert quarantine.rows == len(names) + 1 == len(image_set.files)
    assert quarantine.kept == len(usable.files) and quarantine.rows == quarantine.kept + len(quarantine.bad)
    assert "n01440764/good.png" in usable.files
    assert all(name.encode("utf-8") for name in usable.files)  # every kept name is text (no surrogate)
