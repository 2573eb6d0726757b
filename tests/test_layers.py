"""The layer contract (tests/layers.py) holds on the real import graph, and the checker catches breaches."""

from __future__ import annotations

import subprocess
import sys

from tests.imports import REPO
from tests.layers import AREA_IMPORTS, AREAS, breaches, cycles, private_names_used_across_parts, project_graph


def test_the_package_keeps_its_layers_and_has_no_cycle():
    graph = project_graph()
    assert len(graph) > 100 and "babelforge.cli" in graph and "babelforge.eval" in graph
    assert breaches(graph) == []
    assert cycles(graph) == []
    assert private_names_used_across_parts(graph) == []


def test_core_imports_no_area_no_eval_and_no_command_line():
    graph = project_graph()
    core = {module: targets for module, targets in graph.items() if module.startswith("babelforge.core")}
    reached = {target.split(".")[1] for targets in core.values() for target in targets if "." in target}
    assert reached <= {"core"}, reached


def test_the_allowed_area_imports_are_used_and_acyclic():
    graph = project_graph()
    used = {
        (a.split(".")[1], b.split(".")[1])
        for a, targets in graph.items()
        for b in targets
        if a.count(".") and b.count(".") and a.split(".")[1] in AREAS and b.split(".")[1] in AREAS
    }
    allowed = {(source, target) for source, targets in AREA_IMPORTS.items() for target in targets}
    assert {(a, b) for a, b in used if a != b} == allowed  # no stale allowance
    assert cycles({source: targets for source, targets in AREA_IMPORTS.items()}) == []


def test_breaches_are_named():
    planted = {
        "babelforge.core.io": {"babelforge.captions.select"},  # core into an area
        "babelforge.lexicon.omw": {"babelforge.eval.models"},  # an area into eval
        "babelforge.eval.config": {"babelforge.cli"},  # eval into the command line
        "babelforge.mvl_sib.mvl_sib_stage": {"babelforge.captions.select"},  # an area pair not allowed
        "babelforge.commands": {"babelforge.core.io"},  # the table imports nothing but the declarations
        "babelforge.eval.models": {"babelforge.babel_imagenet.labels_stage"},  # a command, not a library
        "babelforge.captions.plan_stage": {"babelforge.captions.tag_stage"},  # a command into another
        "babelforge.captions.tag_stage": {"babelforge.captions.settings"},  # allowed: the area's settings
        "babelforge.babel_imagenet.labels": {"babelforge.lexicon.omw", "babelforge.core.io"},  # allowed
    }
    found = breaches(planted)
    assert len(found) == 7
    assert any("plan_stage -> babelforge.captions.tag_stage: imports the command module" in line for line in found)
    assert any("core (layer 1) imports upward into captions" in line for line in found)
    assert any("area mvl_sib imports area captions" in line for line in found)
    assert not any(line.startswith("babelforge.babel_imagenet.labels") for line in found)


def test_cycles_are_found_through_any_length():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"], ["e"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_check_runs_from_the_command_line():
    result = subprocess.run([sys.executable, "-m", "tests.layers"], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "layer contract kept" in result.stdout and "eval            -> core" in result.stdout
