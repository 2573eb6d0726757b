#!/usr/bin/env python
"""A small mutation check: do the tests of a few pure modules catch one-line bugs?

For each module of TARGETS (or those given with --target), every one-line mutant of these kinds
is made with `ast`: a comparison operator swapped (< <= > >= == != in, and `is`/`is not`), `and`
<-> `or`, `+` <-> `-`, an integer constant + 1. Each mutant is written over the module, the
module's test files run (`pytest -x -q -p no:randomly`, in the order given, with a per-mutant timeout), and the
original bytes and modification time are written back. A mutant is *killed* when the tests fail
(an import or syntax error counts), *survived* when they pass, *timeout* when they run too long.
The run ends with the counts, the kill rate and every surviving mutant (file:line, the change).

    .venv/bin/python scripts/mutation_check.py                      # the default TARGETS
    .venv/bin/python scripts/mutation_check.py --list               # the mutants, nothing run
    .venv/bin/python scripts/mutation_check.py \\
        --target builders/captions/select.py=tests/captions/test_select.py --timeout 60

THIS SCRIPT EDITS THE MODULES IN PLACE while it runs (one mutant at a time). The original is
always written back (try/finally, also on Ctrl-C and SIGTERM), and at the end every module is
compared with its original: `git diff` of the modules is empty after a run. Do not edit the
target modules, or run their tests, while it runs. The tests run with PYTHONDONTWRITEBYTECODE=1,
and a mutant's modification time differs from the original's, so no stale .pyc stands in for a
mutant, nor a mutant's .pyc for the restored original.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.processes import processes_with_setting  # noqa: E402  (the repo on the path first)

# module -> the test files that cover it (pure modules: no files, no models, quick tests).
TARGETS: dict[str, tuple[str, ...]] = {
    "builders/babel_imagenet/cleaning.py": ("tests/babel_imagenet/test_cleaning.py",),
    "builders/captions/select.py": ("tests/captions/test_select.py",),
    "eval/zeroshot/metric.py": ("tests/eval/test_zeroshot.py",),
}
# Also pure, left out of the default run to keep it short (~46 more mutants):
#   --target builders/audit/checks.py=tests/audit/test_checks.py

# Boundary and negation swaps: the bugs a reviewer misses (a flipped `<` into `>` rarely survives).
COMPARE_SWAPS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==", "in": "not in", "not in": "in"}
COMPARE_SWAPS |= {"is": "is not", "is not": "is"}
BOOL_SWAPS = {"and": "or", "or": "and"}
BINOP_SWAPS = {"+": "-", "-": "+"}
OPERATOR = re.compile(r"[^\s()]+(?:\s+[^\s()]+)?")  # the operator between two operands: `<=`, `not in`


@dataclass(frozen=True)
class Mutant:
    path: str  # relative to the repo
    line: int  # 1-based
    original: str  # the whole original line
    mutated: str  # the whole mutated line
    kind: str

    def describe(self) -> str:
        return f"{self.path}:{self.line} [{self.kind}] {self.original.strip()}  ->  {self.mutated.strip()}"


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                lines.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    return lines


def _inside_fstring(tree: ast.AST) -> set[int]:
    """ids of nodes under an f-string (their source offsets are not reliable to splice)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            inside.update(id(child) for child in ast.walk(node))
    return inside


def _operator_edits(node: ast.AST, line: bytes) -> list[tuple[str, int, int, str]]:
    """(kind, start, end, new text): byte spans of `line` to replace, one per mutant of `node`.

    An operator is found in the gap between its two operands (spaces and parentheses around it),
    so only the operator changes on the line; the operands' text stays as written."""
    if isinstance(node, ast.Compare):
        kind, swaps, operands, ops = "compare", COMPARE_SWAPS, [node.left, *node.comparators], node.ops
    elif isinstance(node, ast.BoolOp):
        kind, swaps, operands, ops = "boolean", BOOL_SWAPS, node.values, [node.op] * (len(node.values) - 1)
    elif isinstance(node, ast.BinOp):
        kind, swaps, operands, ops = "arithmetic", BINOP_SWAPS, [node.left, node.right], [node.op]
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        return [("constant", node.col_offset, node.end_col_offset, str(node.value + 1))]
    else:
        return []
    if any(operand.lineno != node.lineno or operand.end_lineno != node.lineno for operand in operands):
        return []
    edits = []
    for i, _ in enumerate(ops):
        gap_start, gap_end = operands[i].end_col_offset, operands[i + 1].col_offset
        match = OPERATOR.search(line[gap_start:gap_end].decode("utf-8"))
        if not match:
            continue
        text = " ".join(match.group().split())
        if text in swaps:
            start = gap_start + len(line[gap_start:gap_end].decode("utf-8")[: match.start()].encode("utf-8"))
            edits.append((kind, start, start + len(match.group().encode("utf-8")), swaps[text]))
    return edits


