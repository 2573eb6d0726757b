"""SIB-200 reader and validator.

Layout: `<sib_dir>/<code>/{train,dev,test}.tsv`, header `index_id, category, text`.
The files were written by pandas with its default CSV quoting: a text that contains a
double quote is wrapped in quotes with the inner quotes doubled. The csv module with its
default dialect (tab-delimited) reads exactly that; leading spaces are text and are kept.

Every language must carry the same sentences: the same index ids, in the same order,
with the same categories, 701/99/204 per split and 7 topics. Anything else stops the
read with an error naming the file and the line.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.errors import BabelforgeError

SPLITS: tuple[str, ...] = ("train", "dev", "test")
SPLIT_SIZES: dict[str, int] = {"train": 701, "dev": 99, "test": 204}
TOPICS: tuple[str, ...] = (
    "entertainment",
    "geography",
    "health",
    "politics",
    "science/technology",
    "sports",
    "travel",
)
HEADER = ["index_id", "category", "text"]
CODE_PATTERN = re.compile(r"^[a-z]{3}_[A-Z][a-z]{3}$")


@dataclass(frozen=True)
class SibCorpus:
    """The parallel SIB-200 sentences, in file order (train, then dev, then test).

    `ids`, `splits` and `topics` are shared by every language; `texts[lang][i]` is the
    text of sentence `ids[i]` in `lang`.
    """

    ids: tuple[int, ...]
    splits: tuple[str, ...]
    topics: tuple[str, ...]
    texts: dict[str, tuple[str, ...]]

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self.texts)

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class _SplitFile:
    ids: list[int]
    topics: list[str]
    texts: list[str]
    lines: list[int]  # physical line of each row (quoted texts may span lines)


def read_split(path: str | Path) -> _SplitFile:
    """Read one SIB-200 TSV; an error names the file and line of any malformed row."""
    path = Path(path)
    ids: list[int] = []
    topics: list[str] = []
    texts: list[str] = []
    lines: list[int] = []
    try:
        handle = path.open(encoding="utf-8", newline="")
    except OSError as error:
        raise BabelforgeError(f"{path}: cannot open ({error.strerror}); check mvl_sib.sib_dir") from None
    with handle:
        reader = csv.reader(handle, delimiter="\t", strict=True)
        try:
            header = next(reader, None)
            if header != HEADER:
                raise BabelforgeError(f"{path}:1: header is {header!r}, expected {HEADER!r} (not a SIB-200 file?)")
            for row in reader:
                line = reader.line_num
                if len(row) != 3:
                    raise BabelforgeError(
                        f"{path}:{line}: {len(row)} fields, expected 3 (index_id, category, text); "
                        "is the text quoted the way pandas writes it?"
                    )
                raw_id, topic, text = row
                try:
                    ids.append(int(raw_id))
                except ValueError:
                    raise BabelforgeError(f"{path}:{line}: index_id {raw_id!r} is not an integer") from None
                topics.append(topic)
                texts.append(text)
                lines.append(line)
        except csv.Error as error:
            raise BabelforgeError(f"{path}:{reader.line_num}: malformed TSV row ({error})") from None
        except UnicodeDecodeError as error:
            raise BabelforgeError(f"{path}: not UTF-8 ({error.reason} at byte {error.start})") from None
    return _SplitFile(ids, topics, texts, lines)


def list_languages(sib_dir: str | Path) -> list[str]:
    """The language folders under `sib_dir`, sorted; an error when there are none."""
    sib_dir = Path(sib_dir)
    if not sib_dir.is_dir():
        raise BabelforgeError(f"{sib_dir}: no such SIB-200 directory; set mvl_sib.sib_dir in params.yaml")
    codes = sorted(entry.name for entry in sib_dir.iterdir() if entry.is_dir())
    if not codes:
        raise BabelforgeError(f"{sib_dir}: no language folders (expected <code>/train.tsv ...)")
    return codes


def _check_reference(split: str, path: Path, data: _SplitFile) -> None:
    """The first language read fixes ids/order/categories; check it against SIB-200's shape."""
    if len(data.ids) != SPLIT_SIZES[split]:
        raise BabelforgeError(f"{path}: {len(data.ids)} sentences, SIB-200 {split} has {SPLIT_SIZES[split]}")
    seen: set[int] = set()
    for index_id, topic, line in zip(data.ids, data.topics, data.lines):
        if topic not in TOPICS:
            raise BabelforgeError(
                f"{path}:{line}: category {topic!r} (index_id {index_id}) is not one of the 7 SIB-200 topics"
            )
        if index_id in seen:
            raise BabelforgeError(f"{path}:{line}: index_id {index_id} appears twice")
        seen.add(index_id)


