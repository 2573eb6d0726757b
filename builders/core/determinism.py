"""Same bytes on every x86-64 machine: pin the CPU instruction set of the numeric libraries.

CTranslate2, torch, oneDNN, MKL, OpenBLAS and numpy each pick their kernels from the CPU
they run on, and kernels of different instruction sets round differently. Measured with
CTranslate2 4.8.5, torch 2.13 (CPU), numpy 1.26 on an AVX2 machine (`benchmarks/` has no
timing here; the figures are in docs/reproducibility.md):

- `CT2_FORCE_CPU_ISA`: GENERIC gives other NLLB tokens than AVX/AVX2; AVX and AVX2 other scores.
- `CT2_USE_MKL=0`: CTranslate2 uses MKL on Intel CPUs and oneDNN on others; MKL's GEMMs gave
  other tokens. Off, every vendor runs the same oneDNN/own kernels.
- `ONEDNN_MAX_CPU_ISA`: oneDNN (inside CTranslate2 and torch) dispatches on its own; capping
  it at SSE41 or AVX changed NLLB scores and the CLIP/COMETKiwi floats. oneDNN reads it before
  the older `DNNL_MAX_CPU_ISA`, so that one need not be set (checked: the ONEDNN_ value wins).
- `MKL_CBWR`: torch's MKL calls (COMETKiwi) gave other scores unset than with AVX2 pinned. `,STRICT`
  too: without it MKL's results depend on its thread count, and a Ray actor runs with one thread
  (Ray sets OMP_NUM_THREADS=1): on an AVX-512 Xeon (2026-11-28) the tiny COMETKiwi's scores in a
  process with MKL_NUM_THREADS=1 or OMP_NUM_THREADS=1 differed from a 2-thread one; with STRICT none did.
- `ATEN_CPU_CAPABILITY`: torch's own kernels (default vs avx2) changed every torch float, the
  random initialisation of the tiny models included.
- `OPENBLAS_CORETYPE`: numpy's matrix products differ per OpenBLAS core type (Sandybridge vs
  Haswell); zero-shot and retrieval score with them.
- `NPY_DISABLE_CPU_FEATURES`: numpy's exp/tanh loops differ with the SIMD set they use; numpy
  1.26 also has AVX-512 sort kernels an AVX2 machine cannot try. Kept for those, though no
  artifact of tests/test_reproducibility.py changed without it.

Left out one at a time from the pin, on that test's two simulated machines (30 files; 31 with
retrieval, whose recalls did not move without the last two either):
CT2_FORCE_CPU_ISA 7 files differ, CT2_USE_MKL 4, ONEDNN_MAX_CPU_ISA 2, MKL_CBWR 2,
ATEN_CPU_CAPABILITY 10, OPENBLAS_CORETYPE 0 (CLIPScore does no matrix product), NPY_DISABLE_CPU_FEATURES 0.
Not set because they decided nothing: `MKL_ENABLE_INSTRUCTIONS` (MKL_CBWR covers it), and the
thread counts (CTranslate2 intra_threads 1/2/4, torch 1..16 threads: same bytes for these
models' row-wise work; only whole-tensor reductions change, which the stages do not run; MKL's
own thread count is made irrelevant by MKL_CBWR's STRICT).

The variables are read when a library loads: `pin_cpu` must run before ctranslate2, torch or
numpy are imported (the CLI does it before importing a stage module). GPUs cannot be pinned
this way: CUDA kernels never give the CPU's bytes.
"""

from __future__ import annotations

import importlib.metadata as metadata
import math
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.config import setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.params import for_profile, profile_of

