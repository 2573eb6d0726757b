"""babelforge installs as one import package: `builders/` is `babelforge`, `eval/` is `babelforge.eval`, and
`resources/` ships as its data, `babelforge/resources/` (babelforge.core.resources finds it)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile

import pytest

from tests.imports import REPO, build_wheel, module_file, module_name, package_dirs


def _setuptools() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


# The packages of data only (no __init__.py): the package's static files.
DATA_PACKAGES = {"babelforge.resources": REPO / "resources"}


def test_every_package_folder_is_listed_and_nothing_else():
    folders = {
        module_name(init.parent / "__init__.py")
        for root in package_dirs().values()
        for init in root.rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert set(_setuptools()["packages"]) == folders | set(DATA_PACKAGES)
    assert {
        name: REPO / folder for name, folder in _setuptools()["package-dir"].items()
    }.items() >= DATA_PACKAGES.items()
    assert not [path for path in (REPO / "resources").rglob("*.py")]  # data only: no module hides there


def shipped_resources() -> set[str]:
    """The files of resources/ the wheel carries: what package-data names (not reviews/: a project's own)."""
    patterns = _setuptools()["package-data"]["babelforge.resources"]
    return {
        path.relative_to(REPO / "resources").as_posix()
        for pattern in patterns
        for path in (REPO / "resources").glob(pattern)
        if path.is_file()
    }


def shipped_package_data() -> set[str]:
    """The data files the wheel carries inside code packages (package-data beside the modules, e.g. the
    audit report's style and script), as paths in the wheel."""
    found = set()
    for package, patterns in _setuptools()["package-data"].items():
        if package in DATA_PACKAGES:
            continue
        folder, prefix = module_file(package).parent, package.replace(".", "/")
        found |= {
            f"{prefix}/{path.relative_to(folder).as_posix()}"
            for pattern in patterns
            for path in folder.glob(pattern)
            if path.is_file()
        }
    return found


def test_the_audit_reports_style_and_script_ship():
    from babelforge.audit import report

    assets = {f"babelforge/audit/assets/{name}" for name in (report.STYLE_FILE, report.LABELS_SCRIPT_FILE)}
    assert assets <= shipped_package_data()
    assert all(report.asset(name) for name in (report.STYLE_FILE, report.LABELS_SCRIPT_FILE))


def test_the_eval_commands_resources_ship_and_reviews_do_not():
    from babelforge.core.resources import RESOURCES, resource

    assert RESOURCES == REPO / "resources"  # a checkout reads its own folder, where DVC tracks it
    shipped = shipped_resources()
    assert {"languages.tsv", "imagenet1k_classes.tsv", "clip_templates_en.txt", "citations.bib"} <= shipped
    assert not [name for name in shipped if name.startswith("reviews/")]
    assert resource("languages.tsv") == REPO / "resources" / "languages.tsv"


def test_module_names_map_to_the_two_folders():
    assert module_file("babelforge.eval.zeroshot.metric") == REPO / "eval" / "zeroshot" / "metric.py"
    assert module_file("babelforge.eval.zeroshot") == REPO / "eval" / "zeroshot" / "__init__.py"
    assert module_file("babelforge.core.io") == REPO / "builders" / "core" / "io.py"
    assert module_file("babelforge") == REPO / "builders" / "__init__.py"
    assert module_file("babelforge.nosuchmodule") is None and module_file("eval") is None
    assert module_name(REPO / "eval" / "__init__.py") == "babelforge.eval"


def test_the_installed_package_is_the_working_tree(tmp_path):
    """From a folder holding its own `eval.py` (common in ML projects), `babelforge.eval` is still ours."""
    (tmp_path / "eval.py").write_text("raise SystemExit('the user eval.py was imported')\n")
    code = "import babelforge.eval.zeroshot.metric as z, babelforge.cli as c; print(z.__file__); print(c.__file__)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(REPO / "eval" / "zeroshot" / "metric.py"), str(REPO / "builders" / "cli.py")]


@pytest.mark.slow
def test_the_wheel_installs_nothing_but_babelforge(tmp_path):
    wheel = build_wheel(tmp_path)  # from a copy: setuptools writes build/ and *.egg-info into the source tree
    assert (tmp_path / "source" / "resources").is_dir()  # package_dirs() names it: copied with the code
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {"babelforge", wheel.name.split("-py")[0] + ".dist-info"}
    modules = {name for name in names if name.endswith(".py")}
    assert "babelforge/eval/zeroshot/metric.py" in modules and "babelforge/cli.py" in modules
    expected = {
        f"{module_name(path).replace('.', '/')}{'/__init__' if path.name == '__init__.py' else ''}.py"
        for root in package_dirs().values()
        for path in root.rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert modules == expected
    data = {name.removeprefix("babelforge/resources/") for name in names if name.startswith("babelforge/resources/")}
    assert data == shipped_resources()
    package_data = shipped_package_data()
    assert package_data <= set(names) and "babelforge/audit/assets/report.css" in package_data
    assert set(names) - modules - package_data - {f"babelforge/resources/{name}" for name in data} == {
        name for name in names if ".dist-info/" in name
    }
