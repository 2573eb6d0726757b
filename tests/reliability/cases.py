"""The fault and bad-input table: one row per case, run against a small built workspace.

Each case breaks one thing (a setting, a source file, an artifact, the command line, the
disk, the HTTP server), runs one `babelforge` command in a subprocess and expects: a
non-zero exit code, one line naming the problem (`babelforge <stage>: error: ...`, no
traceback), nothing written at the paths the command was given (besides what a case names
as kept on purpose) and every previously built output byte for byte as it was.

`python -m tests.reliability.cases` builds a workspace, runs every case and writes
`tests/reliability/CASES.md` (case, command, exit code, first line of the message).
In commands, `CASE/` is the case's own folder and `URL` the loopback server.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.reliability.workspace import REPO, Workspace, build_workspace, leftovers

Setup = Callable[[Path, Path, "object"], None]  # (workspace root, case folder, loopback server)


@dataclass(frozen=True)
class Case:
    id: str
    broken: str  # what is wrong, in words
    args: tuple[str, ...]  # the babelforge command line, with CASE/ and URL placeholders
    expect: str  # the message must contain this
    setup: Setup | None = None
    exit_code: int = 1
    fsize_limit: int | None = None  # RLIMIT_FSIZE in bytes: a disk that takes no more
    keep: tuple[str, ...] = ()  # name endings a case may leave in its own folder on purpose

    @property
    def command(self) -> str:
        return "babelforge " + " ".join(self.args)


@dataclass
class Outcome:
    case: Case
    exit_code: int
    stderr: str
    stdout: str
    problems: list[str] = field(default_factory=list)

    @property
    def message(self) -> str:
        lines = [line for line in self.stderr.splitlines() if ": error: " in line]
        return lines[0] if lines else (self.stderr.strip().splitlines() or [""])[-1]


# --- setups: each breaks a copy, never the workspace ------------------------------------


def _params(root: Path, case: Path) -> dict:
    return yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))


def _write_params(case: Path, params: dict) -> None:
    (case / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")


def typo_in(group: str) -> Setup:
    """params.yaml with the group's first key misspelt (a letter dropped)."""

    def setup(root, case, server):
        params = _params(root, case)
        node = params
        for part in group.split("."):
            node = node.setdefault(part, {})
        key = next(iter(node), "seed")
        node[typo_of(key)] = node.pop(key, 1)
        _write_params(case, params)

    return setup


def typo_of(key: str) -> str:
    middle = len(key) // 2
    return key[:middle] + key[middle + 1 :] if len(key) > 2 else key + key


def yaml_syntax_error(root, case, server):
    text = (root / "params.yaml").read_text(encoding="utf-8")
    (case / "params.yaml").write_text(
        text.replace("labels:\n  min_classes:", "labels:\n min_classes: [10\n  x:", 1), encoding="utf-8"
    )


def wrong_type_in_file(root, case, server):
    params = _params(root, case)
    params["mvl_sib"]["seed"] = "forty-two"
    _write_params(case, params)


def omw_copy(edit: Callable[[Path], None]) -> Setup:
    def setup(root, case, server):
        shutil.copytree(root / "sources" / "omw", case / "omw")
        edit(case / "omw" / "wns" / "wikt" / "wn-wikt-deu.tab")

    return setup


def truncate_mid_line(path: Path) -> None:
    data = path.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 16  # inside the row after the middle
    path.write_bytes(data[:cut])


def invalid_utf8(path: Path) -> None:
    lines = path.read_bytes().split(b"\n")
    lines[5] = lines[5] + b"\xff\xfe"
    path.write_bytes(b"\n".join(lines))


def sib_copy(edit: Callable[[Path], None]) -> Setup:
    def setup(root, case, server):
        shutil.copytree(root / "sources" / "sib-200", case / "sib")
        edit(case / "sib" / "deu_Latn" / "dev.tsv")

    return setup


def drop_category_column(path: Path) -> None:
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("\n".join("\t".join([r[0], *r[2:]]) for r in rows) + "\n", encoding="utf-8")


def unknown_category(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    first = lines[1].split("\t")
    lines[1] = "\t".join([first[0], "astrology", *first[2:]])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def sib_invalid_utf8(path: Path) -> None:
    path.write_bytes(path.read_bytes().replace(b"\n", b"\xc3\x28\n", 3))


def review_sheet_with(new_label: str, **cells: str) -> Setup:
    """A filled-in review sheet of deu_Latn replacing the bow tie's label (other `cells` as given), and
    params.yaml sending imports to the case's own reviews folder (never the repository's)."""

    def setup(root, case, server):
        from babelforge.audit.review_sheet import SHEET_COLUMNS, render_sheet

        row = {column: "" for column in SHEET_COLUMNS}
        row.update(lang="deu_Latn", class_idx=457, wnid="n02883205", label="Fliege", decision="replace")
        row.update(new_label=new_label, reviewer="anna", date="2025-01-14")
        row.update(cells)
        (case / "deu_Latn.review.csv").write_text(render_sheet([row]), encoding="utf-8")
        params = _params(root, case)
        params["paths"]["reviews"] = str(case / "reviews")
        _write_params(case, params)

    return setup


def review_file_with(note: str) -> Setup:
    """A hand-edited review file of deu_Latn (in the case's reviews folder) whose note holds `note`."""

    def setup(root, case, server):
        (case / "reviews").mkdir()
        header = "wnid\tdecision\tlabel\treviewer\tdate\tnote\n"
        row = f"n02883205\treplace\tQuerbinder\tanna\t2025-01-14\t{note}\n"
        (case / "reviews" / "deu_Latn.tsv").write_text(header + row, encoding="utf-8")
        params = _params(root, case)
        params["paths"]["reviews"] = str(case / "reviews")
        _write_params(case, params)

    return setup


def params_text(text: str) -> Setup:
    def setup(root, case, server):
        (case / "params.yaml").write_text(text, encoding="utf-8")

    return setup


def params_edited(edit: Callable[[str], str]) -> Setup:
    """The workspace's params.yaml as text, edited (what a hand edit does that a dump cannot: a key twice, aliases)."""

    def setup(root, case, server):
        (case / "params.yaml").write_text(edit((root / "params.yaml").read_text(encoding="utf-8")), encoding="utf-8")

    return setup


def min_classes_twice(text: str) -> str:
    """`labels.min_classes` written again below itself (PyYAML kept the last one silently)."""
    line = next(line for line in text.splitlines(keepends=True) if line.startswith("  min_classes: "))
    return text.replace(line, line + "  min_classes: 500\n", 1)


def alias_bomb(levels: int, indent: str = "") -> str:
    """A 'billion laughs': each level a list of ten aliases of the one before (10**levels values)."""
    lines = [f"{indent}l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{indent}l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]" for n in range(1, levels)]
    return "\n".join(lines) + "\n"


def bomb_in_group(text: str) -> str:
    return text.replace("\nlabels:\n", "\nlabels:\n  bomb:\n" + alias_bomb(9, "    "), 1)


def precision_floor_of(value: float) -> Setup:
    def setup(root, case, server):
        params = _params(root, case)
        params["labels"]["precision_floor"]["languages"] = {"deu_Latn": value}
        _write_params(case, params)

    return setup


def without_profile(root, case, server):
    params = _params(root, case)
    del params["profile"]
    _write_params(case, params)


def audit_of_another_build(root, case, server):
    """The audit's slice of the labels as an audit of another labels.parquet wrote it; cards go to the case."""
    found = case / "audit" / "datasets" / "babel-imagenet.json"
    found.parent.mkdir(parents=True)
    record = {"dataset": "babel-imagenet", "audited": True, "errors": 7, "warnings": 0, "languages": {}}
    found.write_text(json.dumps(record | {"input": {"artifact": "labels", "sha256": "0" * 64}}), encoding="utf-8")
    params = _params(root, case)
    params["paths"].update(audit=str(case / "audit"), hub=str(case / "hub"))
    _write_params(case, params)


def registry_with_row(row: str) -> Setup:
    """resources/languages.tsv with one more row at its end."""

    def setup(root, case, server):
        text = (root / "resources" / "languages.tsv").read_text(encoding="utf-8")
        (case / "languages.tsv").write_text(text + row + "\n", encoding="utf-8")

    return setup


def changed_mirror(root, case, server):
    target = case / "mirror" / "imagenet" / "imagenet1k_classes.tsv"
    target.parent.mkdir(parents=True)
    text = (
        (REPO / ".." / "shared" / "data" / "imagenet" / "imagenet1k_classes.tsv").resolve().read_text(encoding="utf-8")
    )
    target.write_text(text.replace("tench", "tinca", 1), encoding="utf-8")


def truncated_copy(artifact: str, name: str) -> Setup:
    def setup(root, case, server):
        data = (root / artifact).read_bytes()
        target = case / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data[: len(data) // 2])

    return setup


def without_column(artifact: str, name: str, column: str) -> Setup:
    def setup(root, case, server):
        import pyarrow.parquet as pq

        table = pq.read_table(root / artifact)
        target = case / name
        target.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table.drop_columns([column]), target)

    return setup


def a_file_in_the_way(root, case, server):
    (case / "file").write_text("not a folder\n")


def link_to_built(folder: str) -> Setup:
    """CASE/link: a symbolic link to a built (DVC-tracked) folder of the workspace."""

    def setup(root, case, server):
        (case / "link").symlink_to(root / folder)

    return setup


def git_tracked(files: dict[str, str], uncommitted: dict[str, str] | None = None) -> Setup:
    """CASE/ as a git work tree: `files` committed (a folder git tracks and DVC does not), then
    `uncommitted` written (work a user has not committed yet)."""

    def setup(root, case, server):
        for name, text in files.items():
            (case / name).parent.mkdir(parents=True, exist_ok=True)
            (case / name).write_text(text, encoding="utf-8")
        identity = ["-c", "user.name=case", "-c", "user.email=case@example.org"]
        for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "tracked"]):
            subprocess.run(["git", *identity, *command], cwd=case, check=True, capture_output=True)
        for name, text in (uncommitted or {}).items():
            (case / name).write_text(text, encoding="utf-8")

    return setup


