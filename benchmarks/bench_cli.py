"""The one argument parser the benchmarks start from: `python benchmarks/<name>.py --help` shows the
script's module docstring as it is written (its line breaks and lists kept) and, after each option's
help, its default, so the size a plain run measures is stated where a reader looks."""

from __future__ import annotations

import argparse


class BenchmarkHelp(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The description as written, and every option's default."""


def benchmark_parser(docstring: str | None) -> argparse.ArgumentParser:
    """The parser of a benchmark whose module docstring is `docstring` (pass `__doc__`)."""
    return argparse.ArgumentParser(description=docstring, formatter_class=BenchmarkHelp)
