"""The eval tasks, each declared once: an `EvalTask` spec in its own folder (`eval/<task>/task.py`).

A task's spec (`TASK` in `eval/<task>/task.py`) says what the report needs to know of it: its name
(the run document's `task`, `<paths.eval_reports>/<name>.json`, the command `eval_<name>`), the short
key and the columns of its headline metrics, its own dataset, and the row column whose values are
headlined apart. The report (`babelforge.eval.report`), the `eval.report.tasks` setting and the tests
read the tasks from here; nothing else lists them. docs/adding_an_eval_task.md walks through adding one.

The registry is every folder of `eval/` that holds a `task.py`, as "module:object" strings found without
importing anything; a spec is imported only when asked for, and a spec module imports this module and
nothing heavier, so listing the tasks imports no model library and no task's stage.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.declarations import declaring_files, imported
from babelforge.core.errors import BabelforgeError


def _discovered() -> tuple[str, ...]:
    """ "module:object" of the EvalTask of every task folder (`eval/<name>/task.py`), by folder name."""
    folder = Path(__file__).resolve().parent
    return tuple(f"{module}:TASK" for _, module in declaring_files(folder, __package__, "*/task.py"))


# The tasks, in the order the report reads them (eval.report.tasks' default): found, never listed by hand.
REGISTRY: tuple[str, ...] = _discovered()


@dataclass(frozen=True)
class EvalTask:
    """One eval task as the report sees it (its stage, rows and metric live beside the spec)."""

    name: str  # the run document's `task`; <paths.eval_reports>/<name>.json; the command eval_<name>
    summary: str  # what it measures, one line
    key: str  # its headline group's first part: `zs` in `<model>.zs_tr.top1`
    # (row column, headline name) per headline metric, in the order eval.json lists them: the mean over
    # languages of the column, as `<model>.<group>.<name>`; `langs` (the languages averaged) is added
    headline: tuple[tuple[str, str], ...]
    # the task's own dataset, not repeated in its headline group (`mvl`, not `mvl_mvl_sib`); None: every
    # dataset is named (`ret_xtd`, `ret_xflickrco`)
    dataset: str | None = None
    # a row column whose values are headlined apart (zero-shot: `prompt_set`, so a language evaluated with
    # two fallback sets does not count twice in one mean), and the short names of its values in the group
    split_by: str | None = None
    split_keys: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        if not self.name.isidentifier() or not self.key.isidentifier():
            raise BabelforgeError(f"eval task {self.name!r}: name and key must be identifiers, key is {self.key!r}")
        if self.split_keys and self.split_by is None:
            raise BabelforgeError(f"eval task {self.name!r}: split_keys without split_by")

    @property
    def command(self) -> str:
        return f"eval_{self.name}"

    def group(self, dataset: str, split: str | None = None) -> str:
        """The headline group of a dataset (and split value): `zs_en_fb`, `ret_xtd`, `mvl`."""
        parts = [self.key]
        if dataset != self.dataset:
            parts.append(dataset)
        if split is not None:
            parts.append(dict(self.split_keys).get(split, split))
        return "_".join(parts)


@functools.cache
def _imported_task(reference: str) -> EvalTask:
    found = imported(reference, "; eval/tasks.py finds eval/<task>/task.py")
    if not isinstance(found, EvalTask):
        raise BabelforgeError(f"{reference}: not an EvalTask (eval/<task>/task.py declares TASK = EvalTask(...))")
    return found


def tasks() -> list[EvalTask]:
    """Every registered task's spec, in REGISTRY order."""
    found = [_imported_task(reference) for reference in REGISTRY]
    seen: set[str] = set()
    for spec in found:
        if spec.name in seen:
            raise BabelforgeError(f"eval task {spec.name!r} is declared twice (eval/<task>/task.py)")
        seen.add(spec.name)
    return found


def names() -> list[str]:
    return [spec.name for spec in tasks()]


def find(name: str) -> EvalTask | None:
    """The spec of a registered task, None for any other name (a run document of an unknown task)."""
    return next((spec for spec in tasks() if spec.name == name), None)


def task(name: str) -> EvalTask:
    """The spec of a registered task; one line naming the known tasks otherwise."""
    found = find(name)
    if found is None:
        raise BabelforgeError(
            f"unknown eval task {name!r}; known: {', '.join(names())} (the folders of eval/ with a task.py)"
        )
    return found


def check_names(values: Iterable[str], where: str) -> None:
    """One line, `params.yaml: <where>[i] is 'x'; one of ...`, for the first value not a registered task."""
    known = names()
    for i, value in enumerate(values):
        if value not in known:
            raise BabelforgeError(
                f"params.yaml: {where}[{i}] is {value!r}; one of {', '.join(map(repr, known))} "
                "(the folders of eval/ with a task.py)"
            )
