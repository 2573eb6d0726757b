"""eval_retrieval on XM3600: the caption set the `xm3600` stage builds from the published-format fixture
(tests/xm3600/release_fixture.py), scored with the tiny CLIP: t2i and i2t recall@1/5/10 per language, every
caption of an image a query (t2i) and the image found when any of its captions ranks within k (i2t)."""

from __future__ import annotations

import pytest

from babelforge.cli import main
from babelforge.core.io import read_json
from tests.xm3600.release_fixture import build_release


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("xm3600-eval")
    params, _ = build_release(root)
    return root, params


@pytest.mark.slow
def test_eval_retrieval_reads_the_built_caption_set_with_a_tiny_clip(built, tiny_clip_dir, monkeypatch):
    root, _ = built
    monkeypatch.chdir(root)
    (root / "params.yaml").rename(root / "build.yaml")  # outside a project: the settings' defaults
    try:
        code = main(
            [
                "eval_retrieval",
                "--set",
                f"eval.retrieval.caption_sets=[{root / 'xm3600' / 'xm3600.json'}]",
                "--images",
                str(root / "release" / "images"),
                "--model",
                str(tiny_clip_dir),
                "--set",
                "eval.common.device=cpu",
                "--out",
                "retrieval.json",
            ]
        )
    finally:
        (root / "build.yaml").rename(root / "params.yaml")
    assert code == 0
    rows = read_json(root / "retrieval.json")["rows"]
    assert len(rows) == 36 and {row["dataset"] for row in rows} == {"xm3600"}
    by_lang = {row["lang"]: row for row in rows}
    assert {"fil_Latn", "quz_Latn", "eng_Latn"} <= set(by_lang)
    assert (by_lang["ben_Beng"]["n_captions"], by_lang["deu_Latn"]["n_captions"]) == (4, 8)
    for row in rows:
        assert row["n_images"] == 4
        for direction in ("t2i", "i2t"):
            recalls = [row[f"{direction}_r@{k}"] for k in (1, 5, 10)]
            assert 0 <= recalls[0] <= recalls[1] <= recalls[2] == 1.0  # 4 images, at most 8 captions: all within 10
