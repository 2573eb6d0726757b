"""A reviewer's journey on a real build: export the German sheet, decide three rows, import, `dvc repro`;
the labels, the audit, the card and `babelforge diff` show it; an upstream change makes the accept stale.
Then the guides' undo blocks, run verbatim: the review's, a language added and taken back (only the stages
that find languages rerun), and an experiment in the workspace (a params change reruns only its stage).

The project copy builds the whole chain the card needs (labels, prompts, MT captions, MVL-SIB, audit)
from the source mirror, with MVL-SIB cut to two languages, MT captions to four captions and the labels to
the languages with 400 classes or more.
"""

from __future__ import annotations

import asyncio
import csv
import json
import re
import shutil
import subprocess

import pandas as pd
import pytest
import yaml
from dvc.utils.hydra import apply_overrides

from babelforge.babel_imagenet.reviews import labels_review_coverage
from tests.browser import CHROMIUM, chromium_page
from tests.docs_blocks import shell_blocks
from tests.project import command_env, copy_project, guide_block, keep_built_stages, run
from tests.shared import built_once

pytestmark = pytest.mark.slow

CARD = "card@babel-imagenet"
BOW_TIE, GRAND_PIANO, OSTRICH, FLY = "n02883205", "n03452741", "n01518878", "n02190166"
# stages a review cannot touch: upstream of labels, or reading nothing labels writes
UNTOUCHED = (
    "fetch",
    "wordnet",
    "senses",
    "nllb",
    "mvl_sib_images",
    "mvl_sib",
    "captions_kiwi_model",
    "captions_translate",
    "captions_tag",
    "captions_select",
)


def ran(output: str) -> set[str]:
    return set(re.findall(r"Running stage '([^']+)'", output))


def build_journey_project(copy, shared_data):
    """The project copied into `copy`, its chain built and committed: the built checkout a guide starts from."""
    copy.mkdir(parents=True)
    copy_project(copy)
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["fetch"]["mirror"] = str(shared_data)
    params["mvl_sib"]["languages"] = ["eng_Latn", "deu_Latn"]
    # The languages with 400 classes or more (14 of the sample's 138; German has 425, 424 after the
    # review's reject): the prompts, audit pages and card configs of the others add minutes and
    # nothing to the journey.
    params["labels"]["min_classes"] = 400
    params["captions"]["input"]["limit"] = 4
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    apply_overrides(copy / "params.yaml", [])  # in the form DVC writes it back, as the project keeps it
    env = command_env(copy)
    # with the eval stages' tiny models and images: the docs' runnable evaluation blocks use them
    assert CARD in ran(run(["dvc", "repro", CARD, "eval_tiny_clip", "eval_images"], copy, env, timeout=1800))
    assert CARD in keep_built_stages(copy, env)
    run(["git", "add", "-A"], copy, env)  # the built checkout a guide starts from: its lock and metrics committed
    run(["git", "commit", "-qm", "the build"], copy, env)
    return copy


@pytest.fixture(scope="session")
def built_project(tmp_path_factory, shared_data):
    """The committed build, once per run for every xdist worker (tests/shared.py): a test of this file
    that another worker takes (worksteal) finds it built instead of building it again. Read it, never
    write into it: `project` gives a copy to change."""
    return built_once(tmp_path_factory, "review-journey", lambda folder: build_journey_project(folder, shared_data))


@pytest.fixture()
def project(built_project, tmp_path):
    """A copy of the committed build of its own (the journey changes, rebuilds and undoes; the docs'
    blocks write into the checkout)."""
    copy = tmp_path / "journey"
    shutil.copytree(built_project, copy, symlinks=True)
    return copy, command_env(copy)


def changed_stages(copy, env) -> set[str]:
    """The stages `dvc status` finds changed among the card's and those it reads."""
    status = run(["dvc", "status", "--with-deps", CARD], copy, env)
    return set(re.findall(r"^(\S+):$", status, re.MULTILINE))


def german(copy):
    labels = pd.read_parquet(copy / "data" / "babel_imagenet" / "labels.parquet")
    return labels[labels["lang"] == "deu_Latn"].set_index("wnid")


