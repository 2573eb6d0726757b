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
import resource
import shutil
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


def review_sheet_with(new_label: str) -> Setup:
    """A filled-in review sheet of deu_Latn replacing the bow tie's label, and params.yaml sending
    imports to the case's own reviews folder (never the repository's)."""

    def setup(root, case, server):
        from babelforge.audit.review_sheet import SHEET_COLUMNS, render_sheet

        row = {column: "" for column in SHEET_COLUMNS}
        row.update(lang="deu_Latn", class_idx=457, wnid="n02883205", label="Fliege", decision="replace")
        row.update(new_label=new_label, reviewer="anna", date="2025-01-14")
        (case / "deu_Latn.review.csv").write_text(render_sheet([row]), encoding="utf-8")
        params = _params(root, case)
        params["paths"]["reviews"] = str(case / "reviews")
        _write_params(case, params)

    return setup


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


def fail_mirror_file(*plan: str) -> Setup:
    def setup(root, case, server):
        server.failures["imagenet/imagenet1k_classes.tsv"] = list(plan)

    return setup


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
        "source-registry-malformed-row",
        "languages.tsv with an extra row of 15 fields (it used to load silently)",
        ("prompts", "--registry", "CASE/languages.tsv"),
        "15 fields, expected 14 separated by tabs",
        registry_with_row("zzz_Latn\tTest\tzzz\tLatn\tLatn\t\t\t\t\t\tFalse\tFalse\tFalse\tFalse\textra"),
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
        "cli-output-under-a-file",
        "the output folder cannot be made: a file is in its place",
        ("senses", "--out", "CASE/file/senses"),
        "CASE/file is a file, not a folder",
        a_file_in_the_way,
    ),
    Case(
        "cli-output-not-writable",
        "the output folder is on a file system nobody may write",
        ("labels", "--out", "/sys/babelforge/labels.parquet"),
        "cannot create the folder /sys/babelforge",
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
    return text.replace("CASE/", f"{case_dir}/").replace("URL", url)


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
        "folder, `URL` a loopback HTTP server; every command runs with",
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
