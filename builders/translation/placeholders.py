"""Translating templates with a class slot `{}`: slot encodings, restoration, spacing.

A machine translator does not know that `{}` is a slot; it drops it, moves it, doubles
it or translates around it unpredictably. So each template is sent in several *encodings*
of the slot (strategies, tried in order), together in one batch; the first strategy whose
marker comes back exactly once is restored to `{}`. When none survives, the template is
translated without the slot and ` {}` is appended (the `appended` fallback, recorded as such).

Everything here is pure: `Translate` is any callable with `NllbTranslator.translate`'s shape.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from babelforge.core.errors import BabelforgeError
from babelforge.core.scripts import script_of

SLOT = "{}"


@dataclass(frozen=True)
class SlotStrategy:
    name: str
    slot: str  # what replaces `{}` in the English template sent to the translator
    pattern: str  # regex matching the marker (and what it encloses) in the output
    tokens: tuple[str, ...]  # literal marker pieces: each must occur exactly once

    def encode(self, template: str) -> str:
        return template.replace(SLOT, self.slot)

    def restore(self, translation: str) -> str | None:
        """The translation with the marker replaced by `{}`, or None if it did not survive
        exactly once, or if the translation already holds a `{}` (restoring would add a second)."""
        if SLOT in translation or any(translation.count(token) != 1 for token in self.tokens):
            return None
        restored, n = re.subn(self.pattern, SLOT, translation)
        return restored if n == 1 else None


# Ordered by how well they keep sentences natural: a neutral noun inside tags lets the
# translator inflect articles/case as for a real noun; the rare symbols are opaque tokens
# translators tend to copy through.
STRATEGIES: dict[str, SlotStrategy] = {
    s.name: s
    for s in (
        SlotStrategy("tag_noun", "<b>object</b>", r"<b>[^<>]*</b>", ("<b>", "</b>")),
        SlotStrategy("brace", "{c}", r"\{c\}", ("{c}",)),
        SlotStrategy("degree", "°", "°", ("°",)),
        SlotStrategy("section", "§", "§", ("§",)),
        SlotStrategy("reference", "※", "※", ("※",)),
    )
}
FALLBACK_STRATEGY = "appended"
MARKER_TOKENS = tuple(sorted({token for s in STRATEGIES.values() for token in s.tokens}))

# Scripts written without spaces between words: no space belongs next to the slot there.
NO_SPACE_SCRIPTS = frozenset({"Hani", "Hira", "Kana", "Thai", "Laoo", "Khmr", "Mymr", "Tibt", "Bopo", "Yiii"})
CJK_SCRIPTS = frozenset({"Hani", "Hira", "Kana"})
# Includes Arabic-script (، ؛ ؟ ۔), Indic danda (। ॥), Armenian (։) and Ethiopic (። ፣ ፤) marks.
CLOSING_PUNCTUATION = ".,;:!?)]»”’…、。，；：！？）」』،؛؟۔।॥։።፣፤"
OPENING_PUNCTUATION = "([¿¡«“‘「『"
# Languages (ISO 639-3) whose typography puts a space before some punctuation.
SPACE_BEFORE = {"fra": ":;!?»", "bre": ":;!?»"}
SPACE_AFTER = {"fra": "«", "bre": "«"}


def strategies(names: Sequence[str]) -> list[SlotStrategy]:
    unknown = [name for name in names if name not in STRATEGIES]
    if unknown:
        raise BabelforgeError(f"unknown slot strategies {unknown}; known: {', '.join(STRATEGIES)}")
    return [STRATEGIES[name] for name in names]


def bare_template(template: str) -> str:
    """The template without its slot (`a photo of a {}.` -> `a photo of a.`), the fallback's source."""
    return normalise_spacing(template.replace(SLOT, " "), "eng_Latn")


def append_slot(translation: str, lang: str) -> str:
    return normalise_spacing(translation.rstrip() + " " + SLOT, lang)


