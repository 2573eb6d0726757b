"""Publishing: commit operations against the last receipt, dry run, idempotent receipts, audit gate.
The Hub is a fake object injected in place of HfApi: no network."""

import dataclasses
import inspect
import json
from types import SimpleNamespace

import pytest

from babelforge.cli import main as cli
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import sha256_file
from babelforge.publish import hub
from babelforge.publish.publish_stage import run
from tests.project import REPO


def real_signature(name, *args, **kwargs):
    """Fail unless the call fits huggingface_hub.HfApi's own method: the fake cannot drift from it."""
    from huggingface_hub import HfApi

    inspect.signature(getattr(HfApi, name)).bind(None, *args, **kwargs)


class FakeHub:
    """Records calls; answers create_commit with a new 40-hex commit id."""

    def __init__(self):
        self.calls = []

    def create_repo(self, repo_id, **kwargs):
        real_signature("create_repo", repo_id, **kwargs)
        self.calls.append(("create_repo", repo_id, kwargs["repo_type"]))

    def create_commit(self, repo_id, operations, **kwargs):
        real_signature("create_commit", repo_id, operations, **kwargs)
        self.calls.append(("create_commit", repo_id, [(type(op).__name__, op.path_in_repo) for op in operations]))
        return SimpleNamespace(oid=f"{len(self.calls):040x}")

    def create_tag(self, repo_id, **kwargs):
        real_signature("create_tag", repo_id, **kwargs)
        self.calls.append(("create_tag", repo_id, kwargs["tag"], kwargs["revision"]))

    def commits(self):
        return [call for call in self.calls if call[0] == "create_commit"]


def publish_args(tmp, *extra):
    """The publish stage's Config from its command line, as `babelforge publish` builds it."""
    from babelforge.cli import config_from_args, stage_parser
    from babelforge.publish import publish_stage

    parser = stage_parser(publish_stage.STAGE)
    args = parser.parse_args(
        [
            "babel-imagenet",
            "--repo",
            "org/babel-imagenet",
            "--params",
            str(REPO / "params.yaml"),
            "--hub",
            str(tmp / "build" / "hub"),
            "--releases",
            str(tmp / "releases"),
            "--audit",
            str(tmp / "audit"),
            *extra,
        ]
    )
    return config_from_args(publish_stage.STAGE, args)


def write_audit_errors(tmp, errors):
    """The audit's slice of the labels with `errors` error rows."""
    found = tmp / "audit" / "datasets" / "babel-imagenet.json"
    found.parent.mkdir(parents=True, exist_ok=True)
    found.write_text(json.dumps({"dataset": "babel-imagenet", "audited": True, "errors": errors}))


def test_plan_operations_adds_changes_and_deletes():
    local = {"a": {"size": 1, "sha256": "x"}, "b": {"size": 2, "sha256": "y2"}, "c": {"size": 3, "sha256": "z"}}
    remote = {"a": {"size": 1, "sha256": "x"}, "b": {"size": 2, "sha256": "y1"}, "d": {"size": 4, "sha256": "w"}}
    ops = hub.plan_operations(local, remote)
    assert [(op.kind, op.path) for op in ops] == [("add", "b"), ("add", "c"), ("delete", "d")]
    assert hub.plan_operations(local, local) == []
    assert hub.content_hash(local) != hub.content_hash(remote)
    assert hub.content_hash(dict(reversed(list(local.items())))) == hub.content_hash(local)


def test_dry_run_lists_every_file_with_size_and_sha256(built_card, card_inputs, capsys):
    assert run(publish_args(card_inputs, "--dry-run")) == 0
    out = capsys.readouterr().out
    files = sorted(p for p in built_card.rglob("*") if p.is_file())
    for path in files:
        line = next(line for line in out.splitlines() if f" {path.relative_to(built_card).as_posix()} " in line)
        assert line.startswith("add") and f"{path.stat().st_size:,} B" in line and sha256_file(path) in line
    assert "no receipt" in out and "card valid" in out
    assert not (card_inputs / "releases").exists()  # a dry run writes nothing


