"""The XM3600 caption file (`captions.jsonl` of the release's captions.zip): parsing, validation, tables.

One JSON object per line and image: `image/key` (the Open Images id, 16 lower-case hex digits, also the
image file's name `<key>.jpg` in images.tgz), `image/locale` (the language whose region the image was
chosen for, one of the 36 codes) and one entry per language code, an object of three parallel lists:
`caption` (the captions as written), `caption/tokenized` and `caption/tokenized/lowercase`.
Most images have 2 captions per language (Bengali 1, Maori about 1.3 on average).

The captions are text other people typed, read through the bad-row policy of every caption input
(babelforge.core.bad_rows, as the MT-captions input applies it; `read_captions`): a line that is not
UTF-8 or not a JSON object, or whose `image/key` is missing, not the release's id pattern or given
before, is set aside whole; a caption the caption checks refuse (empty, control characters, and the rule
for typed text, babelforge.core.typed_text: a line break, a bidi control, an invisible character, more
than CAPTION_CHARS) is set aside alone. Under `on_bad_row: fail` the first stops the build naming
file:line; more than `max_bad_fraction` stops it always. A line of another shape (captions that are not a
list of strings) is another format, not a bad row: it stops the build naming file:line. What validation
finds is counted, and the stage stops when a hard check fails.

Pure: bytes and text in, records and tables out; reading the files is the stage's (`xm3600_stage`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from babelforge.core.bad_rows import BadRow, Quarantine, raw_text, text_problem
from babelforge.core.errors import BabelforgeError
from babelforge.core.text_taggers import script_facts
from babelforge.core.typed_text import shown, value_problem
from babelforge.xm3600.release import IMAGE_KEY, IMAGE_SUFFIX

KEY = "image/key"
LOCALE = "image/locale"
CAPTION = "caption"
TOKENIZED = "caption/tokenized"
LOWERCASE = "caption/tokenized/lowercase"
# The 36 language codes of the release, as the file and the papers' tables write them.
LANGUAGES: tuple[str, ...] = (
    "ar", "bn", "cs", "da", "de", "el", "en", "es", "fa", "fi", "fil", "fr",
    "he", "hi", "hr", "hu", "id", "it", "ja", "ko", "mi", "nl", "no", "pl",
    "pt", "quz", "ro", "ru", "sv", "sw", "te", "th", "tr", "uk", "vi", "zh",
)  # fmt: skip
IMAGES = 3_600  # images in the release
# The longest caption kept: the release's run to a few hundred characters; a thousand is a paste, not a caption.
CAPTION_CHARS = 1_000
UTF8_BOM = b"\xef\xbb\xbf"
COLUMNS = ("image_id", "image_locale", "code", "lang", "caption_index", "caption", "caption_tokenized")


@dataclass(frozen=True)
class ImageCaptions:
    """One line of captions.jsonl: an image, its locale, and its captions per language code."""

    key: str
    locale: str
    captions: Mapping[str, tuple[str, ...]]  # code -> captions as written
    tokenized: Mapping[str, tuple[str, ...]]  # code -> the same captions tokenized (parallel)
    line: int


def _strings(value, what: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise BabelforgeError(f"{where}: {what} is not a list of strings")
    return tuple(value)


def parse_line(text: str, line: int, where: str = "captions.jsonl") -> ImageCaptions:
    """One line of the caption file; one error naming file:line for a line of another shape."""
    at = f"{where}:{line}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise BabelforgeError(f"{at}: not JSON ({error.msg})") from None
    if not isinstance(data, dict):
        raise BabelforgeError(f"{at}: not a JSON object")
    return parse_record(data, line, where)


def parse_record(data: dict, line: int, where: str = "captions.jsonl") -> ImageCaptions:
    """One line's JSON object; one error naming file:line for an object of another shape."""
    at = f"{where}:{line}"
    key, locale = data.get(KEY), data.get(LOCALE)
    if not isinstance(key, str) or not key:
        raise BabelforgeError(f"{at}: no {KEY}")
    if not isinstance(locale, str) or not locale:
        raise BabelforgeError(f"{at}: image {key}: no {LOCALE}")
    captions, tokenized = {}, {}
    for code, entry in data.items():
        if code in (KEY, LOCALE):
            continue
        if not isinstance(entry, dict) or CAPTION not in entry:
            raise BabelforgeError(f"{at}: image {key}, language {code!r}: not an object with a {CAPTION!r} list")
        written = _strings(entry[CAPTION], f"image {key}, language {code!r}: {CAPTION!r}", at)
        tokens = _strings(entry.get(TOKENIZED, list(written)), f"image {key}, {code!r}: {TOKENIZED!r}", at)
        if len(tokens) != len(written):
            raise BabelforgeError(
                f"{at}: image {key}, language {code!r}: {len(written)} captions but {len(tokens)} tokenized"
            )
        if written:  # an empty list: no caption in that language, as if the entry were absent
            captions[code], tokenized[code] = written, tokens
    return ImageCaptions(key, locale, captions, tokenized, line)