PARAM = "build.cpu_isa"
# Lowest first. GENERIC: the plain C++ kernels every x86-64 CPU (and others) runs.
CPU_ISAS = ("GENERIC", "AVX", "AVX2")
DEFAULT_CPU_ISA = "AVX2"
# /proc/cpuinfo flags an ISA's kernels need (AVX2 kernels use FMA too).
REQUIRED_FLAGS = {"GENERIC": (), "AVX": ("avx",), "AVX2": ("avx", "avx2", "fma")}
# numpy's dispatchable features above each level (the 1.26 wheels' baseline is SSE3);
# disabling one a CPU lacks is allowed, so the lists name every later one too.
_NPY_AVX512 = (
    "AVX512F",
    "AVX512CD",
    "AVX512_KNL",
    "AVX512_KNM",
    "AVX512_SKX",
    "AVX512_CLX",
    "AVX512_CNL",
    "AVX512_ICL",
    "AVX512_SPR",
)
_NPY_ABOVE = {
    "GENERIC": ("SSSE3", "SSE41", "POPCNT", "SSE42", "AVX", "F16C", "FMA3", "AVX2", *_NPY_AVX512),
    "AVX": ("F16C", "FMA3", "AVX2", *_NPY_AVX512),
    "AVX2": _NPY_AVX512,
}
# Libraries that read the variables once, when they load.
PINNED_LIBRARIES = ("ctranslate2", "torch", "numpy")


def cpu_environment(cpu_isa: str) -> dict[str, str]:
    """The environment variables that make every numeric library run kernels of `cpu_isa`."""
    isa = check_isa_name(cpu_isa)
    return {
        "CT2_FORCE_CPU_ISA": isa,
        "CT2_USE_MKL": "0",
        "ONEDNN_MAX_CPU_ISA": {"GENERIC": "SSE41", "AVX": "AVX", "AVX2": "AVX2"}[isa],
        "MKL_CBWR": {"GENERIC": "COMPATIBLE", "AVX": "AVX", "AVX2": "AVX2"}[isa] + ",STRICT",
        "ATEN_CPU_CAPABILITY": "avx2" if isa == "AVX2" else "default",
        "OPENBLAS_CORETYPE": {"GENERIC": "Prescott", "AVX": "Sandybridge", "AVX2": "Haswell"}[isa],
        "NPY_DISABLE_CPU_FEATURES": " ".join(_NPY_ABOVE[isa]),
    }


