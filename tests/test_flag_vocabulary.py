"""One flag vocabulary across every stage of `babelforge`, help text on every flag.

The rule: a stage's main output is `--out` (a file or a folder); inputs and secondary outputs are
named by what they are (`--labels`, `--summary`), never by their kind (`--out-dir`, `--data-dir`).
No older spelling is kept (a 0.x project). Each stage's parser is built as `babelforge <stage>` builds it.
"""

from __future__ import annotations

import argparse

import pytest

from babelforge.cli import PATH_METAVARS, main, stage_parser
from babelforge.commands import COMMANDS
from babelforge.core.stages import load

# Every visible flag, with what it means wherever it appears.
VOCABULARY = {
    "--debug": "show the traceback of an error",
    "--params": "the params file",
    "--set": "override one setting for this run",
    "--out": "the stage's main output, a file or a folder",
    "--out-anywhere": "let --out lie outside the project or in another stage's tracked output",
    "--metrics": "the folder of headline metrics (paths.metrics)",
    "--summary": "a secondary summary output",
    "--languages": "the languages table (languages.parquet)",
    "--language": "only these languages (codes)",
    "--labels": "labels.parquet",
    "--candidates": "a candidates table",
    "--prompts": "prompts.parquet",
    "--wordnet": "the wordnet artifact",
    "--senses": "the senses folder",
    "--reviews": "the review files folder",
    "--classes": "the ImageNet class list",
    "--templates": "the English CLIP templates",
    "--registry": "the language registry TSV",
    "--model": "the model to use (a folder or a model id)",
    "--device": "cpu, cuda or auto",
    "--runner": "local or ray: where sharded work runs",
    "--images": "an image folder",
    "--dataset": "a published dataset: a built card folder or hf:ORG/NAME@REVISION",
    "--prompts-dataset": "the published prompts dataset that goes with --dataset",
    "--image-root": "the folder image paths are relative to",
    "--manifest": "an image manifest",
    "--sib200": "the SIB-200 annotated folder",
    "--mvl-sib": "the assembled MVL-SIB folder",
    "--hub": "the built card folders",
    "--audit": "the audit report folder",
    "--releases": "the publish receipts folder",
    "--reference": "a reference release to compare with",
    "--references": "reference captions",
    "--sources": "which sources to fetch",
    "--mirror": "fetch: the local source mirror; correlate: mirror the data",
    "--mirror-url": "an HTTP source mirror",
    "--upstream": "download from the upstream URLs",
    "--profile": "the build profile",
    "--per-language": "one line or pool per language",
    "--areas": "the geographic areas table",
    "--seed": "a random seed",
    "--sample": "only a random sample of this many",
    "--rev": "a git revision",
    "--path": "a file inside the repository",
    "--repo": "a git or Hub repository",
    "--format": "output format",
    "--json": "print JSON",
    "--reviewer": "who reviewed",
    "--date": "when it was reviewed",
    "--revision-tag": "a tag for the published commit",
    "--dry-run": "validate only, no network",
    "--force": "go on despite errors",
    "--allow-sample": "publish a build of the sample profile",
    "--private": "create the repository private",
    "--x": "first column to correlate",
    "--y": "second column to correlate",
    "--on": "the join key",
    "--doubled-p": "the p-value of the doubled sample",
    "--scale-m": "tau-c's scale",
    "--n-boot": "bootstrap resamples",
    "--text": "the text column",
    "--group": "a grouping column",
    "--baseline": "a baseline to compare with",
    "--run": "a run document (run JSON or results.csv) to read",
    "--paper": "which paper's published tables",
    "--task": "which evaluation task's numbers",
    "--as": "put a model beside another's name (a stand-in)",
    "--plan": "plan the work instead of doing it",
    "--images-per-second": "an encoding rate for an estimate",
    "--texts-per-second": "an encoding rate for an estimate",
    "--all": "list every item, not only those that need something",
    "--check": "report what is missing, change nothing",
    "--update": "resolve from upstream and write the result (network)",
    "--accept": "take upstream's new value for this name",
}

# Stages another branch is rewriting: their old flag stays until it lands (none left).
NOT_YET_CONVERTED: set[tuple[str, str]] = set()


