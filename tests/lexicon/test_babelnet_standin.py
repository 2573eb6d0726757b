"""The full-size BabelNet stand-in (tests/standins/babelnet.py) answers the project's real client, BabelNetSource:
ImageNet classes x every registry language with a BabelNet code, the label rules keep many of its senses and drop
its translations and English copies, its quota stops a run that a rerun resumes from the cache, its injected 5xx and
429 are retried, and it counts exactly the requests the client says it made."""

from __future__ import annotations

import csv
import json
import math
import secrets
from collections import Counter
from pathlib import Path

import pytest
import requests

from babelforge.babel_imagenet.forms import english_lemma_keys
from babelforge.babel_imagenet.labels import choose_labels
from babelforge.babel_imagenet.script_routing import ScriptRouter
from babelforge.core.http import RetryPolicy
from babelforge.core.languages import registry
from babelforge.core.scripts import dominant_script, expand_script
from babelforge.lexicon.babelnet import MAX_TARGET_LANGUAGES, BabelNetQuotaError, BabelNetSource
from babelforge.lexicon.senses import wnid_to_synset
from tests.standins.babelnet import BabelNetStandIn, bn_id, serve_in_subprocess

REPO = Path(__file__).resolve().parents[2]
KEY = f"standin-{secrets.token_hex(6)}"
POLICY = RetryPolicy(attempts=4, base_delay=0.001, max_delay=0.01, max_retry_after=60, timeout=10)


def imagenet_synsets(every: int) -> list[str]:
    with open(REPO / "resources" / "imagenet1k_classes.tsv", encoding="utf-8") as handle:
        return [wnid_to_synset(row["wnid"]) for row in csv.DictReader(handle, delimiter="\t")][::every]


CLASSES = imagenet_synsets(50)  # 20 classes spread over the 1,000
LANGUAGES = [language.key for language in registry() if language.babelnet]


def make_source(api, cache: Path, languages=None, sleeps=None) -> BabelNetSource:
    return BabelNetSource(
        cache, languages=languages, base_url=api.url, policy=POLICY, sleep=(sleeps if sleeps is not None else []).append
    )


def per_class(n_languages: int) -> int:
    return 1 + math.ceil(n_languages / MAX_TARGET_LANGUAGES)


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("BABELNET_KEY", KEY)
    return KEY


def english_lemmas(api: BabelNetStandIn, synsets) -> dict[str, tuple[str, ...]]:
    return {synset: api.wordnet.lemmas(int(synset[:8])) for synset in synsets}


def test_every_class_in_every_language_through_the_real_client(key, tmp_path):
    with BabelNetStandIn(keys={key}) as api:
        source = make_source(api, tmp_path / "cache")
        senses = list(source.senses(CLASSES))
        assert len(LANGUAGES) == 298  # the full profile's BabelNet languages
        expected = len(CLASSES) * per_class(len(LANGUAGES))
        assert source.requests_made == expected == api.answered() == api.requests()
        assert api.answered("getSynsetIdsFromResourceID") == len(CLASSES)
        assert api.answered("getSynset") == len(CLASSES) * (per_class(len(LANGUAGES)) - 1)
        assert source.unknown_codes == Counter() and source.unknown_sources == Counter() and not source.unmapped
        english = english_lemmas(api, CLASSES)

    assert english["01440764-n"] == ("tench", "Tinca_tinca")  # WordNet's own lemmas
    by_language = Counter(sense.lang for sense in senses if not sense.is_translation)
    assert len(by_language) >= 0.9 * len(LANGUAGES), sorted(set(LANGUAGES) - set(by_language))
    translated = {sense.source for sense in senses if sense.is_translation}
    assert {"WNTR", "WIKITR"} <= translated
    assert all(sense.is_translation for sense in senses if sense.source in ("WNTR", "WIKITR", "OMWN_JA"))
    assert {"WIKI", "WIKT", "WIKIDATA", "WIKIRED", "WIKIDATA_ALIAS", "OMWN_IT"} <= {s.source for s in senses}
    # some languages have nothing for some classes
    covered = Counter(lang for lang, _ in {(s.lang, s.synset) for s in senses})
    assert any(n < len(CLASSES) for n in covered.values())

    # the project's label rules keep many senses and drop the English copies and the machine translations
    languages = registry()
    tally: Counter = Counter()
    choices = choose_labels(senses, english_lemma_keys(english.values()), router=ScriptRouter(languages), tally=tally)
    labelled = [choice for choice in choices if choice.label]
    assert len(labelled) >= 0.5 * len(LANGUAGES) * len(CLASSES), len(labelled)
    assert sum(choice.n_dropped_english for choice in choices) > 100
    assert sum(choice.n_dropped_mt for choice in choices) > 100
    assert any(choice.label is None for choice in choices)  # a class with only translations (or English)
    for choice in labelled:
        if choice.lang in ("rus_Cyrl", "hin_Deva", "zho_Hans", "kor_Hang", "arb_Arab", "ell_Grek"):
            assert dominant_script(choice.label) in expand_script(languages.get(choice.lang).script), choice
        if choice.lang == "deu_Latn":
            assert choice.label.isascii() and choice.label == choice.label.lower()


