"""babelforge: build, version, audit and publish multilingual vision-and-language benchmarks."""

__version__ = "0.1.0"
