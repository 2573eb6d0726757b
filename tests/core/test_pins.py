"""babelforge.core.pins: a pin written into its home changes that one value and nothing else; a
refused fetch says in one line which input, both digests, where the pin is and how to accept."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import yaml

from babelforge.core.errors import BabelforgeError
from babelforge.core.http import ChecksumMismatchError, RetryPolicy, copy_verified, download, remote_sha256
from babelforge.core.pins import (
    PinHome,
    RemoteInput,
    check_new_pin,
    counts_by_kind,
    key_line,
    set_params_value,
    set_tsv_cell,
)
from tests.loopback import LoopbackServer, serving

REPO = Path(__file__).resolve().parents[2]
FAST = RetryPolicy(attempts=2, base_delay=0.0, max_delay=0.0)


@pytest.fixture
def params_copy(tmp_path: Path) -> Path:
    path = tmp_path / "params.yaml"
    path.write_bytes((REPO / "params.yaml").read_bytes())
    return path


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    assert len(before.splitlines()) == len(after.splitlines())
    return [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b]


def test_a_params_pin_changes_its_one_line_and_keeps_its_comment(params_copy: Path):
    before = params_copy.read_text()
    set_params_value(params_copy, "captions.tag.kiwi_revision", "a" * 40, "full")
    after = params_copy.read_text()
    [(old, new)] = changed_lines(before, after)
    assert old.strip().startswith("kiwi_revision:") and new.strip().startswith(f"kiwi_revision: {'a' * 40}")
    assert "# Hub commit to pin (full)" in new
    assert yaml.safe_load(after)["captions"]["tag"]["kiwi_revision"] == "a" * 40


def test_a_profile_choice_gets_the_selected_profiles_branch_only(params_copy: Path):
    before = params_copy.read_text()
    set_params_value(params_copy, "captions.tag.kiwi_model", "Org/other-kiwi", "full")
    tag = yaml.safe_load(params_copy.read_text())["captions"]["tag"]["kiwi_model"]
    assert tag == {"sample": "models/cometkiwi-tiny", "full": "Org/other-kiwi"}
    assert len(changed_lines(before, params_copy.read_text())) == 1


def test_a_value_that_contains_a_profile_name_is_written_as_is(params_copy: Path):
    set_params_value(params_copy, "captions.tag.kiwi_revision", "full-sample", "full")
    assert yaml.safe_load(params_copy.read_text())["captions"]["tag"]["kiwi_revision"] == "full-sample"


def test_an_input_of_an_unknown_kind_or_strength_is_refused():
    home = PinHome("n", "w")
    with pytest.raises(ValueError, match="kind 'archive'"):
        RemoteInput("a", "archive", None, home, ())
    with pytest.raises(ValueError, match="strength 'weak'"):
        RemoteInput("a", "file", None, home, (), strength="weak")


def test_a_pin_folded_below_its_key_is_replaced_whole(params_copy: Path):
    """The generator folds a long value onto the next line (xm3600_fetch's sha256 pins)."""
    before = params_copy.read_text()
    assert re.search(r"^  images_sha256: ?\n    [0-9a-f]{64}\n", before, re.M)
    set_params_value(params_copy, "xm3600_fetch.images_sha256", "e" * 64, "full")
    after = params_copy.read_text()
    assert f"  images_sha256: {'e' * 64}\n  # sha256 of image_attributions.csv" in after
    assert len(after.splitlines()) == len(before.splitlines()) - 1
    params = yaml.safe_load(after)["xm3600_fetch"]
    assert params["images_sha256"] == "e" * 64 and params["captions_sha256"].startswith("7964f969")


def test_the_same_key_name_in_two_groups_is_told_apart(params_copy: Path):
    set_params_value(params_copy, "xm3600_fetch.mirror_url", "http://127.0.0.1:9/", "full")
    params = yaml.safe_load(params_copy.read_text())
    assert params["xm3600_fetch"]["mirror_url"] == "http://127.0.0.1:9/"
    assert params["fetch"]["mirror_url"] is None


def test_a_key_that_is_not_there_is_refused_and_nothing_written(params_copy: Path):
    before = params_copy.read_bytes()
    with pytest.raises(BabelforgeError, match="no key captions.tag.no_such_key"):
        set_params_value(params_copy, "captions.tag.no_such_key", "x", "full")
    assert params_copy.read_bytes() == before


def test_key_line_walks_by_indentation():
    lines = ["a:\n", "  b: 1\n", "c:\n", "  b: 2\n", "  d:\n", "    b: 3\n"]
    assert key_line(lines, ["c", "b"]) == 3
    assert key_line(lines, ["c", "d", "b"]) == 5
    assert key_line(lines, ["a", "d"]) is None


def test_a_tsv_cell_changes_in_its_row_only(tmp_path: Path):
    path = tmp_path / "models.tsv"
    path.write_bytes((REPO / "resources/papers/models.tsv").read_bytes())
    before = path.read_text()
    old = set_tsv_cell(path, "short", "mSigLIP", "revision", lambda old: "b" * 40)
    assert old == ""
    [(was, now)] = changed_lines(before, path.read_text())
    assert was.split("\t")[1] == now.split("\t")[1] == "mSigLIP"
    assert now.split("\t")[5] == "b" * 40 and was.split("\t")[:5] == now.split("\t")[:5]
    with pytest.raises(BabelforgeError, match="no row with short 'nope'"):
        set_tsv_cell(path, "short", "nope", "revision", lambda old: "x")
    with pytest.raises(BabelforgeError, match="no column"):
        set_tsv_cell(path, "short", "mSigLIP", "no_such_column", lambda old: "x")


def test_a_resolved_pin_must_have_its_kinds_shape():
    hub = RemoteInput("hub:a/b", "hub-model", None, PinHome("hub:a/b", "x"), ("r",), ask="a/b", repo_type="model")
    file = RemoteInput("f", "file", None, PinHome("f", "x"), ("r",), ask="http://h/f")
    check_new_pin(hub, "c" * 40)
    check_new_pin(file, "d" * 64)
    with pytest.raises(BabelforgeError):
        check_new_pin(hub, "d" * 64)
    with pytest.raises(BabelforgeError):
        check_new_pin(file, "c" * 40)


def test_counts_by_kind_and_state():
    home = PinHome("n", "w")
    inputs = [
        RemoteInput("a", "file", "x", home, ()),
        RemoteInput("b", "file", None, home, ()),
        RemoteInput("c", "hub-model", "tag1", home, (), strength="tag"),
        RemoteInput("d", "service", None, home, (), strength="unpinnable"),
    ]
    assert counts_by_kind(inputs) == {
        "file": {"pinned": 1, "tag": 0, "unpinned": 1, "unpinnable": 0},
        "hub-model": {"pinned": 0, "tag": 1, "unpinned": 0, "unpinnable": 0},
        "service": {"pinned": 0, "tag": 0, "unpinned": 0, "unpinnable": 1},
    }
    assert [item.pin_text() for item in inputs] == ["x", "UNPINNED", "tag1", "unpinnable"]


def test_a_tampered_download_is_refused_in_one_line_naming_input_digests_home_and_the_fix(tmp_path: Path):
    good, bad = b"the pinned bytes", b"other bytes"
    pinned = hashlib.sha256(good).hexdigest()
    server = LoopbackServer()
    server.files["xm3600/captions.zip"] = bad
    home = PinHome("xm3600/captions.zip", "params.yaml xm3600_fetch.captions_sha256")
    with serving(server):
        with pytest.raises(ChecksumMismatchError) as caught:
            download(server.url + "xm3600/captions.zip", tmp_path / "captions.zip", pinned, policy=FAST, pin=home)
        digest, size = remote_sha256(server.url + "xm3600/captions.zip", policy=FAST)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("xm3600/captions.zip: sha256 " + hashlib.sha256(bad).hexdigest())
    assert f"params.yaml xm3600_fetch.captions_sha256 pins {pinned}" in message
    assert "babelforge pins --update --accept xm3600/captions.zip" in message
    assert not list(tmp_path.iterdir())  # nothing kept
    assert (digest, size) == (hashlib.sha256(bad).hexdigest(), len(bad))


def test_a_tampered_mirror_copy_is_refused_the_same_way(tmp_path: Path):
    (tmp_path / "mirror").mkdir()
    (tmp_path / "mirror" / "f.csv").write_bytes(b"changed")
    home = PinHome("xm3600/image_attributions.csv", "params.yaml xm3600_fetch.attributions_sha256")
    with pytest.raises(ChecksumMismatchError, match=r"^xm3600/image_attributions.csv: sha256 [0-9a-f]{64} from "):
        copy_verified(tmp_path / "mirror" / "f.csv", tmp_path / "out.csv", "0" * 64, "x", "", "", pin=home)
    assert not (tmp_path / "out.csv").exists()