def parsers():
    """(stage, sub-command or "", parser) of every stage, sub-parsers included."""
    for name in COMMANDS:
        parser = stage_parser(load(name))
        yield name, "", parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, subparser in action.choices.items():
                    yield name, sub, subparser


def flags(parser):
    return [
        action for action in parser._actions if action.option_strings and not isinstance(action, argparse._HelpAction)
    ]


ALL = list(parsers())


def test_the_vocabulary_itself_follows_the_rule():
    assert not [flag for flag in VOCABULARY if flag.endswith("-dir") or flag in ("--output", "--out-file")]


@pytest.mark.parametrize("stage, sub, parser", ALL, ids=[f"{s} {sub}".strip() for s, sub, _ in ALL])
def test_every_flag_has_help_and_is_in_the_vocabulary(stage, sub, parser):
    problems = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        name = "/".join(action.option_strings) or action.dest
        if action.help == argparse.SUPPRESS:
            continue  # none: test_no_hidden_flag
        if not (action.help or "").strip():
            problems.append(f"{name}: no help")
        if (
            action.option_strings
            and action.nargs != 0
            and action.metavar is None
            and "." in action.dest
            and not {(stage, flag) for flag in action.option_strings} & NOT_YET_CONVERTED
        ):
            problems.append(f"{name}: shows its config key as the value's name (give it metavar FILE or DIR)")
        for flag in action.option_strings:
            if flag not in VOCABULARY and (stage, flag) not in NOT_YET_CONVERTED:
                problems.append(f"{flag}: not in the vocabulary")
    assert problems == [], f"babelforge {stage} {sub}: " + "; ".join(problems)


def test_no_hidden_flag(capsys):
    """No deprecated spelling is kept (a 0.x project): every flag is in --help."""
    hidden = [
        f"{stage} {flag}"
        for stage, _, parser in ALL
        for action in flags(parser)
        if action.help == argparse.SUPPRESS
        for flag in action.option_strings
    ]
    assert hidden == []
    with pytest.raises(SystemExit):
        stage_parser(load("senses")).parse_args(["--out-dir", "somewhere"])
    assert "unrecognized arguments: --out-dir" in capsys.readouterr().err


def test_help_shows_the_new_spelling(capsys):
    with pytest.raises(SystemExit):
        main(["mvl_sib", "--help"])
    text = capsys.readouterr().out
    assert "--out DIR" in text and "--sib200 DIR" in text and "--images DIR" in text
    assert "-dir" not in text.replace("sib_dir", "")


# Flags whose value is a path. In a command that reads params.yaml, a path on the command line is taken
# from the working folder and the params file's from the project root (babelforge.cli.at_project_root):
# the CLI knows a path by its FILE or DIR metavar. (`--repo` is a Hub repo in publish, a folder in diff.)
PATH_FLAGS = {
    "--out",
    "--metrics",
    "--summary",
    "--languages",
    "--labels",
    "--candidates",
    "--prompts",
    "--wordnet",
    "--senses",
    "--reviews",
    "--classes",
    "--templates",
    "--registry",
    "--images",
    "--dataset",  # or hf:ORG/NAME@REVISION, which the CLI leaves as it is
    "--prompts-dataset",
    "--image-root",
    "--manifest",
    "--sib200",
    "--mvl-sib",
    "--hub",
    "--audit",
    "--releases",
    "--reference",
    "--mirror",
    "--areas",
}


@pytest.mark.parametrize("stage, sub, parser", ALL, ids=[f"{s} {sub}".strip() for s, sub, _ in ALL])
def test_a_path_flag_shows_file_or_dir_where_params_paths_resolve_from_the_root(stage, sub, parser):
    if not any(action.dest == "params" for action in flags(parser)):
        return  # reads no params file: every path is taken from the working folder
    unmarked = [
        flag
        for action in flags(parser)
        if action.help != argparse.SUPPRESS and action.metavar not in PATH_METAVARS
        for flag in action.option_strings
        if flag in PATH_FLAGS
    ]
    assert unmarked == [], f"babelforge {stage} {sub}: path flags without metavar FILE or DIR: {unmarked}"