def test_dry_run_through_the_cli_diffs_against_the_last_receipt(built_card, card_inputs, capsys):
    fake = FakeHub()
    run(publish_args(card_inputs, "--revision-tag", "v1.0"), api=fake)
    (built_card / "data" / "fin_Latn" / "test.parquet").unlink()
    (built_card / "data" / "fin_Latn").rmdir()
    readme = built_card / "README.md"
    readme.write_text(
        readme.read_text().replace("path: data/fin_Latn/test.parquet", "path: data/eng_Latn/test.parquet")
    )
    capsys.readouterr()
    assert (
        cli(
            [
                "publish",
                "babel-imagenet",
                "--repo",
                "org/babel-imagenet",
                "--dry-run",
                "--hub",
                str(card_inputs / "build" / "hub"),
                "--releases",
                str(card_inputs / "releases"),
            ]
        )
        == 0
    )
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("add", "delete"))]
    assert [line.split()[:2] for line in lines] == [["add", "README.md"], ["delete", "data/fin_Latn/test.parquet"]]


def test_publish_is_idempotent_and_writes_receipts(built_card, card_inputs, capsys):
    fake = FakeHub()
    assert run(publish_args(card_inputs, "--revision-tag", "v1.0"), api=fake) == 0
    receipt_path = card_inputs / "releases" / "babel-imagenet" / "0001-v1.0.json"
    receipt = json.loads(receipt_path.read_text())
    first_commit = fake.commits()[0]
    assert len(first_commit[2]) == len(receipt["files"]) == len([p for p in built_card.rglob("*") if p.is_file()])
    assert ("CommitOperationAdd", "croissant.json") in first_commit[2]  # the Croissant metadata goes with the card
    assert receipt["repo"] == "org/babel-imagenet" and receipt["version"] == "v1.0"
    assert receipt["commit"] == f"{2:040x}" and receipt["content_hash"] == hub.content_hash(hub.manifest(built_card))
    assert ("create_tag", "org/babel-imagenet", "v1.0", receipt["commit"]) in fake.calls

    # same content again: nothing to do, no Hub call, no receipt
    again = FakeHub()
    assert run(publish_args(card_inputs, "--revision-tag", "v1.0"), api=again) == 0
    assert again.calls == [] and "nothing to do" in capsys.readouterr().out
    assert len(list(receipt_path.parent.iterdir())) == 1

    # one file changed: one add, next receipt number
    (built_card / "LICENSES.md").write_text("changed\n")
    third = FakeHub()
    assert run(publish_args(card_inputs, "--revision-tag", "v1.1"), api=third) == 0
    assert third.commits()[0][2] == [("CommitOperationAdd", "LICENSES.md")]
    assert json.loads((receipt_path.parent / "0002-v1.1.json").read_text())["commit"] == f"{2:040x}"


def test_a_published_version_is_never_moved(built_card, card_inputs, capsys):
    run(publish_args(card_inputs, "--revision-tag", "v1.0"), api=FakeHub())
    (built_card / "LICENSES.md").write_text("changed\n")
    fake = FakeHub()
    with pytest.raises(BabelforgeError, match="new version"):
        run(publish_args(card_inputs, "--revision-tag", "v1.0"), api=fake)
    assert fake.calls == []
    assert run(publish_args(card_inputs, "--revision-tag", "v1.0", "--dry-run")) == 0
    assert "a real run refuses" in capsys.readouterr().out


def test_a_receipt_for_another_repo_is_not_this_repos_state(built_card, card_inputs):
    run(publish_args(card_inputs), api=FakeHub())
    fake = FakeHub()
    run(dataclasses.replace(publish_args(card_inputs), repo="org/mirror"), api=fake)
    assert len(fake.commits()[0][2]) > 1  # everything, since org/mirror has no receipt


