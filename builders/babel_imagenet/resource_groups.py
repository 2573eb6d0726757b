"""The resource group of a language by its number of labelled classes: one rule for the label
tables, the dataset card and the report's figures."""

from __future__ import annotations

from babelforge.core.errors import BabelforgeError

# Resource groups by number of classes (upper bounds inclusive); reproduces the paper's
# 17/32/35/16 split of its 100 evaluation languages.
GROUP_BOUNDS = (("very-low", 100), ("low", 333), ("mid", 666), ("high", 1000))


def resource_group(n_classes: float) -> str:
    """The resource group of a language with `n_classes` labelled classes (GROUP_BOUNDS): the one rule the
    label tables, the card and the report's figures name groups by. A count above ImageNet-1k's is a
    table of another dataset, refused rather than drawn as `high`."""
    for name, upper in GROUP_BOUNDS:
        if n_classes <= upper:
            return name
    raise BabelforgeError(
        f"{n_classes:g} classes: more than ImageNet-1k has ({GROUP_BOUNDS[-1][1]}); resource groups are for "
        "Babel-ImageNet's class counts (the `n_classes` of its labels)"
    )