def parse_lines(lines: Iterable[str], where: str = "captions.jsonl") -> list[ImageCaptions]:
    """Every non-blank line of the caption file, in file order, failing at the first of another shape."""
    return [parse_line(text, number, where) for number, text in enumerate(lines, start=1) if text.strip()]


def key_problem(value) -> str | None:
    """Why an `image/key` cannot name an image of the release (a bad-row reason), or None."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "missing_id"
    if not isinstance(value, str) or not IMAGE_KEY.fullmatch(value):
        return "bad_id"  # not 16 hex digits: " ", "../../x" or a bidi control would name no image file
    return None


def caption_problem(caption: str, tokenized: str) -> str | None:
    """Why a caption cannot be kept (a bad-row reason), or None: the checks of every caption input
    (`text_problem`), then the rule for typed text, on the caption and on its tokenized form."""
    for text in (caption, tokenized):
        reason = text_problem(text) or ("typed_text" if value_problem(text, CAPTION_CHARS) else None)
        if reason:
            return reason
    return None


def _bad_line_reason(raw: bytes) -> tuple[str | None, dict | None]:
    """(the bad-row reason of a whole line, or None, its JSON object when it has one)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid_utf8", None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return "bad_json", None
    if not isinstance(data, dict):
        return "not_an_object", None
    return key_problem(data.get(KEY)), data


def screen_captions(record: ImageCaptions, where: str, quarantine: Quarantine) -> ImageCaptions:
    """`record` without the captions `caption_problem` refuses, each put in `quarantine` (file:line of
    its image); a language whose every caption was refused keeps an empty entry (it was not missing)."""
    captions, tokenized = {}, {}
    for code, written in record.captions.items():
        kept = []
        for caption, tokens in zip(written, record.tokenized[code]):
            reason = caption_problem(caption, tokens)
            if reason:
                quarantine.add(BadRow(where, record.line, raw_text(caption), reason))
            else:
                quarantine.keep()
                kept.append((caption, tokens))
        captions[code] = tuple(caption for caption, _ in kept)
        tokenized[code] = tuple(tokens for _, tokens in kept)
    return ImageCaptions(record.key, record.locale, captions, tokenized, record.line)


def read_captions(lines: Iterable[bytes], where: str, quarantine: Quarantine) -> list[ImageCaptions]:
    """Every line of the caption file, as bytes, through the bad-row policy of `quarantine` (see the
    module's docstring); the images kept, in file order. One line when no image is left: the file is
    empty, or every line was set aside (then the policy's own line names the cause)."""
    records: list[ImageCaptions] = []
    seen: set[str] = set()
    for number, raw in enumerate(lines, start=1):
        raw = raw.removeprefix(UTF8_BOM) if number == 1 else raw
        if not raw.strip():
            continue
        reason, data = _bad_line_reason(raw)
        if reason is None and data[KEY] in seen:
            reason = "duplicate_id"
        if reason:
            quarantine.add(BadRow(where, number, raw_text(raw.rstrip(b"\r\n")), reason))
            continue
        seen.add(data[KEY])
        records.append(screen_captions(parse_record(data, number, where), where, quarantine))
    quarantine.check_fraction()
    if not records:
        raise BabelforgeError(
            f"{where}: no caption line (the file is empty); captions.zip is not the release's: rerun "
            "`babelforge xm3600_fetch`"
        )
    return records


@dataclass
class Validation:
    """What the checks found. `problems` are hard (the build stops); script mismatches are counted per
    language and stop it only above the allowed share (a Thai caption naming a Latin-lettered brand is real)."""

    images: int = 0
    captions: int = 0
    languages: list[str] = field(default_factory=list)
    captions_per_language: dict[str, int] = field(default_factory=dict)
    images_missing_language: dict[str, int] = field(default_factory=dict)  # code -> images without a caption
    empty_captions: int = 0
    duplicate_ids: list[str] = field(default_factory=list)
    unknown_languages: list[str] = field(default_factory=list)
    unknown_locales: list[str] = field(default_factory=list)
    script_mismatches: dict[str, int] = field(default_factory=dict)  # code -> captions in another script
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {name: value for name, value in vars(self).items()}