def guides_in_git(root, case, server):
    """CASE/docs/guides: the repository's guides, committed in a git work tree."""
    guides = REPO / "docs" / "guides"
    git_tracked({f"docs/guides/{p.name}": p.read_text(encoding="utf-8") for p in guides.glob("*.md")})(
        root, case, server
    )


def xm3600_release(root, case, server):
    """CASE/release: a fetched XM3600 release folder (its manifest and captions), the input of xm3600."""
    (case / "release").mkdir()
    (case / "release" / "fetch.json").write_text('{"files": []}\n', encoding="utf-8")
    (case / "release" / "captions.jsonl").write_text('{"image/key": "x"}\n', encoding="utf-8")


def captions_built_then_broken(root, case, server):
    """The workspace's data/captions built by captions_translate from 12 good captions (one target,
    greedy, shards of 4, the tiny NLLB); then the caption file rewritten with half its captions empty,
    so the next run stops on max_bad_fraction after it has cut new source/ shards."""
    from babelforge.core.io import write_text

    def csv(captions: list[str]) -> str:
        return "id,image,caption\n" + "".join(f"c{i:03d},{i}.jpg,{text}\n" for i, text in enumerate(captions))

    write_text(csv([f"a photo of a dog number {i}" for i in range(12)]), case / "captions.csv")
    params = _params(root, case)
    params["captions"]["input"].update(format="table", path=str(case / "captions.csv"), targets=["deu_Latn"])
    params["captions"]["translate"].update(beam_size=1, num_hypotheses=1, max_decoding_length=8)
    params["captions"]["runner"]["shard_size"] = 4
    _write_params(case, params)
    built = Workspace(root).run(["captions_translate", "--params", str(case / "params.yaml")])
    assert built.returncode == 0, built.stderr[-2000:]
    write_text(csv([("" if i % 2 else f"another caption {i}") for i in range(12)]), case / "captions.csv")


def captions_input(name: str, write: Callable[[Path], None], fmt: str = "table") -> Setup:
    """params.yaml reading the caption file CASE/<name> that `write` makes (format `fmt`)."""

    def setup(root, case, server):
        write(case / name)
        params = _params(root, case)
        params["captions"]["input"].update(format=fmt, path=str(case / name), targets=["deu_Latn"])
        _write_params(case, params)

    return setup


def latin1_captions(rows: int, bad_every: int) -> Callable[[Path], None]:
    """A caption CSV saved as cp1252: every `bad_every`-th caption has an accented word (bytes that are
    not UTF-8 once read as UTF-8), the rest is ASCII."""

    def write(path: Path) -> None:
        lines = ["id,image,caption"]
        accent = "caf\u00e9 "
        lines += [f"c{n},{n}.jpg,a photo of a dog {accent if n % bad_every == 0 else ''}{n}" for n in range(rows)]
        path.write_bytes("\n".join(lines).encode("cp1252") + b"\n")

    return write


def gzip_named_jsonl(path: Path) -> None:
    import gzip

    path.write_bytes(gzip.compress(b'{"id": "a", "image": "a.jpg", "caption": "a photo of a dog"}\n'))


def parquet_cut_in_half(path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"id": f"c{n}", "image": f"{n}.jpg", "caption": f"a photo of a dog {n}"} for n in range(2000)]
    pq.write_table(pa.Table.from_pylist(rows), path)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def caption_set(document: bytes, task: str) -> Setup:
    """params.yaml whose eval.<task> reads the one caption set CASE/set.json holding `document`."""

    def setup(root, case, server):
        (case / "set.json").write_bytes(document)
        params = _params(root, case)
        params["eval"][task]["caption_sets"] = [str(case / "set.json")]
        _write_params(case, params)

    return setup


def fail_mirror_file(*plan: str) -> Setup:
    def setup(root, case, server):
        server.failures["imagenet/imagenet1k_classes.tsv"] = list(plan)

    return setup


def model_folder_with_weights(cut: Callable[[bytes], bytes]) -> Setup:
    """CASE/clip: a transformers CLIP folder (its config.json) whose model.safetensors, written by
    safetensors itself, is then cut by `cut` (emptied, cut short)."""

    def setup(root, case, server):
        import numpy as np
        from safetensors.numpy import save

        (case / "clip").mkdir()
        (case / "clip" / "config.json").write_text(json.dumps({"model_type": "clip"}), encoding="utf-8")
        whole = save({"text_projection.weight": np.ones((64, 64), np.float32)})
        (case / "clip" / "model.safetensors").write_bytes(cut(whole))

    return setup


def open_clip_folder(root, case, server):
    """CASE/oc: a folder as open_clip saves one (its open_clip_config.json), no weights needed to be named."""
    (case / "oc").mkdir()
    (case / "oc" / "open_clip_config.json").write_text(json.dumps({"model_cfg": {"embed_dim": 16}}), encoding="utf-8")


def nllb_model_cut(root, case, server):
    """CASE/nllb: a copy of the built CTranslate2 NLLB model with its model.bin cut in half."""
    shutil.copytree(root / "models" / "nllb-ct2", case / "nllb")
    for weights in (case / "nllb").rglob("model.bin"):
        weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])


