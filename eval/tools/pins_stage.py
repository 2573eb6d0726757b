"""`babelforge pins`: every remote input of the profile, its pin, where the pin lives; what is still missing.

    babelforge pins                      # offline: counts by kind, one line per UNPINNED input
    babelforge pins --all                # every input, pinned or not
    babelforge pins --check              # offline: everything the profile still needs (keys, pins, caches, ...)
    babelforge pins --update             # network: resolve each UNPINNED input once, write its pin, print old -> new
    babelforge pins --update --accept xm3600/images.tgz   # re-resolve a pinned input and take its new pin

The pins stay where their readers read them (babelforge.eval.pins); `--update` writes each into that home
(a params.yaml key, a resources/ table's cell) and never changes a pin that is set unless `--accept`
names it. The Hub is asked through huggingface_hub (`HF_ENDPOINT`, `HF_TOKEN` honoured); files through
babelforge.core.http.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.http import remote_sha256
from babelforge.core.io import write_text
from babelforge.core.params import DEFAULT_PARAMS, find_params, load_params, profile_of, project_root
from babelforge.core.pins import RemoteInput, check_new_pin, set_params_value, set_tsv_cell
from babelforge.core.progress import info, progress
from babelforge.core.sources import read_sources, select_sources
from babelforge.core.stages import Stage
from babelforge.eval.paper.plan import hub_cached
from babelforge.eval.paper.tables import PAPERS, read_models
from babelforge.eval.pins import (
    MVL_SIB_RELEASE,
    inventory,
    readiness,
    readiness_lines,
    release_image_rows,
    report_lines,
    value,
)
from babelforge.mvl_sib.images import ImageEntry, manifest_text
from babelforge.mvl_sib.sib200 import TOPICS


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--params", default=DEFAULT_PARAMS, help="params file (default: params.yaml)")
    parser.add_argument("--profile", choices=("sample", "full"), help="the profile to list (default: params.yaml's)")
    parser.add_argument("--all", action="store_true", help="list every input, pinned or not")
    parser.add_argument(
        "--check",
        action="store_true",
        help="offline: everything the profile still needs, grouped, with what resolves it",
    )
    parser.add_argument(
        "--update", action="store_true", help="network: resolve each UNPINNED input once and write its pin"
    )
    parser.add_argument(
        "--accept",
        action="append",
        default=[],
        metavar="NAME",
        help="with --update: re-resolve this pinned input (a name `pins --all` lists) and take its new pin",
    )


def project_inputs(params_path: Path, params: dict, profile: str) -> tuple[Path, list[RemoteInput], list[dict]]:
    """(project root, the profile's inputs, the MVL-SIB manifest's rows) read from the project."""
    root = project_root(params_path)
    sources = select_sources(read_sources(), value(params, "fetch.sources", profile))
    manifest = root / (value(params, "mvl_sib.images.manifest", profile) or "resources/mvl_sib_images.tsv")
    rows = manifest_rows(manifest)
    models = [model for paper in PAPERS for model in read_models(paper)]
    exists = lambda path: (root / path).exists()  # noqa: E731 - relative to the project, not the working folder
    return root, inventory(params, profile, sources, rows, models, exists), rows


def manifest_rows(path: Path) -> list[dict]:
    """The manifest's rows as written (its checks are mvl_sib_images'); none when there is no file."""
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def run(args: argparse.Namespace) -> int:
    params_path = find_params(args.params)
    params = load_params(params_path)
    profile = args.profile or profile_of(params)
    if args.accept and not args.update:
        raise BabelforgeError("--accept takes a new pin from upstream: use it with --update")
    root, inputs, rows = project_inputs(params_path, params, profile)
    if args.update:
        changes, failures = update(inputs, args.accept, root, params_path, profile)
        for line in changes or ([] if failures else ["nothing to resolve: every input that can be pinned is"]):
            print(line)
        for line in failures:
            print(f"babelforge pins: {line}", file=sys.stderr)
        if failures:
            # every input is tried: one missing repo does not hide the next (the others are written)
            print(f"babelforge pins: {len(failures)} input(s) not resolved (above); the rest written", file=sys.stderr)
        return 1 if failures else 0
    if args.check:
        counts = {topic: sum(row.get("topic") == topic for row in rows) for topic in TOPICS}
        needs = readiness(
            params,
            profile,
            inputs,
            hub_cached(),
            os.environ,
            lambda folder: (root / folder).is_dir(),
            counts,
            TOPICS,
            lambda path: (root / path).is_file(),
        )
        for line in readiness_lines(needs, profile):
            print(line)
        # the paper models are eval_paper's, a tool outside `dvc repro`: listed, but the profile builds without them
        return 1 if any(not need.blocks.startswith("eval_paper") for need in needs) else 0
    for line in report_lines(inputs, profile, every=args.all):
        print(line)
    return 0


# ------------------------------------------------------------------ --update


def update(
    inputs: Sequence[RemoteInput], accept: Sequence[str], root: Path, params_path: Path, profile: str
) -> tuple[list[str], list[str]]:
    """Resolve every UNPINNED input (and each `accept`ed one) once and write the pins: (old -> new lines, one
    line per input upstream could not resolve; the others are written all the same)."""
    names = {item.name for item in inputs}
    unknown = [name for name in accept if name not in names]
    if unknown:
        raise BabelforgeError(f"--accept {', '.join(unknown)}: no such input (`babelforge pins --all` lists them)")
    from huggingface_hub import constants

    chosen = [item for item in inputs if (item.state == "unpinned" and item.ask) or item.name in accept]
    if any(item.repo_type for item in chosen) and constants.HF_HUB_OFFLINE:
        raise BabelforgeError("pins --update asks the Hugging Face Hub, and HF_HUB_OFFLINE is set; unset it first")
    lines, failures, resolved = [], [], {}
    for item in progress(chosen, desc="resolving pins", unit="input"):
        key = (item.ask, item.revision, item.repo_type)
        if key not in resolved:  # a repo named by several homes is asked once
            try:
                resolved[key] = resolve(item)
            except BabelforgeError as error:
                resolved[key] = error
        new = resolved[key]
        if isinstance(new, BabelforgeError):
            line = f"{item.name}: {new}"
            if line not in failures:  # a repo named by several homes is named once
                failures.append(line)
            continue
        check_new_pin(item, new)
        old = item.pin_text()
        if item.pin == new:
            lines.append(f"{item.name}: {new} (unchanged)")
            continue
        written = write_pin(item, new, root, params_path, profile)
        lines.append(f"{item.name}: {old} -> {new} ({written})")
    skipped = [item for item in inputs if item.state == "unpinned" and not item.ask]
    for item in skipped:
        lines.append(f"{item.name}: UNPINNED, nothing to ask upstream (set it in {item.home.where})")
    return lines, failures


def resolve(item: RemoteInput) -> str:
    """The pin upstream gives now: the Hub's commit for the revision asked, or a URL's sha256."""
    if item.repo_type:
        return hub_commit(item.ask, item.revision, item.repo_type)
    return remote_sha256(item.ask)[0]


def hub_commit(repo: str, revision: str, repo_type: str) -> str:
    from huggingface_hub import HfApi, constants
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    try:
        return HfApi(endpoint=constants.ENDPOINT).repo_info(repo, revision=revision, repo_type=repo_type).sha
    except RepositoryNotFoundError:
        raise BabelforgeError(
            f"{repo_type} {repo}: not on {constants.ENDPOINT} (or gated: set HF_TOKEN); nothing written"
        ) from None
    except RevisionNotFoundError:
        raise BabelforgeError(f"{repo_type} {repo}: no revision {revision!r}; nothing written") from None
    except (HfHubHTTPError, OSError) as error:
        line = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
        raise BabelforgeError(f"{repo_type} {repo}: the Hub did not answer ({line}); nothing written") from None


def write_pin(item: RemoteInput, new: str, root: Path, params_path: Path, profile: str) -> str:
    """Write `new` into the item's home; what was written where, for the printed line."""
    kind, *rest = item.target or ("",)
    if kind == "params":
        set_params_value(params_path, rest[0], new, profile)
        return f"written to {params_path.name} {rest[0]}"
    if kind == "tsv":
        path, key_column, key, column = rest
        set_tsv_cell(root / path, key_column, key, column, lambda old: new)
        return f"written to {path}, row {key}, column {column}"
    if kind == "manifest":
        count = write_release_manifest(root / rest[0], new)
        return f"{count} images written to {rest[0]} at that commit"
    return f"not written: set it by hand in {item.home.where}"


