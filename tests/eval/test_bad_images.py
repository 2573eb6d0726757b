"""Eval image sets with messy files: the one image reader (babelforge.core.images) names a reason
for each file it cannot use and converts the ones it can; screening leaves the bad ones out under
eval.common's bad-row policy; eval_zeroshot / eval_retrieval over a set with a broken image finish,
report it, and score the rest exactly as a set that never held it."""

import io
import json
import os
import shutil
import warnings

import numpy as np
import pytest
from PIL import Image, ImageFile

from babelforge.cli import main
from babelforge.core.bad_rows import BadRowPolicy
from babelforge.core.errors import BabelforgeError
from babelforge.core.images import open_rgb, read_rgb
from babelforge.eval.images import ImageSet, screen_images
from babelforge.eval.sample.images_stage import draw_image
from tests.eval.conftest import write_babel_imagenet_tables, write_sample_project

SKIP_ALL = BadRowPolicy("skip", 1.0)


def encoded(image: Image.Image, fmt: str, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()


def noise(width: int, height: int, seed: int = 0) -> Image.Image:
    """Random pixels: a PNG of them barely compresses, so half its bytes cut well into the pixels."""
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (height, width, 3), dtype=np.uint8), "RGB")


@pytest.fixture
def messy(tmp_path):
    """A folder of real sample pictures plus one file of every messy kind: {kind: file name}."""
    root = tmp_path / "messy"
    root.mkdir()
    picture = draw_image("n01440764/0", 64, family="n01440764")
    rgba = picture.convert("RGBA")
    alpha = np.full((64, 64), 255, np.uint8)
    alpha[:, :32] = 0  # the left half transparent
    rgba.putalpha(Image.fromarray(alpha, "L"))
    palette = picture.quantize(colors=8)
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: rotate 90 degrees clockwise to show
    sideways = Image.new("RGB", (40, 20), (0, 0, 255))
    sideways.paste((255, 0, 0), (0, 0, 16, 16))  # red in the stored top-left corner
    truncated_png = encoded(noise(64, 64), "PNG")
    files = {
        "good_png": ("good.png", encoded(picture, "PNG")),
        "good_jpg": ("good.jpg", encoded(draw_image("img0.jpg", 64), "JPEG", quality=95)),
        "empty": ("empty.jpg", b""),
        "text": ("notes.png", b"these are notes, not a picture\n"),
        "truncated": ("cut.png", truncated_png[: len(truncated_png) // 2]),
        "cmyk": ("cmyk.jpg", encoded(picture.convert("CMYK"), "JPEG", quality=95)),
        "palette": ("palette.png", encoded(palette, "PNG", transparency=palette.getpixel((0, 0)))),
        "sixteen": ("grey16.png", encoded(Image.fromarray(np.full((8, 8), 0xAB12, np.uint16)), "PNG")),
        "rgba": ("alpha.png", encoded(rgba, "PNG")),
        "exif": ("sideways.jpg", encoded(sideways, "JPEG", quality=95, exif=exif.tobytes())),
    }
    for name, data in files.values():
        (root / name).write_bytes(data)
    return root, {kind: name for kind, (name, _) in files.items()}, picture


@pytest.mark.parametrize(
    "kind, reason",
    [("empty", "empty_file"), ("text", "not_an_image"), ("truncated", "truncated_image")],
)
def test_a_file_that_cannot_be_used_has_its_reason(messy, kind, reason):
    root, names, _ = messy
    image, found = open_rgb(root / names[kind])
    assert image is None and found == reason
    with pytest.raises(BabelforgeError, match=rf"{names[kind]}: .* \({reason}\)$"):
        read_rgb(root / names[kind])


def test_a_missing_file_is_missing(tmp_path):
    assert open_rgb(tmp_path / "gone.jpg") == (None, "missing_file")
    assert open_rgb(tmp_path / "gone" / "deeper.png") == (None, "missing_file")
    (tmp_path / "folder.png").mkdir()
    assert open_rgb(tmp_path / "folder.png") == (None, "not_an_image")


def test_truncated_images_stay_errors(messy):
    """The reader never sets PIL's global switch that pads cut-off images with grey."""
    root, names, _ = messy
    assert ImageFile.LOAD_TRUNCATED_IMAGES is False
    assert open_rgb(root / names["truncated"])[1] == "truncated_image"
    assert ImageFile.LOAD_TRUNCATED_IMAGES is False


@pytest.mark.parametrize("limit", [64 * 64 // 2 - 1, 3000])  # past PIL's error (2x) / only its warning (1x)
def test_an_image_over_the_decompression_bomb_limit_is_too_large(messy, monkeypatch, limit):
    root, names, _ = messy
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", limit)  # the 64 x 64 picture is 4,096 pixels
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing leaks out as a warning either
        assert open_rgb(root / names["good_png"]) == (None, "image_too_large")
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 64 * 64)  # at the limit: fine
    assert open_rgb(root / names["good_png"])[1] is None


def test_good_images_come_back_as_they_are(messy):
    root, names, picture = messy
    image, reason = open_rgb(root / names["good_png"])
    assert reason is None and image.mode == "RGB" and np.array_equal(np.asarray(image), np.asarray(picture))
    image, reason = open_rgb(root / names["good_jpg"])
    assert reason is None and image.mode == "RGB" and image.size == (64, 64)


def test_cmyk_becomes_rgb(messy):
    root, names, picture = messy
    image, reason = open_rgb(root / names["cmyk"])
    assert reason is None and image.mode == "RGB"
    # PIL's CMYK <-> RGB is a plain inversion: the JPEG round trip is close to the picture
    assert np.abs(np.asarray(image, np.int16) - np.asarray(picture, np.int16)).mean() < 8


def test_transparency_goes_on_white(messy):
    root, names, picture = messy
    image, reason = open_rgb(root / names["rgba"])
    pixels = np.asarray(image)
    assert reason is None and image.mode == "RGB"
    assert (pixels[:, :32] == 255).all()  # transparent: white, not the hidden colour
    assert np.array_equal(pixels[:, 32:], np.asarray(picture)[:, 32:])  # opaque: unchanged
    image, reason = open_rgb(root / names["palette"])
    assert reason is None and image.mode == "RGB"
    assert image.getpixel((0, 0)) == (255, 255, 255)  # the transparent palette entry
    assert Image.open(root / names["palette"]).mode == "P"


def test_sixteen_bit_grey_is_scaled_not_clipped(messy):
    root, names, _ = messy
    assert Image.open(root / names["sixteen"]).mode.startswith("I")
    image, reason = open_rgb(root / names["sixteen"])
    assert reason is None and image.mode == "RGB"
    assert image.getpixel((3, 3)) == (0xAB, 0xAB, 0xAB)  # the high byte; PIL's convert gives 255


def test_exif_orientation_is_applied(messy):
    root, names, _ = messy
    assert Image.open(root / names["exif"]).size == (40, 20)
    image, reason = open_rgb(root / names["exif"])
    assert reason is None and image.size == (20, 40)  # turned upright
    red, blue = image.getpixel((15, 3)), image.getpixel((3, 36))
    assert red[0] > 200 and red[2] < 60  # the stored top-left corner shows at the top right
    assert blue[2] > 200 and blue[0] < 60


def test_the_reader_is_deterministic(messy):
    root, names, _ = messy
    for name in names.values():
        first, second = open_rgb(root / name), open_rgb(root / name)
        assert first[1] == second[1]
        if first[0] is not None:
            assert first[0].tobytes() == second[0].tobytes()


# ---------------------------------------------------------------- screening an image set


def messy_set(messy) -> ImageSet:
    root, names, _ = messy
    files = (*names.values(), "gone.jpg")
    return ImageSet(root, files, tuple(range(len(files))))


def test_screening_skips_bad_images_and_keeps_the_rest_in_order(messy):
    image_set = messy_set(messy)
    usable, quarantine = screen_images(image_set, SKIP_ALL, "messy")
    bad = {"empty.jpg", "notes.png", "cut.png", "gone.jpg"}
    assert usable.files == tuple(name for name in image_set.files if name not in bad)
    assert usable.positions == tuple(i for i, name in enumerate(image_set.files) if name not in bad)
    assert usable.targets == usable.positions  # each target follows its file
    assert quarantine.summary() == {
        "rows": 11,
        "kept": 7,
        "quarantined": 4,
        "reasons": {"missing_file": 1, "empty_file": 1, "not_an_image": 1, "truncated_image": 1},
        "excluded": {},
    }
    rows = [row for _, row in quarantine.bad]
    assert [(row.source, row.line, row.raw, row.reason) for row in rows] == [
        ("messy", 3, "empty.jpg", "empty_file"),
        ("messy", 4, "notes.png", "not_an_image"),
        ("messy", 5, "cut.png", "truncated_image"),
        ("messy", 11, "gone.jpg", "missing_file"),
    ]
    # the kept set's hash is that of a set that never held the bad files
    assert usable.content_hash() == ImageSet(usable.root, usable.files).content_hash()


def test_fail_stops_at_the_first_bad_image_with_one_line(messy):
    with pytest.raises(
        BabelforgeError, match=r"^messy:3: a file of zero bytes \(empty_file\): 'empty.jpg'; on_bad_row is fail"
    ):
        screen_images(messy_set(messy), BadRowPolicy("fail", 0.0), "messy")


def test_more_bad_images_than_max_bad_fraction_stop_the_run(messy):
    with pytest.raises(
        BabelforgeError,
        match=r"4 of 11 images are bad \(missing_file 1, .*max_bad_fraction 0.3: check the image folder",
    ):
        screen_images(messy_set(messy), BadRowPolicy("skip", 0.3), "messy")
    assert screen_images(messy_set(messy), BadRowPolicy("skip", 0.4), "messy")[1].summary()["quarantined"] == 4


def test_a_rerun_reads_what_the_screening_found(messy, tmp_path, monkeypatch):
    import babelforge.eval.images as images

    memo = tmp_path / "cache"
    first = screen_images(messy_set(messy), SKIP_ALL, "messy", memo)
    assert len(list(memo.glob("screened-*.json"))) == 1

    def no_decoding(path):
        raise AssertionError(f"decoded {path} again")

    monkeypatch.setattr(images, "open_rgb", no_decoding)
    again = screen_images(messy_set(messy), SKIP_ALL, "messy", memo)
    assert again[0] == first[0] and again[1].summary() == first[1].summary()
    monkeypatch.undo()
    root, names, _ = messy
    (root / names["empty"]).write_bytes(encoded(draw_image("fixed", 32), "JPEG"))  # a file changed: screened anew
    usable, quarantine = screen_images(messy_set(messy), SKIP_ALL, "messy", memo)
    assert names["empty"] in usable.files and quarantine.summary()["quarantined"] == 3


def test_mvl_sib_thumbnails_use_the_same_reader(messy, tmp_path):
    """The curated MVL-SIB images: converted like the eval sets, and a bad one stops the build."""
    from babelforge.mvl_sib.images import make_thumbnail

    root, names, _ = messy
    assert make_thumbnail(root / names["exif"], tmp_path / "upright.jpg", 640) == (20, 40)
    for kind in ("cmyk", "palette", "sixteen", "rgba"):
        make_thumbnail(root / names[kind], tmp_path / f"{kind}.jpg", 640)
        assert Image.open(tmp_path / f"{kind}.jpg").mode == "RGB"
    with pytest.raises(BabelforgeError, match=r"cut.png: an image file cut off before its end \(truncated_image\)$"):
        make_thumbnail(root / names["truncated"], tmp_path / "cut.jpg", 640)


# ---------------------------------------------------------------- the stages


@pytest.fixture(scope="module")
def broken_project(tmp_path_factory, tiny_clip_dir):
    """The small eval project with, beside each image folder, a copy where one image is broken
    and a copy (or caption set) without that image."""
    root = write_sample_project(tmp_path_factory.mktemp("broken"))
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert main(["eval_images"]) == 0
        write_babel_imagenet_tables(root)
        images = root / "data" / "eval" / "images"
        first = sorted((images / "imagenet").iterdir())[0]  # a class with one image
        for copy in ("imagenet_broken", "imagenet_without"):
            shutil.copytree(images / "imagenet", images / copy)
        data = (images / "imagenet_broken" / first.name / "0.png").read_bytes()
        (images / "imagenet_broken" / first.name / "0.png").write_bytes(data[: len(data) // 2])
        (images / "imagenet_without" / first.name / "0.png").unlink()
        shutil.copytree(images / "captions", images / "captions_broken")
        (images / "captions_broken" / "img2.jpg").write_text("<html>404 not found</html>")
        captions = json.loads((root / "captions.json").read_text(encoding="utf-8"))
        without = {
            "images": [name for name in captions["images"] if name != "img2.jpg"],
            "captions": {code: caps[:2] + caps[3:] for code, caps in captions["captions"].items()},
        }
        (root / "without_img2.json").write_text(json.dumps(without, ensure_ascii=False), encoding="utf-8")
        yield root, str(tiny_clip_dir), f"{first.name}/0.png"
    finally:
        os.chdir(cwd)


def run_task(root, model, task, out, *settings):
    """One eval command with `--set` settings; one bad image of 12 (or 6) is over the default share."""
    flags = [f"--set={setting}" for setting in ("eval.common.max_bad_fraction=0.2", *settings)]
    code = main([f"eval_{task}", "--model", model, "--out", str(root / out), *flags])
    return code, (json.loads((root / out).read_text()) if code == 0 else None)


def test_zeroshot_over_a_set_with_a_broken_image_scores_the_rest(broken_project, capsys):
    root, model, broken = broken_project
    code, with_broken = run_task(
        root, model, "zeroshot", "z_broken.json", "eval.zeroshot.images=data/eval/images/imagenet_broken"
    )
    assert code == 0
    assert "12 images read, 11 kept, 1 quarantined (truncated_image 1)" in capsys.readouterr().err
    code, without = run_task(
        root, model, "zeroshot", "z_without.json", "eval.zeroshot.images=data/eval/images/imagenet_without"
    )
    assert code == 0
    assert with_broken["rows"] == without["rows"]  # the same numbers, for every language
    assert {row["lang"]: row["n_images"] for row in with_broken["rows"]}["eng_Latn"] == 11
    assert with_broken["provenance"]["sources"]["images"] == without["provenance"]["sources"]["images"]
    record = with_broken["quarantine"]["babel_imagenet"]
    assert (record["rows"], record["kept"], record["quarantined"], record["reasons"]) == (
        12,
        11,
        1,
        {"truncated_image": 1},
    )
    assert record["bad"] == [
        {"source": "data/eval/images/imagenet_broken", "line": 1, "reason": "truncated_image", "raw": broken}
    ]
    assert without["quarantine"]["babel_imagenet"]["quarantined"] == 0


def test_zeroshot_with_on_bad_row_fail_stops_with_one_line(broken_project, capsys):
    root, model, broken = broken_project
    code, _ = run_task(
        root,
        model,
        "zeroshot",
        "z_failed.json",
        "eval.zeroshot.images=data/eval/images/imagenet_broken",
        "eval.common.on_bad_row=fail",
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and not (root / "z_failed.json").exists()
    assert err[-1].startswith("babelforge eval_zeroshot: error: data/eval/images/imagenet_broken:1: ")
    assert f"(truncated_image): '{broken}'; on_bad_row is fail" in err[-1]


def test_retrieval_leaves_out_a_broken_image_with_its_captions(broken_project):
    root, model, _ = broken_project
    code, with_broken = run_task(
        root, model, "retrieval", "r_broken.json", "eval.retrieval.images=data/eval/images/captions_broken"
    )
    assert code == 0
    code, without = run_task(
        root, model, "retrieval", "r_without.json", "eval.retrieval.caption_sets=[without_img2.json]"
    )
    assert code == 0

    def metrics(rows):
        return [{k: v for k, v in row.items() if k not in ("dataset", "dataset_version")} for row in rows]

    assert metrics(with_broken["rows"]) == metrics(without["rows"])
    assert all(row["n_images"] == 5 for row in with_broken["rows"])
    record = with_broken["quarantine"]["captions"]
    assert record["reasons"] == {"not_an_image": 1}
    assert record["bad"][0]["line"] == 3 and record["bad"][0]["raw"] == "img2.jpg"


def test_mvl_sib_never_skips_a_bad_image(broken_project, capsys):
    """eval.common.on_bad_row is skip, yet a broken MVL-SIB thumbnail stops eval_mvl_sib, named."""
    root, model, _ = broken_project
    images = root / "data" / "mvl_sib"
    shutil.copytree(images / "images", images / "images_broken")
    (images / "images_broken" / "sports_3.jpg").write_bytes(b"")
    code, _ = run_task(root, model, "mvl_sib", "m_broken.json", "eval.mvl_sib.images=images_broken")
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and not (root / "m_broken.json").exists()
    assert "data/mvl_sib/images_broken:" in err[-1] and "(empty_file): 'sports_3.jpg'" in err[-1]
    assert "never skipped" in err[-1]
    shutil.rmtree(images / "images_broken")


def test_captions_cut_by_the_text_encoder_and_skipped_images_reach_the_run_and_the_report(broken_project, capsys):
    """One German caption longer than the tiny CLIP's text encoder reads, over the caption set with a
    broken image: the run JSON counts the cut caption for German only (rows and `text_truncation`),
    and eval_report's results.csv says per row how many images were skipped and texts were cut."""
    import pandas as pd

    from babelforge.eval.models import load_model

    root, model, _ = broken_project
    limit = load_model(model, device="cpu").max_text_length
    captions = json.loads((root / "captions.json").read_text(encoding="utf-8"))
    captions["captions"]["de"][4] = ["ein Foto " * limit]  # img4: kept, so its caption is scored
    (root / "long_caption.json").write_text(json.dumps(captions, ensure_ascii=False), encoding="utf-8")
    folder = root / "long_run"
    folder.mkdir()
    for task in ("retrieval", "clipscore"):
        code, run = run_task(
            root,
            model,
            task,
            f"long_run/{task}.json",
            f"eval.{task}.images=data/eval/images/captions_broken",
            f"eval.{task}.caption_sets=[long_caption.json]",
        )
        assert code == 0
        cut = {row["lang"]: row["texts_truncated"] for row in run["rows"]}
        assert cut == {"deu_Latn": 1, "eng_Latn": 0, "jpn_Jpan": 0}
        assert run["text_truncation"] == {
            model: {"texts_truncated": 1, "by_language": {"long_caption": {"deu_Latn": 1}}}
        }
        assert run["quarantine"]["long_caption"]["quarantined"] == 1
    assert f"1 of 5 texts cut to the text encoder's {limit} tokens" in capsys.readouterr().err
    assert main(["eval_report", "--out", str(folder), "--set=eval.report.tasks=[retrieval,clipscore]"]) == 0
    assert (
        "retrieval: images skipped: long_caption 1; texts cut to the text encoder's length" in capsys.readouterr().err
    )
    frame = pd.read_csv(folder / "results.csv")
    assert set(frame["task"]) == {"retrieval", "clipscore"}
    assert (frame["images_skipped"] == 1).all() and (frame["n_images"] == 5).all()
    assert frame.set_index(["task", "lang"])["texts_truncated"].to_dict() == {
        (task, lang): int(lang == "deu_Latn")
        for task in ("retrieval", "clipscore")
        for lang in ("deu_Latn", "eng_Latn", "jpn_Jpan")
    }


def test_bad_captions_of_a_caption_set_are_quarantined_as_the_captions_input_counts_them(broken_project):
    """A null, a number and a NUL before three German captions: retrieval and CLIPScore finish, score
    the set as the one without them, and the run JSON counts them (`quarantine.<set>.captions`)
    exactly as the captions input does for the same rows. (CLIP-S scores each image's first
    caption: an image left with none in a language still stops it, naming the language.)"""
    from babelforge.captions.formats.xtd import read_xtd
    from babelforge.core.bad_rows import Quarantine
    from babelforge.core.languages import registry

    root, model, _ = broken_project
    captions = json.loads((root / "captions.json").read_text(encoding="utf-8"))
    for index, bad in ((1, None), (3, 42), (4, "ein\x00Foto")):
        captions["captions"]["de"][index] = [bad, *captions["captions"]["de"][index]]
    (root / "bad_captions.json").write_text(json.dumps(captions, ensure_ascii=False), encoding="utf-8")
    captions_input = Quarantine(BadRowPolicy("skip", 1.0), "captions")
    read_xtd(root / "bad_captions.json", "deu_Latn", registry(), captions_input)

    def metrics(rows):
        return [{k: v for k, v in row.items() if k not in ("dataset", "dataset_version")} for row in rows]

    for task in ("retrieval", "clipscore"):
        code, run = run_task(root, model, task, f"bad_{task}.json", f"eval.{task}.caption_sets=[bad_captions.json]")
        assert code == 0
        record = run["quarantine"]["bad_captions"]["captions"]
        assert {key: record[key] for key in ("quarantined", "reasons")} == {
            key: captions_input.summary()[key] for key in ("quarantined", "reasons")
        }
        assert record["reasons"] == {"missing_caption": 2, "control_characters": 1}
        assert (record["rows"], record["kept"]) == (21, 18)  # 3 languages x 6 images, and the 3 bad ones
        code, clean = run_task(root, model, task, f"clean_{task}.json")
        assert code == 0
        assert metrics(run["rows"]) == metrics(clean["rows"])
