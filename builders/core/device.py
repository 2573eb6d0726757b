"""The one place a `device: auto` setting becomes a concrete device.

Stages that run a model (eval's dual encoders with torch, NLLB and COMETKiwi) take
`device: auto | cpu | cuda | cuda:<n>` from params.yaml. `auto` means a CUDA GPU when
the runtime that will run the model sees one, else the CPU. The runtime matters: a
CPU-only torch beside a CUDA build of CTranslate2 (or the reverse) sees different
hardware, so the caller names the runtime it is about to use.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from babelforge.core.errors import BabelforgeError

Runtime = Literal["torch", "ctranslate2"]
# The explicit devices each runtime takes, and how a message names them: CTranslate2 takes a GPU's
# index as an argument of its own, never in the device name.
_EXPLICIT = {
    "torch": (re.compile(r"^(cpu|cuda(:\d+)?)$"), "auto, cpu, cuda or cuda:<index>"),
    "ctranslate2": (re.compile(r"^(cpu|cuda)$"), "auto, cpu or cuda"),
}


def _torch_has_cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def _ctranslate2_has_cuda() -> bool:
    import ctranslate2

    return ctranslate2.get_cuda_device_count() > 0


PROBES: dict[str, Callable[[], bool]] = {"torch": _torch_has_cuda, "ctranslate2": _ctranslate2_has_cuda}


def resolve_device(device: str | None = "auto", runtime: Runtime = "torch") -> str:
    """`auto` (or None) -> `cuda` when `runtime` sees a CUDA GPU, else `cpu`; explicit devices pass through.

    An unknown device (one `runtime` does not take: `cuda:1` for CTranslate2) is one line naming the
    accepted values.
    """
    if device is None or device == "auto":
        if runtime not in PROBES:
            raise BabelforgeError(f"unknown runtime {runtime!r} for device auto; one of {', '.join(PROBES)}")
        return "cuda" if PROBES[runtime]() else "cpu"
    pattern, accepted = _EXPLICIT.get(runtime, _EXPLICIT["torch"])
    if not pattern.match(device):
        raise BabelforgeError(f"unknown device {device!r}: use {accepted}")
    return device