def validate(
    records: Sequence[ImageCaptions],
    expected_scripts: Mapping[str, tuple[str, ...]],
    languages: Sequence[str] = LANGUAGES,
    max_script_mismatch: float = 0.05,
) -> Validation:
    """Check the parsed file: ids unique; every image has captions written in every language of
    `languages` (a language whose captions were all set aside as bad rows counts as written) and none
    of another; no caption empty; each locale is one of them; each caption's
    dominant script is one its language is written in (`expected_scripts`: code -> ISO 15924
    scripts, from the language registry), at most `max_script_mismatch` of a language's captions not."""
    found = Validation(images=len(records), languages=list(languages))
    seen: Counter = Counter(record.key for record in records)
    found.duplicate_ids = sorted(key for key, count in seen.items() if count > 1)
    found.unknown_locales = sorted({record.locale for record in records} - set(languages))
    found.unknown_languages = sorted({code for record in records for code in record.captions} - set(languages))
    missing: Counter = Counter()
    per_language: Counter = Counter()
    mismatches: Counter = Counter()
    for record in records:
        for code in languages:
            texts = [text for text in record.captions.get(code, ()) if text.strip()]
            found.empty_captions += len(record.captions.get(code, ())) - len(texts)
            if code not in record.captions:  # none written (a language whose captions were all set aside is not)
                missing[code] += 1
            per_language[code] += len(texts)
            mismatches[code] += sum(script_facts(text, expected_scripts[code])[2] for text in texts)
    found.captions = sum(per_language.values())
    found.captions_per_language = {code: per_language[code] for code in languages}
    found.images_missing_language = {code: missing[code] for code in languages if missing[code]}
    found.script_mismatches = {code: mismatches[code] for code in languages if mismatches[code]}
    found.problems = _problems(found, max_script_mismatch)
    return found


def _problems(found: Validation, max_script_mismatch: float) -> list[str]:
    problems = []
    if found.duplicate_ids:
        problems.append(f"{len(found.duplicate_ids)} image ids appear twice (first: {found.duplicate_ids[0]})")
    if found.unknown_locales:
        problems.append(f"image locales that are no XM3600 language: {', '.join(map(shown, found.unknown_locales))}")
    if found.unknown_languages:
        languages = ", ".join(map(shown, found.unknown_languages))
        problems.append(f"captions in languages that are no XM3600 language: {languages}")
    for code, count in found.images_missing_language.items():
        problems.append(f"{count} images have no {code} caption")
    if found.empty_captions:
        problems.append(f"{found.empty_captions} captions are empty")
    for code, count in found.script_mismatches.items():
        total = found.captions_per_language.get(code) or 1
        if count / total > max_script_mismatch:
            problems.append(
                f"{count} of {total} {code} captions are mostly in a script the language is not written in "
                f"(more than {max_script_mismatch:.0%})"
            )
    return problems


def caption_rows(records: Sequence[ImageCaptions], resolve: Callable[[str], str]) -> list[dict]:
    """One row per caption (COLUMNS): `code` the release's language code, `lang` its registry key
    (`resolve`), `caption_index` its place among the image's captions in that language."""
    keys = {code: resolve(code) for code in sorted({c for record in records for c in record.captions})}
    rows = []
    for record in records:
        for code, captions in sorted(record.captions.items()):
            for index, (caption, tokens) in enumerate(zip(captions, record.tokenized[code])):
                rows.append(
                    {
                        "image_id": record.key,
                        "image_locale": record.locale,
                        "code": code,
                        "lang": keys[code],
                        "caption_index": index,
                        "caption": caption,
                        "caption_tokenized": tokens,
                    }
                )
    return rows


def caption_set(records: Sequence[ImageCaptions], languages: Sequence[str] = LANGUAGES) -> dict:
    """The captions as a caption set, the shape the caption tasks read (XTD / xFlickrCO-style JSON):
    {"images": [<key>.jpg ...], "captions": {code: [[caption, ...] per image]}}, images by key."""
    ordered = sorted(records, key=lambda record: record.key)
    return {
        "images": [record.key + IMAGE_SUFFIX for record in ordered],
        "captions": {
            code: [[text for text in record.captions.get(code, ()) if text.strip()] for record in ordered]
            for code in languages
        },
    }


def summary_line(found: Validation) -> str:
    """The validation in one line, for the stage's output."""
    mismatched = sum(found.script_mismatches.values())
    return (
        f"{found.images:,} images, {len(found.languages)} languages, {found.captions:,} captions; "
        f"{len(found.duplicate_ids)} duplicate ids, {sum(found.images_missing_language.values())} missing "
        f"(image, language) pairs, {found.empty_captions} empty captions, {mismatched} script mismatches"
    )
