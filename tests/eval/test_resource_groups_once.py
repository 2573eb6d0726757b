"""The report's figure names a language's resource group by the labels' one rule
(babelforge.babel_imagenet.resource_groups.resource_group): the same bands at the bounds, the same refusal above
ImageNet-1k's class count (the figure once drew such a language as `high` where the labels refused it)."""

from __future__ import annotations

import pytest

from babelforge.babel_imagenet.resource_groups import resource_group
from babelforge.core.errors import BabelforgeError
from babelforge.eval.report.figures import accuracy_by_language_figure
from tests.eval.test_plots import _zeroshot


def _band_names(figure) -> list[str]:
    return [text.get_text() for text in figure.axes[0].texts]


def test_the_figure_bands_languages_at_the_labels_bounds():
    counts = {"aaa_Latn": 100, "bbb_Latn": 101, "ccc_Latn": 666, "ddd_Latn": 667}
    figure = accuracy_by_language_figure(_zeroshot(counts, lambda lang: ["translated"]), None)
    assert _band_names(figure) == [resource_group(n) for n in counts.values()] == ["very-low", "low", "mid", "high"]


def test_a_count_above_imagenet_is_refused_by_both_in_one_line():
    with pytest.raises(BabelforgeError, match=r"^1001 classes: more than ImageNet-1k has \(1000\); ") as refused:
        resource_group(1001)
    assert "\n" not in str(refused.value)
    frame = _zeroshot({"eng_Latn": 1000, "deu_Latn": 1001}, lambda lang: ["translated"])
    with pytest.raises(BabelforgeError, match=r"^1001 classes: more than ImageNet-1k has"):
        accuracy_by_language_figure(frame, None)
