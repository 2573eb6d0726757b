"""The layer contract of the babelforge package, checked over the real import graph.

Run `python -m tests.layers` from the repository root to print the graph between the package's
parts and every breach (exit 1 on a breach); tests/test_layers.py asserts the same in the suite.

Layers, top to bottom (a part imports only its own layer's modules and the layers below):

    babelforge.cli                       the command line: parses, pins the CPU, dispatches
    babelforge.eval                      evaluations over what was built
    areas (babelforge.<area>)            one dataset or concern each; AREA_IMPORTS lists the
                                         few area -> area imports allowed
    babelforge.core, babelforge.commands plumbing that knows no dataset; the command table (read from
                                         the declarations, babelforge.core.stage_table)
    babelforge                           the package version

Every import counts, at module level or inside a function (the heavy libraries imported inside
functions are third-party, never the project's own), so a cycle cannot hide in a function body.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping

from tests.imports import module_file, parsed, project_imports, project_modules

AREAS = ("audit", "babel_imagenet", "captions", "lexicon", "mvl_sib", "pipeline", "publish", "translation", "xm3600")

# The area -> area imports there are, each for a reason; a new one is a design decision, made here.
AREA_IMPORTS: dict[str, set[str]] = {
    "audit": {"babel_imagenet"},  # the label checks read the candidates' set-aside reasons
    "babel_imagenet": {"lexicon", "translation"},  # labels from senses; prompts translated with NLLB
    "captions": {"translation"},  # n-best NLLB translation of the captions
    "pipeline": set(),
    "lexicon": set(),
    "mvl_sib": set(),
    "publish": set(),
    "translation": set(),
    "xm3600": set(),
}

RANK = {"babelforge": 0, "core": 1, "commands": 1, "area": 2, "eval": 3, "cli": 4}


def part(module: str) -> str:
    """The contract's unit a module belongs to: cli, eval, an area, core, commands or babelforge."""
    parts = module.split(".")
    if len(parts) == 1:
        return "babelforge"
    return parts[1]


def layer(unit: str) -> int:
    return RANK["area"] if unit in AREAS else RANK[unit]


def command_modules() -> set[str]:
    """The modules that declare a command (`STAGE = Stage(...)`)."""
    from babelforge.core.stage_table import table

    return {entry.module for entry in table().values()}


def breaches(edges: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import (importer -> imported module) the contract forbids, one line each."""
    found = []
    commands = command_modules()
    for importer, imported in sorted((a, b) for a, targets in edges.items() for b in targets):
        source, target = part(importer), part(imported)
        if imported in commands and importer != imported:
            found.append(
                f"{importer} -> {imported}: imports the command module {imported}: a command's module wires "
                "one command; what two share lives in the area"
            )
            continue
        if source == target:
            continue
        why = None
        if source == "commands" and imported != "babelforge.core.stage_table":
            why = (
                "the command table is read from the declarations (babelforge.core.stage_table) and imports nothing else"
            )
        elif source == "commands":
            pass
        elif layer(target) > layer(source):
            why = f"{source} (layer {layer(source)}) imports upward into {target} (layer {layer(target)})"
        elif layer(target) == layer(source) and source in AREAS:
            if target not in AREA_IMPORTS.get(source, set()):
                why = f"area {source} imports area {target}, not in tests/layers.py AREA_IMPORTS"
        elif layer(target) == layer(source):
            why = f"{source} and {target} are siblings that must not import each other"
        if why:
            found.append(f"{importer} -> {imported}: {why}")
    return found


def cycles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in edges.get(node, ()):
                components.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(components)


def private_names_used_across_parts(modules: Iterable[str]) -> list[str]:
    """`from babelforge.x import _name` where x is another part: a private helper used from outside."""
    found = []
    for module in modules:
        path = module_file(module)
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("babelforge"):
                if part(node.module) != part(module):
                    found += [
                        f"{module} imports {node.module}.{alias.name}"
                        for alias in node.names
                        if alias.name.startswith("_")
                    ]
    return found


def project_graph() -> dict[str, set[str]]:
    """{module: the project modules it imports}, every module of the package."""
    graph = defaultdict(set)
    for module in project_modules():
        graph[module] |= project_imports(module)
    return dict(graph)


def main() -> int:
    graph = project_graph()
    parts: dict[tuple[str, str], int] = defaultdict(int)
    for importer, targets in graph.items():
        for imported in targets:
            if part(importer) != part(imported):
                parts[part(importer), part(imported)] += 1
    print(f"{len(graph)} modules, {sum(map(len, graph.values()))} imports of the project's own modules")
    for (source, target), count in sorted(parts.items(), key=lambda item: (-layer(item[0][0]), item[0])):
        print(f"  {source:<15} -> {target:<15} {count:>3} imports")
    problems = breaches(graph) + private_names_used_across_parts(graph)
    problems += ["cycle: " + " -> ".join(component) for component in cycles(graph)]
    print("\n".join(problems) if problems else "layer contract kept: no upward import, no cycle")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
