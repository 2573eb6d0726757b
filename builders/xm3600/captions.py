"""The XM3600 caption file (`captions.jsonl` of the release's captions.zip): parsing, validation, tables.

One JSON object per line and image: `image/key` (the Open Images id, also the image file's name
`<key>.jpg` in images.tgz), `image/locale` (the language whose region the image was chosen for, one of
the 36 codes) and one entry per language code, an object of three parallel lists:
`caption` (the captions as written), `caption/tokenized` and `caption/tokenized/lowercase`.
Most images have 2 captions per language (Bengali 1, Maori about 1.3 on average).

Pure: text in, records and tables out; reading the files is the stage's (`xm3600_stage`). The
source is small and curated, so a line that does not parse stops the build naming file:line
(babelforge.core.bad_rows is for large web dumps); what validation finds is counted, and the
stage stops when a hard check fails.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from babelforge.core.errors import BabelforgeError
from babelforge.core.text_taggers import script_facts

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
IMAGE_SUFFIX = ".jpg"  # images.tgz holds <image/key>.jpg
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
        captions[code] = _strings(entry[CAPTION], f"image {key}, language {code!r}: {CAPTION!r}", at)
        tokens = _strings(entry.get(TOKENIZED, list(captions[code])), f"image {key}, {code!r}: {TOKENIZED!r}", at)
        if len(tokens) != len(captions[code]):
            raise BabelforgeError(
                f"{at}: image {key}, language {code!r}: {len(captions[code])} captions but {len(tokens)} tokenized"
            )
        tokenized[code] = tokens
    return ImageCaptions(key, locale, captions, tokenized, line)


def parse_lines(lines: Iterable[str], where: str = "captions.jsonl") -> list[ImageCaptions]:
    """Every non-blank line of the caption file, in file order."""
    return [parse_line(text, number, where) for number, text in enumerate(lines, start=1) if text.strip()]


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
    """Check the parsed file: ids unique; every image has at least one non-empty caption in every
    language of `languages` and none of another; each locale is one of them; each caption's
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
            if not texts:
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
        problems.append(f"image locales that are no XM3600 language: {', '.join(found.unknown_locales)}")
    if found.unknown_languages:
        problems.append(f"captions in languages that are no XM3600 language: {', '.join(found.unknown_languages)}")
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
