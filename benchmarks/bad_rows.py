"""A 100,000-caption input with 1 % bad rows of every kind: the read finishes, the quarantine holds
exactly the bad rows with their reasons, the kept rows equal the clean input's, and the read is
about as fast as the clean input's.

    python benchmarks/bad_rows.py [--captions 100000] [--bad-share 0.01] [--repeats 3]

The captions are XTD's 1,000 English ones from the source mirror, cycled under unique ids. The bad
rows are spread evenly through the file, kinds in turn. Timed: the whole read of the captions
stage (`stream_captions`: decoding, checks, the id set, Arrow batches), best of `repeats`, for CSV
and JSONL. The model passes after it see the same kept rows, so their time does not change
(tests/captions/test_bad_rows.py checks the stage's bytes).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_cli import benchmark_parser  # noqa: E402

from babelforge.captions.input_config import InputConfig  # noqa: E402
from babelforge.captions.readers import stream_captions  # noqa: E402
from babelforge.core.bad_rows import BadRowPolicy, Quarantine  # noqa: E402
from babelforge.core.languages import registry  # noqa: E402

XTD = REPO.parent / "shared" / "data" / "xtd" / "xtd.json"

# (reason, CSV line, JSONL line) of each bad kind; {n} makes every id unique.
BAD_KINDS = [
    ("invalid_utf8", b"bad{n},x.jpg,caf\xe9 au lait\n", b'{"id": "bad{n}", "image": "x.jpg", "caption": "caf\xe9"}\n'),
    ("ragged_row", b"bad{n},x.jpg\n", None),
    ("bad_json", None, b'{"id": "bad{n}", "caption": \n'),
    (
        "control_characters",
        b"bad{n},x.jpg,a dog\x00 on grass\n",
        b'{"id": "bad{n}", "image": "x.jpg", "caption": "a\\u0007dog"}\n',
    ),
    ("empty_caption", b"bad{n},x.jpg,   \n", b'{"id": "bad{n}", "image": "x.jpg", "caption": " "}\n'),
    (
        "url_only",
        b"bad{n},x.jpg,https://example.org/{n}.jpg\n",
        b'{"id": "bad{n}", "image": "x.jpg", "caption": "www.x.org/a"}\n',
    ),
    ("markup_only", b"bad{n},x.jpg,<br/>\n", b'{"id": "bad{n}", "image": "x.jpg", "caption": "<p></p>"}\n'),
    ("missing_id", b",x.jpg,a caption without an id\n", b'{"id": null, "image": "x.jpg", "caption": "no id"}\n'),
    ("duplicate_id", b"c000000,y.jpg,a repeated id\n", b'{"id": "c000000", "image": "y.jpg", "caption": "again"}\n'),
]


def row_line(fmt: str, row: tuple[str, str, str]) -> bytes:
    if fmt == "csv":
        return (",".join(row[:2]) + ',"' + row[2].replace('"', '""') + '"\n').encode()
    return (json.dumps({"id": row[0], "image": row[1], "caption": row[2]}) + "\n").encode()


def write_inputs(folder: Path, n: int, bad_share: float) -> dict[str, tuple[Path, Path, Counter]]:
    """{format: (clean file, messy file, injected reasons)}."""
    texts = [
        caption[0] if isinstance(caption, list) else caption
        for caption in json.loads(XTD.read_text())["captions"]["en"]
    ]
    rows = [(f"c{i:06d}", f"{i % 1000}.jpg", texts[i % len(texts)]) for i in range(n)]
    every = max(1, round(1 / bad_share))
    files = {}
    for fmt in ("csv", "jsonl"):
        kinds = [kind for kind in BAD_KINDS if kind[1 if fmt == "csv" else 2] is not None]

        header = b"id,image,caption\n" if fmt == "csv" else b""
        clean, messy, injected = [header], [header], Counter()
        for index, row in enumerate(rows):
            clean.append(row_line(fmt, row))
            messy.append(row_line(fmt, row))
            if index % every == every - 1:
                reason, csv_line, jsonl_line = kinds[sum(injected.values()) % len(kinds)]
                messy.append((csv_line if fmt == "csv" else jsonl_line).replace(b"{n}", str(index).encode()))
                injected[reason] += 1
        (folder / f"clean.{fmt}").write_bytes(b"".join(clean))
        (folder / f"messy.{fmt}").write_bytes(b"".join(messy))
        files[fmt] = (folder / f"clean.{fmt}", folder / f"messy.{fmt}", injected)
    return files


def read(path: Path, repeats: int) -> tuple[float, list[tuple[str, str]], Quarantine]:
    best, kept, quarantine = float("inf"), [], None
    for _ in range(repeats):
        quarantine = Quarantine(BadRowPolicy("skip", 0.02), "captions")
        began = time.perf_counter()
        tables = list(stream_captions(InputConfig(format="table", path=str(path)), registry(), quarantine=quarantine))
        best = min(best, time.perf_counter() - began)
        kept = [pair for table in tables for pair in zip(table["caption_id"].to_pylist(), table["caption"].to_pylist())]
    return best, kept, quarantine


def main(argv=None) -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--captions", type=int, default=100_000, help="caption rows of the input")
    parser.add_argument("--bad-share", type=float, default=0.01, help="share of the rows that are bad")
    parser.add_argument("--repeats", type=int, default=3, help="timed reads; the best is kept")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for fmt, (clean_path, messy_path, injected) in write_inputs(Path(tmp), args.captions, args.bad_share).items():
            clean_s, clean_rows, _ = read(clean_path, args.repeats)
            messy_s, messy_rows, quarantine = read(messy_path, args.repeats)
            found = Counter(row.reason for _, row in quarantine.bad)
            print(
                f"{fmt:5}  {args.captions:,} captions + {sum(injected.values()):,} bad rows "
                f"({len(injected)} kinds): clean {clean_s:.2f} s ({args.captions / clean_s:,.0f} rows/s), "
                f"messy {messy_s:.2f} s ({len(messy_rows) / messy_s:,.0f} kept rows/s), "
                f"messy/clean {messy_s / clean_s:.3f}"
            )
            print(f"       quarantine == injected per reason: {found == injected}  ({dict(found)})")
            print(f"       kept rows == the clean input's rows: {messy_rows == clean_rows}")
            if found != injected or messy_rows != clean_rows:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
