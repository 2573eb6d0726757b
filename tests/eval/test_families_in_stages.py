"""Every model family through every eval task: zero-shot, retrieval, CLIPScore and MVL-SIB run by the
CLI with `--model <spec>` on a small project, on tiny random models each built with its family's own
library (tests/eval/conftest.py). The transformers family runs the same stages in test_stages.py."""

import json

import pytest

from babelforge.cli import main
from babelforge.eval.families import parse_spec
from babelforge.eval.tasks import names

TASKS = tuple(names())  # every registered eval task (babelforge.eval.tasks)
# variant -> (fixture of its folder, family, paired with the tiny CLIP as its image tower)
VARIANTS = {
    "open_clip-bpe": ("open_clip_bpe_dir", "open_clip", False),
    "open_clip-xlmr": ("open_clip_xlmr_dir", "open_clip", False),
    "open_clip-nllb-siglip": ("open_clip_nllb_dir", "open_clip", False),
    "mclip": ("tiny_mclip_dir", "mclip", True),
    "st": ("tiny_st_dir", "st", True),
}


@pytest.fixture(scope="module")
def project(stage_project):
    return stage_project


def spec_of(request, variant: str) -> tuple[str, str]:
    """(the spec, its family) of a variant's tiny model; a text-only one paired with the tiny CLIP."""
    fixture, family, paired = VARIANTS[variant]
    folder = request.getfixturevalue(fixture)
    if paired:
        return f"{folder}+{request.getfixturevalue('tiny_clip_dir')}", family
    return str(folder), family


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_eval_task_runs_on_the_family(project, request, variant):
    spec, family = spec_of(request, variant)
    ref = parse_spec(spec)
    assert ref.family == family  # detected from the folder's files
    for task in TASKS:
        out = project / "runs" / variant / f"{task}.json"
        assert main([f"eval_{task}", "--model", spec, "--out", str(out)]) == 0, task
        document = json.loads(out.read_text(encoding="utf-8"))
        rows = document["rows"]
        assert rows, task
        assert {row["model"] for row in rows} == {ref.name}, task
        (revision,) = {row["revision"] for row in rows}
        # a folder is pinned by its content hash; a paired model by both of its parts
        assert revision.startswith("sha256:") and revision.count("sha256:") == (2 if ref.image else 1), task
        assert document["provenance"]["models"] == {ref.name: revision}, task
    zeroshot = json.loads((project / "runs" / variant / "zeroshot.json").read_text(encoding="utf-8"))["rows"]
    assert {row["lang"] for row in zeroshot} == {"eng_Latn", "deu_Latn", "fry_Latn", "jpn_Jpan"}
    assert all(0.0 <= row["top1"] <= row["top5"] <= 1.0 for row in zeroshot)


def test_text_only_models_share_their_image_towers_embeddings(project, request, capsys):
    """M-CLIP and the sentence-transformers model paired with one image tower: the images are encoded
    once, under the tower's own name, and the second model reads them from the cache."""
    first, _ = spec_of(request, "mclip")
    second, _ = spec_of(request, "st")
    tower = str(request.getfixturevalue("tiny_clip_dir"))
    cache = project / ".cache" / "eval-shared"
    for spec in (first, second):
        out = project / "runs" / "shared" / f"{parse_spec(spec).family}.json"
        args = ["eval_zeroshot", "--model", spec, "--out", str(out), "--set", f"eval.common.cache={cache}"]
        assert main(args) == 0
    log = capsys.readouterr().err
    encoded = [line for line in log.splitlines() if "images encoded" in line]
    assert len(encoded) == 2 and encoded[0].endswith("images encoded 12)") and encoded[1].endswith("images encoded 0)")
    keys = [json.loads(path.read_text(encoding="utf-8")) for path in cache.glob("*/key.json")]
    assert [key["model"] for key in keys] == [tower]
