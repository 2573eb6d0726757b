"""A loopback BabelNet HTTP API (v9) and a small language registry for the client's tests; WordNet 3.0 for the wordnet tests.

The fake API speaks the JSON of the BabelNet API guide:
  GET /v9/getSynsetIdsFromResourceID?id=wn:01440764n&source=WN&wnVersion=WN_30&key=K
      -> [{"id": "bn:...", "pos": "NOUN", "source": "BABELNET"}]
  GET /v9/getSynset?id=bn:...&targetLang=DE&targetLang=FR&key=K
      -> {"senses": [{"type": "BabelSense", "properties": {"fullLemma", "simpleLemma",
          "source", "language", "pos", "synsetID", ...}}], "glosses": [], ...}
A wrong key, or more requests than `quota`, get BabelNet's refusal message. More than
three target languages is a 400, as the guide allows no more. `plan` lists failures for
the next requests in order: `503`, `429:<Retry-After>`, `malformed`.
"""

from __future__ import annotations

import json
import secrets
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from babelforge.lexicon.wordnet import open_wordnet
from tests.loopback import QuietHandler, serving
from tests.registry import write_registry

# A fresh fake key per test session: the tests check it never reaches a cache file or a log.
API_KEY = f"loopback-{secrets.token_hex(6)}"
REFUSAL = "Your key is not valid or the daily requests limit has been reached. Please visit http://babelnet.org."

# synset -> BabelNet ids; BabelNet id -> [(language, lemma, source)] in the API's order.
SYNSET_IDS = {
    "01440764-n": ["bn:00078149n"],  # tench
    "02085620-n": ["bn:00018149n"],  # Chihuahua
    "03792782-n": ["bn:00055734n", "bn:03267491n"],  # mountain bike: two BabelNet synsets
    "04592741-n": [],  # wing: nothing in BabelNet (for the test)
}
SENSES = {
    "bn:00078149n": [
        ("EN", "tench", "WN"),
        ("EN", "Tinca_tinca", "WN"),
        ("DE", "Schleie", "WIKI"),
        ("DE", "Schlei", "WIKIRED"),
        ("DE", "tench", "WNTR"),
        ("FR", "Tanche", "WIKI"),
        ("FR", "tanche", "OMWN_FR"),
        ("IT", "Tinca_tinca", "WIKI"),
        ("IT", "tinca", "OMWN_IT"),
        ("ES", "Tenca", "WIKI"),
        ("PL", "lin", "WIKITR"),
        ("PL", "Lin_(ryba)", "WIKI"),
        ("ZH", "丁鱥", "WIKI"),
        ("JA", "テンチ", "OMWN_JA"),
        ("NO", "suter", "WIKIDATA"),
    ],
    "bn:00018149n": [
        ("EN", "Chihuahua", "WN"),
        ("DE", "Chihuahua", "WIKI"),
        ("FR", "chihuahua", "WIKIDATA_ALIAS"),
        ("IT", "Chihuahua", "WIKI"),
        ("ES", "chihuahua", "WIKT"),
        ("PL", "Chihuahua", "WIKI"),
        ("ZH", "吉娃娃", "WIKI"),
        ("JA", "チワワ", "WIKI"),
        ("NO", "Chihuahua", "WIKI"),
    ],
    "bn:00055734n": [("EN", "mountain_bike", "WN"), ("DE", "Mountainbike", "WIKI"), ("FR", "VTT", "WIKIRED")],
    "bn:03267491n": [("DE", "Geländefahrrad", "WIKIDATA_ALIAS"), ("IT", "mountain_bike", "WIKI")],
}

REGISTRY_ROWS = [
    # key, babelnet code
    ("eng_Latn", "EN"),
    ("deu_Latn", "DE"),
    ("fra_Latn", "FR"),
    ("ita_Latn", "IT"),
    ("spa_Latn", "ES"),
    ("pol_Latn", "PL"),
    ("zho_Hans", "ZH"),
    ("jpn_Jpan", "JA"),
    ("nob_Latn", "NO"),
    ("kmr_Latn", ""),
]


@pytest.fixture(scope="session")
def small_registry(tmp_path_factory):
    from babelforge.core.languages import read_registry

    rows = [{"key": key, "name": key, "babelnet": code, "nllb": key} for key, code in REGISTRY_ROWS]
    return read_registry(write_registry(tmp_path_factory.mktemp("registry") / "languages.tsv", rows))


def sense_json(bn_id: str, number: int, language: str, lemma: str, source: str) -> dict:
    return {
        "type": "BabelSense",
        "properties": {
            "fullLemma": lemma,
            "simpleLemma": lemma.replace("_", " "),
            "source": source,
            "senseKey": "",
            "frequency": 0,
            "language": language,
            "pos": "NOUN",
            "synsetID": {"id": bn_id, "pos": "NOUN", "source": "BABELNET"},
            "translationInfo": "",
            "pronunciations": {"audios": [], "transcriptions": []},
            "bKeySense": False,
            "idSense": 1000 + number,
        },
    }


