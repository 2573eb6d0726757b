"""Babel-ImageNet prompts: per-language assembly and validation (tag, then filter).

Per label language:

* `translated`: the 80 CLIP templates translated with NLLB (`placeholders.translate_templates`),
  each prompt tagged by the taggers below; the valid ones are used.
* `no_nllb_code`: the registry has no NLLB code for the language (NLLB cannot translate it).
* `below_min_valid`: fewer than `min_valid` translated prompts pass the checks.

The last two get the two fallback prompt sets the Babel-ImageNet paper compares, so eval
can pick the better: `label_only` (the single prompt `{}`) and `english` (the 80 English
templates). The English source language itself gets its templates as-is (`source`).

Each translated prompt is tagged (`PROMPT_COLUMNS`: the number of `{}` slots and any leftover
strategy marker, the share of letters in the registry's expected scripts (Traditional-only Han
characters do not count for `zho_Hans` and vice versa), langid's top language and its rank of
the language where langid knows it, repeats within the language, the length ratio to the
English template), then checked by thresholds as data (`prompts.checks` in params.yaml), the
one threshold step of `babelforge.core.taggers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from babelforge.core.errors import BabelforgeError
from babelforge.core.langid import identifier
from babelforge.core.languages import Language
from babelforge.core.taggers import Rows, Rule, Thresholds, rejection_reasons, run_tagger, tagger
from babelforge.core.text_taggers import LangidRanking, TextContext
from babelforge.translation.placeholders import MARKER_TOKENS, SLOT, TranslatedTemplate

SOURCE_LANG = "eng_Latn"

# The checks of every prompt (params.yaml `prompts.checks.default`): check -> {prompts.parquet
# column: condition}. A prompt without letters, or one langid ranks nowhere, fails (`missing: fail`).
DEFAULT_CHECKS: dict[str, Any] = {
    "slot_count": {"n_slots": {"equals": 1}},
    "leftover_marker": {"leftover_marker": {"equals": False}},
    "script": {"script_share": {"min": 0.9, "missing": "fail"}},
    "langid": {"langid_rank": {"max": 3, "missing": "fail"}},
    "duplicate": {"is_duplicate": {"equals": False}},
    "length_ratio": {"length_ratio": {"min": 0.2, "max": 4.0, "missing": "fail"}},
}

# The taggers of a translated prompt, and the prompts.parquet column each of their columns fills.
PROMPT_TAGGERS = ("slots_v1", "script_v1", "langid_rank_v1", "duplicate_v1", "length_ratio_v1")
PROMPT_COLUMNS: dict[str, tuple[str, str]] = {
    "n_slots": ("slots_v1", "count"),
    "leftover_marker": ("slots_v1", "leftover_marker"),
    "script_share": ("script_v1", "share"),
    "langid_top": ("langid_rank_v1", "top"),
    "langid_rank": ("langid_rank_v1", "rank"),
    "length_ratio": ("length_ratio_v1", "ratio"),
    "is_duplicate": ("duplicate_v1", "is_repeat"),  # a repeat of an earlier prompt: the first is kept
}
LANGID_COLUMNS = frozenset({"langid_top", "langid_rank"})


def _letters(text: str) -> str:
    return text.replace(SLOT, "").strip()


@tagger("slots_v1", columns={"count": int, "leftover_marker": bool}, reads=("text",))
def tag_slots(rows: Rows, context: Any) -> dict[str, list]:
    """Number of `{}` slots in a prompt; a slot-strategy marker left in its text."""
    return {
        "count": [str(row["text"]).count(SLOT) for row in rows],
        "leftover_marker": [
            any(token in str(row["text"]).replace(SLOT, "") for token in MARKER_TOKENS) for row in rows
        ],
    }


@tagger("length_ratio_v1", columns={"ratio": float}, reads=("text", "english"))
def tag_length_ratio(rows: Rows, context: Any) -> dict[str, list]:
    """Length of a prompt over that of its English template, slots and edge spaces removed."""
    return {"ratio": [len(_letters(str(row["text"]))) / max(len(_letters(str(row["english"]))), 1) for row in rows]}


def langid_ranker() -> LangidRanking:
    """langid.py's full ranking [(code, probability), ...] (loaded lazily: it takes a second)."""

    return identifier().rank