def xm3600_release_with(name: str, data: Callable[[], bytes]) -> Setup:
    """The XM3600 fixture release (tests/xm3600/release_fixture.py, 2 images) on a local mirror CASE/mirror with
    `name` replaced by `data()`, and params.yaml fetching it (its files pinned as they are, as a user who
    accepted new bytes would) into CASE/release; the fetched archives are the case's inputs."""

    def setup(root, case, server):
        import hashlib

        from tests.xm3600.release_fixture import PIN_KEYS, fixture_record, write_mirror

        pins = write_mirror(case / "mirror", [fixture_record(i) for i in range(2)])
        if name:
            (case / "mirror" / "xm3600" / name).write_bytes(data())
            pins[name] = hashlib.sha256(data()).hexdigest()
        params = _params(root, case)
        params["paths"].update(xm3600_release=str(case / "release"), xm3600=str(case / "xm3600"))
        params["xm3600_fetch"].update(build=True, mirror=str(case / "mirror"))
        params["xm3600_fetch"].update({PIN_KEYS[file]: pin for file, pin in pins.items()})
        _write_params(case, params)

    return setup


def xm3600_fetched_with(captions: bytes, **settings) -> Setup:
    """The fixture release fetched into CASE/release with `captions` as its captions.jsonl (the fetch is the
    setup's: what the case runs is `xm3600`), `settings` added to its `xm3600` group."""

    def setup(root, case, server):
        xm3600_release_with("captions.zip", lambda: _zipped({"captions.jsonl": captions}))(root, case, server)
        params = _params(case, case)
        params.setdefault("xm3600", {}).update(settings)
        _write_params(case, params)
        fetched = Workspace(root).run(["xm3600_fetch", "--params", str(case / "params.yaml")])
        assert fetched.returncode == 0, fetched.stderr[-2000:]

    return setup


def _zipped(members: dict[str, bytes]) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for name, data in members.items():
            bundle.writestr(name, data)
    return buffer.getvalue()


def _tgz(name: str, data: bytes = b"x", declared: int | None = None) -> bytes:
    """images.tgz of one member `name`; with `declared`, its header says that many bytes and the stream ends
    after `data` (what a bomb's first header looks like, without gzip-ing gigabytes of zeros per run)."""
    import gzip
    import io
    import tarfile

    if declared is None:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
            entry = tarfile.TarInfo(name)
            entry.size = len(data)
            bundle.addfile(entry, io.BytesIO(data))
        return buffer.getvalue()
    entry = tarfile.TarInfo(name)
    entry.size = declared
    return gzip.compress(entry.tobuf(tarfile.GNU_FORMAT) + data, mtime=0)


def _zip_declaring(size: int) -> bytes:
    """captions.zip whose captions.jsonl declares `size` bytes (local header and directory): a bomb's
    directory, without deflating gigabytes per run."""
    import struct

    data = bytearray(_zipped({"captions.jsonl": b"{}\n" * 100}))
    local, central = data.index(b"PK\x03\x04"), data.index(b"PK\x01\x02")
    struct.pack_into("<I", data, local + 22, size)
    struct.pack_into("<I", data, central + 24, size)
    return bytes(data)


def _fixture_captions(edit: Callable[[bytes], bytes] = lambda text: text) -> bytes:
    from tests.xm3600.release_fixture import fixture_record, fixture_text

    return edit(fixture_text([fixture_record(i) for i in range(2)]).encode())


XM3600_FETCH = ("xm3600_fetch", "--params", "CASE/params.yaml")
XM3600_BUILD = ("xm3600", "--params", "CASE/params.yaml")
# a fetch refused while unpacking keeps the verified downloads (the next fetch does not bring them again)
XM3600_DOWNLOADS = ("captions.zip", "images.tgz", "image_attributions.csv")


# --- the table --------------------------------------------------------------------------

# One typo per stage group of params.yaml, each through a stage that reads that group.
TYPO_STAGES = {
    "fetch": "fetch",
    "wordnet": "wordnet",
    "senses": "senses",
    "labels": "labels",
    "nllb": "nllb",
    "prompts": "prompts",
    "mvl_sib": "mvl_sib",
    "mvl_sib.images": "mvl_sib_images",
    "audit": "audit",
    "captions.tag": "captions_tag",
    "eval.zeroshot": "eval_zeroshot",
}

FETCH_HTTP = ("fetch", "--mirror-url", "URL", "--sources", "imagenet-classes", "--out", "CASE/raw")

