"""`babelforge fetch`: put every upstream source under `paths.raw` (`data/raw/`), sha256-checked.

The output has the source-mirror layout (`data/raw/<source path>/...`, e.g.
`data/raw/sib-200/annotated/deu_Latn/train.tsv`), so a stage reads the same relative
path from `data/raw` as from `../shared/data`. Next to it, `data/raw/<source>.json`
records the source's version, hash, licence and every file with its sha256.

Where the files come from, first match wins:
  --upstream        the upstream URL in resources/sources.tsv (verbatim sources only);
  --mirror-url URL  an HTTP server with the same layout (`fetch.mirror_url`);
  --mirror DIR      a local copy with the same layout (`fetch.mirror`, ../shared/data);
  otherwise         the upstream URLs, as with --upstream.

Every file is verified before it is renamed into place; a file already there with the
right hash is not touched. The source's manifest is removed before its first file is
(re)written and written last, so a killed fetch leaves no manifest for an unfinished source,
and never half a file; a rerun that finds everything in place rewrites nothing, the manifests
included (their bytes and modification times stay as they were).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.config import setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.http import DEFAULT_POLICY, copy_verified, download, make_session
from babelforge.core.io import canonical_json, sha256_file, write_json
from babelforge.core.progress import info
from babelforge.core.sources import Source, SourceFile, read_sources, select_sources
from babelforge.core.stages import Paths, Stage, stage_paths


@dataclass(frozen=True)
class Config:
    """The `fetch` group of params.yaml; the files go to `paths.raw`."""

    GROUP = "fetch"
    mirror: str | None = setting(
        "../shared/data", "local copy with the source-mirror layout (null: none)", metavar="DIR"
    )
    mirror_url: str | None = setting(None, "HTTP(S) server with the same layout; used instead of `mirror` when set")
    sources: str | list[str] = setting("all", "`all`, or names from resources/sources.tsv (a list or a comma list)")
    upstream: bool = setting(False, "ignore both mirrors: download from the upstream URLs (verbatim sources only)")
    paths: Paths = stage_paths()


def origin(config: Config) -> tuple[str | None, str | None]:
    """(local mirror, mirror URL) to fetch from, at most one set; (None, None) means upstream.

    An HTTP mirror beats the local one, so `--mirror-url` (or `--set fetch.mirror_url=...`)
    works without also clearing the default `fetch.mirror`.
    """
    if config.upstream:
        return None, None
    if config.mirror_url:
        return None, config.mirror_url
    return config.mirror or None, None


def run(config: Config) -> int:

    sources = select_sources(read_sources(), config.sources)
    mirror, mirror_url = origin(config)
    fetcher = Fetcher(out=config.paths.raw, mirror=mirror, mirror_url=mirror_url)
    for source in sources:
        counts = fetcher.fetch(source)
        info(
            f"fetch {source.name}: {counts['files']} files, {counts['copied']} written, "
            f"{counts['unchanged']} unchanged, {counts['pruned']} stale removed ({fetcher.where})"
        )
    return 0


class Fetcher:
    """Brings sources into `out`; one instance per run (it holds the HTTP session)."""

    def __init__(
        self,
        out: str | os.PathLike,
        mirror: str | os.PathLike | None = None,
        mirror_url: str | None = None,
        session=None,
        policy=None,
    ):

        self.out = Path(out)
        self.mirror = Path(mirror) if mirror else None
        self.mirror_url = mirror_url.rstrip("/") + "/" if mirror_url else None
        self.session = session
        self.policy = policy or DEFAULT_POLICY
        if self.mirror is not None and not self.mirror.is_dir():
            raise BabelforgeError(
                f"mirror directory {self.mirror} does not exist; set fetch.mirror in params.yaml or pass --mirror"
            )
        self.where = (
            f"mirror {self.mirror}" if self.mirror else f"mirror {self.mirror_url}" if self.mirror_url else "upstream"
        )

    def fetch(self, source: Source) -> dict[str, int]:

        if self.mirror is None and self.mirror_url is None and source.origin != "verbatim":
            raise BabelforgeError(
                f"source {source.name} is {source.origin} in resources/sources.tsv: its hashes are "
                f"of the mirror copy, not of {source.url.split()[0]}; fetch it with --mirror or --mirror-url"
            )
        manifest_path = self.out / f"{source.name}.json"
        counts = {"files": len(source.files), "copied": 0, "unchanged": 0, "pruned": 0}
        listed = []
        for file in source.files:
            dest = self.out / source.file_path(file)
            if dest.is_file() and sha256_file(dest) == file.sha256:
                counts["unchanged"] += 1
            else:
                manifest_path.unlink(missing_ok=True)  # the source is changing: no manifest until it is whole
                self._bring(source, file, dest)
                counts["copied"] += 1
            listed.append({"path": file.path, "sha256": file.sha256, "size": dest.stat().st_size})
        if source.kind == "dir":
            counts["pruned"] = prune(self.out / source.path, {file.path for file in source.files})
        else:
            counts["pruned"] = clear_leftovers(self.out / source.path)
        manifest = {
            "source": source.name,
            "kind": source.kind,
            "path": source.path,
            "origin": source.origin,
            "version": source.version,
            "sha256": source.sha256,
            "url": source.url,
            "licence": source.licence,
            "citation": source.citation,
            "files": listed,
        }
        if not (manifest_path.is_file() and manifest_path.read_text(encoding="utf-8") == canonical_json(manifest)):
            write_json(manifest, manifest_path)
        return counts

    def _bring(self, source: Source, file: SourceFile, dest: Path) -> None:
        relative = source.file_path(file)
        if self.mirror is not None:
            copy_verified(
                self.mirror / relative,
                dest,
                file.sha256,
                f"source {source.name}",
                missing_hint="the mirror is incomplete or resources/sources.tsv names a wrong path",
                mismatch_hint="the mirror copy changed (re-record with `python -m babelforge.core.sources --mirror ...` "
                "only if the change is intended)",
            )
            return

        if self.session is None:
            self.session = make_session()
        url = self.mirror_url + relative if self.mirror_url else source.file_url(file)
        download(url, dest, file.sha256, session=self.session, policy=self.policy, desc=relative)


def prune(root: Path, keep: set[str]) -> int:
    """Delete files under `root` not in `keep` (stale files, `.part` leftovers); count them."""
    removed = 0
    if not root.is_dir():
        return 0
    for path in sorted(root.rglob("*"), reverse=True):
        relative = path.relative_to(root).as_posix()
        if path.is_file() or path.is_symlink():
            if relative not in keep:
                path.unlink()
                removed += 1
        elif path.is_dir() and not any(path.iterdir()):
            shutil.rmtree(path)
    return removed


def clear_leftovers(dest: Path) -> int:
    """Remove what a killed run may leave beside a single file: `<name>.part`, `.<name>.*.tmp`."""
    removed = 0
    for path in [dest.with_name(dest.name + ".part"), *dest.parent.glob(f".{dest.name}.*.tmp")]:
        if path.is_file():
            path.unlink()
            removed += 1
    return removed


STAGE = Stage(
    "fetch",
    "copy or download upstream sources into data/raw/ (sha256-checked)",
    run,
    config=Config,
    flags={
        "--upstream": "upstream",
        "--sources": ("sources", "comma-separated source names"),
        "--mirror": ("mirror", "local mirror directory with the same layout"),
        "--mirror-url": ("mirror_url", "HTTP(S) base URL of a mirror"),
        "--out": ("paths.raw", "output root"),
    },
    deps=(
        "resources/sources.tsv",
        "resources/source_files",
    ),
    outs=("${paths.raw}",),
    docs="docs/architecture/sources.md",
    owns={
        "raw": ("data/raw", "fetched sources in the source-mirror layout"),
        "omw": ("data/raw/omw", "the fetched OMW data (index.toml, wns/<project>/): licences of OMW-derived labels"),
    },
)
