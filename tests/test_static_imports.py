"""Static tools resolve `babelforge` to the real files in builders/ and eval/.

The editable install maps `babelforge` -> builders/ and `babelforge.eval` -> eval/ with an import hook
(setuptools' `__editable___*_finder.py`), which Pylance, pyright and mypy never run. They read
`.static-imports/babelforge/` instead: relative symlinks to each entry of builders/ and to eval/ and
resources/ (pyproject.toml's [tool.pyright] names it as an import root). Python never imports from it.
The checker is basedpyright (pyright with its Node.js runtime in a wheel); the rules are
tests/static_imports.json: import resolution only, no type checking. Run the same by hand:
`.venv/bin/basedpyright -p tests/static_imports.json builders eval`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.imports import REPO, package_dirs

BIN = Path(sys.executable).parent
LINKS = REPO / ".static-imports" / "babelforge"


def expected_links() -> dict[str, Path]:
    """{name under .static-imports/babelforge/: the real file or folder}: what the wheel installs as
    `babelforge/`, i.e. every entry of builders/, plus each other folder pyproject's package-dir maps."""
    dirs = package_dirs()
    root = dirs["babelforge"]
    links = {path.name: path for path in root.iterdir() if path.name != "__pycache__"}
    for package, folder in dirs.items():
        if package.count(".") == 1:  # babelforge.eval, babelforge.resources
            links[package.split(".")[1]] = folder
    return links


def test_the_link_folder_mirrors_the_package():
    """A new top-level module or area in builders/ needs its link (the message says which command)."""
    expected = expected_links()
    found = {path.name: path for path in LINKS.iterdir()} if LINKS.is_dir() else {}
    fixes = [
        f"ln -sfn {os.path.relpath(target, LINKS)} {LINKS.relative_to(REPO) / name}"
        for name, target in sorted(expected.items())
        if name not in found or not found[name].is_symlink() or found[name].resolve() != target.resolve()
    ]
    extra = [f"rm {LINKS.relative_to(REPO) / name}" for name in sorted(found.keys() - expected.keys())]
    assert not fixes + extra, "fix the links to builders/ and eval/:\n" + "\n".join(fixes + extra)
    relative = {name: os.readlink(path) for name, path in found.items()}
    assert not [link for link in relative.values() if os.path.isabs(link)], relative  # a clone elsewhere works


def basedpyright(*args: str, venv_root: Path) -> dict:
    """basedpyright's JSON report, with an empty virtual environment (`venv_root/.venv`) in place of the
    project's: only the project's own imports are at stake, and the checker then reads no site-packages
    (14 s instead of 35 s, 0.65 GB instead of 2.6 GB); third-party imports stay unresolved and are ignored."""
    tool = BIN / "basedpyright"
    if not tool.exists():
        pytest.fail(f"basedpyright is not installed beside {sys.executable}: run scripts/setup.sh")
    venv.create(venv_root / ".venv", with_pip=False, symlinks=True)
    result = subprocess.run(
        [str(tool), "--outputjson", "-p", "tests/static_imports.json", "--venvpath", str(venv_root), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"PATH": str(BIN), "HOME": str(Path.home()), "NO_COLOR": "1"},
        timeout=300,
    )
    assert result.stdout.lstrip().startswith("{"), result.stdout[-2000:] + result.stderr[-2000:]
    return json.loads(result.stdout)


def unresolved(report: dict) -> list[str]:
    """`file:line: message` for each import of babelforge that does not resolve, and each imported name
    that its module does not define."""
    return [
        f"{Path(d['file']).relative_to(REPO) if Path(d['file']).is_relative_to(REPO) else d['file']}:"
        f"{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
        if (d.get("rule") == "reportMissingImports" and '"babelforge' in d["message"])
        or "is unknown import symbol" in d["message"]
    ]


@pytest.mark.slow
def test_every_babelforge_import_resolves_statically(tmp_path):
    probe = tmp_path / "probe.py"  # the check itself: a missing module and a missing name must be reported
    probe.write_text(
        "import babelforge.nosuchmodule\n"
        "from babelforge.core.config import no_such_name\n"
        "from babelforge.eval.zeroshot import metric\n"
        "from babelforge import cli\n",
        encoding="utf-8",
    )
    report = basedpyright("builders", "eval", str(probe), venv_root=tmp_path)
    modules = sum(1 for folder in ("builders", "eval") for path in (REPO / folder).rglob("*.py"))
    assert report["summary"]["filesAnalyzed"] == modules + 1
    found = unresolved(report)
    project = [line for line in found if not line.startswith(str(probe))]
    assert not project, f"{len(project)} babelforge imports static tools cannot resolve:\n" + "\n".join(project)
    probe_lines = sorted(line.removeprefix(f"{probe}:").split(":")[0] for line in found if line.startswith(str(probe)))
    assert probe_lines == ["1", "2"], found
