"""Generated files that diff small: adding a stage changes only the lines about that stage in what
scripts/pipeline_files.py and scripts/docs_reference.py write (dvc.yaml, params.yaml, the Mermaid graphs
of README.md and docs/architecture/index.md, the reference pages), so two people adding stages do not
conflict; the settings reference names each reader of a group once."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import sys

import pytest

from babelforge.core.stage_settings import params_groups
from babelforge.core.stage_table import table
from babelforge.core.stages import load
from tests.imports import REPO, package_dirs
from tests.project import command_env, copy_project, run


def docs_reference():
    spec = importlib.util.spec_from_file_location("docs_reference", REPO / "scripts" / "docs_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_reader_of_a_settings_group_is_named_once():
    """`paths` was read by `fetch`, `fetch`, ...: stage_paths() is also a group setting_groups names."""
    groups = params_groups()
    assert {group: names for group, (_, names) in groups.items() if len(names) != len(set(names))} == {}
    direct = {
        name
        for name in table()
        if (stage := load(name)).config is not None
        and stage.in_params_yaml
        and any(f.metadata.get("group") == "paths" for f in dataclasses.fields(stage.config))
    }
    assert direct <= set(groups["paths"][1]) and {"fetch", "labels", "eval_export"} <= set(groups["paths"][1])
    for line in docs_reference().settings_page().splitlines():
        if line.startswith("Read by `"):
            names = re.findall(r"`([^`]+)`", line.split(" (")[0])
            assert len(names) == len(set(names)), line


# What `dvc dag --mermaid` prints: nodes numbered in name order, edges by those numbers.
DVC_BEFORE = """flowchart TD
\tnode1["audit"]
\tnode2["card@xm3600"]
\tnode3["xm3600"]
\tnode1-->node2
\tnode3-->node1
"""
DVC_AFTER = """flowchart TD
\tnode1["audit"]
\tnode2["captions_xm"]
\tnode3["card@xm3600"]
\tnode4["xm3600"]
\tnode1-->node3
\tnode4-->node1
\tnode4-->node2
"""


def test_mermaid_nodes_are_named_by_stage_so_a_new_stage_adds_only_its_lines():
    stable = docs_reference().stable_node_ids
    before, after = stable(DVC_BEFORE).splitlines(), stable(DVC_AFTER).splitlines()
    assert before == ["flowchart TD", '  card_xm3600["card@xm3600"]', "  xm3600 --> audit", "  audit --> card_xm3600"]
    assert sorted(set(after) - set(before)) == ["  xm3600 --> captions_xm"] and set(before) <= set(after)
    two_inputs = DVC_AFTER.replace("\tnode4-->node2", "\tnode4-->node2\n\tnode1-->node2")
    assert "  audit & xm3600 --> captions_xm" in stable(two_inputs).splitlines()


def test_a_graph_line_the_script_does_not_know_or_two_stages_with_one_id_stop_it():
    stable = docs_reference().stable_node_ids
    with pytest.raises(ValueError, match=r"a line this script does not know: 'node1==>node2'"):
        stable(DVC_BEFORE + "\tnode1==>node2\n")
    with pytest.raises(ValueError, match=r"stages 'card@xm3600' and 'card_xm3600' both get the graph id card_xm3600"):
        stable(DVC_BEFORE + '\tnode4["card_xm3600"]\n')


NEW_STAGE = '''\
"""`babelforge captions_xm`: the XM3600 reference captions per language."""

from __future__ import annotations

from dataclasses import dataclass

from babelforge.core.config import from_group, setting
from babelforge.core.stages import Paths, Stage, stage_paths


@dataclass(frozen=True)
class Config:
    """The `captions_xm` group of params.yaml."""

    GROUP = "captions_xm"
    max_captions: int | None = setting({"sample": 100, "full": None}, "captions per language (null: all)")
    profile: str = from_group(str, "profile", "the build profile (recorded in the provenance)")
    paths: Paths = stage_paths()


def run(config: Config) -> int:
    return 0


STAGE = Stage(
    "captions_xm",
    "read the XM3600 reference captions per language",
    run,
    config=Config,
    flags={"--out": ("paths.captions_xm", "the file to write")},
    deps=("${paths.xm3600}",),
    outs=("${paths.captions_xm}",),
    owns={"captions_xm": ("data/captions_xm/captions.parquet", "the XM3600 captions per language")},
)
'''


def import_root(copy):
    """A `babelforge` package of links into the copy's folders (what pyproject's package-dir maps),
    so the generators run there read the copy's stage declarations, not this checkout's."""
    root = copy / ".import-root"
    package = root / "babelforge"
    package.mkdir(parents=True)
    for name, folder in package_dirs().items():
        inside = copy / folder.relative_to(REPO)
        if name == "babelforge":
            for entry in inside.iterdir():
                (package / entry.name).symlink_to(entry)
        else:
            (package / name.split(".", 1)[1]).symlink_to(inside)
    return root


def diff_hunks(copy, env, *exclude: str) -> list[tuple[str, list[str]]]:
    """[(file, its changed lines)] per hunk of the copy's uncommitted changes."""
    spec = [".", *(f":!{path}" for path in exclude)]
    text = run(["git", "diff", "-U0", "HEAD", "--", *spec], copy, env)
    hunks, current = [], None
    for line in text.splitlines():
        if line.startswith("+++ "):
            current = line.removeprefix("+++ b/")
        elif line.startswith("@@"):
            hunks.append((current, []))
        elif line[:1] in "+-" and not line.startswith("--- ") and hunks:
            hunks[-1][1].append(line)
    return hunks


