"""The bad-row policy of every large input: skip and quarantine a bad row, or stop at the first.

A caption dump of millions of rows, or an image folder gathered from the web, is never clean:
one row with broken bytes must not end a job of hours, nor end it again at the same place after
a resume. So a reader hands each row it cannot use to a `Quarantine` with the reason, instead of
raising. Under `on_bad_row: skip` the row is kept aside (source file, line or row number, the raw
text cut to `RAW_CHARS`, the reason) and counted; under `fail` the first one stops the job with
one line naming file:line. Either way more than `max_bad_fraction` bad rows stops the job: then
the cause is systemic (the wrong column, encoding or file) and skipping would hide it.

Small curated sources (wordnets, SIB-200, the registry, reviews) do not use this: they fail on
the first bad row, as before.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from babelforge.core.config import setting
from babelforge.core.errors import BabelforgeError

RAW_CHARS = 300  # the raw text kept per quarantined row: enough to see the problem, never a whole dump

# Every reason a row can be quarantined for, with the words a message and the docs use.
REASONS: dict[str, str] = {
    "invalid_utf8": "bytes that are not UTF-8",
    "bad_json": "not a JSON value",
    "not_an_object": "a JSON value that is not an object",
    "ragged_row": "a different number of fields than the header",
    "malformed_quote": "a quote that is never closed, swallowing the lines after it (they are read again)",
    "field_too_long": "a field longer than a CSV reader takes (131,072 characters)",
    "unexpected_column": "a column the first row does not have (a table's columns are its first row's)",
    "mixed_types": "a value of another type than the column's first (text where a number was)",
    "missing_id": "no id",
    "bad_id": "an id that is not a string or an integer",
    "duplicate_id": "an id that an earlier row has (the first row is kept)",
    "missing_caption": "no caption text",
    "missing_image": "no image file name or URL",
    "bad_image": "an image that is not a file name or URL (a number, a list)",
    "empty_caption": "an empty or whitespace-only caption",
    "control_characters": "NUL or other control characters in the text",
    "typed_text": "a line break, tab, bidirectional control or invisible character, or more characters than the "
    "field takes (the rule for typed text, babelforge.core.typed_text)",
    "url_only": "a caption that is only a URL",
    "markup_only": "a caption that is only markup",
    "missing_file": "a file that does not exist",
    "bad_file_name": "a file name that is not UTF-8",
    "symlink_loop": "a symbolic link that points to itself (a loop)",
    "empty_file": "a file of zero bytes",
    "not_an_image": "a file that is not an image",
    "truncated_image": "an image file cut off before its end",
    "image_too_large": "an image over PIL's decompression-bomb limit",
}

# The systemic cause a reason points to when it is most of the bad rows: what the stop says to check.
CAUSES: dict[str, str] = {
    "invalid_utf8": "the file looks like Latin-1/cp1252 (or another encoding), not UTF-8; convert it, "
    "e.g. `iconv -f cp1252 -t utf-8 FILE > FILE.utf8`",
    "bad_json": "the file is not JSON Lines (one JSON object per line)",
    "not_an_object": "the file is not JSON Lines of objects (one {...} per line)",
    "ragged_row": "the delimiter is not the file's (.csv is comma-separated, .tsv tab-separated)",
    "malformed_quote": "the file's quotes are not CSV quoting (a quote inside a field is written twice)",
    "missing_id": "the id column is empty or has another name",
    "missing_caption": "the caption column is empty or has another name",
    "missing_image": "the image column is empty or has another name",
    "duplicate_id": "the id column is not the rows' id",
    "missing_file": "the image folder or list is not this set's",
}
# The headline of an input with no usable row at all, per reason (default: "every row has <words>").
NO_ROW = {"invalid_utf8": "no row is UTF-8"}

# Rows left out by a rule of the input's format, not because they are broken: counted, not quarantined,
# and not bad (img2dataset records a failed download as a row; a third of them is common).
EXCLUSIONS: dict[str, str] = {"not_downloaded": "an img2dataset row whose image was not downloaded (status)"}

# C0 and C1 controls except tab, newline and carriage return (line breaks inside a quoted field
# are text); U+FFFE/U+FFFF are not characters.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_URL = re.compile(r"\s*(?:(?:https?|ftp)://|www\.)\S+\s*", re.IGNORECASE)
_TAG = re.compile(r"<[^<>]*>")


@dataclass(frozen=True)
class BadRowPolicy:
    """What a reader does with a row it cannot use (the `on_bad_row` / `max_bad_fraction` settings)."""

    on_bad_row: Literal["skip", "fail"] = setting(
        "skip", "skip: quarantine a bad row and go on; fail: stop at the first one with file:line"
    )
    max_bad_fraction: float = setting(
        0.01,
        "stop when more than this share of the rows is bad (a systemic cause: wrong column, encoding)",
        minimum=0,
        maximum=1,
    )

    def __post_init__(self):
        if self.on_bad_row not in ("skip", "fail"):
            raise BabelforgeError(f"on_bad_row is {self.on_bad_row!r}; one of skip, fail")
        if not 0.0 <= self.max_bad_fraction <= 1.0:
            raise BabelforgeError(f"max_bad_fraction is {self.max_bad_fraction}; it must be between 0 and 1")


FAIL_FAST = BadRowPolicy("fail", 0.0)


@dataclass(frozen=True)
class BadRow:
    """One row kept aside: where it was, what it held (cut), why."""

    source: str
    line: int  # 1-based line of a text file, or row number of a table
    raw: str
    reason: str

    def message(self) -> str:
        return f"{self.source}:{self.line}: {REASONS.get(self.reason, self.reason)} ({self.reason}): {self.raw[:80]!r}"


def raw_text(value: Any) -> str:
    """A row's raw content as text of at most RAW_CHARS characters (undecodable bytes as \\xNN)."""
    if isinstance(value, bytes):
        text = value.decode("utf-8", errors="backslashreplace")
    elif isinstance(value, str):
        try:  # the bytes a surrogateescape read stood for, shown as \xNN
            text = value.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="backslashreplace")
        except UnicodeEncodeError:  # a lone surrogate from JSON: shown as \udNNN
            text = value.encode("utf-8", errors="backslashreplace").decode("utf-8")
    else:
        text = repr(value)
    return text[:RAW_CHARS]


