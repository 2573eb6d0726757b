"""`babelforge publish <dataset> --repo ORG/NAME`: push a built card to the Hugging Face Hub.

Not a DVC stage: it has side effects outside the repository. `--dry-run` works offline:
it validates the card and prints the exact commit operations against the last receipt in
`paths.releases` (releases/), and exits 0. A real run needs `HF_TOKEN` in the environment (never
printed), refuses when the audit's slice of the dataset (`<paths.audit>/datasets/<dataset>.json`)
counts errors unless `--force`, refuses a card of the `sample` profile (random tiny models) unless
`--allow-sample`, and writes a receipt into `paths.releases`.
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.config import setting
from babelforge.core.datasets import names, slice_path, spec
from babelforge.core.errors import BabelforgeError
from babelforge.core.http import redact, register_secret
from babelforge.core.progress import info
from babelforge.core.stages import Paths, Stage, stage_paths
from babelforge.publish import hub
from babelforge.publish.card import validate_card

REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
VERSION = re.compile(r"^v\d+\.\d+(\.\d+)?$")


@dataclass(frozen=True)
class Config:
    """The `publish` group: what to publish where. Cards are read from `paths.hub`, receipts kept in
    `paths.releases`, the audit gate reads the dataset's slice in `paths.audit`."""

    GROUP = "publish"
    dataset: str | None = setting(None, "which built card to publish (a name in builders/core/datasets.py)")
    repo: str | None = setting(None, "Hub dataset repo, ORG/NAME")
    revision_tag: str | None = setting(None, "tag the commit with this dataset version (vX.Y or vX.Y.Z)")
    dry_run: bool = setting(False, "validate and list the operations; no network")
    force: bool = setting(False, "publish even when the audit has errors")
    allow_sample: bool = setting(
        False, "publish a card of the sample profile (random tiny models), tagged sample-build"
    )
    private: bool = setting(False, "create the repo private (when it is new)")
    paths: Paths = stage_paths()


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", choices=names(), help="which built card under paths.hub to publish")
    parser.add_argument("--repo", required=True, help="Hub dataset repo, ORG/NAME")
    parser.add_argument("--revision-tag", default=None, help="tag the commit with this dataset version (vX.Y)")
    parser.add_argument(
        "--dry-run", action="store_true", default=None, help="validate and list the operations; no network"
    )
    parser.add_argument("--force", action="store_true", default=None, help="publish even when the audit has errors")
    parser.add_argument(
        "--allow-sample",
        dest="allow_sample",
        action="store_true",
        default=None,
        help="publish a card of the sample profile (random tiny models; the card says so)",
    )
    parser.add_argument("--private", action="store_true", default=None, help="create the repo private (when it is new)")


def run(config: Config, api=None) -> int:

    if config.dataset is None or config.repo is None:
        raise BabelforgeError("publish: name the dataset and --repo ORG/NAME")
    spec(config.dataset)  # a name the registry knows
    if not REPO_ID.match(config.repo):
        raise BabelforgeError(f"--repo {config.repo!r}: expected ORG/NAME")
    if config.revision_tag and not VERSION.match(config.revision_tag):
        raise BabelforgeError(f"--revision-tag {config.revision_tag!r}: expected vX.Y or vX.Y.Z")
    folder = Path(config.paths.hub) / config.dataset
    releases, audit = Path(config.paths.releases), slice_path(config.paths, config.dataset)

    if config.dry_run:
        problems = validate_card(folder) if folder.is_dir() else [f"{folder}: no built card"]
        for problem in problems:
            info(f"invalid: {problem}")
        if problems:
            raise BabelforgeError(f"publish --dry-run: the card at {folder} is invalid ({len(problems)} problems)")
        local = hub.manifest(folder)
        previous = hub.last_receipt(releases, config.dataset, config.repo)
        where = (
            f"last receipt: commit {previous.get('commit')}, version {previous.get('version')}"
            if previous
            else "no receipt: the repo is taken as empty"
        )
        print(f"dry run: {config.dataset} -> {config.repo} ({where})")
        print(f"content hash {hub.content_hash(local)}; card valid")
        errors = hub.audit_errors(audit)
        if errors is None:
            print(f"audit: no findings at {audit}")
        else:
            print(
                f"audit: {errors} error rows"
                + (" (a real run refuses without --force)" if errors and not config.force else "")
            )
        print(hub.sample_line(folder, config.allow_sample))
        conflict = hub.version_conflict(
            releases, config.dataset, config.repo, config.revision_tag, hub.content_hash(local)
        )
        if conflict:
            print(f"version: {conflict} (a real run refuses)")
        same = previous is not None and previous.get("content_hash") == hub.content_hash(local)
        print(
            hub.format_operations(
                [] if same else hub.plan_operations(local, previous.get("files", {}) if previous else {})
            )
        )
        if config.revision_tag and not (same and previous.get("version") == config.revision_tag):
            at = f"commit {previous.get('commit')}" if same else "the new commit"
            print(f"tag {config.revision_tag} at {at}")
        return 0

    from requests import RequestException

    hub.refuse_sample(folder, config.allow_sample)  # before the token is asked for: no token changes this answer
    token = os.environ.get("HF_TOKEN")
    register_secret(token)  # masked in every message below, whoever produces it
    if api is None:
        if not token:
            raise BabelforgeError("publish: set HF_TOKEN in the environment (a Hub write token), or use --dry-run")
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    try:
        result = hub.publish(
            api,
            folder,
            config.dataset,
            config.repo,
            releases,
            config.revision_tag,
            audit,
            force=config.force,
            private=config.private,
            allow_sample=config.allow_sample,
        )
    except RequestException as error:  # huggingface_hub's HTTP errors included
        first_line = redact(str(error)).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise BabelforgeError(
            f"publish: the Hub refused or could not be reached ({first_line}); "
            "check HF_TOKEN's write access to the repo and the network, then rerun"
        ) from None
    if result.receipt is None:
        print(f"nothing to do: {config.repo} already has content {result.content_hash[:12]}")
        return 0
    print(hub.format_operations(result.operations))
    print(
        f"published {config.dataset} to {config.repo} at commit {result.receipt['commit']}; receipt {result.receipt_path}"
    )
    return 0


STAGE = Stage(
    "publish",
    "publish a built card to the Hugging Face Hub (outside dvc repro)",
    run,
    config=Config,
    flags={
        "--hub": ("paths.hub", "where the built cards are"),
        "--releases": ("paths.releases", "receipts folder"),
        "--audit": ("paths.audit", "audit report whose datasets/<dataset>.json gates publishing"),
    },
    configure=configure,
    tool=True,
    docs="docs/guides/publish.md",
    in_params_yaml=False,
    owns={
        "releases": ("releases", "publish receipts, releases/<dataset>/NNNN-<version>.json (in git)"),
    },
)