def write_release_manifest(path: Path, commit: str) -> int:
    """The MVL-SIB manifest from the release at `commit`: every image under data/images/, hashed."""
    from huggingface_hub import HfApi, constants

    info_ = HfApi(endpoint=constants.ENDPOINT).repo_info(MVL_SIB_RELEASE, revision=commit, repo_type="dataset")
    files = [sibling.rfilename for sibling in info_.siblings or []]
    base = f"{constants.ENDPOINT.rstrip('/')}/datasets/{MVL_SIB_RELEASE}/resolve/{commit}/"
    digests = {}
    for name in progress(files, desc="hashing the release's images", unit="file"):
        if name.startswith("data/images/"):
            digests[name] = remote_sha256(base + name)[0]
    rows = release_image_rows(list(digests), commit, constants.ENDPOINT, TOPICS, digests)
    write_text(manifest_text([ImageEntry(**row) for row in rows]), path)
    info(f"pins: {len(rows)} MVL-SIB images of {MVL_SIB_RELEASE}@{commit[:12]} -> {path}")
    return len(rows)


STAGE = Stage(
    "pins",
    "every remote input of the profile with its pin (--check: what the profile still needs; --update: pin them)",
    run,
    configure=configure,
    tool=True,
    docs="docs/guides/full-profile.md",
)