def mutants_of(path: Path) -> list[Mutant]:
    """Every one-line mutant of the module at `path` (relative to the repo for the report)."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    tree = ast.parse(source)
    skip_lines = _docstring_lines(tree)
    skip_nodes = _inside_fstring(tree)
    relative = path.resolve().relative_to(REPO).as_posix()
    found: list[Mutant] = []
    seen: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        if id(node) in skip_nodes or not hasattr(node, "lineno"):
            continue
        if node.lineno != node.end_lineno or node.lineno in skip_lines:
            continue  # one-line mutants only
        line = lines[node.lineno - 1]
        encoded = line.encode("utf-8")  # ast offsets count UTF-8 bytes
        for kind, start, end, replacement in _operator_edits(node, encoded):
            mutated = (encoded[:start] + replacement.encode("utf-8") + encoded[end:]).decode("utf-8")
            if mutated == line or (node.lineno, mutated) in seen:
                continue
            candidate = "".join(lines[: node.lineno - 1]) + mutated + "".join(lines[node.lineno :])
            try:
                ast.parse(candidate)
            except SyntaxError:
                continue
            seen.add((node.lineno, mutated))
            found.append(Mutant(relative, node.lineno, line.rstrip("\n"), mutated.rstrip("\n"), kind))
    return sorted(found, key=lambda m: (m.line, m.mutated))


class Interrupted(Exception):
    pass


def _raise_interrupted(signum, frame):  # SIGTERM/SIGHUP: unwind through the finally blocks
    raise Interrupted(f"signal {signum}")


def run_tests(tests: tuple[str, ...], timeout: float) -> str:
    """'passed', 'failed' or 'timeout' for one run of the test files."""
    # every process of this run carries the setting, Ray's too, which leave the run's process group
    marker = f"BABELFORGE_MUTANT_RUN={os.getpid()}-{time.monotonic_ns()}"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "DVC_NO_ANALYTICS": "1", **dict([marker.split("=", 1)])}
    # the suite's test-order plugin (tests/conftest.py) puts the slowest file first, which would make every
    # mutant pay for it before -x can stop at a quick test that fails
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    command += ["-p", "no:babelforge-test-order", *tests]
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the pytest process and whatever it started
        process.wait()
        return "timeout"
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    finally:
        kill_left_behind(marker)
    return "passed" if code == 0 else "failed"


def kill_left_behind(marker: str) -> list[int]:
    """SIGKILL every process still carrying this run's marker (a killed run's Ray nodes and workers,
    which a group kill misses); their pids."""
    left = sorted(processes_with_setting(marker))
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left


def restore(path: Path, original: bytes, mutant: bytes, stat: os.stat_result, mutant_line: str, line: str) -> None:
    """Write the original back. Should the file hold something else than the mutant (an editor
    wrote it meanwhile), only the mutated line is put back, and the run says so."""
    try:
        current = path.read_bytes()
    except FileNotFoundError:  # moved or deleted meanwhile: no mutant left to take back
        print(f"WARNING: {path} disappeared during the run", file=sys.stderr)
        return
    if current == mutant:
        path.write_bytes(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        return
    text = current.decode("utf-8")
    if text.count(mutant_line) == 1:
        path.write_text(text.replace(mutant_line, line), encoding="utf-8")
        print(f"warning: {path} changed during the run; the mutated line was put back", file=sys.stderr)
    elif current != original:
        print(f"WARNING: {path} changed during the run and the mutant is not found; check git diff", file=sys.stderr)


def check_mutant(mutant: Mutant, tests: tuple[str, ...], timeout: float) -> str:
    path = REPO / mutant.path
    original = path.read_bytes()
    stat = path.stat()
    lines = original.decode("utf-8").splitlines(keepends=True)
    if mutant.line > len(lines) or lines[mutant.line - 1].rstrip("\n") != mutant.original:
        return "stale"  # the file changed since the mutants were made
    ending = lines[mutant.line - 1][len(mutant.original) :]
    lines[mutant.line - 1] = mutant.mutated + ending
    mutated = "".join(lines).encode("utf-8")
    try:
        path.write_bytes(mutated)
        # A second apart from the original: a .pyc of either never passes for the other.
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        return run_tests(tests, timeout)
    finally:
        restore(path, original, mutated, stat, mutant.mutated, mutant.original)


def parse_targets(values: list[str] | None) -> dict[str, tuple[str, ...]]:
    if not values:
        return dict(TARGETS)
    targets = {}
    for value in values:
        module, _, tests = value.partition("=")
        if not tests:
            raise SystemExit(f"--target {value}: expected MODULE=TEST[,TEST...]")
        targets[(REPO / module).resolve().relative_to(REPO).as_posix()] = tuple(tests.split(","))
    return targets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", action="append", help="MODULE=TEST[,TEST...] (repeatable; default: TARGETS)")
    parser.add_argument("--timeout", type=float, default=0, help="seconds per mutant (default: 5 x the clean run)")
    parser.add_argument("--list", action="store_true", help="print the mutants and stop")
    args = parser.parse_args(argv)

    targets = parse_targets(args.target)
    for module, tests in targets.items():
        missing = [name for name in (module, *tests) if not (REPO / name).is_file()]
        if missing:
            raise SystemExit(f"missing: {', '.join(missing)} (moved? pass --target MODULE=TESTS)")
    plan = [(mutant, tests) for module, tests in targets.items() for mutant in mutants_of(REPO / module)]
    if args.list:
        for mutant, _ in plan:
            print(mutant.describe())
        print(f"{len(plan)} mutants")
        return 0

    originals = {module: (REPO / module).read_bytes() for module in targets}
    previous = {sig: signal.signal(sig, _raise_interrupted) for sig in (signal.SIGTERM, signal.SIGHUP)}
    started = time.monotonic()
    results: dict[str, list[Mutant]] = {"killed": [], "survived": [], "timeout": [], "stale": []}
    try:
        timeouts = {}
        for module, tests in targets.items():
            clean_start = time.monotonic()
            if run_tests(tests, 600) != "passed":
                raise SystemExit(f"the tests of {module} fail without a mutant: {' '.join(tests)}")
            timeouts[module] = args.timeout or max(30.0, 5 * (time.monotonic() - clean_start))
        for number, (mutant, tests) in enumerate(plan, 1):
            module = mutant.path
            outcome = check_mutant(mutant, tests, timeouts[module])
            outcome = "killed" if outcome == "failed" else "survived" if outcome == "passed" else outcome
            results[outcome].append(mutant)
            print(f"[{number}/{len(plan)}] {outcome:8} {mutant.describe()}", flush=True)
    except (KeyboardInterrupt, Interrupted):
        print("interrupted: the modules are restored; the counts below are partial", file=sys.stderr)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        changed = [module for module, data in originals.items() if (REPO / module).read_bytes() != data]
    elapsed = time.monotonic() - started

    killed, survived, timed_out = (len(results[k]) for k in ("killed", "survived", "timeout"))
    done = killed + survived + timed_out
    print(f"\nmutants: {done} run of {len(plan)}; killed {killed}, survived {survived}, timeout {timed_out}")
    if results["stale"]:
        print(f"skipped {len(results['stale'])}: their module changed during the run")
    if done:
        print(f"kill rate: {100 * (killed + timed_out) / done:.1f}% (timeouts count as killed); wall {elapsed:.0f}s")
    if survived:
        print("surviving mutants:")
        for mutant in results["survived"]:
            print(f"  {mutant.describe()}")
    if changed:
        print(f"ERROR: modules differ from their original after the run: {', '.join(changed)}", file=sys.stderr)
        return 2
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
