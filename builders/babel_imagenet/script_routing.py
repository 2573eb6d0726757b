"""Rule 2 of the label procedure (labels.py): each form goes to the registry key its script belongs
to, stays, or is dropped."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import replace

from babelforge.babel_imagenet.forms import Form
from babelforge.core.errors import BabelforgeError
from babelforge.core.scripts import dominant_script, expand_script
from babelforge.core.text_taggers import is_latin_acronym


class ScriptRouter:
    """Where a form goes by its script: its own key, another key of the language, or nowhere.

    A form's script is its dominant script (`babelforge.core.scripts`). It stays when that is the
    key's own script (`Hans` covers Han), or when it is a short Latin acronym (`GSM`, as the audit
    allows). Otherwise it goes to `routes[lang][script]` when given (macro-languages: `hbs_Latn`
    Cyrillic -> `srp_Cyrl`, `kur_Latn` Arabic -> `ckb_Arab`), else to the registry key with the
    same ISO 639-3 code written in that script (one without a variant suffix, when exactly one
    exists). With no target it stays if the registry expects that script for the language
    (`Language.expected_scripts`: Ojibwe is written in syllabics and in Latin) and is dropped if not.
    """

    def __init__(self, languages, routes: Mapping[str, Mapping[str, str]] | None = None):

        self.languages = languages
        self.routes = {lang: dict(by_script) for lang, by_script in (routes or {}).items()}
        for lang, by_script in self.routes.items():
            for script, target in by_script.items():
                if lang not in languages or target not in languages:
                    missing = lang if lang not in languages else target
                    raise BabelforgeError(
                        f"labels.script_routes: {missing} is not a registry key "
                        "(resources/languages.tsv); name keys such as srp_Cyrl"
                    )
                expected = languages.get(target).expected_scripts
                if script not in set().union(*(expand_script(s) for s in expected)):
                    raise BabelforgeError(
                        f"labels.script_routes.{lang}.{script}: {target} is not written in "
                        f"{script} (registry scripts {','.join(expected)})"
                    )
        by_script: dict[tuple[str, str], list[str]] = defaultdict(list)
        for language in languages:
            if "-" not in language.key:
                for script in expand_script(language.script):
                    by_script[(language.iso639_3, script)].append(language.key)
        self._same_language = {where: keys[0] for where, keys in by_script.items() if len(keys) == 1}

    def route(self, lang: str, text: str) -> str | None:
        """The key the form belongs to (`lang` itself when it stays), None when it is dropped."""

        script = dominant_script(text)
        language = self.languages.get(lang)
        if script is None or script in expand_script(language.script):
            return lang
        if script == "Latn" and is_latin_acronym(text):
            return lang
        target = self.routes.get(lang, {}).get(script) or self._same_language.get((language.iso639_3, script))
        if target and target != lang:
            return target
        if script in set().union(*(expand_script(s) for s in language.expected_scripts)):
            return lang
        return None


def route_forms(forms: Iterable[Form], router: ScriptRouter, tally: Counter) -> list[Form]:
    """Forms moved to the key their script belongs to; the others dropped. Counted in `tally`."""
    routed = []
    for form in forms:
        target = router.route(form.lang, form.label)
        if target is None:
            tally[(form.lang, "n_dropped_script")] += 1
        elif target != form.lang:
            tally[(form.lang, "n_routed_out")] += 1
            tally[(target, "n_routed_in")] += 1
            routed.append(replace(form, lang=target, routed_from=form.lang))
        else:
            routed.append(form)
    return routed
