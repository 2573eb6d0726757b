"""The CPU pin: which variables each level sets, the missing-ISA error, the CLI's order, rounding."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from babelforge.core import determinism
from babelforge.core.errors import BabelforgeError


@pytest.mark.parametrize("isa", determinism.CPU_ISAS)
def test_every_level_sets_every_variable_and_turns_mkl_off_in_ctranslate2(isa):
    env = determinism.cpu_environment(isa)
    assert set(env) == {
        "CT2_FORCE_CPU_ISA",
        "CT2_USE_MKL",
        "ONEDNN_MAX_CPU_ISA",
        "MKL_CBWR",
        "ATEN_CPU_CAPABILITY",
        "OPENBLAS_CORETYPE",
        "NPY_DISABLE_CPU_FEATURES",
    }
    assert env["CT2_FORCE_CPU_ISA"] == isa
    assert env["CT2_USE_MKL"] == "0"
    assert "AVX512F" in env["NPY_DISABLE_CPU_FEATURES"].split()
    # STRICT: MKL's results do not depend on its thread count (a Ray actor runs with one thread)
    assert env["MKL_CBWR"].endswith(",STRICT")


def test_levels_differ_where_the_libraries_do():
    generic, avx, avx2 = (determinism.cpu_environment(isa) for isa in ("GENERIC", "AVX", "AVX2"))
    assert avx2["ATEN_CPU_CAPABILITY"] == "avx2" and avx["ATEN_CPU_CAPABILITY"] == generic["ATEN_CPU_CAPABILITY"]
    assert len({generic["ONEDNN_MAX_CPU_ISA"], avx["ONEDNN_MAX_CPU_ISA"], avx2["ONEDNN_MAX_CPU_ISA"]}) == 3
    assert "AVX2" not in avx2["NPY_DISABLE_CPU_FEATURES"].split()
    assert "AVX2" in avx["NPY_DISABLE_CPU_FEATURES"].split()


def test_lowercase_is_accepted_and_an_unknown_level_names_the_param():
    assert determinism.cpu_environment("avx2")["CT2_FORCE_CPU_ISA"] == "AVX2"
    with pytest.raises(BabelforgeError, match=r"build\.cpu_isa is 'AVX512'; one of GENERIC, AVX, AVX2"):
        determinism.cpu_environment("AVX512")


def test_a_cpu_without_the_level_gets_one_line_naming_the_param():
    with pytest.raises(BabelforgeError) as error:
        determinism.pin_cpu("AVX2", environ={}, flags={"sse2", "avx"})
    message = str(error.value)
    assert "\n" not in message
    assert "build.cpu_isa" in message and "avx2" in message and "fma" in message
    determinism.require_isa("GENERIC", set())  # runs anywhere
    determinism.require_isa("AVX", {"avx"})
    with pytest.raises(BabelforgeError, match="lacks avx"):
        determinism.require_isa("AVX", None)  # no /proc/cpuinfo: only GENERIC is known to run


def test_pin_overrides_what_the_machine_set(tmp_path):
    environ = {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE", "ATEN_CPU_CAPABILITY": "avx512", "HOME": "/x"}
    pinned = determinism.pin_cpu("AVX2", environ=environ, flags={"avx", "avx2", "fma"})
    assert environ["ONEDNN_MAX_CPU_ISA"] == "AVX2" and environ["ATEN_CPU_CAPABILITY"] == "avx2"
    assert environ["HOME"] == "/x" and pinned == determinism.cpu_environment("AVX2")


def test_cpu_flags_read_from_a_cpuinfo_file(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n\nprocessor\t: 1\nflags\t: fpu\n")
    assert determinism.cpu_flags(cpuinfo) == {"fpu", "sse2", "avx", "avx2", "fma"}
    assert determinism.cpu_flags(tmp_path / "absent") is None


def test_the_param_is_read_per_profile_with_the_default_when_absent():
    assert determinism.cpu_isa_from_params({}) == "AVX2"
    assert (
        determinism.cpu_isa_from_params(
            {"profile": "full", "build": {"cpu_isa": {"sample": "AVX2", "full": "generic"}}}
        )
        == "GENERIC"
    )


@pytest.mark.slow
def test_the_cli_pins_before_the_stage_imports_torch(tmp_path, repo_root):
    """A stage run by the CLI sees the pinned variables, and its libraries load after them."""
    params = tmp_path / "params.yaml"
    params.write_text((repo_root / "params.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    code = (
        "import os, sys; from babelforge import cli; import babelforge.core.determinism as d;"
        "cli.pin_cpu_for(['--params', sys.argv[1], '--set', 'build.cpu_isa=GENERIC']);"
        "print(os.environ['CT2_FORCE_CPU_ISA'], d.loaded_too_early());"
        "import torch; print(torch.backends.cpu.get_cpu_capability())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(params)],
        capture_output=True,
        text=True,
        check=True,
        cwd=repo_root,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(repo_root), "ATEN_CPU_CAPABILITY": "avx2"},
    ).stdout.split("\n")
    assert out[0] == "GENERIC []"
    assert out[1] == "DEFAULT"


def test_a_cpu_isa_the_machine_lacks_stops_the_stage_with_one_line(tmp_path, repo_root, monkeypatch, capsys):
    from babelforge import cli

    monkeypatch.setattr(determinism, "cpu_flags", lambda: {"sse2"})
    monkeypatch.setattr(determinism.os, "environ", dict(determinism.os.environ))
    assert cli.main(["prompts", "--params", str(repo_root / "params.yaml")]) == 1
    error = capsys.readouterr().err.strip()
    assert error.startswith("babelforge prompts: error: params.yaml build.cpu_isa is AVX2 but this CPU lacks avx")
    assert "\n" not in error


def test_rounding_reaches_nested_values_and_leaves_the_rest():
    value = {"a": [0.12345678, 1, True, "x", None], "b": (float("nan"), -0.0000001), "c": 2.5e-7}
    out = determinism.rounded(value, 6)
    assert out["a"] == [0.123457, 1, True, "x", None]
    assert math.isnan(out["b"][0]) and out["b"][1] == 0.0 and math.copysign(1, out["b"][1]) == 1
    assert out["c"] == 0.0
    assert determinism.rounded(-3.14159265, determinism.NLLB_SCORE_DECIMALS) == -3.1416