CASES: list[Case] = [
    # params
    Case(
        "params-unknown-profile",
        "profile is not sample or full",
        ("labels", "--set", "profile=huge"),
        "profile is 'huge'",
    ),
    Case(
        "params-yaml-syntax",
        "params.yaml does not parse (an unclosed list, bad indent)",
        ("labels", "--params", "CASE/params.yaml"),
        "YAML syntax error",
        yaml_syntax_error,
    ),
    Case(
        "params-missing-file",
        "the params file does not exist",
        ("labels", "--params", "CASE/none.yaml"),
        "no params file",
    ),
    *[
        Case(
            f"params-typo-{group.replace('.', '-')}",
            f"a misspelt key in the `{group}` group of params.yaml",
            (stage, "--params", "CASE/params.yaml"),
            f"unknown key {group}.",
            typo_in(group),
        )
        for group, stage in TYPO_STAGES.items()
    ],
    Case(
        "params-wrong-type-set",
        "a word where a number belongs (--set)",
        ("labels", "--set", "labels.min_classes=ten"),
        "labels.min_classes is 'ten' (str); expected an integer",
    ),
    Case(
        "params-wrong-type-file",
        "a word where a number belongs (params.yaml)",
        ("mvl_sib", "--params", "CASE/params.yaml"),
        "mvl_sib.seed is 'forty-two'",
        wrong_type_in_file,
    ),
    Case(
        "params-wrong-type-list",
        "a number where a list belongs",
        ("mvl_sib", "--set", "mvl_sib.tasks.i2s=3"),
        "mvl_sib.tasks.i2s is 3",
    ),
    Case(
        "params-negative-min-classes",
        "a negative class count",
        ("labels", "--set", "labels.min_classes=-1"),
        "labels.min_classes is -1; it must be at least 1",
    ),
    Case(
        "params-negative-instances",
        "a negative sample size",
        ("mvl_sib", "--set", "mvl_sib.instances_per_sentence=-3"),
        "must be at least 1",
    ),
    Case(
        "params-zero-beam",
        "a beam of zero",
        ("prompts", "--set", "prompts.beam_size=0"),
        "prompts.beam_size is 0; it must be at least 1",
    ),
    Case(
        "params-set-not-yaml",
        "a --set value that is no YAML (a mapping inside a value)",
        ("labels", "--set", "labels.min_classes=a: b: c"),
        "'a: b: c' is not a YAML value (mapping values are not allowed here)",
    ),
    Case(
        "params-set-backtick",
        "a --set value starting with a backtick",
        ("labels", "--set", "labels.min_classes=`ten`"),
        "is not a YAML value (found character '`' that cannot start any token)",
    ),
    Case(
        "params-set-python-tag",
        "a --set value with a `!!python` tag (safe_load runs nothing)",
        ("labels", "--set", "labels.min_classes=!!python/object/apply:os.system ['true']"),
        "is not a YAML value (could not determine a constructor for the tag",
    ),
    Case(
        "params-empty-file",
        "an empty params.yaml (it used to build silently with defaults)",
        ("labels", "--params", "CASE/params.yaml"),
        "CASE/params.yaml: empty; a params file starts with `profile: sample`",
        params_text(""),
    ),
    Case(
        "params-no-profile",
        "params.yaml without its `profile:` line",
        ("labels", "--params", "CASE/params.yaml"),
        "CASE/params.yaml: no `profile:` line",
        without_profile,
    ),
    # the number rule: finite and in the range declared beside the setting (issue 46)
    Case(
        "params-nan-share-set",
        "a share set to NaN (it switched the script check off: NaN fails every comparison)",
        ("xm3600", "--set", "xm3600.max_script_mismatch=.nan"),
        "xm3600.max_script_mismatch is nan; it must be a finite number between 0 and 1",
    ),
    Case(
        "params-negative-share-set",
        "a share set to -1 (it was reported as 'more than -100%')",
        ("xm3600", "--set", "xm3600.max_script_mismatch=-1"),
        "xm3600.max_script_mismatch is -1.0; it must be between 0 and 1",
    ),
    Case(
        "params-nan-precision-floor",
        "the precision floor set to NaN (it built 20,520 labels instead of 20,374)",
        ("labels", "--set", "labels.precision_floor.default=.nan"),
        "labels.precision_floor.default is nan; it must be a finite number between 0 and 1",
    ),
    Case(
        "params-inf-floor-in-file",
        "a per-language precision floor of infinity in params.yaml",
        ("labels", "--params", "CASE/params.yaml"),
        "labels.precision_floor.languages.deu_Latn is inf; it must be a finite number between 0 and 1",
        precision_floor_of(float("inf")),
    ),
    Case(
        "params-negative-timeout",
        "a negative Ray connect timeout (a 32-line ValueError: Timeout value out of range)",
        ("captions_translate", "--set", "captions.runner.connect_timeout=-5"),
        "captions.runner.connect_timeout is -5.0; it must be above 0",
    ),
    Case(
        "params-nan-timeout-eval",
        "the evaluation runner's connect timeout set to NaN",
        ("eval_zeroshot", "--set", "eval.runner.connect_timeout=.nan"),
        "eval.runner.connect_timeout is nan; it must be a finite number above 0",
    ),
    Case(
        "http-ray-address-is-a-web-server",
        "a Ray address where a web server answers (it waited the whole 20 s connect_timeout, after loading COMETKiwi)",
        ("captions_tag", "--set", "captions.runner.runner=ray", "--set", "captions.runner.address=HOSTPORT"),
        "ray: no cluster answered at HOSTPORT: something that is not Ray answers there ('Error response",
    ),
    Case(
        "http-ray-client-address-is-a-web-server",
        "a Ray client address (ray://) where a web server answers (it waited 20 s, after writing source/ shards)",
        (
            "captions_translate",
            "--set",
            "captions.runner.runner=ray",
            "--set",
            "captions.runner.address=ray://HOSTPORT",
        ),
        "ray: no cluster answered at ray://HOSTPORT: something that is not Ray answers there",
    ),
    Case(
        "params-stall-factor-below-one",
        "a Ray stall factor under 1 (the stage would stop while a chunk as slow as the slowest so far is in progress)",
        ("captions_translate", "--set", "captions.runner.stall_factor=0.5"),
        "captions.runner.stall_factor is 0.5; it must be at least 1",
    ),
    Case(
        "params-zero-stall-floor-eval",
        "the evaluation runner's stall floor set to 0 (no time at all for the model loads)",
        ("eval_zeroshot", "--set", "eval.runner.stall_floor=0"),
        "eval.runner.stall_floor is 0.0; it must be above 0",
    ),
    Case(
        "params-duplicate-key",
        "labels.min_classes written twice in params.yaml (the last won silently: 5,961 labels in 9 languages)",
        ("labels", "--params", "CASE/params.yaml"),
        "YAML refused: key 'min_classes' appears twice (lines ",
        params_edited(min_classes_twice),
    ),
    Case(
        "params-alias-bomb-top",
        "a YAML alias bomb (10**9 values) at the top level of params.yaml",
        ("labels", "--params", "CASE/params.yaml"),
        "its aliases expand to more than 100,000 values (an alias bomb)",
        params_edited(lambda text: text + alias_bomb(9)),
    ),
    Case(
        "params-alias-bomb-group",
        "a YAML alias bomb inside the labels group (babelforge labels grew past 3.86 GB in for_profile)",
        ("labels", "--params", "CASE/params.yaml"),
        "its aliases expand to more than 100,000 values (an alias bomb)",
        params_edited(bomb_in_group),
    ),
    # source data
    Case(
        "source-omw-truncated",
        "an OMW .tab file cut off in the middle of a row",
        ("senses", "--set", "senses.omw_dir=CASE/omw"),
        "ends in the middle of a row",
        omw_copy(truncate_mid_line),
    ),
    Case(
        "source-omw-empty",
        "an empty OMW .tab file",
        ("senses", "--set", "senses.omw_dir=CASE/omw"),
        "expected an OMW header",
        omw_copy(lambda p: p.write_bytes(b"")),
    ),
    Case(
        "source-omw-invalid-utf8",
        "bytes that are not UTF-8 in an OMW .tab file",
        ("senses", "--set", "senses.omw_dir=CASE/omw"),
        "not UTF-8",
        omw_copy(invalid_utf8),
    ),
    Case(
        "source-omw-missing",
        "the OMW folder is missing",
        ("senses", "--set", "senses.omw_dir=CASE/omw"),
        "no OMW `wns/` folder",
    ),
    Case(
        "source-sib-missing-column",
        "a SIB-200 TSV without its category column",
        ("mvl_sib", "--set", "mvl_sib.sib_dir=CASE/sib"),
        "dev.tsv",
        sib_copy(drop_category_column),
    ),
    Case(
        "source-sib-unknown-category",
        "a SIB-200 row with a topic SIB-200 does not have",
        ("mvl_sib", "--set", "mvl_sib.sib_dir=CASE/sib"),
        "astrology",
        sib_copy(unknown_category),
    ),
    Case(
        "source-sib-empty",
        "an empty SIB-200 TSV",
        ("mvl_sib", "--set", "mvl_sib.sib_dir=CASE/sib"),
        "dev.tsv",
        sib_copy(lambda p: p.write_bytes(b"")),
    ),
    Case(
        "source-sib-invalid-utf8",
        "bytes that are not UTF-8 in a SIB-200 TSV",
        ("mvl_sib", "--set", "mvl_sib.sib_dir=CASE/sib"),
        "not UTF-8",
        sib_copy(sib_invalid_utf8),
    ),
    Case(
        "source-review-sheet-markup",
        "a review sheet whose replace label holds markup (`<img src=x onerror=alert(1)>Hund`)",
        ("review", "import", "CASE/deu_Latn.review.csv", "--params", "CASE/params.yaml"),
        "deu_Latn.review.csv:2: label '<img src=x onerror=alert(1)>Hund' holds markup",
        review_sheet_with("<img src=x onerror=alert(1)>Hund"),
    ),
    Case(
        "source-review-sheet-note-newline",
        "a note cell smuggling a second decision after a line break (German goldfish rejected by mallory)",
        ("review", "import", "CASE/deu_Latn.review.csv", "--params", "CASE/params.yaml"),
        "deu_Latn.review.csv:2: note 'ok\\nn01443537\\treject",
        review_sheet_with("Querbinder", note="ok\nn01443537\treject\t\tmallory\t2025-01-14\tgone"),
    ),
    Case(
        "source-review-sheet-reviewer-newline",
        "a reviewer cell with a line break",
        ("review", "import", "CASE/deu_Latn.review.csv", "--params", "CASE/params.yaml"),
        "deu_Latn.review.csv:2: reviewer 'anna\\nmallory' holds a line break (U+000A)",
        review_sheet_with("Querbinder", reviewer="anna\nmallory"),
    ),
    Case(
        "source-review-sheet-note-tab",
        "a note cell with a tab (it made a seventh field)",
        ("review", "import", "CASE/deu_Latn.review.csv", "--params", "CASE/params.yaml"),
        "deu_Latn.review.csv:2: note 'a\\tb' holds a tab",
        review_sheet_with("Querbinder", note="a\tb"),
    ),
    Case(
        "source-review-sheet-note-u2028",
        "a note cell with a line separator U+2028 (the build read a second line)",
        ("review", "import", "CASE/deu_Latn.review.csv", "--params", "CASE/params.yaml"),
        "deu_Latn.review.csv:2: note 'a\\u2028b' holds a line break (U+2028)",
        review_sheet_with("Querbinder", note="a\u2028b"),
    ),
    Case(
        "source-review-sheet-note-control",
        "a note cell with a terminal escape (it reached labels.parquet)",
        ("review", "import", "CASE/deu_Latn.review.csv", "--params", "CASE/params.yaml"),
        "deu_Latn.review.csv:2: note 'ok\\x1b[2J' holds the control character U+001B",
        review_sheet_with("Querbinder", note="ok\x1b[2J"),
    ),
    Case(
        "source-review-sheet-label-zwj",
        "a new label with a zero-width joiner in Latin script (a zero-width space was refused, a ZWJ not)",
        ("review", "import", "CASE/deu_Latn.review.csv", "--params", "CASE/params.yaml"),
        "deu_Latn.review.csv:2: label 'Quer\\u200dbinder' holds a zero-width joiner (U+200D)",
        review_sheet_with("Quer\u200dbinder"),
    ),
    Case(
        "source-review-sheet-label-bidi",
        "a new label with a right-to-left override",
        ("review", "import", "CASE/deu_Latn.review.csv", "--params", "CASE/params.yaml"),
        "deu_Latn.review.csv:2: label 'Querbinder\\u202e' holds the bidirectional control U+202E",
        review_sheet_with("Querbinder\u202e"),
    ),
    Case(
        "source-review-sheet-label-500",
        "a new label of 500 characters",
        ("review", "import", "CASE/deu_Latn.review.csv", "--params", "CASE/params.yaml"),
        "has 500 characters; at most 100",
        review_sheet_with("Querbinder" * 50),
    ),
    Case(
        "source-review-file-u2028",
        "a hand-edited review file whose note holds U+2028 (read as a line end, the row had 7 fields)",
        ("labels", "--params", "CASE/params.yaml"),
        "deu_Latn.tsv:2: note 'Fliege\\u2028x' holds a line break (U+2028)",
        review_file_with("Fliege\u2028x"),
    ),
    Case(
        "source-registry-malformed-row",
        "languages.tsv with an extra row of 15 fields (it used to load silently)",
        ("prompts", "--registry", "CASE/languages.tsv"),
        "15 fields, expected 14 separated by tabs",
        registry_with_row("zzz_Latn\tTest\tzzz\tLatn\tLatn\t\t\t\t\t\tFalse\tFalse\tFalse\tFalse\textra"),
    ),
    Case(
        "source-registry-bidi-name",
        "languages.tsv with a language name holding a right-to-left override U+202E",
        ("prompts", "--registry", "CASE/languages.tsv"),
        "name 'Te\\u202est' holds the bidirectional control U+202E",
        registry_with_row("zzz_Latn\tTe\u202est\tzzz\tLatn\tLatn\t\t\t\t\t\tFalse\tFalse\tFalse\tFalse"),
    ),
    Case(
        "source-registry-duplicate-row",
        "languages.tsv with a second deu_Latn row (language_view used to write a view of it)",
        ("prompts", "--registry", "CASE/languages.tsv"),
        "key 'deu_Latn' appears twice (first on line ",
        registry_with_row("deu_Latn\tGerman\tdeu\tLatn\tLatn\tde\tDE\tdeu\tdeu_Latn\tde\tTrue\tTrue\tTrue\tTrue"),
    ),
    Case(
        "source-registry-bidi-nllb",
        "languages.tsv with a right-to-left mark U+200F in the nllb column",
        ("prompts", "--registry", "CASE/languages.tsv"),
        "nllb 'zzz_Latn\\u200f' holds the bidirectional control U+200F",
        registry_with_row("zzz_Latn\tTest\tzzz\tLatn\tLatn\t\t\t\tzzz_Latn\u200f\t\tFalse\tFalse\tFalse\tFalse"),
    ),
    Case(
        "source-mirror-missing",
        "the source mirror folder does not exist",
        ("fetch", "--mirror", "CASE/nowhere", "--sources", "imagenet-classes", "--out", "CASE/raw"),
        "mirror directory CASE/nowhere does not exist",
    ),
    Case(
        "source-sha256-mismatch",
        "a mirror file whose bytes changed",
        ("fetch", "--mirror", "CASE/mirror", "--sources", "imagenet-classes", "--out", "CASE/raw"),
        "expected",
        changed_mirror,
    ),
    Case(
        "source-captions-bad-keeps-built-outputs",
        "half the captions empty, over built captions (it rewrote source/ and references/ before its error)",
        ("captions_translate", "--params", "CASE/params.yaml"),
        "6 of 12 captions are bad (empty_caption 6), more than max_bad_fraction",
        captions_built_then_broken,
    ),
    Case(
        "source-captions-latin1",
        "a 50,000-row caption CSV saved as Latin-1, every second row not UTF-8 (it read every row, wrote 29 shards)",
        ("captions_translate", "--params", "CASE/params.yaml"),
        "of the first 1001 captions read are bad (invalid_utf8 ",
        captions_input("captions.csv", latin1_captions(50_000, 2)),
    ),
    Case(
        "source-captions-no-utf8-row",
        "a caption CSV in Latin-1 where no row is UTF-8 (it said only 'no captions')",
        ("captions_translate", "--params", "CASE/params.yaml"),
        "no row is UTF-8 (30 captions, invalid_utf8 30): the file looks like Latin-1/cp1252",
        captions_input("captions.csv", latin1_captions(30, 1)),
    ),
    Case(
        "source-captions-gzip-jsonl",
        "gzip bytes named captions.jsonl (it said only 'no captions')",
        ("captions_translate", "--params", "CASE/params.yaml"),
        "captions.jsonl: gzip-compressed bytes, not JSON Lines; unpack it first",
        captions_input("captions.jsonl", gzip_named_jsonl),
    ),
    Case(
        "source-captions-parquet-cut",
        "a caption Parquet file cut in half (an ArrowInvalid traceback)",
        ("captions_translate", "--params", "CASE/params.yaml"),
        "captions.parquet: not a readable Parquet file after row 0",
        captions_input("captions.parquet", parquet_cut_in_half),
    ),
    Case(
        "source-captions-xtd-truncated",
        "an XTD caption file cut off mid-caption",
        ("captions_translate", "--params", "CASE/params.yaml"),
        "not JSON (Unterminated string starting at); a file cut off? fetch it again",
        captions_input(
            "xtd.json", lambda path: path.write_bytes(b'{"images": ["a.jpg"], "captions": {"en": ["a ph'), "xtd"
        ),
    ),
    Case(
        "source-caption-set-length",
        "an eval caption set with 1 English caption for 2 images (accepted silently)",
        ("eval_retrieval", "--params", "CASE/params.yaml"),
        "set.json: 1 en captions for 2 images; a caption set has one entry",
        caption_set(b'{"images": ["a.jpg", "b.jpg"], "captions": {"en": [["a photo of a dog"]]}}', "retrieval"),
    ),
    Case(
        "source-caption-set-truncated",
        "an eval caption set cut off (a JSONDecodeError traceback)",
        ("eval_clipscore", "--params", "CASE/params.yaml"),
        "set.json:1:44: not JSON (Unterminated string starting at); a file cut off? fetch it again",
        caption_set(b'{"images": ["a.jpg"], "captions": {"en": [["a photo', "clipscore"),
    ),
    Case(
        "source-image-list-latin1",
        "an eval image list with a Latin-1 path (a UnicodeDecodeError traceback)",
        ("eval_zeroshot", "--set", "eval.zeroshot.images=CASE/list.tsv"),
        "list.tsv:2: not UTF-8 (invalid continuation byte at byte 3 of the line",
        lambda root, case, server: (case / "list.tsv").write_bytes(b"a.png\t0\ncaf\xe9.png\t1\n"),
    ),
    Case(
        "source-xm3600-captions-zip-not-zip",
        "captions.zip is an HTML error page (a BadZipFile traceback, 18 lines)",
        XM3600_FETCH,
        "captions.zip: not a zip archive (it starts with b'<html><h', text: an error page?); fetch it again",
        xm3600_release_with("captions.zip", lambda: b"<html><h1>404 Not Found</h1></html>"),
        keep=XM3600_DOWNLOADS,
    ),
    Case(
        "source-xm3600-captions-zip-truncated",
        "captions.zip cut short (a BadZipFile traceback)",
        XM3600_FETCH,
        "captions.zip: cut short or damaged: no zip directory at its end (File is not a zip file); fetch it again",
        xm3600_release_with("captions.zip", lambda: _zipped({"captions.jsonl": _fixture_captions()})[:-200]),
        keep=XM3600_DOWNLOADS,
    ),
    Case(
        "source-xm3600-captions-zip-bomb",
        "captions.zip whose captions.jsonl declares 2 GiB (a 2 MB zip wrote a 2 GiB file)",
        XM3600_FETCH,
        "captions.zip: at member 'captions.jsonl': expands to more than 536,870,912 bytes "
        "(xm3600_fetch.captions_max_unpacked_bytes): a decompression bomb",
        xm3600_release_with("captions.zip", lambda: _zip_declaring(2 << 30)),
        keep=XM3600_DOWNLOADS,
    ),
    Case(
        "source-xm3600-images-not-gzip",
        "images.tgz is a zip, not gzip (a ReadError traceback, 20-30 lines)",
        XM3600_FETCH,
        "images.tgz: not gzip-compressed (it starts with b'PK\\x03\\x04\\x14\\x00\\x00\\x00', a zip), so no .tgz",
        xm3600_release_with("images.tgz", lambda: _zipped({"000411001ff7dd4f.jpg": b"x"})),
        keep=XM3600_DOWNLOADS,
    ),
    Case(
        "source-xm3600-images-truncated",
        "images.tgz cut short (an EOFError traceback)",
        XM3600_FETCH,
        "images.tgz: cut short (Compressed file ended before the end-of-stream marker was reached); fetch it again",
        xm3600_release_with("images.tgz", lambda: _tgz("images/000411001ff7dd4f.jpg", bytes(range(256)) * 64)[:-100]),
        keep=XM3600_DOWNLOADS,
    ),
    Case(
        "source-xm3600-images-bomb",
        "images.tgz whose one image declares 3 GiB (a 3 MB images.tgz wrote a 3 GiB images/bomb.jpg)",
        XM3600_FETCH,
        "images.tgz: at member 'images/bomb.jpg': expands to more than 1,073,741,824 bytes "
        "(xm3600_fetch.images_max_unpacked_bytes): a decompression bomb",
        xm3600_release_with("images.tgz", lambda: _tgz("images/bomb.jpg", bytes(4096), declared=3 << 30)),
        keep=XM3600_DOWNLOADS,
    ),
    Case(
        "source-xm3600-images-dotdot-member",
        "an images.tgz member named ../../x.jpg (flattened to its base name, not refused)",
        XM3600_FETCH,
        "images.tgz: member '../../000411001ff7dd4f.jpg' has a `..` in its path, which would leave the folder it is unpacked "
        "into; refused",
        xm3600_release_with("images.tgz", lambda: _tgz("../../000411001ff7dd4f.jpg")),
        keep=XM3600_DOWNLOADS,
    ),
    Case(
        "source-xm3600-images-absolute-member",
        "an images.tgz member named /etc/x.jpg (flattened to its base name, not refused)",
        XM3600_FETCH,
        "images.tgz: member '/etc/000411001ff7dd4f.jpg' has an absolute path; refused",
        xm3600_release_with("images.tgz", lambda: _tgz("/etc/000411001ff7dd4f.jpg")),
        keep=XM3600_DOWNLOADS,
    ),
    Case(
        "source-xm3600-captions-empty",
        "an empty captions.jsonl (an ArrowInvalid traceback: FieldRef.Name(lang))",
        XM3600_BUILD,
        "captions.jsonl: no caption line (the file is empty); captions.zip is not the release's",
        xm3600_fetched_with(b""),
    ),
    Case(
        "source-xm3600-captions-latin1",
        "captions.jsonl in Latin-1, no line UTF-8 (a UnicodeDecodeError traceback)",
        XM3600_BUILD,
        "no row is UTF-8 (2 captions, invalid_utf8 2): the file looks like Latin-1/cp1252",
        xm3600_fetched_with(_fixture_captions(lambda text: text.replace(b"Bild", "Bild caf\xe9".encode("latin-1")))),
    ),
    Case(
        "source-xm3600-caption-bidi-fail",
        "a caption holding U+202E under xm3600.on_bad_row fail (it was stored in captions.parquet and the card)",
        XM3600_BUILD,
        "captions.jsonl:2: a line break, tab, bidirectional control or invisible character",
        xm3600_fetched_with(
            _fixture_captions(lambda text: text.replace("фото 1 0".encode(), "фото 1 0 \u202etxt.exe".encode())),
            on_bad_row="fail",
        ),
    ),
    # artifacts
    Case(
        "artifact-truncated-wordnet",
        "the wordnet Parquet cut in half, read by senses",
        ("senses", "--wordnet", "CASE/wn.parquet"),
        "not a readable Parquet file",
        truncated_copy("data/wordnet/imagenet1k.parquet", "wn.parquet"),
    ),
    Case(
        "artifact-wordnet-missing-column",
        "the wordnet Parquet without its synset column, read by senses",
        ("senses", "--wordnet", "CASE/wn.parquet"),
        "no column 'synset'",
        without_column("data/wordnet/imagenet1k.parquet", "wn.parquet", "synset"),
    ),
    Case(
        "artifact-truncated-senses",
        "the senses Parquet cut in half, read by labels (downstream)",
        ("labels", "--senses", "CASE/senses"),
        "not a readable Parquet file",
        truncated_copy("data/senses/omw.parquet", "senses/omw.parquet"),
    ),
    Case(
        "artifact-senses-missing-column",
        "the senses Parquet without its lemma column, read by labels",
        ("labels", "--senses", "CASE/senses"),
        "no column 'lemma'",
        without_column("data/senses/omw.parquet", "senses/omw.parquet", "lemma"),
    ),
    Case(
        "artifact-truncated-languages",
        "languages.parquet cut in half, read by prompts (downstream)",
        ("prompts", "--languages", "CASE/languages.parquet"),
        "not a readable Parquet file",
        truncated_copy("data/babel_imagenet/languages.parquet", "languages.parquet"),
    ),
    Case(
        "artifact-languages-missing-column",
        "languages.parquet without its lang column, read by prompts",
        ("prompts", "--languages", "CASE/languages.parquet"),
        "no column 'lang'",
        without_column("data/babel_imagenet/languages.parquet", "languages.parquet", "lang"),
    ),
    Case(
        "artifact-images-missing",
        "MVL-SIB without its images stage's output",
        ("mvl_sib", "--images", "CASE/images"),
        "run `babelforge mvl_sib_images` first",
    ),
    Case(
        "artifact-stale-audit",
        "the audit's slice summarised another build of the labels (a card would print its counts)",
        ("card", "babel-imagenet", "--params", "CASE/params.yaml"),
        "summarises another build of labels (sha256 000000000000, now ",
        audit_of_another_build,
    ),
    Case(
        "artifact-model-weights-empty",
        "a model folder whose model.safetensors is empty (a 32-line SafetensorError traceback)",
        ("eval_zeroshot", "--model", "CASE/clip"),
        "clip/model.safetensors: empty (0 bytes); the model folder",
        model_folder_with_weights(lambda whole: b""),
    ),
    Case(
        "artifact-model-weights-cut",
        "a model folder whose model.safetensors is cut short (a SafetensorError traceback)",
        ("eval_retrieval", "--model", "CASE/clip"),
        "clip/model.safetensors: cut short: its tensors need 16,384 bytes after the header",
        model_folder_with_weights(lambda whole: whole[: len(whole) // 2]),
    ),
    Case(
        "artifact-nllb-weights-cut",
        "the CTranslate2 NLLB model.bin cut in half (a RuntimeError traceback)",
        ("prompts", "--model", "CASE/nllb", "--out", "CASE/prompts.parquet"),
        "model.bin: CTranslate2 cannot load it on cpu (",
        nllb_model_cut,
    ),
    # command line
    Case(
        "cli-unknown-language",
        "a language SIB-200 does not have",
        ("mvl_sib", "--language", "eng_Latn,xxx_Zzzz"),
        "'xxx_Zzzz' is not a language of",
    ),
    Case(
        "cli-malformed-language",
        "a language that is not a code",
        ("mvl_sib", "--language", "klingon"),
        "'klingon' is not a SIB-200 code",
    ),
    Case(
        "cli-empty-list",
        "an empty language list",
        ("mvl_sib", "--set", "mvl_sib.languages=[]"),
        "no SIB-200 languages selected",
    ),
    Case(
        "cli-missing-input",
        "the senses folder does not exist",
        ("labels", "--senses", "CASE/none"),
        "no senses (omw.parquet or babelnet.parquet)",
    ),
    Case(
        "cli-missing-wordnet",
        "the wordnet artifact does not exist",
        ("senses", "--wordnet", "CASE/none.parquet"),
        "no such artifact",
    ),
    Case(
        "cli-nan-rate",
        "eval_paper --plan with a rate of NaN images per second (it printed 'nan GPU-hours')",
        ("eval_paper", "--plan", "--images-per-second", "nan"),
        "--images-per-second is nan; it must be a finite number above 0",
    ),
    Case(
        "cli-zero-count-flag",
        "a flag derived from a count setting given 0 (geo_pool --per-language)",
        ("geo_pool", "--per-language", "0"),
        "--per-language is 0; it must be at least 1",
    ),
    Case(
        "cli-output-under-a-file",
        "the output folder cannot be made: a file is in its place",
        ("senses", "--out", "CASE/file/senses"),
        "CASE/file is a file, not a folder",
        a_file_in_the_way,
    ),
    Case(
        "cli-output-not-writable",
        "the output folder is on a file system nobody may write",
        ("labels", "--out", "/sys/babelforge/labels.parquet", "--out-anywhere"),
        "cannot create the folder /sys/babelforge",
    ),
    Case(
        "cli-out-into-tracked-output",
        "--out inside another stage's DVC-tracked output (it wrote there)",
        ("wordnet", "--out", "data/mvl_sib/wordnet.parquet"),
        "lies in data/mvl_sib, a DVC-tracked output of mvl_sib; name another --out, or pass --out-anywhere",
    ),
    Case(
        "cli-out-through-a-link",
        "--out through a symbolic link to a tracked folder (it overwrote the folder)",
        ("captions_translate", "--out", "CASE/link"),
        "data/mvl_sib, a DVC-tracked output of mvl_sib",
        link_to_built("data/mvl_sib"),
    ),
    Case(
        "cli-out-into-git-tracked-folder",
        "--out a folder git tracks and DVC does not (it deleted all 7 guides)",
        ("eval_export", "--out", "CASE/docs/guides", "--language", "de"),
        "CASE/docs/guides holds files git tracks (",
        guides_in_git,
    ),
    Case(
        "cli-out-onto-reviews",
        "--out the review folder: a tracked README.md and a review sheet not committed yet (both were lost)",
        ("xm3600", "--out", "CASE/resources/reviews"),
        "CASE/resources/reviews holds files git tracks (README.md), among 2 files babelforge xm3600 did not write "
        "(README.md, deu_Latn.tsv)",
        git_tracked({"resources/reviews/README.md": "# reviews\n"}, {"resources/reviews/deu_Latn.tsv": "lang\n"}),
    ),
    Case(
        "cli-out-into-its-own-input",
        "--out the release folder the command reads (it replaced the release: archives, images, fetch.json)",
        ("xm3600", "--set", "paths.xm3600_release=CASE/release", "--out", "CASE/release"),
        "CASE/release is an input of xm3600 (the run would replace what it reads)",
        xm3600_release,
    ),
    Case(
        "cli-out-outside-the-project",
        "--out outside the project and the temp folder (it was written without a word)",
        ("wordnet", "--out", "/etc/babelforge/wordnet.parquet"),
        "is outside the project",
    ),
    Case(
        "cli-disk-full-labels",
        "the disk takes no more than 16 KiB per file (RLIMIT_FSIZE)",
        ("labels",),
        "cannot write data/babel_imagenet/",
        fsize_limit=16 << 10,
    ),
    Case(
        "cli-disk-full-mvl_sib",
        "the disk takes no more than 16 KiB per file, a folder output",
        ("mvl_sib",),
        "cannot write data/mvl_sib",
        fsize_limit=16 << 10,
    ),
    Case(
        "cli-disk-full-senses",
        "the disk takes no more than 16 KiB per file",
        ("senses",),
        "cannot write data/senses/omw.parquet",
        fsize_limit=16 << 10,
    ),
    Case(
        "cli-model-revision-on-a-folder",
        "--model FOLDER@REVISION: the revision was dropped without a word",
        ("eval_zeroshot", "--model", "CASE/clip@deadbeef"),
        "CASE/clip is a local folder, loaded as its files are now (results record their sha256) and not at a "
        "revision; drop @deadbeef",
        model_folder_with_weights(lambda whole: whole),
    ),
    Case(
        "cli-model-family-of-another-folder",
        "--model mclip:<a CLIP folder>: ~55 s of Hub retries, 46 lines, then a misleading modelBase error",
        ("eval_zeroshot", "--model", "mclip:CASE/clip+CASE/clip"),
        "CASE/clip is not a checkpoint of the mclip family, which needs a config.json of model_type M-CLIP",
        model_folder_with_weights(lambda whole: whole),
    ),
    Case(
        "cli-model-hf-on-an-open-clip-folder",
        "--model hf:<an open_clip folder>: a transformers type guessed from the folder's name",
        ("eval_zeroshot", "--model", "hf:CASE/oc"),
        "it holds an open_clip_config.json (saved by open_clip): write open_clip:CASE/oc",
        open_clip_folder,
    ),
    Case(
        "cli-model-hub-id-without-revision",
        "--model st:ORG/NAME+IMAGE: 'no such folder' (open_clip said 'no revision pinned')",
        ("eval_zeroshot", "--model", "st:org/st+CASE/clip"),
        "model st:org/st: no folder org/st here, and as a Hub model no revision pinned; give st:org/st@<commit sha>",
        model_folder_with_weights(lambda whole: whole),
    ),
    Case(
        "cli-paper-languages-not-parquet",
        "eval_paper --plan --languages params.yaml (a 29-line ArrowInvalid traceback)",
        ("eval_paper", "--plan", "--languages", "params.yaml"),
        "--languages params.yaml: UTF-8 text, not a Parquet file; expected the languages table",
    ),
    Case(
        "cli-paper-languages-labels-table",
        "eval_paper --plan --languages labels.parquet (accepted: any Parquet file with a lang column passed)",
        ("eval_paper", "--plan", "--languages", "data/babel_imagenet/labels.parquet"),
        "a Parquet table without the column 'n_classes'; expected the languages table",
    ),
    Case(
        "cli-paper-run-not-text",
        "eval_paper --run with a PNG named .csv (a UnicodeDecodeError traceback)",
        ("eval_paper", "--run", "CASE/results.csv"),
        "results.csv: a PNG image, not UTF-8 text; expected a run JSON",
        lambda root, case, server: (case / "results.csv").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64)),
    ),
    # HTTP, against the loopback mirror server
    Case(
        "http-500-forever",
        "the server answers 500 to every request",
        FETCH_HTTP,
        "gave up after 2 attempts (last: HTTP 500)",
        fail_mirror_file("500*"),
    ),
    Case(
        "http-429-retry-after",
        "the server answers 429 asking to wait an hour",
        FETCH_HTTP,
        "asks to retry after 3600 s",
        fail_mirror_file("429:3600*"),
    ),
    Case(
        "http-hanging",
        "the server accepts the connection and never answers",
        FETCH_HTTP,
        "Timeout",
        fail_mirror_file("hang*"),
    ),
    Case(
        "http-truncated-body",
        "the server closes the connection after half the body",
        FETCH_HTTP,
        "download incomplete after 2 attempts",
        fail_mirror_file("truncate*"),
        keep=(".part",),
    ),
]


