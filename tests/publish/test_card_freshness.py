"""A card refuses an audit slice of another build: the audit records a digest of the input it
summarised (`input` of each audited dataset's slice), the card compares it with the input now."""

from __future__ import annotations

import dataclasses
import json

import pandas as pd
import pytest

from babelforge.audit.sections import audited, slices
from babelforge.core.datasets import input_digest, slice_path, spec, specs
from babelforge.core.errors import BabelforgeError
from babelforge.core.stages import Paths
from babelforge.publish.card_stage import fresh_audit


@pytest.fixture
def paths(tmp_path):
    """Every path of the `paths` group inside tmp_path, and a small labels table where paths.labels says."""
    found = Paths(**{f.name: str(tmp_path / f.name) for f in dataclasses.fields(Paths)})
    pd.DataFrame({"class_idx": [0], "lang": ["deu_Latn"], "label": ["Schleie"]}).to_parquet(found.labels)
    return found


def audit_slices(paths) -> dict:
    """The slices an audit of these inputs writes (sections not built: only the labels exist)."""
    keys = {section.key: section for _, section in audited()}
    summary = {"errors": 2, "warnings": 1, "languages": {}, "inputs": dict.fromkeys(keys, "not built")}
    summary |= {key: {} for key, section in keys.items() if section.overview}
    return slices(summary, {}, dict.fromkeys(keys), paths)


def write_slice(paths, found: dict) -> None:
    path = slice_path(paths, "babel-imagenet")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(found), encoding="utf-8")


def test_the_audit_records_the_digest_of_each_input_it_summarised(paths):
    found = audit_slices(paths)
    assert found["babel-imagenet"]["input"] == {"artifact": "labels", "sha256": input_digest(paths.labels)}
    assert found["babel-imagenet-prompts"]["input"] == {"artifact": "prompts", "sha256": None}  # not built
    unaudited = [s.name for s in specs() if s.audit is None]
    assert all("input" not in found[name] for name in unaudited)


def test_a_card_takes_the_slice_of_its_own_build_and_refuses_another_builds(paths):
    write_slice(paths, audit_slices(paths)["babel-imagenet"])
    assert fresh_audit(spec("babel-imagenet"), paths)["errors"] == 2
    recorded = input_digest(paths.labels)
    pd.DataFrame({"class_idx": [0, 1], "lang": ["deu_Latn"] * 2, "label": ["Schleie", "Goldfisch"]}).to_parquet(
        paths.labels
    )  # the labels rebuilt, the audit not
    with pytest.raises(BabelforgeError) as error:
        fresh_audit(spec("babel-imagenet"), paths)
    message = str(error.value)
    assert message == (
        f"card babel-imagenet: {slice_path(paths, 'babel-imagenet')} summarises another build of labels "
        f"(sha256 {recorded[:12]}, now {input_digest(paths.labels)[:12]}); rebuild the audit first "
        "(`dvc repro audit`, or `babelforge audit`)"
    )


def test_no_slice_is_no_audit_and_a_slice_recording_no_input_is_taken_as_it_is(paths):
    assert fresh_audit(spec("babel-imagenet"), paths) == {}
    write_slice(paths, {"dataset": "babel-imagenet", "audited": True, "errors": 7})
    assert fresh_audit(spec("babel-imagenet"), paths)["errors"] == 7


def test_a_folder_input_has_a_digest_of_its_files(tmp_path):
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "a.json").write_text("1")
    before = input_digest(tmp_path / "f")
    (tmp_path / "f" / "a.json").write_text("2")
    assert before is not None and input_digest(tmp_path / "f") != before
    assert input_digest(tmp_path / "none") is None
