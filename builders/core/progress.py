"""Progress bars and status lines, on stderr so stdout stays for results."""
from __future__ import annotations

import sys
from typing import Iterable, TypeVar

T = TypeVar("T")


def progress(iterable: Iterable[T], desc: str, total: int | None = None, unit: str = "it") -> Iterable[T]:
    """A tqdm bar when stderr is a terminal; the bare iterable otherwise (logs, CI)."""
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, total=total, unit=unit, disable=None, file=sys.stderr, leave=False)


def info(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