def pinned_now(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The pinning variables this process has set (what `pin_cpu` set, for processes started
    elsewhere, e.g. Ray's workers on other machines, to run under the same pin)."""
    env = os.environ if environ is None else environ
    return {name: env[name] for name in cpu_environment("GENERIC") if name in env}


def check_isa_name(cpu_isa: str) -> str:
    isa = str(cpu_isa).upper()
    if isa not in CPU_ISAS:
        raise BabelforgeError(f"params.yaml {PARAM} is {cpu_isa!r}; one of {', '.join(CPU_ISAS)}")
    return isa


def missing_flags(cpu_isa: str, flags: Iterable[str]) -> list[str]:
    """The CPU flags `cpu_isa` needs that `flags` lacks."""
    have = set(flags)
    return [flag for flag in REQUIRED_FLAGS[check_isa_name(cpu_isa)] if flag not in have]


def cpu_flags(cpuinfo: str | Path = "/proc/cpuinfo") -> set[str] | None:
    """The flags of the first CPU in /proc/cpuinfo; None where there is no such file (not Linux)."""
    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return set(value.split())
    return set()


def require_isa(cpu_isa: str, flags: set[str] | None) -> None:
    """One line naming the param when this CPU cannot run `cpu_isa` (unknown CPUs only run GENERIC)."""
    isa = check_isa_name(cpu_isa)
    if isa == "GENERIC":
        return
    lacking = list(REQUIRED_FLAGS[isa]) if flags is None else missing_flags(isa, flags)
    if lacking:
        raise BabelforgeError(
            f"params.yaml {PARAM} is {isa} but this CPU lacks {', '.join(lacking)}; set {PARAM}: "
            f"{CPU_ISAS[CPU_ISAS.index(isa) - 1]} or GENERIC on every machine that builds this version "
            "(outputs then differ from a build with another value)"
        )


def pin_cpu(
    cpu_isa: str, environ: Mapping[str, str] | None = None, flags: set[str] | None | bool = True
) -> dict[str, str]:
    """Check this CPU and set the pinning variables in `environ` (default os.environ), overriding
    what the machine set. Returns the variables set. Call it before the libraries load."""
    env = os.environ if environ is None else environ
    require_isa(cpu_isa, cpu_flags() if flags is True else flags)  # type: ignore[arg-type]
    pinned = cpu_environment(cpu_isa)
    env.update(pinned)  # type: ignore[union-attr]
    return pinned


def loaded_too_early() -> list[str]:
    """Pinned libraries already imported in this process (the variables come too late for them)."""
    return [name for name in PINNED_LIBRARIES if name in sys.modules]


@dataclass(frozen=True)
class BuildSettings:
    """The `build` group of params.yaml: settings every stage of the build shares."""

    GROUP = "build"
    cpu_isa: str = setting(
        DEFAULT_CPU_ISA,
        "CPU instruction set every CTranslate2/torch/numpy stage is pinned to: GENERIC, AVX or AVX2; "
        "the same bytes on every x86-64 machine that has it (docs/reproducibility.md)",
    )


def cpu_isa_from_params(params: Mapping) -> str:
    """`build.cpu_isa` of loaded params.yaml (profile choices resolved); the default when absent."""

    value = (params.get("build") or {}).get("cpu_isa", DEFAULT_CPU_ISA)
    return check_isa_name(for_profile(value, profile_of(params), PARAM))


def runtime(device: str, compute_type: str | None = None) -> dict:
    """What an artifact records of the machine-side of its numbers: device, compute type, the
    pinned CPU ISA (or the GPU's name), what torch actually dispatched to, library versions."""

    record: dict = {"device": device}
    if compute_type:
        record["compute_type"] = compute_type
    if device.startswith("cuda"):
        record["gpu"] = _gpu_name()
    else:
        record["cpu_isa"] = os.environ.get("CT2_FORCE_CPU_ISA", "unpinned")
        if "torch" in sys.modules:
            record["torch_cpu_capability"] = sys.modules["torch"].backends.cpu.get_cpu_capability()
    versions = {}
    for package in ("ctranslate2", "torch", "transformers", "unbabel-comet"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    record["libraries"] = versions
    return record


def _gpu_name() -> str | None:
    try:
        import torch

        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    except Exception:  # a CUDA build of CTranslate2 beside CPU torch: the name is unknown, not fatal
        return None


# ---------------------------------------------------------------- stated precision
# Decimals kept of the floats written to artifacts, so kernel noise below them cannot change a
# file: NLLB log-probabilities (scores differed between AVX and AVX2 in the 6th decimal),
# COMETKiwi scores and eval metrics (in [0, 1] or a few units).
NLLB_SCORE_DECIMALS = 4
KIWI_DECIMALS = 6
METRIC_DECIMALS = 6


def rounded(value, decimals: int):
    """`value` with every float in it (nested lists/dicts/tuples too) rounded to `decimals`;
    NaN, infinities, ints, bools and text unchanged."""

    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float) or type(value).__name__ in ("float32", "float64", "float16"):
        value = float(value)
        return value if not math.isfinite(value) else round(value, decimals) + 0.0  # -0.0 -> 0.0
    if isinstance(value, dict):
        return {key: rounded(item, decimals) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(rounded(item, decimals) for item in value)
    return value


# The card's statement for datasets made by machine translation (babel-imagenet-prompts, mt-captions).
MACHINE_LIMITATION = (
    "Built on CPU with the instruction set pinned (params.yaml build.cpu_isa; the build provenance's `runtime` "
    "says which): a rebuild on any x86-64 CPU with that level gives the same bytes. A GPU build never does "
    "(CUDA kernels and fp16 round differently): it gives other translations and scores for some rows; "
    "`babelforge diff` counts them per language."
)
