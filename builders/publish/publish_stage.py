"""`babelforge publish <dataset> --repo ORG/NAME`: push a built card to the Hugging Face Hub.

Not a DVC stage: it has side effects outside the repository. `--dry-run` works offline:
it validates the card and prints the exact commit operations against the last receipt in
`releases/`, and exits 0. A real run needs `HF_TOKEN` in the environment (never printed),
refuses when the audit has errors unless `--force`, and writes a receipt into `releases/`.
"""
from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from builders.core.errors import BabelforgeError
from builders.publish.card_stage import DATASETS

REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
VERSION = re.compile(r"^v\d+\.\d+(\.\d+)?$")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", choices=DATASETS, help="which built card under --hub-dir to publish")
    parser.add_argument("--repo", required=True, help="Hub dataset repo, ORG/NAME")
    parser.add_argument("--revision-tag", default=None, help="tag the commit with this dataset version (vX.Y)")
    parser.add_argument("--dry-run", action="store_true", help="validate and list the operations; no network")
    parser.add_argument("--force", action="store_true", help="publish even when the audit has errors")
    parser.add_argument("--private", action="store_true", help="create the repo private (when it is new)")
    parser.add_argument("--hub-dir", default="build/hub", help="where the built cards are (build/hub)")
    parser.add_argument("--releases", default="releases", help="receipts folder (releases)")
    parser.add_argument("--audit", default="reports/audit/summary.json", help="audit summary to check for errors")


def run(args: argparse.Namespace, api=None) -> int:
    from builders.core.progress import info
    from builders.publish import hub
    from builders.publish.card import validate_card

    if not REPO_ID.match(args.repo):
        raise BabelforgeError(f"--repo {args.repo!r}: expected ORG/NAME")
    if args.revision_tag and not VERSION.match(args.revision_tag):
        raise BabelforgeError(f"--revision-tag {args.revision_tag!r}: expected vX.Y or vX.Y.Z")
    folder = Path(args.hub_dir) / args.dataset
    releases, audit = Path(args.releases), Path(args.audit)

    if args.dry_run:
        problems = validate_card(folder) if folder.is_dir() else [f"{folder}: no built card"]
        for problem in problems:
            info(f"invalid: {problem}")
        if problems:
            raise BabelforgeError(f"publish --dry-run: the card at {folder} is invalid ({len(problems)} problems)")
        local = hub.manifest(folder)
        previous = hub.last_receipt(releases, args.dataset, args.repo)
        where = (f"last receipt: commit {previous.get('commit')}, version {previous.get('version')}"
                 if previous else "no receipt: the repo is taken as empty")
        print(f"dry run: {args.dataset} -> {args.repo} ({where})")
        print(f"content hash {hub.content_hash(local)}; card valid")
        errors = hub.audit_errors(audit)
        if errors is None:
            print(f"audit: no summary at {audit}")
        else:
            print(f"audit: {errors} error rows" + (" (a real run refuses without --force)" if errors and not args.force else ""))
        conflict = hub.version_conflict(releases, args.dataset, args.repo, args.revision_tag, hub.content_hash(local))
        if conflict:
            print(f"version: {conflict} (a real run refuses)")
        same = previous is not None and previous.get("content_hash") == hub.content_hash(local)
        print(hub.format_operations([] if same else hub.plan_operations(local, previous.get("files", {}) if previous else {})))
        if args.revision_tag and not (same and previous.get("version") == args.revision_tag):
            at = f"commit {previous.get('commit')}" if same else "the new commit"
            print(f"tag {args.revision_tag} at {at}")
        return 0

    from requests import RequestException

    from builders.core.http import redact, register_secret

    token = os.environ.get("HF_TOKEN")
    register_secret(token)   # masked in every message below, whoever produces it
    if api is None:
        if not token:
            raise BabelforgeError("publish: set HF_TOKEN in the environment (a Hub write token), or use --dry-run")
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    try:
        result = hub.publish(api, folder, args.dataset, args.repo, releases, args.revision_tag, audit,
                             force=args.force, private=args.private)
    except RequestException as error:   # huggingface_hub's HTTP errors included
        first_line = redact(str(error)).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise BabelforgeError(f"publish: the Hub refused or could not be reached ({first_line}); "
                              "check HF_TOKEN's write access to the repo and the network, then rerun") from None
    if result.receipt is None:
        print(f"nothing to do: {args.repo} already has content {result.content_hash[:12]}")
        return 0
    print(hub.format_operations(result.operations))
    print(f"published {args.dataset} to {args.repo} at commit {result.receipt['commit']}; receipt {result.receipt_path}")
    return 0
