"""`eval.common.max_bad_fraction` is a share: 0 and 1 are accepted, anything outside is refused in one line
naming the setting (the survivor of the mutation check on eval/config.py: `maximum=2` passed every test)."""

from __future__ import annotations

import pytest

from babelforge.core.config import load_config
from babelforge.core.errors import BabelforgeError
from babelforge.eval.config import CommonConfig


def common(fraction: float) -> CommonConfig:
    return load_config(
        CommonConfig, {"profile": "sample", "eval": {"common": {"max_bad_fraction": fraction}}}, "eval.common"
    )


@pytest.mark.parametrize("fraction", [0, 0.5, 1])
def test_a_share_is_accepted(fraction):
    assert common(fraction).max_bad_fraction == fraction


@pytest.mark.parametrize("fraction", [1.5, 2, -0.1])
def test_a_fraction_outside_0_1_is_refused(fraction):
    with pytest.raises(
        BabelforgeError, match=r"^params.yaml: eval.common.max_bad_fraction is .*; it must be between 0 and 1$"
    ):
        common(fraction)
