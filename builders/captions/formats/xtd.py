"""The XTD / xFlickrCO caption set: one JSON document, `{"images": [...], "captions": {code: [...]}}`."""

from __future__ import annotations

import json
from pathlib import Path

from babelforge.captions.formats.caption_set import CaptionSet
from babelforge.captions.formats.packed import UTF8_BOM, refuse_packed
from babelforge.core.bad_rows import (
    FAIL_FAST,
    Quarantine,
    has_undecodable,
    raw_text,
    screen_caption_lists,
    text_problem,
)
from babelforge.core.errors import BabelforgeError

# XTD and xFlickrCO name languages with their own two-letter codes, which are not all
# ISO 639-1 ("jp" is Japanese). Their Chinese is Simplified (e.g. 联, 队), so zh is
# zho_Hans, not the Traditional zho_Hant. Every key is checked against the registry.
XTD_LANGUAGE_KEYS = {
    "en": "eng_Latn",
    "de": "deu_Latn",
    "es": "spa_Latn",
    "fr": "fra_Latn",
    "id": "ind_Latn",
    "it": "ita_Latn",
    "ja": "jpn_Jpan",
    "jp": "jpn_Jpan",
    "ko": "kor_Hang",
    "pl": "pol_Latn",
    "ru": "rus_Cyrl",
    "tr": "tur_Latn",
    "zh": "zho_Hans",
}


def xtd_key(code: str, registry) -> str:
    """Registry key of an XTD/xFlickrCO language code; an error naming the code if unknown."""
    if code not in XTD_LANGUAGE_KEYS:
        raise BabelforgeError(
            f"XTD language code {code!r} has no registry key; add it to XTD_LANGUAGE_KEYS "
            "in builders/captions/formats/xtd.py"
        )
    return registry.get(XTD_LANGUAGE_KEYS[code]).key


def read_xtd(
    path: str | Path, source_lang: str, registry, quarantine: Quarantine | None = None, limit: int | None = None
) -> CaptionSet:
    """`{"images": [...], "captions": {code: [[caption], ...]}}`, captions aligned with images.

    caption_id is the image file name without extension (unique in both releases); an
    image with several captions in the source language gets `<stem>#<k>` ids. A source caption
    that cannot be translated (empty, control characters, only a URL) goes to `quarantine`
    (default: stop at it), numbered by its image's position. `limit`: read up to that many good
    captions (the rest is neither read nor counted).
    """
    quarantine = quarantine or Quarantine(FAIL_FAST, "captions")
    path = Path(path)
    images, by_code = read_caption_document(path, "captions.input.path")
    keys = {code: xtd_key(code, registry) for code in by_code}
    source_codes = [code for code, key in keys.items() if key == source_lang]
    if not source_codes:
        raise BabelforgeError(f"{path}: no captions in {source_lang} (the file has {', '.join(sorted(by_code))})")
    stems = [Path(name).stem for name in images]
    if len(set(stems)) != len(stems):
        raise BabelforgeError(f"{path}: image names are not unique, so they cannot be caption ids")
    source = screen_caption_lists(by_code[source_codes[0]], str(path), quarantine, limit)
    rows, id_of = [], {}
    for index, (image, stem, texts) in enumerate(zip(images, stems, source)):
        for k, text in enumerate(texts):
            if text is not None:  # None: a bad caption, quarantined (the others keep their #k)
                caption_id = stem if len(texts) == 1 else f"{stem}#{k}"
                rows.append({"caption_id": caption_id, "image": image, "caption": text})
        id_of[index] = stem if len(texts) == 1 and texts[0] is not None else None
    references = []
    for code, captions in by_code.items():
        if keys[code] == source_lang:
            continue
        for index, entry in enumerate(captions):
            texts = entry if isinstance(entry, list) else [entry]
            # A reference belongs to one source caption: only images with a single one. A reference
            # that is no usable text is no reference (it scores nothing, so it is not counted).
            if id_of.get(index) is not None and texts and text_problem(texts[0]) is None:
                references.append((id_of[index], keys[code], texts[0]))
    return CaptionSet(source_lang, rows, references)


def read_caption_document(path: Path, setting_name: str) -> tuple[list[str], dict[str, list]]:
    """(images, {language code: one caption or list of captions per image}) of a caption set in the
    XTD / xFlickrCO layout, `{"images": [...], "captions": {code: [...]}}`: one line naming the file
    when it is missing, not JSON (cut off?), not this layout, or a language's captions do not line up
    with the images. Bytes that are not UTF-8 are kept as surrogates, so the caption holding them,
    not the file, is bad (`screen_caption_lists`)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BabelforgeError(f"{path}: caption file not found; check {setting_name}") from None
    except IsADirectoryError:
        raise BabelforgeError(f"{path}: a folder, not a caption file; check {setting_name}") from None
    refuse_packed(path, raw[:16], "JSON")
    try:
        data = json.loads(raw.removeprefix(UTF8_BOM).decode("utf-8", errors="surrogateescape"))
    except json.JSONDecodeError as error:
        raise BabelforgeError(
            f"{path}:{error.lineno}:{error.colno}: not JSON ({error.msg}); a file cut off? fetch it again"
        ) from None
    images = data.get("images") if isinstance(data, dict) else None
    by_code = data.get("captions") if isinstance(data, dict) else None
    if not isinstance(images, list) or not isinstance(by_code, dict):
        raise BabelforgeError(f'{path}: not the XTD layout {{"images": [...], "captions": {{code: [...]}}}}')
    bad_names = [name for name in images if not isinstance(name, str) or not name or has_undecodable(name)]
    if bad_names:
        raise BabelforgeError(f"{path}: image {raw_text(bad_names[0])} is not a file name")
    for code, captions in by_code.items():
        if not isinstance(captions, list) or len(captions) != len(images):
            count = len(captions) if isinstance(captions, list) else "no list of"
            raise BabelforgeError(
                f"{path}: {count} {code} captions for {len(images)} images; a caption set has one entry "
                "(a caption or a list of them) per image, in the images' order"
            )
    return images, by_code
