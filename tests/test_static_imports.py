"""Static tools resolve `babelforge` to the real files in builders/ and eval/, and editors answer from them.

The editable install maps `babelforge` -> builders/ and `babelforge.eval` -> eval/ with an import hook
(setuptools' `__editable___*_finder.py`), which Pylance, pyright and mypy never run. They read
`typings/babelforge/` instead (pyproject.toml's [tool.pyright] `stubPath`): one stub per module that
re-exports the real module (`from builders.core.config import *`), written by scripts/typing_stubs.py.
Every name then resolves to its file under builders/ or eval/: go-to-definition opens it, and
find-references from it finds its callers (tests/language_server.py asks basedpyright's language server,
the engine of Pylance). The checker is basedpyright (pyright with its Node.js runtime in a wheel); the
rules are tests/static_imports.json: import resolution only, no type checking. Run the same by hand:
`.venv/bin/basedpyright -p tests/static_imports.json builders eval`.

`.static-imports/babelforge/` is the package as relative symlinks into builders/ and eval/: an import
root for Python itself where a copy of the checkout must run its own code (PYTHONPATH of a mutation check
in a clone, benchmarks/full_rehearsal.py's frozen package). Static tools no longer read it: through the
links each file was a second module (`babelforge.core.config` beside `builders.core.config`), and
references from the real file missed every caller.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.imports import REPO, package_dirs
from tests.language_server import LanguageServer, definition, references

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


def typing_stubs():
    spec = importlib.util.spec_from_file_location("typing_stubs", REPO / "scripts" / "typing_stubs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_stubs_are_current():
    """A new module (or a new module-level `_name`) needs its stub rewritten: the message says how."""
    stubs = typing_stubs()
    problems = stubs.stale(stubs.expected_stubs())
    assert not problems, "run python scripts/typing_stubs.py:\n" + "\n".join(problems)


def test_a_stub_reexports_its_module_and_its_private_names():
    stubs = typing_stubs()
    source = (
        "import os as _os\nfrom x import y as _y, z\n_A: int = 1\nB = 2\ndef _f(): ...\nclass _C: ...\n__all__ = []\n"
    )
    text = stubs.stub_text("builders.core.demo", "babelforge.core.demo", "builders/core/demo.py", source)
    lines = text.splitlines()
    assert lines[1:] == [
        "from builders.core.demo import *",
        "from builders.core.demo import (",
        "    _A as _A,",
        "    _C as _C,",
        "    _f as _f,",
        "    _os as _os,",
        "    _y as _y,",
        ")",
    ]
    written = stubs.expected_stubs()
    assert written[REPO / "typings" / "babelforge" / "eval" / "__init__.pyi"].splitlines()[1] == "from eval import *"
    config = written[REPO / "typings" / "babelforge" / "core" / "config.pyi"]
    assert "from builders.core.config import *" in config and "    _coerce as _coerce,\n" in config


@pytest.fixture(scope="module")
def language_server():
    server = BIN / "basedpyright-langserver"
    if not server.exists():
        pytest.fail(f"basedpyright is not installed beside {sys.executable}: run scripts/setup.sh")
    started = LanguageServer(REPO, server)
    yield started
    started.close()


def grep_callers(name: str, defined_in: Path) -> set[Path]:
    """The project files that use the word `name`, less those that define a `name` of their own: what
    find-references on its definition in `defined_in` should list."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    own = re.compile(rf"^(def|class) {re.escape(name)}\b", re.MULTILINE)
    files = {
        path
        for folder in ("builders", "eval", "tests", "scripts", "benchmarks")
        for path in (REPO / folder).rglob("*.py")
        if "__pycache__" not in path.parts
    }
    texts = {path: path.read_text("utf-8") for path in files}
    return {path for path, text in texts.items() if word.search(text) and (path == defined_in or not own.search(text))}


@pytest.mark.slow
def test_go_to_definition_opens_the_real_file(language_server):
    """`from babelforge.core.config import load_config` in builders/cli.py leads to builders/core/config.py."""
    found = definition(language_server, REPO / "builders" / "cli.py", "load_config")
    config = REPO / "builders" / "core" / "config.py"
    line = next(
        n for n, text in enumerate(config.read_text("utf-8").splitlines(), 1) if text.startswith("def load_config(")
    )
    assert found == [(config, line)]
    found = definition(language_server, REPO / "eval" / "mvl_sib" / "mvl_sib_stage.py", "mvl_sib_rows")
    assert [path for path, _ in found] == [REPO / "eval" / "mvl_sib" / "rows.py"]


@pytest.mark.slow
def test_find_references_from_the_real_file_finds_the_callers(language_server):
    """From `def load_config` in builders/core/config.py: every file that calls it, as grep finds them."""
    config = REPO / "builders" / "core" / "config.py"
    found = references(language_server, config, "load_config")
    files = {path for path, _ in found}
    assert not [path for path in files if ".static-imports" in path.parts or "typings" in path.parts], files
    expected = grep_callers("load_config", config) - {
        REPO / "tests" / "language_server.py",
        REPO / "tests" / "test_static_imports.py",
    }
    assert files == expected, sorted(str(path.relative_to(REPO)) for path in files ^ expected)
    assert len(files) > 10 and len(found) > len(files)  # the callers across builders/, eval/ and tests/, each use


def test_the_stub_writer_checks_then_writes_then_finds_a_stray_file(tmp_path, monkeypatch, capsys):
    """`--check` fails on a missing stub and names the command; a write makes it pass; a file that is no
    module's stub (a stub of a removed module, a link) fails it again."""
    stubs = typing_stubs()
    root = tmp_path / "typings"
    expected = {root / path.relative_to(stubs.ROOT): text for path, text in list(stubs.expected_stubs().items())[:3]}
    monkeypatch.setattr(stubs, "ROOT", root)
    monkeypatch.setattr(stubs, "expected_stubs", lambda: expected)
    assert stubs.main(["--check"]) == 1
    assert "missing or out of date" in capsys.readouterr().err
    assert stubs.main([]) == 0 and stubs.main(["--check"]) == 0
    first = next(iter(expected))
    first.write_text(expected[first] + "from x import y as y\n", encoding="utf-8")
    assert stubs.main(["--check"]) == 1
    assert stubs.main([]) == 0 and first.read_text(encoding="utf-8") == expected[first]
    (root / "babelforge" / "removed.pyi").write_text("", encoding="utf-8")
    (root / "babelforge" / "link.pyi").symlink_to(first)
    assert stubs.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "not a module's stub: " in err and "removed.pyi" in err and "link.pyi" in err
    assert "run python scripts/typing_stubs.py" in err
