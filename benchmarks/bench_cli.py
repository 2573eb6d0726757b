"""The one argument parser the benchmarks start from: `python benchmarks/<name>.py --help` shows the
script's module docstring as it is written (its line breaks and lists kept) and, after each option's
help, its default, so the size a plain run measures is stated where a reader looks."""

from __future__ import annotations

import argparse


class BenchmarkHelp(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The description as written, and every option's default that says something: not an unset
    option's None nor an off switch's False (a help text that says what its absence means stays as is)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def benchmark_parser(docstring: str | None) -> argparse.ArgumentParser:
    """The parser of a benchmark whose module docstring is `docstring` (pass `__doc__`)."""
    return argparse.ArgumentParser(description=docstring, formatter_class=BenchmarkHelp)
