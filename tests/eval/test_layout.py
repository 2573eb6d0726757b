"""The layout of babelforge.eval (its map: eval/__init__.py): a folder is a task or a place, a module at
the top is shared run machinery; shared modules import no task, and a task imports no other task."""

from __future__ import annotations

from tests.imports import REPO, project_imports, project_modules
from tests.layers import cycles

EVAL = "babelforge.eval"
# tools.clipscore_pairs scores image-caption pairs with the clipscore task's metric (pure math);
# tools.paper_stage (`eval_paper`) is the command over the papers' tables and comparison (the paper place).
# tools.pins_stage (`pins`) lists the papers' models among the remote inputs and asks the plan's cache lookup.
ALLOWED_ACROSS = {
    ("tools.clipscore_pairs_stage", "clipscore.metric"),
    ("tools.pins_stage", "paper.tables"),
    ("tools.pins_stage", "paper.plan"),
} | {("tools.paper_stage", f"paper.{module}") for module in ("compare", "figure", "plan", "tables")}


# Folders of shared run machinery: the model families every task loads its models through.
SHARED_FOLDERS = {"families"}


def _folder(module: str) -> str | None:
    """The folder of an eval module (its task or place), None for shared machinery (a module at the
    top, or a folder of SHARED_FOLDERS)."""
    parts = module.removeprefix(EVAL).lstrip(".").split(".")
    if not parts[0] or parts[0] in SHARED_FOLDERS or not (REPO / "eval" / parts[0]).is_dir():
        return None
    return parts[0]


def _graph() -> dict[str, set[str]]:
    modules = [m for m in project_modules() if m == EVAL or m.startswith(EVAL + ".")]
    return {m: {t for t in project_imports(m) if t.startswith(EVAL + ".")} for m in modules}


def test_shared_modules_import_no_task_and_tasks_import_no_other_task():
    found = []
    for module, targets in sorted(_graph().items()):
        for target in sorted(targets):
            source, goal = _folder(module), _folder(target)
            pair = (module.removeprefix(EVAL + "."), target.removeprefix(EVAL + "."))
            if goal is not None and source != goal and pair not in ALLOWED_ACROSS:
                found.append(f"{module} -> {target}")
    assert found == []


def test_no_cycle_inside_eval():
    assert cycles(_graph()) == []


def test_every_folder_is_in_the_map():
    """Every place and shared module is in eval/__init__.py's map; a task folder (one with a task.py)
    describes itself in its spec (`EvalTask.summary`), so a new task needs no line there."""
    docstring = (REPO / "eval" / "__init__.py").read_text(encoding="utf-8")
    folders = sorted(
        p.name for p in (REPO / "eval").iterdir() if (p / "__init__.py").is_file() and not (p / "task.py").is_file()
    )
    assert folders and all(f"    {name}/" in docstring for name in folders), folders
    shared = sorted(p.stem for p in (REPO / "eval").glob("*.py") if p.name != "__init__.py")
    assert all(f"    {name} " in docstring for name in shared), shared
