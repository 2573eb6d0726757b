"""The source registry and the fetch stage, on the real mirror (local and over loopback HTTP)."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import pytest

from babelforge.core import sources
from babelforge.core.errors import BabelforgeError
from babelforge.core.http import ChecksumMismatchError
from babelforge.core.io import read_json, sha256_file
from babelforge.pipeline import fetch_stage as fetch

SMALL = ["sib-200-nko", "sib-200-license", "imagenet-classes", "clip-templates", "flores200-sib-codes"]


@pytest.fixture(scope="module")
def registry():
    return sources.read_sources()


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --- registry --------------------------------------------------------------------------


def test_manifest_hash_is_order_free_and_content_bound():
    files = [("b/x.tsv", "1" * 64), ("a.txt", "2" * 64)]
    assert sources.manifest_hash(files) == sources.manifest_hash(reversed(files))
    assert sources.manifest_hash(files) != sources.manifest_hash([("b/x.tsv", "3" * 64), ("a.txt", "2" * 64)])
    assert sources.manifest_hash(files) != sources.manifest_hash([("b/y.tsv", "1" * 64), ("a.txt", "2" * 64)])


def test_registry_matches_the_mirror_exactly(registry, mirror):
    """Every recorded hash is the hash of the mirror file: the registry is not stale."""
    assert {"omw", "sib-200", "imagenet-classes", "clip-templates", "xtd10", "xflickrco"} <= set(registry)
    for source in registry.values():
        assert source.licence and source.citation and source.url.startswith("https://"), source.name
        if source.kind == "dir":
            on_disk = sources.scan_dir(mirror / source.path)
            assert on_disk == list(source.files), source.name
            assert sources.manifest_hash((f.path, f.sha256) for f in on_disk) == source.sha256
        else:
            assert sha256_file(mirror / source.path) == source.sha256, source.name
    assert len(registry["sib-200"].files) == 205 * 4  # dev/test/train/labels per language


def test_registry_rejects_a_hash_that_disagrees_with_its_file_list(tmp_path):
    shutil.copytree(sources.SOURCE_FILES_DIR, tmp_path / "source_files")
    shutil.copy(sources.SOURCES_PATH, tmp_path / "sources.tsv")
    sources.read_sources(tmp_path / "sources.tsv")  # the copy loads as is
    listing = tmp_path / "source_files" / "sib-200-nko.tsv"
    header, first, *rest = listing.read_text().splitlines()
    listing.write_text("\n".join([header, first.split("\t")[0] + "\t" + "f" * 64, *rest]) + "\n")
    with pytest.raises(BabelforgeError, match="sib-200-nko does not match its file list"):
        sources.read_sources(tmp_path / "sources.tsv")


def test_unknown_source_names_are_listed(registry):
    with pytest.raises(BabelforgeError, match="unknown source.*nope.*sib-200"):
        sources.select_sources(registry, "sib-200,nope")
    assert [s.name for s in sources.select_sources(registry, "all")] == list(registry)
    assert [s.name for s in sources.select_sources(registry, ["xtd10", "omw"])] == ["omw", "xtd10"]


# --- fetch from a local mirror ---------------------------------------------------------


@pytest.mark.slow
def test_fetch_everything_from_the_mirror_is_exact_and_idempotent(registry, mirror, tmp_path):
    fetcher = fetch.Fetcher(out=tmp_path / "raw", mirror=mirror)
    first = {name: fetcher.fetch(source) for name, source in registry.items()}
    assert all(c["copied"] == c["files"] for c in first.values())
    for source in registry.values():
        fetched = tmp_path / "raw" / source.path
        if source.kind == "dir":
            assert tree(fetched) == tree(mirror / source.path)
        else:
            assert filecmp.cmp(fetched, mirror / source.path, shallow=False)
        manifest = read_json(tmp_path / "raw" / f"{source.name}.json")
        assert manifest["sha256"] == source.sha256 and manifest["licence"] == source.licence
        listed = [(f["path"], f["sha256"]) for f in manifest["files"]]
        if source.kind == "dir":
            assert sources.manifest_hash(listed) == source.sha256
    before = tree(tmp_path / "raw")
    manifests = {path.name: (path.stat().st_ino, path.stat().st_mtime_ns) for path in (tmp_path / "raw").glob("*.json")}
    second = {name: fetcher.fetch(source) for name, source in registry.items()}
    assert all(c["copied"] == 0 and c["unchanged"] == c["files"] for c in second.values())
    assert tree(tmp_path / "raw") == before  # byte-identical rerun, manifests included
    # ... and nothing rewritten: a manifest is the same file, untouched (DVC need not rehash it)
    assert {
        path.name: (path.stat().st_ino, path.stat().st_mtime_ns) for path in (tmp_path / "raw").glob("*.json")
    } == manifests
    assert sources.fetched_record("sib-200", tmp_path / "raw")["sha256"] == registry["sib-200"].sha256


def test_input_record_names_a_fetched_source_else_hashes_the_input(registry, mirror, tmp_path):
    raw = tmp_path / "raw"
    fetcher = fetch.Fetcher(out=raw, mirror=mirror)
    for name in ("sib-200-nko", "clip-templates"):
        fetcher.fetch(registry[name])
    nko = registry["sib-200-nko"]
    fetched = {"source": "sib-200-nko", "version": nko.version, "sha256": nko.sha256, "licence": nko.licence}
    assert sources.input_record(raw / nko.path, raw) == fetched
    assert sources.input_record(raw / nko.path / nko.files[0].path, raw) == fetched  # a file inside the source
    assert sources.input_record(raw / "imagenet" / "clip_templates_en.txt", raw)["source"] == "clip-templates"
    # read in place from the mirror: path and content hash (a folder's manifest hash is the registry's)
    assert sources.input_record(mirror / nko.path, raw) == {"path": str(mirror / nko.path), "sha256": nko.sha256}
    assert sources.input_record(mirror / nko.path, raw, shown="nko") == {"path": "nko", "sha256": nko.sha256}
    (raw / "sib-200-nko.json").unlink()
    with pytest.raises(
        BabelforgeError, match="sib-200-nko.json is missing: run `babelforge fetch --sources sib-200-nko`"
    ):
        sources.input_record(raw / nko.path, raw)
    with pytest.raises(BabelforgeError, match="no such file or folder"):
        sources.input_record(tmp_path / "nothing", raw)


def test_changed_and_stale_files_are_repaired(registry, mirror, tmp_path):
    fetcher = fetch.Fetcher(out=tmp_path, mirror=mirror)
    source = registry["sib-200-nko"]
    fetcher.fetch(source)
    root = tmp_path / source.path
    victim = root / source.files[0].path
    victim.write_text("edited by hand\n")
    (root / "old_split.tsv").write_text("stale\n")
    (root / "nqo_Nkoo.dev.part").write_bytes(b"half")
    counts = fetcher.fetch(source)
    assert counts["copied"] == 1 and counts["pruned"] == 2
    assert tree(root) == tree(mirror / source.path)


def test_a_mirror_file_with_another_hash_is_refused(registry, mirror, tmp_path):
    source = registry["clip-templates"]
    fake_mirror = tmp_path / "mirror"
    (fake_mirror / "imagenet").mkdir(parents=True)
    (fake_mirror / source.path).write_text("a photo of a {}.\n")
    out = tmp_path / "raw"
    with pytest.raises(ChecksumMismatchError) as caught:
        fetch.Fetcher(out=out, mirror=fake_mirror).fetch(source)
    assert source.sha256 in str(caught.value)
    assert not (out / source.path).exists() and not (out / f"{source.name}.json").exists()
    assert [p for p in out.rglob("*") if p.is_file()] == []  # no temporary file left behind


def test_a_killed_fetch_leaves_no_half_file_and_no_manifest(registry, mirror, tmp_path, monkeypatch):
    source = registry["sib-200"]
    out = tmp_path / "raw"
    fetcher = fetch.Fetcher(out=out, mirror=mirror)
    fetcher.fetch(registry["sib-200-nko"])
    real_copy, calls = fetch.copy_verified, []

    def copy_then_die(src, dest, sha256, *args, **kwargs):
        calls.append(dest)
        if len(calls) == 50:
            raise KeyboardInterrupt
        real_copy(src, dest, sha256, *args, **kwargs)

    monkeypatch.setattr(fetch, "copy_verified", copy_then_die)
    with pytest.raises(KeyboardInterrupt):
        fetcher.fetch(source)
    assert not (out / "sib-200.json").exists()
    assert (out / "sib-200-nko.json").exists()  # other sources untouched
    expected = {f.path: f.sha256 for f in source.files}
    present = [p for p in (out / source.path).rglob("*") if p.is_file()]
    assert len(present) == 49
    assert all(sha256_file(p) == expected[p.relative_to(out / source.path).as_posix()] for p in present)
    monkeypatch.setattr(fetch, "copy_verified", real_copy)
    counts = fetcher.fetch(source)  # the rerun completes what is missing only
    assert counts["unchanged"] == 49 and counts["copied"] == len(source.files) - 49
    # a repair of a complete source that is killed also leaves it without a manifest
    present[0].write_bytes(b"damaged")
    monkeypatch.setattr(fetch, "copy_verified", lambda *args, **kwargs: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        fetcher.fetch(source)
    assert not (out / "sib-200.json").exists()


# --- fetch over HTTP -------------------------------------------------------------------


def test_fetch_from_an_http_mirror_survives_503_and_cut_transfers(registry, server, mirror, tmp_path, fast_policy):
    chosen = [registry[name] for name in SMALL + ["xtd10"]]
    server.failures["imagenet/imagenet1k_classes.tsv"] = ["503"]
    server.failures["xtd/xtd.json"] = ["truncate"]
    fetcher = fetch.Fetcher(out=tmp_path, mirror_url=server.url, policy=fast_policy)
    for source in chosen:
        fetcher.fetch(source)
        if source.kind == "file":
            assert filecmp.cmp(tmp_path / source.path, mirror / source.path, shallow=False)
        else:
            assert tree(tmp_path / source.path) == tree(mirror / source.path)
    assert len(server.hits("xtd/xtd.json")) == 2 and "Range" in server.hits("xtd/xtd.json")[1]


def test_upstream_fetch_refuses_sources_whose_hashes_are_the_mirrors(registry, tmp_path):
    with pytest.raises(BabelforgeError, match="omw is filtered.*--mirror"):
        fetch.Fetcher(out=tmp_path).fetch(registry["omw"])
    with pytest.raises(BabelforgeError, match="xtd10 is derived"):
        fetch.Fetcher(out=tmp_path).fetch(registry["xtd10"])


def test_verbatim_sources_point_at_pinned_upstream_files(registry):
    for source in registry.values():
        if source.origin == "verbatim":
            assert source.version in source.url  # a commit, not a moving branch
            assert source.file_url(source.files[0]).startswith("https://raw.githubusercontent.com/")


# --- the CLI stage ---------------------------------------------------------------------


def test_cli_reads_params_and_flags(mirror, tmp_path, monkeypatch, capsys):
    from babelforge.cli import main

    monkeypatch.chdir(tmp_path)
    Path("params.yaml").write_text(
        f"profile: sample\nfetch:\n  mirror: {mirror}\n  sources: [clip-templates]\npaths:\n  raw: raw\n"
    )
    assert main(["fetch"]) == 0
    assert sorted(p.name for p in Path("raw").rglob("*") if p.is_file()) == [
        "clip-templates.json",
        "clip_templates_en.txt",
    ]
    assert main(["fetch", "--sources", "imagenet-classes", "--out", "other"]) == 0
    assert Path("other/imagenet/imagenet1k_classes.tsv").is_file()
    assert main(["fetch", "--sources", "nope"]) == 1
    assert main(["fetch", "--mirror", str(tmp_path / "missing")]) == 1
    assert main(["fetch", "--set", "fetch.sorces=all"]) == 1
    errors = capsys.readouterr().err
    assert "unknown source(s) nope" in errors and "does not exist" in errors
    assert "unknown key fetch.sorces" in errors


def test_flags_override_the_params_group(tmp_path):
    from babelforge.cli import config_from_args, stage_parser

    params = tmp_path / "params.yaml"
    params.write_text("profile: sample\nfetch:\n  mirror: ../shared/data\n  sources: [omw]\npaths:\n  raw: data/raw\n")

    def config(*flags):
        return config_from_args(fetch.STAGE, stage_parser(fetch.STAGE).parse_args(["--params", str(params), *flags]))

    assert config() == fetch.Config(mirror="../shared/data", sources=["omw"])
    assert fetch.origin(config()) == ("../shared/data", None)
    assert fetch.origin(config("--mirror-url", "http://h/")) == (None, "http://h/")
    assert fetch.origin(config("--set", "fetch.mirror_url=http://h/")) == (None, "http://h/")
    assert fetch.origin(config("--upstream", "--sources", "sib-200")) == (None, None)
    assert fetch.origin(config("--set", "fetch.mirror=null")) == (None, None)
    assert config("--sources", "sib-200").sources == "sib-200"
    assert config("--out", "elsewhere").paths.raw == "elsewhere"