def synset_body(senses: list[dict], targets: list[str]) -> dict:
    """getSynset's answer as BabelNet v9 shapes it, with these senses (tests/standins/babelnet.py too)."""
    return {
        "senses": senses,
        "wnOffsets": [],
        "glosses": [],
        "examples": [],
        "images": [],
        "synsetType": "CONCEPT",
        "categories": [],
        "translations": {},
        "domains": {},
        "lnToCompound": {},
        "lnToOtherForm": {},
        "filterLangs": targets,
        "bkeyConcepts": False,
    }


class BabelNetHandler(QuietHandler):
    server: FakeBabelNet

    def do_GET(self):
        server = self.server
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        endpoint = parts.path.rsplit("/", 1)[-1]
        with server.lock:
            server.requests.append((endpoint, query))
            server.raw_paths.append(self.path)
            mode = server.plan.pop(0) if server.plan else None
            served = len(server.requests)
        if mode == "503":
            return self._json(503, {"message": "Service unavailable"})
        if mode and mode.startswith("429"):
            return self._json(429, {"message": "Too many requests"}, {"Retry-After": mode.partition(":")[2]})
        if query.get("key") != [API_KEY] or (server.quota is not None and served > server.quota):
            return self._json(server.refusal_status, {"message": REFUSAL})
        if mode == "malformed":
            return self.reply(200, b'{"senses": [{"type": "BabelSense", "properties": {"fullLem')
        if endpoint == "getSynsetIdsFromResourceID":
            resource = query["id"][0]
            if query.get("source") != ["WN"] or not resource.startswith("wn:"):
                return self._json(400, {"message": "Wrong parameters."})
            synset = f"{resource[3:11]}-{resource[11:]}"
            ids = server.synset_ids.get(synset, [])
            return self._json(200, [{"id": bn, "pos": "NOUN", "source": "BABELNET"} for bn in ids])
        if endpoint == "getSynset":
            targets = query.get("targetLang", [])
            if len(targets) > 3:
                return self._json(400, {"message": "Too many target languages."})
            bn_id = query["id"][0]
            shown = set(targets) | set(server.default_languages)
            senses = [
                sense_json(bn_id, i, lang, lemma, source)
                for i, (lang, lemma, source) in enumerate(server.senses.get(bn_id, []))
                if lang in shown
            ]
            return self._json(200, synset_body(senses, targets))
        return self._json(404, {"message": "Unknown method."})

    def _json(self, status: int, payload, headers: dict | None = None):
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        return self.reply(status, body, {"Content-Type": "application/json; charset=utf-8", **(headers or {})})


class FakeBabelNet(ThreadingHTTPServer):
    def __init__(self):
        super().__init__(("127.0.0.1", 0), BabelNetHandler)
        self.synset_ids = dict(SYNSET_IDS)
        self.senses = dict(SENSES)
        self.default_languages = ["EN"]  # answers carry English besides the target languages
        self.requests: list[tuple[str, dict]] = []
        self.raw_paths: list[str] = []
        self.plan: list[str] = []
        self.quota: int | None = None
        self.refusal_status = 403
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v9"

    def count(self, endpoint: str) -> int:
        return sum(1 for name, _ in self.requests if name == endpoint)


@pytest.fixture
def babelnet_api():
    with serving(FakeBabelNet()) as httpd:
        yield httpd


@pytest.fixture
def babelnet_key(monkeypatch):
    monkeypatch.setenv("BABELNET_KEY", API_KEY)
    return API_KEY


@pytest.fixture
def make_source(babelnet_api, small_registry, tmp_path):
    """Build a BabelNetSource on the fake API with fast retries and recorded sleeps."""
    from babelforge.core.http import RetryPolicy
    from babelforge.lexicon.babelnet import BabelNetSource

    sleeps: list[float] = []

    def build(languages=None, batch_size=3, cache_dir=None, attempts=3):
        source = BabelNetSource(
            cache_dir=cache_dir or tmp_path / "cache",
            languages=languages,
            batch_size=batch_size,
            base_url=babelnet_api.url,
            registry=small_registry,
            policy=RetryPolicy(attempts=attempts, base_delay=0.001, max_delay=0.01, max_retry_after=60, timeout=5),
            sleep=sleeps.append,
        )
        source.sleeps = sleeps
        return source

    return build


WORDNET_DICT = Path("/usr/share/wordnet")


@pytest.fixture(scope="session")
def wordnet_reader(tmp_path_factory):
    if not (WORDNET_DICT / "data.noun").exists():
        pytest.fail(
            "WordNet 3.0 is not installed: apt-get install wordnet-base wordnet-sense-index (scripts/setup.sh does)"
        )
    return open_wordnet(WORDNET_DICT, tmp_path_factory.mktemp("nltk_data"))