def test_review_journey(project, tmp_path):
    copy, env = project
    assert run(["git", "status", "--porcelain"], copy, env) == ""  # the committed build
    assert ran(run(["dvc", "repro", CARD], copy, env)) == set()  # up to date: a second repro runs nothing
    before = tmp_path / "labels-before.parquet"
    shutil.copy(copy / "data" / "babel_imagenet" / "labels.parquet", before)
    n_german = len(german(copy))

    # 1. export: every German class, with the audit's flags and the alternatives
    sheet = tmp_path / "deu_Latn.review.csv"
    run(["babelforge", "review", "export", "de", "--out", str(sheet)], copy, env)  # ISO 639-1 resolves
    with sheet.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == n_german
    by_wnid = {row["wnid"]: row for row in rows}
    assert by_wnid[BOW_TIE]["label"] == "Fliege" and by_wnid[BOW_TIE]["english"] == "bow tie"
    assert "duplicate: also class 308" in by_wnid[BOW_TIE]["flags"]
    assert "Straußenmännchen (wikt; not_first; 1 src)" in by_wnid[OSTRICH]["alternatives"]

    # 2. decide three rows in the spreadsheet (German Excel saves with semicolons)
    by_wnid[BOW_TIE].update(decision="replace", new_label="Querbinder", note="Fliege ist auch das Insekt")
    by_wnid[GRAND_PIANO].update(decision="reject", note="Flügel ist auch der Flügel eines Vogels")
    by_wnid[OSTRICH].update(decision="accept")
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), delimiter=";")
        writer.writeheader()
        writer.writerows(rows)

    # 3. import into resources/reviews/deu_Latn.tsv
    run(["babelforge", "review", "import", str(sheet), "--reviewer", "anna", "--date", "2025-01-14"], copy, env)
    review_file = (copy / "resources" / "reviews" / "deu_Latn.tsv").read_text(encoding="utf-8").splitlines()
    assert review_file[1:] == [
        f"{OSTRICH}\taccept\tStrauß\tanna\t2025-01-14\t",
        f"{BOW_TIE}\treplace\tQuerbinder\tanna\t2025-01-14\tFliege ist auch das Insekt",
        f"{GRAND_PIANO}\treject\t\tanna\t2025-01-14\tFlügel ist auch der Flügel eines Vogels",
    ]

    # 4. dvc repro: labels and what reads them, nothing upstream or beside
    stages = ran(run(["dvc", "repro", CARD], copy, env, timeout=1800))
    assert {"labels", "audit", CARD} <= stages and not stages & set(UNTOUCHED), stages

    # the labels
    labels = german(copy)
    assert (labels.loc[BOW_TIE, "label"], labels.loc[BOW_TIE, "source"]) == ("Querbinder", "review:anna")
    assert labels.loc[BOW_TIE, "rule_label"] == "Fliege" and labels.loc[BOW_TIE, "reviewed"]
    assert not labels.loc[FLY, "is_duplicate"] and not labels.loc[FLY, "reviewed"]
    assert GRAND_PIANO not in labels.index and len(labels) == n_german - 1
    assert labels.loc[OSTRICH, "reviewed"] and labels.loc[OSTRICH, "source"] == "wikt"

    # the audit: coverage on the index and the language page, who decided what
    audit = copy / "reports" / "audit"
    summary = json.loads((audit / "summary.json").read_text())
    coverage = summary["languages"]["deu_Latn"]["reviews"]
    assert {k: coverage[k] for k in ("classes", "reviewed", "changed", "rejected", "stale")} == {
        "classes": n_german,
        "reviewed": 3,
        "changed": 2,
        "rejected": 1,
        "stale": 0,
    }
    assert f"{100 * 3 / n_german:.1f}%" in (audit / "index.html").read_text()
    page = (audit / "deu_Latn.html").read_text()
    assert len(re.findall(r'<tr class="(?:flagged|clean)" id="class-', page)) == n_german - 1
    assert "Flügel ist auch der Flügel eines Vogels" in page and 'data-reviewed="replace"' in page

    # the card's data, and the coverage it states (from labels.parquet, as the audit's)
    card = pd.read_parquet(copy / "build" / "hub" / "babel-imagenet" / "data" / "deu_Latn" / "test.parquet")
    card = card.set_index("wnid")
    assert (card.loc[BOW_TIE, "label"], card.loc[BOW_TIE, "source"]) == ("Querbinder", "review:anna")
    assert len(card) == n_german - 1
    labels_path = copy / "data" / "babel_imagenet" / "labels.parquet"
    assert labels_review_coverage(labels_path)["deu_Latn"] == coverage
    readme = (copy / "build" / "hub" / "babel-imagenet" / "README.md").read_text(encoding="utf-8")
    assert f"deu_Latn 3 of {n_german} classes" in readme

    # babelforge diff: the review-made changes apart from the rule-made ones
    run(
        ["babelforge", "diff", str(before), str(labels_path), "--format", "json", "--out", str(tmp_path / "d.json")],
        copy,
        env,
    )
    diff = json.loads((tmp_path / "d.json").read_text())
    assert diff["summary"]["by_review"] == {"added": 0, "removed": 1, "relabelled": 1}
    assert diff["languages"]["deu_Latn"]["relabelled"] == [
        {"class_idx": 457, "old": "Fliege", "new": "Querbinder", "by": "review"}
    ]
    # the accept changed no label: listed as confirmed
    assert diff["languages"]["deu_Latn"]["confirmed"] == [{"class_idx": 9, "label": "Strauß", "by": "review"}]

    # 5. a simulated upstream change: the Wiktionary file no longer lists Strauß, so the rules now pick
    # Straußenmännchen (a reorder alone would not do: Strauß is in use, the others have no recorded use)
    omw = tmp_path / "omw"
    shutil.copytree(copy / "data" / "raw" / "omw", omw)
    omw.chmod(0o755)
    tab = omw / "wns" / "wikt" / "wn-wikt-deu.tab"
    tab.chmod(0o644)
    lines = tab.read_text(encoding="utf-8").split("\n")
    lines.remove("01518878-n\tdeu:lemma\tStrauß")
    tab.write_text("\n".join(lines), encoding="utf-8")
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["senses"]["omw_dir"] = str(omw)
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    stages = ran(run(["dvc", "repro", CARD], copy, env, timeout=1800))
    assert {"senses", "labels", "audit", CARD} <= stages

    labels = german(copy)
    assert (labels.loc[OSTRICH, "label"], labels.loc[OSTRICH, "rule_label"]) == ("Strauß", "Straußenmännchen")
    assert labels.loc[OSTRICH, "review_stale"]
    record = json.loads((audit / "deu_Latn.json").read_text())
    assert record["reviews"]["stale"] == 1
    assert [d["class_idx"] for d in record["reviews"]["decisions"] if d["stale"]] == [9]
    page = (audit / "deu_Latn.html").read_text()
    ostrich_row = page[page.index('id="class-9"') :].split("</tr>")[0]
    assert "stale_review" in ostrich_row and "Straußenmännchen" in ostrich_row
    assert json.loads((audit / "summary.json").read_text())["languages"]["deu_Latn"]["reviews"]["stale"] == 1

    # 6. undo, as the review guide says (the simulated upstream change first: it is no review's)
    run(["git", "checkout", "--", "params.yaml"], copy, env)
    run(["bash", "-ec", guide_block("review-labels.md", "**Undo it**")], copy, env)
    assert "resources/reviews/deu_Latn.tsv" in run(["git", "clean", "-n", "resources/reviews/"], copy, env)
    run(["git", "clean", "-f", "resources/reviews/"], copy, env)  # the guide's step for a first review file
    assert labels_path.read_bytes() == before.read_bytes()
    assert changed_stages(copy, env) == set()

    # 7. add a language no source has data for (the registry rebuild's result, as a row): only the stages
    # that find out which languages have data rerun, and the views, which come out the same
    registry_file = copy / "resources" / "languages.tsv"
    lines = registry_file.read_text(encoding="utf-8").splitlines(keepends=True)
    ghotuo = "\t".join(["aaa_Latn", "Ghotuo", "aaa", "Latn", "Latn", "", "", "", "", "", *["False"] * 4]) + "\n"
    registry_file.write_text("".join([lines[0], ghotuo, *lines[1:]]), encoding="utf-8")
    views = {"language_view@babel-imagenet", "language_view@mt-captions", "language_view@mvl-sib"}
    assert changed_stages(copy, env) == {"senses", "labels", *views}
    output = run(["dvc", "repro", CARD], copy, env, timeout=1800)
    assert ran(output) == {"senses", "labels", *views}
    assert "since the last build: none joined; none left" in output
    assert labels_path.read_bytes() == before.read_bytes()

    # undo, as the add-a-language guide says
    run(["bash", "-ec", guide_block("add-a-language.md", "**Undo**")], copy, env)
    assert run(["git", "status", "--porcelain"], copy, env) == ""
    assert changed_stages(copy, env) == set()

    # 8. an experiment in the workspace, as the compare-runs guide runs one: a params change reruns only
    # its stage and changes one line of params.yaml; the guide's undo block brings the build back
    committed = labels_path.read_bytes(), (copy / "params.yaml").read_bytes()
    assert ran(run(["dvc", "exp", "run", "-S", "labels.min_classes=450", "labels"], copy, env)) == {"labels"}
    assert "1 file changed, 1 insertion(+), 1 deletion(-)" in run(["git", "diff", "--stat", "params.yaml"], copy, env)
    assert labels_path.read_bytes() != committed[0]  # German (425 classes) and others dropped
    assert "Running stage" not in run(["bash", "-ec", guide_block("compare-runs.md", "## Undo it")], copy, env)
    assert (labels_path.read_bytes(), (copy / "params.yaml").read_bytes()) == committed
    assert run(["git", "status", "--porcelain"], copy, env) == ""
    assert changed_stages(copy, env) == set()


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed")
def test_real_german_page_lists_every_class_and_filters_to_the_flagged(built_project, tmp_path):
    copy = built_project  # read only: the page and the labels
    page_path = copy / "reports" / "audit" / "deu_Latn.html"
    record = json.loads((copy / "reports" / "audit" / "deu_Latn.json").read_text())
    n_german = len(german(copy))

    async def drive():
        async with chromium_page(tmp_path / "profile") as page:
            await page.open(page_path.as_uri())
            ids = await page.evaluate("Array.from(document.querySelectorAll('#labels tbody tr'), r => r.id)")
            await page.evaluate(
                "var s = document.getElementById('filter-flag'); s.value = 'any';s.dispatchEvent(new Event('change'))"
            )
            visible = await page.evaluate(
                "Array.from(document.querySelectorAll('#labels tbody tr:not([hidden])'), r => r.id)"
            )
            return ids, visible

    ids, visible = asyncio.run(drive())
    assert len(ids) == len(set(ids)) == n_german
    assert set(ids) == {f"class-{idx}" for idx in german(copy)["class_idx"]}
    stale = {f"class-{d['class_idx']}" for d in record["reviews"]["decisions"] if d["stale"]}
    assert set(visible) == {f"class-{idx}" for idx in record["flags"]} | stale


def test_the_docs_runnable_blocks_run_as_written_on_the_built_checkout(project):
    """Every block README.md and docs/ mark `<!-- runnable -->`, verbatim, in page order, on a copy of
    the committed build; each exits 0 and none leaves a tracked file changed
    (tests/test_docs_commands.py checks the marks and placeholders)."""
    copy, env = project
    blocks = [block for block in shell_blocks(copy) if block.runnable and not block.context]
    assert len(blocks) >= 10, [block.name for block in blocks]
    failed = {}
    for block in blocks:
        result = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", block.text],
            cwd=copy,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        if result.returncode:
            failed[block.name] = (result.stdout + result.stderr)[-1500:]
    assert not failed, failed
    assert run(["git", "status", "--porcelain", "--untracked-files=no"], copy, env) == ""