def test_answers_are_deterministic_and_in_babelnets_shape(key):
    params = {"id": bn_id(1440764), "targetLang": ["DE", "ZH", "JA"], "key": key}
    bodies = []
    for _ in range(2):
        with BabelNetStandIn(keys={key}) as api:
            bodies.append(requests.get(f"{api.url}/getSynset", params=params, timeout=10).content)
            ids = requests.get(
                f"{api.url}/getSynsetIdsFromResourceID",
                params={"id": "wn:01440764n", "source": "WN", "wnVersion": "WN_30", "key": key},
                timeout=10,
            ).json()
            nothing = requests.get(
                f"{api.url}/getSynsetIdsFromResourceID",
                params={"id": "wn:01440765n", "source": "WN", "key": key},  # not a synset's offset
                timeout=10,
            ).json()
            too_many = requests.get(
                f"{api.url}/getSynset", params={**params, "targetLang": ["DE", "FR", "IT", "ES"]}, timeout=10
            )
    assert bodies[0] == bodies[1]
    assert ids == [{"id": bn_id(1440764), "pos": "NOUN", "source": "BABELNET"}] and nothing == []
    assert too_many.status_code == 400
    senses = json.loads(bodies[0])["senses"]
    first = senses[0]["properties"]
    assert (first["language"], first["fullLemma"], first["source"]) == ("EN", "tench", "WN")
    assert first["synsetID"] == {"id": bn_id(1440764), "pos": "NOUN", "source": "BABELNET"}


def test_the_quota_stops_the_run_cleanly_and_a_rerun_resumes_from_the_cache(key, tmp_path):
    languages = LANGUAGES[::10]  # 30 languages: 11 requests per class
    classes = CLASSES[:10]  # 110 requests: 60 today, 50 tomorrow
    with BabelNetStandIn(keys={key}, quota=60) as api:
        first = make_source(api, tmp_path / "cache", languages)
        with pytest.raises(BabelNetQuotaError) as refusal:
            list(first.senses(classes))
        assert "rerun tomorrow" in str(refusal.value) and key not in str(refusal.value)
        assert first.requests_made == 61 and api.answered() == 60  # the 61st was refused
        cached = sum(1 for _ in (tmp_path / "cache").rglob("*.json"))
        assert cached == 60
        api.new_day()
        rerun = make_source(api, tmp_path / "cache", languages)
        resumed = list(rerun.senses(classes))
        assert rerun.requests_made == len(classes) * per_class(len(languages)) - 60 and rerun.cache_hits == 60
        api.quota = None
        fresh = list(make_source(api, tmp_path / "fresh", languages).senses(classes))
    assert resumed == fresh


def test_a_wrong_key_is_refused(key, tmp_path):
    with BabelNetStandIn(keys={"another key"}) as api:
        with pytest.raises(BabelNetQuotaError):
            list(make_source(api, tmp_path / "cache").senses(CLASSES[:1]))
        assert api.answered() == 0 and api.counts[("getSynsetIdsFromResourceID", "refused")] == 1


@pytest.mark.parametrize("status", [503, 500, 429])
def test_injected_failures_are_retried(key, tmp_path, status):
    languages, classes = LANGUAGES[::7], CLASSES[:5]
    with BabelNetStandIn(keys={key}) as api:
        clean = list(make_source(api, tmp_path / "clean", languages).senses(classes))
    with BabelNetStandIn(keys={key}, fail_every=5, fail_status=status, retry_after="2") as api:
        sleeps: list[float] = []
        source = make_source(api, tmp_path / "cache", languages, sleeps)
        assert list(source.senses(classes)) == clean
        expected = len(classes) * per_class(len(languages))
        injected = sum(n for (_, outcome), n in api.counts.items() if outcome == "injected")
        assert source.requests_made == api.answered() == expected
        assert injected == api.requests() // 5 > 0 and len(sleeps) == injected
        if status == 429:
            assert set(sleeps) == {2.0}  # Retry-After honoured (the sleeps are recorded, not slept)


def test_served_from_its_own_process(key, tmp_path):
    with serve_in_subprocess(keys=[key]) as api:
        source = make_source(api, tmp_path / "cache", LANGUAGES[:6])
        assert list(source.senses(CLASSES[:2]))
        assert api.answered() == source.requests_made == 2 * per_class(6)