def _check_parallel(path: Path, data: _SplitFile, ids: Sequence[int], topics: Sequence[str], reference: Path) -> None:
    if len(data.ids) != len(ids):
        raise BabelforgeError(
            f"{path}: {len(data.ids)} sentences, {reference} has {len(ids)}; every language must be parallel"
        )
    if data.ids != list(ids) or data.topics != list(topics):
        for index_id, topic, line, ref_id, ref_topic in zip(data.ids, data.topics, data.lines, ids, topics):
            if index_id != ref_id:
                raise BabelforgeError(
                    f"{path}:{line}: index_id {index_id}, but {reference} has {ref_id} in this row "
                    "(same ids in the same order expected in every language)"
                )
            if topic != ref_topic:
                raise BabelforgeError(
                    f"{path}:{line}: index_id {index_id} has category {topic!r}, {reference} has {ref_topic!r}"
                )


def read_corpus(sib_dir: str | Path, languages: Iterable[str] | None = None) -> SibCorpus:
    """Read and validate SIB-200 for `languages` (default: every folder under `sib_dir`)."""
    sib_dir = Path(sib_dir)
    codes = list(languages) if languages is not None else list_languages(sib_dir)
    if not codes:
        raise BabelforgeError("no SIB-200 languages selected (mvl_sib.languages is empty)")
    if len(set(codes)) != len(codes):
        raise BabelforgeError(f"mvl_sib.languages lists a language twice: {sorted(codes)}")
    for code in codes:
        if not CODE_PATTERN.match(code):
            raise BabelforgeError(f"{sib_dir / code}: {code!r} is not a SIB-200 code of the form xxx_Scrp")
        if sib_dir.is_dir() and not (sib_dir / code).is_dir():
            raise BabelforgeError(
                f"{code!r} is not a language of {sib_dir} (no folder {sib_dir / code}); check mvl_sib.languages"
            )

    reference: dict[str, tuple[Path, list[int], list[str]]] = {}
    texts: dict[str, list[str]] = {code: [] for code in codes}
    for code in codes:
        for split in SPLITS:
            path = sib_dir / code / f"{split}.tsv"
            data = read_split(path)
            if split not in reference:
                _check_reference(split, path, data)
                reference[split] = (path, data.ids, data.topics)
            else:
                ref_path, ref_ids, ref_topics = reference[split]
                _check_parallel(path, data, ref_ids, ref_topics, ref_path)
            texts[code].extend(data.texts)

    ids = tuple(i for split in SPLITS for i in reference[split][1])
    topics = tuple(t for split in SPLITS for t in reference[split][2])
    splits = tuple(split for split in SPLITS for _ in reference[split][1])
    if len(set(ids)) != len(ids):
        duplicated = sorted({i for i in ids if ids.count(i) > 1})[:5]
        raise BabelforgeError(f"{sib_dir / codes[0]}: index_id(s) {duplicated} appear in more than one split")
    missing = sorted(set(TOPICS) - set(topics))
    if missing:
        raise BabelforgeError(f"{sib_dir / codes[0]}: topic(s) {missing} have no sentence; SIB-200 has 7 topics")
    return SibCorpus(ids=ids, splits=splits, topics=topics, texts={c: tuple(t) for c, t in texts.items()})