@pytest.mark.slow  # a copy of the project, the two generators run twice (about a minute)
def test_adding_a_stage_changes_only_the_generated_lines_about_it(tmp_path):
    """`captions_xm` sorts in the middle of the stages (dvc numbered every graph node after it anew:
    434 lines changed, 183 of them existing lines, before the graph's nodes were named)."""
    copy = copy_project(tmp_path / "copy")
    env = command_env(copy) | {"PYTHONPATH": f"{import_root(copy)}:{copy}"}

    def generate():
        for script in ("scripts/pipeline_files.py", "scripts/docs_reference.py"):
            run([sys.executable, script], copy, env)

    generate()  # what this checkout's declarations give: the baseline
    run(["git", "add", "-A"], copy, env)
    run(["git", "commit", "-qm", "generated", "--allow-empty"], copy, env)
    (copy / "builders" / "captions" / "xm_stage.py").write_text(NEW_STAGE, encoding="utf-8")
    generate()
    run(["git", "add", "-A"], copy, env)
    hunks = diff_hunks(copy, env, "builders/captions/xm_stage.py")

    changed = {name for name, _ in hunks}
    assert {"dvc.yaml", "params.yaml", "README.md", "docs/architecture/index.md"} <= changed
    assert changed <= {
        "dvc.yaml",
        "params.yaml",
        "README.md",
        "docs/architecture/index.md",
        "docs/reference/commands.md",
        "docs/reference/settings.md",
    }
    assert [(name, lines) for name, lines in hunks if not any("captions_xm" in line for line in lines)] == []
    rewritten = [(name, line) for name, lines in hunks for line in lines if line.startswith("-")]
    # the one existing line that changes: the `paths` group's readers, which now name it
    assert [(name, line.startswith("-Read by `fetch`")) for name, line in rewritten] == [
        ("docs/reference/settings.md", True)
    ]
    graph = {line for name, lines in hunks if name == "README.md" for line in lines if "-->" in line or '["' in line}
    assert graph == {"+  xm3600 --> captions_xm"}
    assert not re.search(r"node\d+", (copy / "docs" / "architecture" / "index.md").read_text(encoding="utf-8"))
