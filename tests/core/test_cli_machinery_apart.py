"""What only the command line does around a stage (its locks, the guard that puts outputs back, the
records of what an --out run wrote) is no stage's code dep: an edit to it reruns nothing. What stages
write with (babelforge.core.io: atomic files, Parquet) and the temp-name rule it shares
(babelforge.core.leftovers) are."""

from __future__ import annotations

import yaml

from babelforge.commands import COMMANDS
from tests.imports import REPO, repo_files_run_by

CLI_ONLY = {"builders/core/locks.py", "builders/core/output_guard.py", "builders/core/written_records.py"}


def _dvc_stages() -> dict[str, dict]:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    return {name: stage.get("do", stage) for name, stage in stages.items()}


def test_no_stage_runs_or_depends_on_the_cli_machinery():
    stages = _dvc_stages()
    assert len(stages) > 20
    for name, stage in stages.items():
        command = stage["cmd"].split()[1]
        runs = {path.relative_to(REPO).as_posix() for path in repo_files_run_by(COMMANDS[command].module)}
        assert not runs & CLI_ONLY, f"stage {name} imports {sorted(runs & CLI_ONLY)}"
        assert not set(stage["deps"]) & CLI_ONLY, f"dvc.yaml stage {name} lists {sorted(set(stage['deps']) & CLI_ONLY)}"
        # every stage writes through io, and io names its temp files by the leftovers rule
        assert {"builders/core/io.py", "builders/core/leftovers.py"} <= set(stage["deps"]), name


def test_the_command_line_runs_the_machinery():
    runs = {path.relative_to(REPO).as_posix() for path in repo_files_run_by("babelforge.cli")}
    assert CLI_ONLY <= runs
    io_runs = {path.relative_to(REPO).as_posix() for path in repo_files_run_by("babelforge.core.io")}
    assert not io_runs & CLI_ONLY  # the atomic writes import none of it
