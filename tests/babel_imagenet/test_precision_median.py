"""labels.json's `precision.median` (babelforge.babel_imagenet.precision.headline_precision): the middle
language, or the mean of the two middle ones for an even count; English (the reference names) left out."""

from __future__ import annotations

from babelforge.babel_imagenet.precision import (
    ESTIMATED,
    MEASURED,
    REFERENCE,
    Estimate,
    LanguageFigure,
    headline_precision,
)


def figure(precision: float, basis: str = ESTIMATED, labels: int = 100) -> LanguageFigure:
    shown = Estimate(precision, precision - 0.05, min(precision + 0.05, 1.0), basis, 0, (1 - precision) * labels)
    return LanguageFigure(shown, shown, {})


def test_the_median_of_an_even_count_is_the_mean_of_the_two_middle_languages():
    figures = {
        "deu": figure(0.9),
        "amh": figure(0.5),
        "ind": figure(0.8, MEASURED),
        "fin": figure(1.0),
        "eng": figure(1.0, REFERENCE),  # would make five, with 0.9 the middle
    }
    headline = headline_precision(figures)
    assert headline["median"] == 0.85 and headline["mean"] == 0.8 and headline["min"] == 0.5
    assert headline["measured_languages"] == 1 and headline["expected_wrong_labels"] == 80.0
    del figures["fin"]
    assert headline_precision(figures)["median"] == 0.8  # odd: the middle one