def has_undecodable(text: str) -> bool:
    """True when `text` cannot be written as UTF-8: bytes that were not UTF-8 (read with
    errors="surrogateescape") or a lone surrogate (JSON's "\\ud800")."""
    return _SURROGATE.search(text) is not None


def text_problem(text: Any) -> str | None:
    """Why a caption cannot be translated as it stands, or None: the reasons of REASONS for text."""
    if not isinstance(text, str):
        return "missing_caption"
    if has_undecodable(text):
        return "invalid_utf8"
    if not text.strip():
        return "empty_caption"
    if _CONTROL.search(text):
        return "control_characters"
    if _URL.fullmatch(text):
        return "url_only"
    if not _TAG.sub("", text).strip():
        return "markup_only"
    return None


def id_problem(value: Any) -> str | None:
    """Why a row id cannot name a row, or None. Integers are ids (CC3M-style row numbers); a float,
    a bool, a list or an object is not (a float id loses digits, and 1 and 1.0 would clash)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "missing_id"
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return "bad_id"
    if isinstance(value, str) and (has_undecodable(value) or _CONTROL.search(value)):
        return "bad_id"
    return None


def image_problem(value: Any) -> str | None:
    """Why a row's image (a file name or URL) cannot name an image, or None."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "missing_image"
    if not isinstance(value, str) or _CONTROL.search(value):
        return "bad_image"
    if has_undecodable(value):
        return "invalid_utf8"
    return None