def test_audit_errors_block_unless_forced(built_card, card_inputs):
    write_audit_errors(card_inputs, 3)
    fake = FakeHub()
    with pytest.raises(BabelforgeError, match="3 error rows"):
        run(publish_args(card_inputs), api=fake)
    assert fake.calls == [] and not (card_inputs / "releases").exists()
    assert run(publish_args(card_inputs, "--force"), api=fake) == 0
    receipt = json.loads(next((card_inputs / "releases" / "babel-imagenet").iterdir()).read_text())
    assert receipt["forced"] is True and receipt["audit_errors"] == 3


def test_invalid_card_is_never_published(built_card, card_inputs):
    (built_card / "README.md").write_text("no front matter\n")
    with pytest.raises(BabelforgeError, match="card is invalid"):
        run(publish_args(card_inputs), api=FakeHub())
    with pytest.raises(BabelforgeError, match="invalid"):
        run(publish_args(card_inputs, "--dry-run"))


def test_real_run_needs_a_token_and_never_prints_it(built_card, card_inputs, monkeypatch, capsys):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(BabelforgeError, match="HF_TOKEN"):
        run(publish_args(card_inputs))
    assert cli(["publish", "babel-imagenet", "--repo", "not a repo", "--dry-run"]) == 1
    assert cli(["publish", "babel-imagenet", "--repo", "org/x", "--revision-tag", "1.0", "--dry-run"]) == 1
    monkeypatch.setenv("HF_TOKEN", "hf_secret_value_for_test")
    fake = FakeHub()
    run(publish_args(card_inputs), api=fake)
    captured = capsys.readouterr()
    receipts = "".join(p.read_text() for p in (card_inputs / "releases").rglob("*.json"))
    assert "hf_secret_value_for_test" not in captured.out + captured.err + receipts


def test_a_hub_error_is_one_line_without_the_token(built_card, card_inputs, monkeypatch, capsys):
    from huggingface_hub.errors import HfHubHTTPError

    from babelforge.publish import publish_stage

    secret = "hf_another_secret_for_test"
    monkeypatch.setenv("HF_TOKEN", secret)

    class RefusingHub(FakeHub):
        def create_commit(self, repo_id, operations, **kwargs):
            raise HfHubHTTPError(f"403 Forbidden: token {secret} cannot write to {repo_id}\nmore detail")

    with pytest.raises(BabelforgeError, match="Hub refused") as caught:
        publish_stage.run(publish_args(card_inputs), api=RefusingHub())
    message = str(caught.value)
    assert secret not in message and "403 Forbidden" in message and "\n" not in message
    assert not (card_inputs / "releases").exists()  # no receipt for a commit that did not happen
    with pytest.raises(SystemExit):  # argparse: the dataset is one of the cards
        cli(["publish", "../elsewhere", "--repo", "org/x", "--dry-run"])


def test_a_failed_tag_keeps_the_commit_so_a_rerun_only_tags(built_card, card_inputs, capsys):
    from huggingface_hub.errors import HfHubHTTPError

    class TagFailsHub(FakeHub):
        def create_tag(self, repo_id, **kwargs):
            raise HfHubHTTPError("502 Bad Gateway")

    first = TagFailsHub()
    with pytest.raises(BabelforgeError, match="502"):
        run(publish_args(card_inputs, "--revision-tag", "v1.0"), api=first)
    releases = card_inputs / "releases" / "babel-imagenet"
    untagged = json.loads((releases / "0001-unversioned.json").read_text())
    assert untagged["commit"] == f"{2:040x}"  # create_repo, then the commit
    assert untagged["version"] is None
    capsys.readouterr()
    assert run(publish_args(card_inputs, "--revision-tag", "v1.0", "--dry-run")) == 0
    dry = capsys.readouterr().out
    assert "nothing to do" in dry and f"tag v1.0 at commit {2:040x}" in dry
    rerun = FakeHub()
    assert run(publish_args(card_inputs, "--revision-tag", "v1.0"), api=rerun) == 0
    assert rerun.commits() == []  # the content is on the Hub already: only the tag is added
    assert ("create_tag", "org/babel-imagenet", "v1.0", f"{2:040x}") in rerun.calls
    assert json.loads((releases / "0002-v1.0.json").read_text())["commit"] == f"{2:040x}"