# --- running a case ---------------------------------------------------------------------


def _fill(text: str, case_dir: Path, url: str) -> str:
    host_port = url.removeprefix("http://").rstrip("/")  # a server address without a scheme (a Ray address)
    return text.replace("CASE/", f"{case_dir}/").replace("HOSTPORT", host_port).replace("URL", url)


def _limit_file_size(limit: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink()}


def run_case(case: Case, workspace: Workspace, case_dir: Path, server) -> Outcome:
    """Set the case up in `case_dir`, run its command in the workspace, check every promise."""
    case_dir.mkdir(parents=True, exist_ok=True)
    if case.setup is not None:
        case.setup(workspace.root, case_dir, server)
    inputs = _files(case_dir)
    before = workspace.digests()
    try:
        args = [_fill(arg, case_dir, server.url) for arg in case.args]
        preexec = _limit_file_size(case.fsize_limit) if case.fsize_limit else None
        result = workspace.run(args, preexec_fn=preexec, timeout=120)
    finally:
        server.failures.clear()
    outcome = Outcome(case, result.returncode, result.stderr, result.stdout)
    problems = outcome.problems
    if result.returncode != case.exit_code:
        problems.append(f"exit code {result.returncode}, expected {case.exit_code}")
    if "Traceback" in result.stderr:
        problems.append("a traceback was printed")
    errors = [line for line in result.stderr.splitlines() if ": error: " in line]
    stage = case.args[0]
    if len(errors) != 1 or not errors[0].startswith(f"babelforge {stage}: error: "):
        problems.append(f"expected one line `babelforge {stage}: error: ...`, got {errors or result.stderr[-500:]!r}")
    elif _fill(case.expect, case_dir, server.url) not in errors[0]:
        problems.append(f"the message does not say {case.expect!r}: {errors[0]!r}")
    written = sorted(name for name in _files(case_dir) - inputs if not name.endswith(case.keep or ("\0",)))
    if written:
        problems.append(f"written although the command failed: {written}")
    after = workspace.digests()
    if after != before:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        problems.append(f"built outputs changed or appeared: {changed[:5]}")
    left = leftovers(workspace.root)
    if left:
        problems.append(f"temp or lock files left: {left[:5]}")
    return outcome


