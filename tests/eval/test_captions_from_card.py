"""`eval_retrieval` (and `eval_clipscore`) on a published mt-captions card instead of caption-set files.

The card's rows become a caption set (`caption_set_from_rows`: one pure function), scored by the
stages' own code: a card built by the project's card builder from a small selected.parquet gives
the rows a caption-set file with the same captions gives (same model, same images). The card is a
sample build, and the results say so.
"""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest

from babelforge.cli import main
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import write_table
from babelforge.core.provenance import provenance
from babelforge.eval.captions import ENGLISH, caption_set_from_rows
from tests.audit.conftest import write_registry
from tests.eval.test_eval_from_card import babelforge, rows_without_version
from tests.publish.conftest import build

IMAGES = [f"img{i}.jpg" for i in range(5)]


def selected_rows() -> list[dict]:
    """selected.parquet's rows: a caption per image (two for img0), in Finnish and Russian; one
    Russian translation dropped (text null, with its reason)."""
    captions = [(f"c{i}", IMAGES[i], f"a photo number {i}") for i in range(5)] + [("c5", "img0.jpg", "photo zero")]
    rows = []
    for caption_id, image, caption in captions:
        for lang, word in (("fin_Latn", "kuva"), ("rus_Cyrl", "фото")):
            dropped = lang == "rus_Cyrl" and caption_id == "c3"
            rows.append(
                {
                    "caption_id": caption_id,
                    "lang": lang,
                    "text": None if dropped else f"{word} {caption}",
                    "hyp_rank": None if dropped else 0,
                    "kiwi_score": None if dropped else 0.5,
                    "reason": "empty: all hypotheses dropped" if dropped else None,
                    "image": image,
                    "caption": caption,
                }
            )
    return rows


# the caption set those rows are, written out by hand
EXPECTED = {
    "images": IMAGES,
    "captions": {
        ENGLISH: [["a photo number 0", "photo zero"], *([f"a photo number {i}"] for i in range(1, 5))],
        "fin_Latn": [
            ["kuva a photo number 0", "kuva photo zero"],
            *([f"kuva a photo number {i}"] for i in range(1, 5)),
        ],
        "rus_Cyrl": [
            ["фото a photo number 0", "фото photo zero"],
            ["фото a photo number 1"],
            ["фото a photo number 2"],
            [],
            ["фото a photo number 4"],
        ],
    },
}


def test_the_card_rows_become_a_caption_set():
    rows = selected_rows()
    assert caption_set_from_rows(rows) == EXPECTED
    assert caption_set_from_rows(list(reversed(rows))) == EXPECTED  # by caption_id, whatever the row order
    assert caption_set_from_rows(pd.DataFrame(rows)) == EXPECTED  # a DataFrame as the card's table gives it
    assert rows == selected_rows()  # its input untouched
    assert caption_set_from_rows([]) == {"images": [], "captions": {}}
    with pytest.raises(BabelforgeError, match="caption c0 \\(fin_Latn\\): no image file name"):
        caption_set_from_rows([{**rows[0], "image": None}])


@pytest.fixture(scope="module")
def card(tmp_path_factory, tiny_clip_dir):
    """(card folder, image folder, model): the mt-captions card of a sample build, as `babelforge card` builds it."""
    from babelforge.eval.sample.images_stage import draw_image

    root = tmp_path_factory.mktemp("captions-card")
    write_registry(root / "languages.tsv")
    record = provenance("captions_select", {"profile": "sample"})
    write_table(pd.DataFrame(selected_rows()), root / "selected.parquet", sort_by=["caption_id"], provenance=record)
    folder = build("mt-captions", root)
    images = root / "images"
    images.mkdir()
    for i, name in enumerate(IMAGES):
        draw_image(name, 32, family=str(i)).save(images / name, format="JPEG")
    return folder, images, tiny_clip_dir


@pytest.mark.slow
def test_a_card_folder_gives_the_rows_of_the_same_caption_set_file(card, tmp_path, capsys):
    folder, images, model = card
    assert folder.name == "mt-captions"
    outside = tmp_path / "elsewhere"  # no params.yaml here or above: the settings' defaults
    outside.mkdir()
    common = ["--images", str(images), "--model", str(model), "--set", "eval.common.device=cpu"]
    result = babelforge(
        outside,
        "eval_retrieval",
        "--dataset",
        str(folder),
        "--out",
        "card.json",
        *common,
        env={"HF_DATASETS_CACHE": str(tmp_path / "hf-datasets")},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    document = json.loads((outside / "card.json").read_text(encoding="utf-8"))

    # the same captions as a caption-set file named like the card (the rows' `dataset`)
    file = tmp_path / "mt-captions.json"
    file.write_text(json.dumps(EXPECTED, ensure_ascii=False), encoding="utf-8")
    cwd = os.getcwd()
    os.chdir(outside)
    try:
        assert (
            main(["eval_retrieval", "--set", f"eval.retrieval.caption_sets=[{file}]", "--out", "file.json", *common])
            == 0
        )
    finally:
        os.chdir(cwd)
    from_file = json.loads((outside / "file.json").read_text(encoding="utf-8"))

    assert rows_without_version(document) == rows_without_version(from_file)
    assert [(r["dataset"], r["lang"], r["n_captions"]) for r in document["rows"]] == [
        ("mt-captions", "eng_Latn", 6),
        ("mt-captions", "fin_Latn", 6),
        ("mt-captions", "rus_Cyrl", 5),
    ]
    sources = document["provenance"]["sources"]
    assert list(sources) == ["mt-captions"] and sources["mt-captions"].startswith(("sha256:", "md5:"))
    assert {row["dataset_version"] for row in document["rows"]} == {sources["mt-captions"]}
    # the card is a sample build: the run says so, though outside a project it records profile full
    assert document["provenance"]["build"]["profile"] == "sample"
    assert document["provenance"]["params"]["profile"] == "full"
    assert from_file["provenance"]["build"]["profile"] != "sample"
    assert "(a SAMPLE build)" in result.stderr

    # not a card: one line, nothing written
    os.chdir(outside)
    try:
        assert main(["eval_retrieval", "--dataset", str(folder.parent / "nothing"), "--out", "no.json", *common]) == 1
    finally:
        os.chdir(cwd)
    assert not (outside / "no.json").exists()
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith(f"babelforge eval_retrieval: error: dataset {folder.parent / 'nothing'}: no README.md")