@dataclass
class Quarantine:
    """The bad rows of one input under one policy, and how many rows the input had."""

    policy: BadRowPolicy
    what: str  # what the rows are, for the messages: "captions", "images"
    rows: int = 0  # rows read, good and bad
    bad: list[tuple[int, BadRow]] = field(default_factory=list)  # (rows kept before it, the row)
    kept: int = 0
    excluded: Counter = field(default_factory=Counter)
    hint: str = "check the input's columns and encoding"  # what the max_bad_fraction error says to check
    # From this many rows on, the share of bad rows is checked as they come: a file in the wrong
    # encoding stops within its first shard, not after every row was read. The early stop wants
    # twice the allowed share, so bad rows that merely cluster near the start do not stop a job
    # the end-of-input check (at exactly max_bad_fraction) would pass.
    min_sample: int = 1000

    def keep(self) -> None:
        self.rows += 1
        self.kept += 1

    def exclude(self, reason: str) -> None:
        """A row left out by a rule of the format (EXCLUSIONS): counted, not bad."""
        if reason not in EXCLUSIONS:
            raise ValueError(f"unknown exclusion {reason!r}")
        self.rows += 1
        self.excluded[reason] += 1

    def add(self, row: BadRow) -> None:
        """Set a bad row aside (skip), or stop with its one line (fail)."""
        if row.reason not in REASONS:
            raise ValueError(f"unknown bad-row reason {row.reason!r}")
        self.rows += 1
        if self.policy.on_bad_row == "fail":
            raise BabelforgeError(f"{row.message()}; on_bad_row is fail (skip quarantines such rows)")
        self.bad.append((self.kept, row))
        if self.rows >= self.min_sample and len(self.bad) > 2 * self.policy.max_bad_fraction * self.rows:
            self.check_fraction(early=True)

    def counts(self) -> dict[str, int]:
        """Bad rows per reason, in REASONS order (only reasons that occurred)."""
        found = Counter(row.reason for _, row in self.bad)
        return {reason: found[reason] for reason in REASONS if found[reason]}

    def check_fraction(self, early: bool = False) -> None:
        """Stop when the bad rows are more than the policy allows: the cause is then systemic, and
        the message names the cause the most common reason points to (CAUSES)."""
        if len(self.bad) <= self.policy.max_bad_fraction * self.rows:
            return
        counts = self.counts()
        reasons = ", ".join(f"{reason} {n}" for reason, n in counts.items())
        dominant = max(counts, key=counts.get)
        cause = CAUSES.get(dominant, self.hint) if counts[dominant] * 2 > len(self.bad) else self.hint
        first = self.bad[0][1].message()
        read = f"the first {self.rows} {self.what} read" if early else f"{self.rows} {self.what}"
        if self.kept == 0 and counts[dominant] == len(self.bad):
            headline = NO_ROW.get(dominant, f"every row has {REASONS[dominant]}")
            raise BabelforgeError(f"{headline} ({read}, {dominant} {counts[dominant]}): {cause} (first: {first})")
        raise BabelforgeError(
            f"{len(self.bad)} of {read} are bad ({reasons}), more than max_bad_fraction "
            f"{self.policy.max_bad_fraction}: {cause} (first: {first})"
        )

    def summary(self) -> dict[str, Any]:
        """What the stage log, the metrics, the audit and the card report of this input."""
        return {
            "rows": self.rows,
            "kept": self.kept,
            "quarantined": len(self.bad),
            "reasons": self.counts(),
            "excluded": dict(sorted(self.excluded.items())),
        }

    def by_shard(self, shard_size: int, shards: int) -> list[list[BadRow]]:
        """The bad rows per output shard: a bad row goes with the shard of the next kept row (the
        last shard for those after every kept row), so shard i's quarantine sits beside shard i."""
        grouped: list[list[BadRow]] = [[] for _ in range(shards)]
        for kept_before, row in self.bad:
            grouped[min(kept_before // shard_size, shards - 1)].append(row)
        return grouped


def screen_caption_lists(
    entries: Iterable[Any], source: str, quarantine: Quarantine, limit: int | None = None
) -> list[list[str | None]]:
    """Each image's captions of a caption set in the XTD / xFlickrCO layout (an image's entry is a
    caption or a list of them), a caption `text_problem` refuses (null, a number, empty, a NUL,
    bytes that were not UTF-8) replaced by None (so the others keep their place) and put in
    `quarantine` as row `source:<1-based image>`. The captions input and the eval caption sets both
    read a caption set so, which is why they count the same bad rows alike. With `limit`, reading
    stops once that many captions were kept: the images after it are left out, and the captions
    after it of its image are None but neither read nor counted."""
    screened: list[list[str | None]] = []
    kept = 0
    for index, entry in enumerate(entries):
        if limit is not None and kept >= limit:
            break
        texts: list[str | None] = []
        for text in entry if isinstance(entry, list) else [entry]:
            if limit is not None and kept >= limit:
                texts.append(None)
                continue
            problem = text_problem(text)
            if problem:
                quarantine.add(BadRow(source, index + 1, raw_text(text), problem))
                texts.append(None)
            else:
                quarantine.keep()
                kept += 1
                texts.append(text)
        screened.append(texts)
    return screened


QUARANTINE_COLUMNS = ("source", "line", "reason", "raw")


def quarantine_table(rows: Iterable[BadRow]):
    """Bad rows as the pyarrow table of a quarantine file (fixed types, also when empty)."""
    import pyarrow as pa

    rows = list(rows)
    schema = pa.schema([("source", pa.string()), ("line", pa.int64()), ("reason", pa.string()), ("raw", pa.string())])
    return pa.Table.from_pylist(
        [{"source": r.source, "line": r.line, "reason": r.reason, "raw": r.raw} for r in rows], schema=schema
    )


def summary_line(what: str, summary: Mapping[str, Any]) -> str:
    """One log line: how many rows were read, kept and quarantined, per reason."""
    reasons = ", ".join(f"{reason} {n}" for reason, n in summary["reasons"].items()) or "none"
    line = f"{summary['rows']} {what} read, {summary['kept']} kept, {summary['quarantined']} quarantined ({reasons})"
    excluded = ", ".join(f"{reason} {n}" for reason, n in summary.get("excluded", {}).items())
    return f"{line}, left out: {excluded}" if excluded else line