def read_templates(path) -> list[str]:
    """The English CLIP prompt templates, one per line, each with exactly one `{}` slot."""

    lines = [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    bad = [number for number, line in enumerate(lines, 1) if line.count(SLOT) != 1]
    if not lines or bad:
        raise BabelforgeError(f"{path}: every template needs exactly one {SLOT} (lines {bad or 'none at all'})")
    return lines


@dataclass
class PromptRow:
    lang: str
    prompt_set: str
    template_id: int
    text: str
    english: str
    strategy: str
    fallback: bool
    score: float | None
    n_slots: int = 1
    leftover_marker: bool = False
    script_share: float | None = None
    langid_top: str | None = None
    langid_rank: int | None = None
    length_ratio: float | None = None
    is_duplicate: bool = False
    valid: bool = True
    status: str = ""
    use: bool = False
    failed: list[str] = field(default_factory=list)


def tag_prompts(rows: Sequence[PromptRow], language: Language, rank: LangidRanking | None) -> None:
    """Fill the attribute columns of one language's translated prompts (no thresholds applied)."""
    context = TextContext(
        expected_scripts={language.key: language.expected_scripts},
        langid_codes={language.key: language.langid},
        langid_rank=rank,
    )
    prompts = [{"id": row.template_id, "lang": row.lang, "text": row.text, "english": row.english} for row in rows]
    bodies = [{"id": row.template_id, "lang": row.lang, "text": _letters(row.text)} for row in rows]
    columns: dict[tuple[str, str], list] = {}
    for name in PROMPT_TAGGERS:
        batch = bodies if name == "langid_rank_v1" else prompts  # langid judges the words around the slot
        for column, values in run_tagger(name, batch, context).items():
            columns[(name, column)] = values
    for attribute, key in PROMPT_COLUMNS.items():
        for row, value in zip(rows, columns[key]):
            setattr(row, attribute, value)


def prompt_rules(checks: Thresholds, language: Language) -> tuple[Rule, ...]:
    """The checks of one language; those on langid's columns are off where langid does not know it."""
    rules = checks.for_language(language.key, "prompts.checks")
    if language.langid:
        return rules
    return tuple(rule for rule in rules if not rule.columns & LANGID_COLUMNS)


def check_prompt(row: PromptRow, rules: Sequence[Rule]) -> list[str]:
    """Names of the checks a tagged prompt fails (empty = valid)."""
    return rejection_reasons(vars(row), rules)


def fallback_rows(lang: str, templates: Sequence[str], status: str) -> list[PromptRow]:
    """The two prompt sets for languages without usable translations: `{}` alone, English templates."""
    rows = [PromptRow(lang, "label_only", 0, SLOT, SLOT, "label_only", False, None, status=status, use=True)]
    rows += [
        PromptRow(lang, "english", i, t, t, "english", False, None, status=status, use=True)
        for i, t in enumerate(templates)
    ]
    return rows


@dataclass(frozen=True)
class LanguageSummary:
    lang: str
    status: str
    nllb_code: str | None
    n_templates: int
    n_valid: int
    n_fallback: int
    n_duplicates: int
    strategies: dict[str, int]
    failures: dict[str, int]

    def line(self) -> str:
        used = ", ".join(f"{k} {v}" for k, v in sorted(self.strategies.items()))
        fails = ", ".join(f"{k} {v}" for k, v in sorted(self.failures.items())) or "none"
        return (
            f"{self.lang:<16} {self.status:<16} valid {self.n_valid:>2}/{self.n_templates} "
            f"appended {self.n_fallback:>2} duplicates {self.n_duplicates:>2} | {used} | failed: {fails}"
        )


def is_source(language: Language) -> bool:
    """English itself, or a variety NLLB writes as English (e.g. Simple English): no translation."""
    return language.key == SOURCE_LANG or language.nllb == SOURCE_LANG


def assemble_language(
    language: Language,
    templates: Sequence[str],
    translated: Sequence[TranslatedTemplate] | None,
    checks: Thresholds,
    min_valid: int,
    rank: LangidRanking | None,
) -> tuple[list[PromptRow], LanguageSummary]:
    """All prompt rows of one language and its summary. `translated` is None when the
    language was not sent to the translator (source language, or no NLLB code); a language
    needs `min_valid` prompts that pass `checks` to use its translations."""
    lang = language.key
    if is_source(language):
        rows = [
            PromptRow(lang, "english", i, t, t, "source", False, None, status="source", use=True)
            for i, t in enumerate(templates)
        ]
        return rows, LanguageSummary(
            lang, "source", language.nllb, len(templates), len(templates), 0, 0, {"source": len(templates)}, {}
        )
    if not language.nllb or translated is None:
        return (
            fallback_rows(lang, templates, "no_nllb_code"),
            LanguageSummary(lang, "no_nllb_code", None, len(templates), 0, 0, 0, {}, {}),
        )

    rows = [
        PromptRow(lang, "nllb", t.template_id, t.text, t.english, t.strategy, t.fallback, t.score) for t in translated
    ]
    tag_prompts(rows, language, rank)
    n_duplicates = sum(row.is_duplicate for row in rows)
    rules = prompt_rules(checks, language)
    failures: dict[str, int] = {}
    for row in rows:
        row.failed = check_prompt(row, rules)
        row.valid = not row.failed
        for name in row.failed:
            failures[name] = failures.get(name, 0) + 1
    n_valid = sum(row.valid for row in rows)
    status = "translated" if n_valid >= min_valid else "below_min_valid"
    for row in rows:
        row.status = status
        row.use = status == "translated" and row.valid
    strategies: dict[str, int] = {}
    for row in rows:
        strategies[row.strategy] = strategies.get(row.strategy, 0) + 1
    summary = LanguageSummary(
        lang,
        status,
        language.nllb,
        len(rows),
        n_valid,
        sum(r.fallback for r in rows),
        n_duplicates,
        strategies,
        failures,
    )
    if status == "below_min_valid":
        rows += fallback_rows(lang, templates, status)
    return rows, summary


def rows_to_records(rows: Sequence[PromptRow]) -> list[dict[str, Any]]:
    records = []
    for row in rows:
        record = asdict(row)
        record["failed"] = ",".join(row.failed)
        records.append(record)
    return records
