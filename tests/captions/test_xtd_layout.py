"""The XTD / xFlickrCO layout's edges (builders/captions/formats/xtd.py): what the layout must hold, and
which source captions a reference belongs to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from babelforge.captions.formats.xtd import read_caption_document, read_xtd
from babelforge.core.errors import BabelforgeError


def written(tmp_path, document) -> str:
    path = tmp_path / "captions.json"
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    "document",
    [
        {"images": ["a.jpg"], "captions": [["a dog"]]},  # captions not keyed by language
        {"images": {"a": "a.jpg"}, "captions": {"en": ["a dog"]}},  # images not a list
    ],
    ids=["captions-a-list", "images-a-dict"],
)
def test_a_document_not_in_the_layout_is_one_line(tmp_path, document):
    path = written(tmp_path, document)
    with pytest.raises(BabelforgeError, match="not the XTD layout"):
        read_caption_document(Path(path), "captions.input.path")


def test_a_language_with_fewer_captions_than_images_is_one_line(tmp_path):
    path = written(tmp_path, {"images": ["a.jpg", "b.jpg"], "captions": {"en": ["a dog", "a cat"], "de": ["ein Hund"]}})
    with pytest.raises(BabelforgeError, match="1 de captions for 2 images"):
        read_caption_document(Path(path), "captions.input.path")


def test_a_reference_belongs_only_to_an_image_with_one_source_caption(tmp_path, registry):
    """Image a has two English captions: a German reference cannot say which it translates, so it is
    no reference; image b has one, so its German caption is b's reference."""
    path = written(
        tmp_path,
        {
            "images": ["a.jpg", "b.jpg"],
            "captions": {"en": [["a dog", "a brown dog"], "a cat"], "de": ["ein Hund", "eine Katze"]},
        },
    )
    data = read_xtd(path, "eng_Latn", registry)
    assert [row["caption_id"] for row in data.captions] == ["a#0", "a#1", "b"]
    assert data.references == [("b", "deu_Latn", "eine Katze")]