def shown_message(outcome: Outcome, case_dir: Path, server) -> str:
    """The message as CASES.md prints it: the case folder and server as in the command column."""
    port = str(server.server_address[1])
    return (
        outcome.message.replace(f"{case_dir}/", "CASE/")
        .replace(str(case_dir), "CASE")
        .replace(server.url.rstrip("/"), "URL")
        .replace(server.url.removeprefix("http://").rstrip("/"), "HOSTPORT")
        .replace(f"port={port}", "port=PORT")
    )


def markdown(rows: list[tuple[Case, int, str]]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [
        "# Fault and bad-input cases",
        "",
        "Generated by `python -m tests.reliability.cases` from a real run (the table is `CASES` in",
        "`tests/reliability/cases.py`; `tests/reliability/test_cases.py` runs it in the test suite).",
        "Each case runs one command in a small built workspace; every one must exit non-zero with one",
        "line naming the problem (no traceback), write nothing at the paths it was given and leave every",
        "built output byte for byte as it was, with no temp or lock file left. `CASE/` is the case's own",
        "folder, `URL` a loopback HTTP server (`HOSTPORT` its address without the scheme); every command runs with",
        "`BABELFORGE_HTTP_POLICY=attempts=2,base_delay=0.01,max_delay=0.05,max_retry_after=60,timeout=1`",
        "(a short retry policy). A download cut off keeps its `.part` file beside the target on purpose:",
        "the next fetch resumes it with `Range`. Interrupts, secrets and two writers at once are tested in",
        "`test_interrupts.py`, `test_secrets.py` and `test_two_at_once.py` beside it.",
        "",
        "| case | what is broken | command | exit | first line of the message |",
        "| --- | --- | --- | --- | --- |",
    ]
    for case, code, message in rows:
        lines.append(f"| `{case.id}` | {cell(case.broken)} | `{cell(case.command)}` | {code} | {cell(message)} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from tests.loopback import LoopbackServer, serving

    parser = argparse.ArgumentParser(description="run the fault table and write CASES.md")
    parser.add_argument("--out", default=str(Path(__file__).with_name("CASES.md")), help="markdown file to write")
    args = parser.parse_args(argv)
    mirror = (REPO / ".." / "shared" / "data").resolve()
    rows, failed = [], 0
    with tempfile.TemporaryDirectory(prefix="babelforge-cases-") as tmp, serving(LoopbackServer(mirror)) as server:
        server.hang_seconds = 5
        workspace = build_workspace(Path(tmp) / "workspace")
        for case in CASES:
            case_dir = Path(tmp) / "cases" / case.id
            outcome = run_case(case, workspace, case_dir, server)
            rows.append((case, outcome.exit_code, shown_message(outcome, case_dir, server)))
            status = "ok" if not outcome.problems else "FAILED: " + "; ".join(outcome.problems)
            failed += bool(outcome.problems)
            print(f"{case.id}: {status}", file=sys.stderr)
    Path(args.out).write_text(markdown(rows), encoding="utf-8")
    print(f"{len(rows)} cases, {failed} failed -> {args.out}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
