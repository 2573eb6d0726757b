"""The CLI answers `--help` without heavy imports, and every stage module is importable lazily."""

import subprocess
import sys

import pytest

from babelforge.commands import COMMANDS

HEAVY = ("torch", "transformers", "ctranslate2", "comet", "pandas", "pyarrow", "matplotlib", "datasets", "requests")


def imported_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(result.stdout.split())


def test_top_level_help_lists_every_stage_without_heavy_imports():
    result = subprocess.run([sys.executable, "-m", "babelforge.cli", "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    for name in COMMANDS:
        assert f"  {name} " in result.stdout
    modules = imported_after(
        "from babelforge.cli import main\nimport contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()): main(['--help'])"
    )
    assert not modules & set(HEAVY)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_stage_module_imports_lightly_and_configures(name):
    module = COMMANDS[name].module
    modules = imported_after(
        f"from babelforge.cli import stage_parser\nfrom babelforge.core.stages import load\n"
        f"stage = load({name!r})\nstage_parser(stage)\nassert callable(stage.run)"
    )
    assert not modules & set(HEAVY), f"{module} imports {sorted(modules & set(HEAVY))} at import time"


def test_unknown_stage_is_an_error():
    result = subprocess.run([sys.executable, "-m", "babelforge.cli", "nosuchstage"], capture_output=True, text=True)
    assert result.returncode == 2
