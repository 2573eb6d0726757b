"""BabelNetSource against a loopback server speaking the BabelNet API's JSON."""

from __future__ import annotations

import logging

import pytest

from babelforge.core.errors import BabelforgeError
from babelforge.lexicon.babelnet import BabelNetQuotaError, BabelNetSource, is_translation, wordnet_resource_id
from babelforge.lexicon.senses import Sense, SenseSource

from .conftest import API_KEY, SENSES, SYNSET_IDS

TENCH, CHIHUAHUA, BIKE, WING = "01440764-n", "02085620-n", "03792782-n", "04592741-n"
CODES = {
    "eng_Latn": "EN",
    "deu_Latn": "DE",
    "fra_Latn": "FR",
    "ita_Latn": "IT",
    "spa_Latn": "ES",
    "pol_Latn": "PL",
    "zho_Hans": "ZH",
    "jpn_Jpan": "JA",
    "nob_Latn": "NO",
}
ALL = list(CODES)


def fixture_lemmas(synset: str, lang: str) -> list[str]:
    """The lemmas the fake API holds for (synset, language), in its order."""
    return [lemma for bn in SYNSET_IDS[synset] for code, lemma, _ in SENSES[bn] if code == CODES[lang]]


def by_language(senses: list[Sense], synset: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for sense in sorted((s for s in senses if s.synset == synset), key=lambda s: (s.lang, s.rank)):
        out.setdefault(sense.lang, []).append(sense.lemma)
    return out


def test_it_is_a_sense_source(make_source):
    assert isinstance(make_source(), SenseSource)
    assert make_source().name == "babelnet"


def test_senses_keep_order_source_and_translation_flag(make_source, babelnet_key):
    source = make_source(languages=ALL)
    senses = list(source.senses([TENCH, CHIHUAHUA, BIKE]))
    for synset in (TENCH, CHIHUAHUA, BIKE):
        expected = {lang: fixture_lemmas(synset, lang) for lang in ALL if fixture_lemmas(synset, lang)}
        assert by_language(senses, synset) == expected
    # ranks are 0..n-1 per (synset, language), in the API's order (across both BIKE synsets)
    german_bike = [s for s in senses if s.synset == BIKE and s.lang == "deu_Latn"]
    assert [(s.lemma, s.rank, s.source) for s in german_bike] == [
        ("Mountainbike", 0, "WIKI"),
        ("Geländefahrrad", 1, "WIKIDATA_ALIAS"),
    ]
    translated = {(s.lang, s.lemma, s.source) for s in senses if s.is_translation}
    assert translated == {
        ("deu_Latn", "tench", "WNTR"),
        ("pol_Latn", "lin", "WIKITR"),
        ("jpn_Jpan", "テンチ", "OMWN_JA"),
    }
    assert all(s.rank >= 0 and s.source for s in senses)


def test_target_languages_are_batched(make_source, babelnet_api, babelnet_key):
    source = make_source(languages=ALL, batch_size=3)
    list(source.senses([TENCH, CHIHUAHUA]))
    synset_calls = [query for endpoint, query in babelnet_api.requests if endpoint == "getSynset"]
    # 9 languages in batches of 3: 3 getSynset calls per BabelNet synset, one id lookup per synset
    assert len(synset_calls) == 2 * 3 and babelnet_api.count("getSynsetIdsFromResourceID") == 2
    assert all(1 <= len(query["targetLang"]) <= 3 for query in synset_calls)
    asked = {code for query in synset_calls[:3] for code in query["targetLang"]}
    assert asked == set(CODES.values())
    assert source.requests_made == 8 == len(babelnet_api.requests)
    id_query = next(query for endpoint, query in babelnet_api.requests if endpoint == "getSynsetIdsFromResourceID")
    assert id_query["id"] == [wordnet_resource_id(TENCH)] == ["wn:01440764n"]
    assert id_query["source"] == ["WN"] and id_query["wnVersion"] == ["WN_30"]


def test_smaller_batches_mean_more_requests_same_senses(make_source, babelnet_api, babelnet_key, tmp_path):
    three = list(make_source(languages=ALL, batch_size=3, cache_dir=tmp_path / "a").senses([TENCH]))
    before = len(babelnet_api.requests)
    one = list(make_source(languages=ALL, batch_size=1, cache_dir=tmp_path / "b").senses([TENCH]))
    assert len(babelnet_api.requests) - before == 1 + len(ALL)
    assert sorted(three, key=str) == sorted(one, key=str)


def test_warm_cache_makes_zero_requests_and_needs_no_key(make_source, babelnet_api, babelnet_key, monkeypatch):
    cold = make_source(languages=ALL)
    first = list(cold.senses([TENCH, CHIHUAHUA, BIKE]))
    served = len(babelnet_api.requests)
    monkeypatch.delenv("BABELNET_KEY")
    warm = make_source(languages=ALL)
    assert warm.cached_synsets([TENCH, CHIHUAHUA, BIKE]) == 3
    second = list(warm.senses([TENCH, CHIHUAHUA, BIKE]))
    assert second == first
    assert warm.requests_made == 0 and len(babelnet_api.requests) == served
    assert warm.cache_hits == served


def test_429_and_503_are_retried_honouring_retry_after(make_source, babelnet_api, babelnet_key):
    babelnet_api.plan = ["429:2", "503"]
    source = make_source(languages=["deu_Latn"])
    senses = list(source.senses([TENCH]))
    assert [s.lemma for s in senses] == fixture_lemmas(TENCH, "deu_Latn")
    assert source.sleeps[0] == 2.0 and len(source.sleeps) == 2
    assert len(babelnet_api.requests) == 4 and source.requests_made == 2


def test_quota_stops_cleanly_keeps_cache_and_resumes(make_source, babelnet_api, babelnet_key, tmp_path):
    synsets = [TENCH, CHIHUAHUA, BIKE]
    babelnet_api.quota = 5  # tench needs 1 + 3, chihuahua's id lookup is the 5th; its first getSynset is refused
    first = make_source(languages=ALL)
    with pytest.raises(BabelNetQuotaError) as caught:
        list(first.senses(synsets))
    message = str(caught.value)
    assert isinstance(caught.value, BabelforgeError) and "\n" not in message
    assert "1 of 3 synsets are fully cached" in message and "BABELNET_KEY" in message and "rerun tomorrow" in message
    assert "daily requests limit" in message and API_KEY not in message
    assert len(babelnet_api.requests) == 6  # refused at once, not retried
    cached_files = sorted((tmp_path / "cache").rglob("*.json"))
    assert len(cached_files) == 5

    babelnet_api.quota = None  # the next day
    second = make_source(languages=ALL)
    resumed = list(second.senses(synsets))
    assert second.requests_made == 1 * 3 + (1 + 2 * 3)  # only what was missing
    assert by_language(resumed, TENCH) == {
        lang: fixture_lemmas(TENCH, lang) for lang in ALL if fixture_lemmas(TENCH, lang)
    }


def test_quota_message_with_http_200_is_recognised(make_source, babelnet_api, babelnet_key):
    babelnet_api.quota, babelnet_api.refusal_status = 0, 200
    with pytest.raises(BabelNetQuotaError, match="0 of 1 synsets"):
        list(make_source().senses([TENCH]))


def test_malformed_json_names_synset_and_request_not_key(make_source, babelnet_api, babelnet_key, tmp_path):
    babelnet_api.plan = [None, "malformed"]
    source = make_source(languages=["deu_Latn"])
    with pytest.raises(BabelforgeError) as caught:
        list(source.senses([TENCH]))
    message = str(caught.value)
    assert "malformed JSON" in message and TENCH in message and "bn:00078149n" in message
    assert "getSynset?id=bn%3A00078149n&targetLang=DE" in message and API_KEY not in message
    assert len(list((tmp_path / "cache" / "getSynset").glob("*.json"))) == 0  # the bad answer is not cached
    assert [s.lemma for s in source.senses([TENCH])] == fixture_lemmas(TENCH, "deu_Latn")  # and a rerun asks again


def test_key_never_lands_in_cache_names_contents_or_logs(make_source, babelnet_api, babelnet_key, tmp_path, caplog):
    with caplog.at_level(logging.DEBUG):
        list(make_source(languages=ALL).senses([TENCH, CHIHUAHUA]))
    assert all(f"key={API_KEY}" in path for path in babelnet_api.raw_paths)  # it was sent...
    files = list((tmp_path / "cache").rglob("*"))
    assert len([f for f in files if f.is_file()]) == len(babelnet_api.requests)
    for path in files:  # ...and never stored
        assert API_KEY not in str(path)
        if path.is_file():
            assert API_KEY not in path.read_text(encoding="utf-8")
    assert any("getSynset" in record.getMessage() for record in caplog.records)
    assert API_KEY not in caplog.text


def test_missing_key_fails_before_any_request(make_source, babelnet_api, monkeypatch):
    monkeypatch.delenv("BABELNET_KEY", raising=False)
    with pytest.raises(BabelforgeError, match="BABELNET_KEY is not set"):
        list(make_source().senses([TENCH]))
    with pytest.raises(BabelforgeError, match="BABELNET_KEY"):
        BabelNetSource.require_key()
    assert babelnet_api.requests == []


def test_wrong_key_is_a_refusal_not_a_crash(make_source, babelnet_api, monkeypatch):
    monkeypatch.setenv("BABELNET_KEY", "not-the-right-key")
    with pytest.raises(BabelNetQuotaError) as caught:
        list(make_source().senses([TENCH]))
    assert "not-the-right-key" not in str(caught.value)


def test_unknown_codes_and_languages_without_code_are_skipped_and_counted(make_source, babelnet_api, babelnet_key):
    babelnet_api.default_languages = ["EN", "NAN"]  # a language the registry does not know
    babelnet_api.senses = {**SENSES, "bn:00078149n": SENSES["bn:00078149n"] + [("NAN", "tîng-hî", "WIKI")]}
    source = make_source(languages=["deu_Latn", "kmr_Latn"])
    senses = list(source.senses([TENCH]))
    assert {s.lang for s in senses} == {"deu_Latn"}
    assert source.unknown_codes == {"NAN": 1}
    assert source.without_code == ["kmr_Latn"]
    assert any("NAN (1)" in line for line in source.warnings())
    assert any("kmr_Latn" in line for line in source.warnings())


def test_synset_without_babelnet_id_gives_no_senses(make_source, babelnet_api, babelnet_key):
    source = make_source(languages=ALL)
    assert list(source.senses([WING])) == []
    assert source.unmapped == [WING] and babelnet_api.count("getSynset") == 0


def test_default_languages_are_every_registry_language_with_a_code(make_source):
    assert make_source().languages == ALL


def test_translation_rule_follows_babelnet():
    assert is_translation("WNTR", "DE") and is_translation("WIKITR", "PL") and is_translation("OMWN_JA", "JA")
    assert is_translation("OMWN", "JA") and not is_translation("OMWN", "IT")
    for manual in ("WN", "WIKI", "WIKIRED", "WIKIDATA", "WIKIDATA_ALIAS", "OMWN_FR", "OMWN_IT", "WIKT"):
        assert not is_translation(manual, "FR")


def test_bad_synset_ids_and_batch_sizes_are_errors(make_source):
    with pytest.raises(BabelforgeError, match="not a WordNet 3.0 offset id"):
        wordnet_resource_id("n01440764")
    with pytest.raises(BabelforgeError, match="batch_size"):
        make_source(batch_size=0)


def test_api_version_comes_from_the_base_url():
    from babelforge.lexicon.babelnet import api_version

    assert api_version("https://babelnet.io/v9") == "v9"
    assert api_version("https://babelnet.io/v10/") == "v10"
    assert api_version("http://127.0.0.1:8080/proxy") is None


def test_one_sense_is_kept_ranked_or_skipped_and_counted_alike_on_both_routes(small_registry):
    from collections import Counter
    from types import SimpleNamespace

    from babelforge.lexicon.babelnet import babelnet_sense

    counts = SimpleNamespace(registry=small_registry, unknown_codes=Counter(), unknown_sources=Counter())
    rank: Counter = Counter()
    first = babelnet_sense(counts, "01440764-n", "DE", "Schleie", "WIKI", {"deu_Latn"}, rank)
    second = babelnet_sense(counts, "01440764-n", "DE", "Schlei", "NEW_SOURCE", {"deu_Latn"}, rank)
    assert (first.lang, first.rank, first.is_translation) == ("deu_Latn", 0, False) and second.rank == 1
    assert counts.unknown_sources == Counter({"NEW_SOURCE": 1})  # kept, and counted once
    assert babelnet_sense(counts, "01440764-n", "XX", "x", "WIKI", {"deu_Latn"}, rank) is None
    assert babelnet_sense(counts, "01440764-n", "FR", "tanche", "WIKI", {"deu_Latn"}, rank) is None  # not wanted
    assert counts.unknown_codes == Counter({"XX": 1}) and rank == Counter({"deu_Latn": 2})


def test_the_warnings_list_ten_unmapped_synsets_and_say_when_there_are_more():
    from collections import Counter

    from babelforge.lexicon.babelnet import sense_warnings

    ten = [f"{n:08d}-n" for n in range(10)]
    [line] = sense_warnings([], Counter(), Counter(), ten, "id")
    assert line.startswith("10 synsets have no BabelNet id: ") and not line.endswith("...")
    [line] = sense_warnings([], Counter(), Counter(), [*ten, "00000010-n"], "id")
    assert line.startswith("11 synsets have no BabelNet id: ") and line.endswith(" ...") and "00000010-n" not in line
    lines = sense_warnings(["kmr_Latn"], Counter({"XX": 2}), Counter({"NEW": 3}), [], "synset")
    assert lines == [
        "1 languages have no BabelNet code, skipped: kmr_Latn",
        "2 senses skipped, BabelNet language code not in resources/languages.tsv: XX (2)",
        "senses from sources not known to be manual or translated (kept, is_translation=False): NEW (3)",
    ]
