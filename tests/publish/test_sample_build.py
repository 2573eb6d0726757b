"""A build of the `sample` profile says so: the card's banner and tag, the caption card's claims
about its checks, and `publish` refusing it unless --allow-sample (issue 25)."""

import pandas as pd
import pytest
import yaml

from babelforge.core.config import as_params, load_config
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import write_table
from babelforge.core.provenance import SAMPLE_MODELS, provenance
from babelforge.publish import card
from babelforge.publish.publish_stage import run
from tests.project import REPO
from tests.publish.conftest import build, crafted_labels
from tests.publish.test_hub import FakeHub, publish_args


def write_labels(folder, profile):
    """labels.parquet as the labels stage of `profile` records it (`profile` in its params)."""
    record = provenance("labels", {"profile": profile, "labels": {"min_classes": 10}})
    write_table(crafted_labels(), folder / "labels.parquet", sort_by=["lang", "class_idx"], provenance=record)


def front_matter(folder):
    return yaml.safe_load(card.FRONT_MATTER.match((folder / "README.md").read_text(encoding="utf-8")).group(1))


def body(folder):
    return card.FRONT_MATTER.sub("", (folder / "README.md").read_text(encoding="utf-8"))


def test_a_sample_card_has_the_banner_on_top_and_the_tag(card_inputs):
    write_labels(card_inputs, "sample")
    folder = build("babel-imagenet", card_inputs)
    text = body(folder)
    assert text.lstrip("\n").startswith(card.SAMPLE_BANNER)  # before the title
    assert "SAMPLE build" in text and SAMPLE_MODELS in text and "not the benchmark" in text
    assert card.SAMPLE_TAG in front_matter(folder)["tags"]
    assert '"profile": "sample"' in text  # the provenance section shows the build record
    assert card.is_sample_build(folder) and card.validate_card(folder) == []


def test_a_full_card_has_neither(card_inputs):
    write_labels(card_inputs, "full")
    folder = build("babel-imagenet", card_inputs)
    assert card.SAMPLE_BANNER not in body(folder) and "SAMPLE" not in body(folder)
    assert card.SAMPLE_TAG not in front_matter(folder)["tags"]
    assert not card.is_sample_build(folder)


def caption_card(folder, profile):
    """The mt-captions card over selected.parquet recording the `captions.select` settings of `profile`
    (the repo's params.yaml), as captions_select records them."""
    from babelforge.captions.select_stage import Config

    params = {**yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8")), "profile": profile}
    config = load_config(Config, params)
    record = provenance("captions_select", {"profile": config.profile, "select": as_params(config)})
    rows = pd.DataFrame(
        [{"caption_id": f"c{i}", "lang": "fin_Latn", "text": f"t {i}", "reason": None} for i in range(3)]
    )
    write_table(rows, folder / "selected.parquet", sort_by=["caption_id"], provenance=record)
    return body(build("mt-captions", folder))


def test_the_caption_card_says_the_sample_checks_of_language_and_script_are_off(card_inputs):
    text = caption_card(card_inputs, "sample")
    dropped = next(line for line in text.splitlines() if line.startswith("Hypotheses dropped"))
    off = next(line for line in text.splitlines() if line.startswith("Checks off in this build"))
    assert "empty" in dropped and "copy of the English source" in dropped
    assert "wrong language" not in dropped and "wrong script" not in dropped
    assert "wrong language" in off and "wrong script" in off and "decoder loop" in off
    assert "wrong language or script dropped" not in text  # the old unconditional claim


def test_the_caption_card_says_the_full_checks_drop_wrong_language_and_script(card_inputs):
    text = caption_card(card_inputs, "full")
    dropped = next(line for line in text.splitlines() if line.startswith("Hypotheses dropped"))
    assert "wrong language" in dropped and "wrong script" in dropped and "decoder loop" in dropped
    off = [line for line in text.splitlines() if line.startswith("Checks off in this build")]
    assert off == [off[0]] and "COMETKiwi floor" in off[0] and "wrong" not in off[0]  # only the unset floor
    assert card.SAMPLE_TAG not in text


def test_a_per_language_override_is_named():
    from babelforge.captions.dataset import selection_notes

    select = {
        "default": {"empty": {"blank_v1__empty": {"equals": False}}, "script": {"script_v1__share": {"min": None}}},
        "languages": {"jpn_Jpan": {"script": {"script_v1__share": {"min": 0.7}}}},
    }
    notes = selection_notes({"params": {"select": select}})
    assert notes[1].endswith("in the wrong script (on for jpn_Jpan).")
    assert "not record" in selection_notes({"params": {}})[0]


def test_publish_refuses_a_sample_build_unless_allowed(card_inputs):
    write_labels(card_inputs, "sample")
    build("babel-imagenet", card_inputs)
    fake = FakeHub()
    with pytest.raises(BabelforgeError, match="SAMPLE build") as caught:
        run(publish_args(card_inputs), api=fake)
    assert "--allow-sample" in str(caught.value) and "\n" not in str(caught.value)
    assert fake.calls == [] and not (card_inputs / "releases").exists()
    assert run(publish_args(card_inputs, "--allow-sample"), api=fake) == 0
    assert fake.commits()


def test_publish_refuses_a_sample_build_before_asking_for_a_token(card_inputs, monkeypatch, capsys):
    from babelforge.cli import main as cli

    monkeypatch.delenv("HF_TOKEN", raising=False)
    write_labels(card_inputs, "sample")
    build("babel-imagenet", card_inputs)
    hub_dir, releases = str(card_inputs / "build" / "hub"), str(card_inputs / "releases")
    capsys.readouterr()
    assert cli(["publish", "babel-imagenet", "--repo", "org/x", "--hub", hub_dir, "--releases", releases]) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "SAMPLE build" in error and "HF_TOKEN" not in error


def test_the_dry_run_says_a_sample_build_is_refused_or_allowed(card_inputs, capsys):
    write_labels(card_inputs, "sample")
    build("babel-imagenet", card_inputs)
    assert run(publish_args(card_inputs, "--dry-run")) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("build:"))
    assert "SAMPLE build" in line and "--allow-sample" in line and "a real run refuses" in line
    assert run(publish_args(card_inputs, "--dry-run", "--allow-sample")) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("build:"))
    assert "SAMPLE" in line and "refuses" not in line


def test_the_dry_run_of_a_full_build_has_no_sample_warning(card_inputs, capsys):
    write_labels(card_inputs, "full")
    build("babel-imagenet", card_inputs)
    assert run(publish_args(card_inputs, "--dry-run")) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("build:"))
    assert "SAMPLE" not in line
