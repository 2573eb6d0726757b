"""Latin look-alike letters inside Cyrillic and Greek words (`ноj`, `çытар`, `сæтæлæг`): a word
typed with the wrong keyboard layout, or copied from a source that did. Each such letter has one or
more letters of the word's script it cannot be told from (resources/confusables.tsv, derived from
Unicode's confusables data by scripts/build_confusables.py). A word is repaired to the spelling with
the script's own letters when that spelling is a form the language knows (another form of the
language's senses, or a word wordfreq has recorded in it); otherwise it is left as it is and flagged
(`mixed_script`: used as a label only when its class has nothing else, purity.py's rule for a
foreign-script span). Pure: plain data in, plain data out; the table is read once.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from babelforge.babel_imagenet.purity import MIXED_SCRIPT
from babelforge.core.resources import resource
from babelforge.core.scripts import script_of
from babelforge.core.tsv import TsvSpec, one_of, read_tsv

SCRIPTS = ("Cyrl", "Grek")  # the scripts whose words are repaired
LATIN = "Latn"
MAX_SPELLINGS = 64  # spellings tried per word (a Latin letter may have several look-alikes)
CONFUSABLE = "confusable"  # a repaired form's `cleaned` kind (languages.parquet: n_cleaned_confusable)


CONFUSABLES = TsvSpec(
    columns=("latin", "script", "native", "latin_name", "native_name"),
    required=("latin", "script", "native"),
    unique=(("latin", "script", "native"),),
    checks={"script": one_of(*SCRIPTS)},
    comments=True,
)


def read_lookalikes(path: str | os.PathLike) -> dict[tuple[str, str], tuple[str, ...]]:
    """(latin letter, script) -> the script's letters it cannot be told from, in file order."""
    table: dict[tuple[str, str], list[str]] = {}
    for _, row in read_tsv(path, CONFUSABLES):
        table.setdefault((row["latin"], row["script"]), []).append(row["native"])
    return {key: tuple(values) for key, values in table.items()}


@functools.cache
def lookalikes() -> dict[tuple[str, str], tuple[str, ...]]:
    """The look-alikes of resources/confusables.tsv (read_lookalikes)."""
    return read_lookalikes(resource("confusables.tsv"))


def word_script(word: str) -> str | None:
    """The script of a mixed word: one of SCRIPTS, with fewer Latin letters than letters of it
    (`ноj`; a Latin word with a Greek letter, `ξon` in a phonetic spelling, is no Greek word); None otherwise."""
    counts = Counter(script_of(char) for char in word)
    scripts = set(counts) - {"Zyyy", "Zinh", "Zzzz"}
    if LATIN not in scripts or len(scripts) != 2:
        return None
    (other,) = scripts - {LATIN}
    return other if other in SCRIPTS and counts[LATIN] < counts[other] else None


def spellings(word: str, table: Mapping[tuple[str, str], tuple[str, ...]]) -> list[str]:
    """Every spelling of a mixed word with its Latin letters replaced by look-alikes of its script,
    in table order (at most MAX_SPELLINGS); [] when a Latin letter has none."""
    script = word_script(word)
    if script is None:
        return []
    options = []
    for char in word:
        if script_of(char) == LATIN:
            choices = table.get((char, script), ())
            if not choices:
                return []
            options.append(choices)
        else:
            options.append((char,))
    return ["".join(chars) for chars in itertools.islice(itertools.product(*options), MAX_SPELLINGS)]


def repair(text: str, known: Callable[[str], bool], table=None) -> tuple[str, int, int]:
    """(text with each mixed word repaired where a spelling is known, words repaired, words left
    mixed). `known(word)`: the language knows this word (casefolded forms, recorded use)."""
    table = lookalikes() if table is None else table
    words, repaired, mixed = [], 0, 0
    for word in text.split(" "):
        options = spellings(word, table)
        if not options:
            words.append(word)
            continue
        found = next((option for option in options if known(option)), None)
        if found is None:
            mixed += 1
            words.append(word)
        else:
            repaired += 1
            words.append(found)
    return " ".join(words), repaired, mixed


def known_words(texts: Iterable[str], frequency: Callable[[str], float | None] | None = None) -> Callable[[str], bool]:
    """`known(word)` of a language: a word of one of its forms (casefolded), or one with recorded
    use in it (`frequency`: word -> Zipf frequency, None where not covered)."""
    words = {word.casefold() for text in texts for word in text.split()}

    def known(word: str) -> bool:
        if word.casefold() in words:
            return True
        zipf = frequency(word) if frequency is not None else None
        return bool(zipf and zipf > 0)

    return known


def repair_forms(forms: Sequence, frequency: Callable[[str, str], float | None] | None, tally: Counter) -> list:
    """forms.Form objects with the Latin look-alikes inside their Cyrillic and Greek words repaired
    where the language knows the result (`cleaned` gains `confusable`), the others flagged
    MIXED_SCRIPT. `frequency(lang, word)`: word frequency (None: forms alone say what is known).
    Counted in `tally[(lang, "n_cleaned_confusable")]` and `tally[(lang, "n_mixed_script")]`."""
    texts: dict[str, list[str]] = defaultdict(list)
    for form in forms:
        texts[form.lang].append(form.label)
    known: dict[str, Callable[[str], bool]] = {}
    result = []
    for form in forms:
        if not any(word_script(word) for word in form.label.split(" ")):
            result.append(form)
            continue
        if form.lang not in known:
            lookup = functools.partial(frequency, form.lang) if frequency is not None else None
            known[form.lang] = known_words(texts[form.lang], lookup)
        text, repaired, mixed = repair(form.label, known[form.lang])
        if repaired:
            form = replace(form, label=text, cleaned=(*form.cleaned, CONFUSABLE))
            tally[(form.lang, f"n_cleaned_{CONFUSABLE}")] += 1
        if mixed:
            form = replace(form, flag=MIXED_SCRIPT)
            tally[(form.lang, "n_mixed_script")] += 1
        result.append(form)
    return result