def normalise_spacing(text: str, lang: str) -> str:
    """NFC; whitespace runs -> one space; no space before closing / after opening punctuation
    (except where the language's typography wants one: French `:;!?»`); no space between the
    slot and a neighbour in a script written without spaces (Chinese, Japanese, Thai...).
    `lang` is a registry key (`fra_Latn`) or an ISO 639-3 code.
    """
    iso = lang.split("_")[0]
    text = unicodedata.normalize("NFC", text)
    text = re.sub(r"[ \t\r\n]+", " ", text).strip()
    keep_before = SPACE_BEFORE.get(iso, "")
    closing = "".join(c for c in CLOSING_PUNCTUATION if c not in keep_before)
    text = re.sub(r" +([" + re.escape(closing) + r"])", r"\1", text)
    opening = "".join(c for c in OPENING_PUNCTUATION if c not in SPACE_AFTER.get(iso, ""))
    text = re.sub(r"([" + re.escape(opening) + r"]) +", r"\1", text)

    def no_space_side(char: str) -> bool:
        return script_of(char) in NO_SPACE_SCRIPTS or char in "、。，；：！？「」『』（）"

    # " {}" after a no-space-script character, "{} " before one.
    text = re.sub(r"(.) (?=\{\})", lambda m: m.group(1) if no_space_side(m.group(1)) else m.group(0), text)
    text = re.sub(r"(?<=\{\}) (.)", lambda m: m.group(1) if no_space_side(m.group(1)) else m.group(0), text)
    # Chinese and Japanese put no space between words at all.
    text = re.sub(r"(?<=[^ ]) (?=[^ ])", lambda m: "" if _between_cjk(text, m.start()) else " ", text)
    return text


def _between_cjk(text: str, space_at: int) -> bool:
    return script_of(text[space_at - 1]) in CJK_SCRIPTS and script_of(text[space_at + 1]) in CJK_SCRIPTS


@dataclass(frozen=True)
class TranslatedTemplate:
    lang: str  # registry key
    template_id: int
    english: str  # the English template
    text: str  # translation with exactly the restored slot (or the appended one)
    strategy: str  # the accepted strategy, or FALLBACK_STRATEGY
    fallback: bool  # True when the slot was appended to a slot-less translation
    score: float  # translator score of the accepted hypothesis


class Scored(Protocol):
    """What a translator returns per hypothesis (`nllb.Hypothesis` or a test stub)."""

    text: str
    score: float


# (texts, src_lang, tgt_langs) -> per text, hypotheses best first: NllbTranslator.translate's shape.
Translate = Callable[[list[str], str, list[str]], Sequence[Sequence[Scored]]]


def strategy_inputs(templates: Sequence[str], order: Sequence[SlotStrategy]) -> list[str]:
    """All encodings of all templates, strategy-major, then the slot-less templates."""
    return [s.encode(t) for s in order for t in templates] + [bare_template(t) for t in templates]


def translate_templates(
    translate: Translate,
    templates: Sequence[str],
    lang: str,
    nllb_code: str,
    order: Sequence[SlotStrategy],
    source_lang: str = "eng_Latn",
) -> list[TranslatedTemplate]:
    """Translate every template into one language: ONE batched call for all strategies.

    Per template the first strategy (in `order`) whose marker survives exactly once in the
    best hypothesis is accepted and restored; otherwise the slot-less translation + ` {}`.
    """
    inputs = strategy_inputs(templates, order)
    outputs = translate(inputs, source_lang, [nllb_code] * len(inputs))
    n = len(templates)
    results = []
    for template_id, english in enumerate(templates):
        chosen = None
        for k, strategy in enumerate(order):
            best = outputs[k * n + template_id][0]
            restored = strategy.restore(best.text)
            if restored is not None:
                chosen = TranslatedTemplate(
                    lang,
                    template_id,
                    english,
                    normalise_spacing(restored, lang),
                    strategy.name,
                    False,
                    float(best.score),
                )
                break
        if chosen is None:
            best = outputs[len(order) * n + template_id][0]
            chosen = TranslatedTemplate(
                lang, template_id, english, append_slot(best.text, lang), FALLBACK_STRATEGY, True, float(best.score)
            )
        results.append(chosen)
    return results
