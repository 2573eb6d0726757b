"""Archives built in memory for the archive tests, byte for byte the same on every run: their bytes appear in
parametrized test ids, which every xdist worker must collect alike (a zip or gzip header holds a time)."""

from __future__ import annotations

import io
import zipfile

FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can say


def zip_bytes(members: dict[str, bytes]) -> bytes:
    """A deflated zip of {name: data}, every member dated FIXED_TIME."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for name, data in members.items():
            bundle.writestr(zipfile.ZipInfo(name, date_time=FIXED_TIME), data, zipfile.ZIP_DEFLATED)
    return buffer.getvalue()
