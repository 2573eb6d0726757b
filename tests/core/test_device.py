"""`device: auto` is resolved in one place, for the runtime that will run the model."""

import pytest

from babelforge.core import device
from babelforge.core.errors import BabelforgeError


def test_auto_follows_the_runtime_that_runs_the_model(monkeypatch):
    monkeypatch.setitem(device.PROBES, "torch", lambda: True)
    monkeypatch.setitem(device.PROBES, "ctranslate2", lambda: False)
    assert device.resolve_device("auto") == "cuda" and device.resolve_device(None) == "cuda"
    assert device.resolve_device("auto", runtime="ctranslate2") == "cpu"


def test_explicit_devices_pass_and_unknown_ones_are_one_line():
    assert [device.resolve_device(d) for d in ("cpu", "cuda", "cuda:1")] == ["cpu", "cuda", "cuda:1"]
    with pytest.raises(BabelforgeError, match="unknown device 'gpu'"):
        device.resolve_device("gpu")


def test_auto_on_this_machine_matches_torch():
    import torch

    assert device.resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
