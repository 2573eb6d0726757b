"""Every row of the fault table (cases.py): non-zero exit, one line naming the problem, no
traceback, nothing partial written, nothing built lost, no temp or lock file left."""

import pytest

from tests.reliability.cases import CASES, run_case


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_case(case, workspace, mirror_server, tmp_path):
    outcome = run_case(case, workspace, tmp_path / "case", mirror_server)
    assert not outcome.problems, (
        f"{case.command}: " + "; ".join(outcome.problems) + f"\nstderr:\n{outcome.stderr[-2000:]}"
    )


def test_the_table_covers_every_area():
    areas = {case.id.split("-")[0] for case in CASES}
    assert areas == {"params", "source", "artifact", "cli", "http"}
    assert len(CASES) >= 30
    assert len({case.id for case in CASES}) == len(CASES)


def test_the_committed_table_lists_every_case(repo_root):
    text = (repo_root / "tests" / "reliability" / "CASES.md").read_text(encoding="utf-8")
    missing = [case.id for case in CASES if f"| `{case.id}` |" not in text]
    assert not missing, f"CASES.md is stale (python -m tests.reliability.cases): {missing}"
