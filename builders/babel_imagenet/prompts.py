"""Babel-ImageNet prompts: per-language assembly and validation (tag, then filter).

Per label language:

* `translated`: the 80 CLIP templates translated with NLLB (`placeholders.translate_templates`),
  each prompt tagged by the checks below; the valid ones are used.
* `no_nllb_code`: the registry has no NLLB code for the language (NLLB cannot translate it).
* `below_min_valid`: fewer than `min_valid` translated prompts pass the checks.

The last two get the two fallback prompt sets the Babel-ImageNet paper compares, so eval
can pick the better: `label_only` (the single prompt `{}`) and `english` (the 80 English
templates). The English source language itself gets its templates as-is (`source`).

Checks on each translated prompt (stored as attribute columns; thresholds from params):
exactly one `{}`; no leftover strategy marker; share of letters in the registry's expected
scripts (Traditional-only Han characters do not count for `zho_Hans` and vice versa);
langid's rank of the language, where langid knows it; duplicates within the language;
length ratio to the English template.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from builders.core.errors import BabelforgeError
from builders.core.languages import Language
from builders.core.scripts import expected_script_share
from builders.translation.placeholders import MARKER_TOKENS, SLOT, TranslatedTemplate

SOURCE_LANG = "eng_Latn"


@dataclass(frozen=True)
class PromptChecks:
    """Thresholds of the validation (params.yaml `prompts`)."""
    min_valid: int = 40                 # a language needs this many valid prompts
    min_script_share: float = 0.9       # share of letters in the expected scripts
    langid_max_rank: int = 3            # langid must rank the language within its top k
    length_ratio: tuple[float, float] = (0.2, 4.0)   # len(prompt) / len(English template), slots removed

    @classmethod
    def from_params(cls, group: dict[str, Any]) -> "PromptChecks":
        low, high = group.get("length_ratio", cls.length_ratio)
        return cls(int(group.get("min_valid", cls.min_valid)),
                   float(group.get("min_script_share", cls.min_script_share)),
                   int(group.get("langid_max_rank", cls.langid_max_rank)), (float(low), float(high)))


# ranks(text) -> language codes of langid.py, most likely first
LangidRanker = Callable[[str], list[str]]


def langid_ranker() -> LangidRanker:
    """langid.py's full ranking (loaded lazily: it takes a second)."""
    from builders.core.langid import identifier

    model = identifier()
    return lambda text: [code for code, _ in model.rank(text)]


def read_templates(path) -> list[str]:
    """The English CLIP prompt templates, one per line, each with exactly one `{}` slot."""
    from pathlib import Path

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


def _letters(text: str) -> str:
    return text.replace(SLOT, "").strip()


def tag_prompt(row: PromptRow, language: Language, rank: LangidRanker | None) -> PromptRow:
    """Fill the attribute columns of one translated prompt (no thresholds applied here)."""
    row.n_slots = row.text.count(SLOT)
    row.leftover_marker = any(token in row.text.replace(SLOT, "") for token in MARKER_TOKENS)
    # The key's script (Hans/Hant) joins the Unicode scripts (Hani) so the variant is checked.
    row.script_share = expected_script_share(row.text, language.expected_scripts)
    body, english = _letters(row.text), _letters(row.english)
    row.length_ratio = len(body) / max(len(english), 1)
    if language.langid and rank is not None and body:
        ranking = rank(body)
        row.langid_top = ranking[0] if ranking else None
        row.langid_rank = ranking.index(language.langid) + 1 if language.langid in ranking else None
    return row


def check_prompt(row: PromptRow, language: Language, checks: PromptChecks) -> list[str]:
    """Names of the checks a tagged prompt fails (empty = valid)."""
    failed = []
    if row.n_slots != 1:
        failed.append("slot_count")
    if row.leftover_marker:
        failed.append("leftover_marker")
    if row.script_share is None or row.script_share < checks.min_script_share:
        failed.append("script")
    if language.langid and (row.langid_rank is None or row.langid_rank > checks.langid_max_rank):
        failed.append("langid")
    if row.is_duplicate:
        failed.append("duplicate")
    low, high = checks.length_ratio
    if row.length_ratio is None or not low <= row.length_ratio <= high:
        failed.append("length_ratio")
    return failed


def mark_duplicates(rows: Sequence[PromptRow]) -> int:
    """Flag every prompt whose text (casefolded) already appeared in the language; returns the count."""
    seen: set[str] = set()
    n = 0
    for row in rows:
        key = row.text.casefold()
        row.is_duplicate = key in seen
        n += row.is_duplicate
        seen.add(key)
    return n


def fallback_rows(lang: str, templates: Sequence[str], status: str) -> list[PromptRow]:
    """The two prompt sets for languages without usable translations: `{}` alone, English templates."""
    rows = [PromptRow(lang, "label_only", 0, SLOT, SLOT, "label_only", False, None, status=status, use=True)]
    rows += [PromptRow(lang, "english", i, t, t, "english", False, None, status=status, use=True)
             for i, t in enumerate(templates)]
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
        return (f"{self.lang:<16} {self.status:<16} valid {self.n_valid:>2}/{self.n_templates} "
                f"appended {self.n_fallback:>2} duplicates {self.n_duplicates:>2} | {used} | failed: {fails}")


def is_source(language: Language) -> bool:
    """English itself, or a variety NLLB writes as English (e.g. Simple English): no translation."""
    return language.key == SOURCE_LANG or language.nllb == SOURCE_LANG


def assemble_language(
    language: Language,
    templates: Sequence[str],
    translated: Sequence[TranslatedTemplate] | None,
    checks: PromptChecks,
    rank: LangidRanker | None,
) -> tuple[list[PromptRow], LanguageSummary]:
    """All prompt rows of one language and its summary. `translated` is None when the
    language was not sent to the translator (source language, or no NLLB code)."""
    lang = language.key
    if is_source(language):
        rows = [PromptRow(lang, "english", i, t, t, "source", False, None, status="source", use=True)
                for i, t in enumerate(templates)]
        return rows, LanguageSummary(lang, "source", language.nllb, len(templates), len(templates), 0, 0,
                                     {"source": len(templates)}, {})
    if not language.nllb or translated is None:
        return (fallback_rows(lang, templates, "no_nllb_code"),
                LanguageSummary(lang, "no_nllb_code", None, len(templates), 0, 0, 0, {}, {}))

    rows = [PromptRow(lang, "nllb", t.template_id, t.text, t.english, t.strategy, t.fallback, t.score)
            for t in translated]
    for row in rows:
        tag_prompt(row, language, rank)
    n_duplicates = mark_duplicates(rows)
    failures: dict[str, int] = {}
    for row in rows:
        row.failed = check_prompt(row, language, checks)
        row.valid = not row.failed
        for name in row.failed:
            failures[name] = failures.get(name, 0) + 1
    n_valid = sum(row.valid for row in rows)
    status = "translated" if n_valid >= checks.min_valid else "below_min_valid"
    for row in rows:
        row.status = status
        row.use = status == "translated" and row.valid
    strategies: dict[str, int] = {}
    for row in rows:
        strategies[row.strategy] = strategies.get(row.strategy, 0) + 1
    summary = LanguageSummary(lang, status, language.nllb, len(rows), n_valid, sum(r.fallback for r in rows),
                              n_duplicates, strategies, failures)
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
