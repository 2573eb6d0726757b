"""BabelNet senses of WordNet 3.0 synsets, from the BabelNet HTTP API (v9).

Two calls per synset, as the API guide (babelnet.org/guide) documents them:

1. `getSynsetIdsFromResourceID?id=wn:01440764n&source=WN&wnVersion=WN_30` maps the
   WordNet 3.0 offset to BabelNet synset ids: `[{"id": "bn:...", "pos": "NOUN", "source": ...}]`.
2. `getSynset?id=bn:...&targetLang=DE&targetLang=FR&targetLang=IT` returns the synset
   with its `senses`, each `{"properties": {"fullLemma", "language", "source", ...}}`.
   The API takes no more than three target languages per call, so the wanted languages
   are sent in batches of `batch_size` (one request per batch and synset).

Every answer is cached on disk, one JSON file per request, named by a hash of the
request's parameters (without the key), so a rebuild makes no request at all and needs
no key. The key comes from the environment (`BABELNET_KEY`) only and is never written to
the cache, a message or a log line.

BabelNet answers a spent daily quota (and an invalid key: it does not tell them apart)
with `{"message": "Your key is not valid or the daily requests limit has been reached..."}`.
That stops the run with `BabelNetQuotaError`; what is cached stays, and the next run
resumes from it. 429 and 5xx are retried by `babelforge.core.http`, honouring `Retry-After`.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from babelforge.core import http
from babelforge.core.errors import BabelforgeError
from babelforge.core.http import DEFAULT_POLICY, describe, register_secret
from babelforge.core.io import canonical_json, read_json, sha256_text, write_json
from babelforge.core.languages import UnknownLanguageError
from babelforge.core.languages import registry as project_registry
from babelforge.core.progress import info, progress
from babelforge.lexicon.senses import Sense

DEFAULT_BASE_URL = "https://babelnet.io/v9"
KEY_ENV = "BABELNET_KEY"
REGISTER_URL = "https://babelnet.org/register"
MAX_TARGET_LANGUAGES = 3  # "accepts not more than 3 languages" (API guide, targetLang)
REFUSAL_MARKERS = ("daily requests limit", "key is not valid")

# Sense sources BabelNet's own API classes as automatic translations
# (BabelSenseSource.is_automatic_translation): its machine translations of WordNet and
# Wikipedia concepts (WNTR, WIKITR) and the Open Multilingual Wordnets that were built by
# translating WordNet. The generic, deprecated OMWN source counts as translated for the
# languages of those wordnets.
TRANSLATION_SOURCES = frozenset({"WNTR", "WIKITR", "OMWN_PT", "OMWN_JA", "OMWN_ID", "OMWN_MS", "OMWN_GAE"})
TRANSLATED_OMWN_LANGUAGES = frozenset({"FR", "PT", "JA", "ID", "MS"})
# Every other source name BabelNet documents; a name outside both sets is kept (not a
# translation) and counted, so a new BabelNet source shows up in the run's warnings.
KNOWN_SOURCES = TRANSLATION_SOURCES | frozenset(
    {
        "BABELNET",
        "WORD_ATLAS",
        "WN",
        "WN2020",
        "OEWN",
        "WIKI",
        "WIKIRED",
        "WIKIDIS",
        "WIKICAT",
        "WIKIQU",
        "WIKIQUREDI",
        "WIKT",
        "WIKTLB",
        "WIKIDATA",
        "WIKIDATA_ALIAS",
        "OMWIKI",
        "GEONM",
        "VERBNET",
        "FRAMENET",
        "MSTERM",
        "IWN",
        "WONEF",
        "SALDO",
        "SLOWNET",
        "ICEWN",
        "OMWN",
        "MCR_CA",
        "MCR_ES",
        "MCR_EU",
        "MCR_GL",
        "MCR_PT",
        "OMWN_AR",
        "OMWN_BG",
        "OMWN_CWN",
        "OMWN_DA",
        "OMWN_EL",
        "OMWN_FA",
        "OMWN_FI",
        "OMWN_FR",
        "OMWN_HE",
        "OMWN_HR",
        "OMWN_IT",
        "OMWN_KO",
        "OMWN_LT",
        "OMWN_NL",
        "OMWN_NN",
        "OMWN_NO",
        "OMWN_PL",
        "OMWN_RO",
        "OMWN_SK",
        "OMWN_SQ",
        "OMWN_SV",
        "OMWN_TH",
        "OMWN_ZH",
    }
)


def sense_warnings(
    without_code, unknown_codes: Counter, unknown_sources: Counter, unmapped: list[str], unmapped_what: str
) -> list[str]:
    """A BabelNet run's skipped and unusual cases, one line each (the counts, not every case): languages
    without a code, senses in codes the registry lacks, sources BabelNet does not document, synsets
    without a BabelNet `unmapped_what`. Both routes (HTTP, the licensed index) say them alike."""
    lines = []
    if without_code:
        lines.append(f"{len(without_code)} languages have no BabelNet code, skipped: {', '.join(sorted(without_code))}")
    if unknown_codes:
        lines.append(
            f"{sum(unknown_codes.values())} senses skipped, BabelNet language code not in "
            f"resources/languages.tsv: " + ", ".join(f"{c} ({n})" for c, n in sorted(unknown_codes.items()))
        )
    if unknown_sources:
        lines.append(
            "senses from sources not known to be manual or translated (kept, is_translation=False): "
            + ", ".join(f"{s} ({n})" for s, n in sorted(unknown_sources.items()))
        )
    if unmapped:
        lines.append(
            f"{len(unmapped)} synsets have no BabelNet {unmapped_what}: {', '.join(unmapped[:10])}"
            + (" ..." if len(unmapped) > 10 else "")
        )
    return lines


def babelnet_sense(
    counts, synset: str, code: str, lemma: str, source: str, wanted: set[str], rank: Counter
) -> Sense | None:
    """One BabelNet sense as a `Sense` of a wanted language, ranked in its language's order; None for a code
    the registry lacks (counted in `counts.unknown_codes`) or a language not wanted. A source BabelNet does not
    document is kept and counted (`counts.unknown_sources`). Both routes (HTTP, the licensed index) read
    senses through it; `counts` is the source, with its `registry`."""
    try:
        lang = counts.registry.from_babelnet(code).key
    except UnknownLanguageError:
        counts.unknown_codes[code] += 1
        return None
    if lang not in wanted:
        return None
    if source.upper() not in KNOWN_SOURCES:
        counts.unknown_sources[source] += 1
    made = Sense(
        synset=synset,
        lang=lang,
        lemma=lemma,
        source=source,
        is_translation=is_translation(source, code),
        rank=rank[lang],
    )
    rank[lang] += 1
    return made


class BabelNetQuotaError(BabelforgeError):
    """BabelNet refused the key: daily request limit reached, or the key is invalid."""


def is_translation(source: str, language: str) -> bool:
    """Whether BabelNet marks a sense from `source` in `language` (BabelNet code) as machine-translated."""
    source = source.upper()
    if source == "OMWN":
        return language.upper() in TRANSLATED_OMWN_LANGUAGES
    return source in TRANSLATION_SOURCES


def api_version(base_url: str) -> str | None:
    """The API version a base URL names (`https://babelnet.io/v9` -> `v9`); None when it names none."""

    last = urlsplit(base_url).path.rstrip("/").rpartition("/")[2]
    return last if re.fullmatch(r"v\d+(\.\d+)*", last) else None


def utc_date(timestamp: float) -> str:
    """A POSIX timestamp as its UTC calendar date, `YYYY-MM-DD`."""

    return datetime.fromtimestamp(timestamp, tz=UTC).date().isoformat()


def wordnet_resource_id(synset: str) -> str:
    """WordNet 3.0 offset id `01440764-n` -> BabelNet's WordNet resource id `wn:01440764n`."""
    offset, _, pos = synset.partition("-")
    if len(offset) != 8 or not offset.isdigit() or pos not in ("n", "v", "a", "s", "r"):
        raise BabelforgeError(f"not a WordNet 3.0 offset id: {synset!r} (expected e.g. 01440764-n)")
    return f"wn:{offset}{pos}"


def _refusal_message(response) -> str | None:
    """BabelNet's quota/invalid-key answer, whatever the HTTP status; None for anything else."""
    try:
        body = response.json()
    except ValueError:
        return None
    message = body.get("message") if isinstance(body, dict) else None
    if isinstance(message, str) and any(marker in message.lower() for marker in REFUSAL_MARKERS):
        return message
    return None


class BabelNetSource:
    """`SenseSource` over the BabelNet HTTP API, with an on-disk response cache.

    cache_dir: one JSON file per request under `<cache_dir>/<endpoint>/`.
    languages: registry keys to collect (default: every registry language with a BabelNet code).
    batch_size: target languages per `getSynset` request (the API allows 3).
    base_url: the API root, `https://babelnet.io/v9` (a loopback server in tests).
    session: a `requests.Session` (default: `babelforge.core.http.make_session()`).
    """

    name = "babelnet"

    def __init__(
        self,
        cache_dir: str | os.PathLike,
        languages: Sequence[str] | None = None,
        batch_size: int = MAX_TARGET_LANGUAGES,
        base_url: str = DEFAULT_BASE_URL,
        session=None,
        *,
        registry=None,
        policy=None,
        wn_version: str = "WN_30",
        sleep: Callable[[float], None] = time.sleep,
    ):

        if int(batch_size) < 1:
            raise BabelforgeError(f"BabelNet batch_size must be at least 1, got {batch_size}")
        self.cache_dir = Path(cache_dir)
        self.registry = registry if registry is not None else project_registry()
        self.languages = (
            list(languages)
            if languages is not None
            else [language.key for language in self.registry if language.babelnet]
        )
        self.batch_size = int(batch_size)
        self.base_url = base_url.rstrip("/")
        self.session = session
        self.policy = policy or DEFAULT_POLICY
        self.wn_version = wn_version
        self.sleep = sleep
        self.requests_made = 0  # requests sent (cache misses)
        self.cache_hits = 0
        self.unknown_codes: Counter[str] = Counter()  # senses skipped: language code not in the registry
        self.unknown_sources: Counter[str] = Counter()  # senses kept, but from a source not in KNOWN_SOURCES
        self.without_code: list[str] = []  # wanted languages that have no BabelNet code
        self.unmapped: list[str] = []  # synsets BabelNet has no id for
        self.newest_answer: float | None = None  # mtime of the newest cache file this run read or wrote

    # --- SenseSource ---------------------------------------------------------------------

    def senses(self, synsets: Iterable[str], langs: Iterable[str] | None = None) -> Iterator[Sense]:

        synsets = list(synsets)
        batches = self._batches(langs)
        for synset in progress(synsets, desc="babelnet", total=len(synsets), unit="synset"):
            try:
                found = list(self._synset_senses(synset, batches))
            except BabelNetQuotaError as refusal:
                cached = self.cached_synsets(synsets, langs)
                raise BabelNetQuotaError(
                    f"BabelNet refused the request for synset {synset}: {refusal} "
                    f"(daily request limit reached, or the key in {KEY_ENV} is invalid); "
                    f"{cached} of {len(synsets)} synsets are fully cached in {self.cache_dir} "
                    f"({self.requests_made} requests made this run); rerun tomorrow or with another "
                    f"key in {KEY_ENV}: cached answers are reused, nothing is requested twice"
                ) from None
            yield from found
        for line in self.warnings():
            info(f"babelnet: {line}")

    def source_records(self) -> dict[str, Any]:
        """What the senses came from, for provenance: the API version and the date of the newest
        answer used (a rebuild from the cache keeps both, so the artifact keeps its bytes)."""
        return {
            "api_version": api_version(self.base_url),
            "cache_date": utc_date(self.newest_answer) if self.newest_answer is not None else None,
        }

    def warnings(self) -> list[str]:
        """What was skipped or unusual in this run, one line each (the counts, not every case)."""
        return sense_warnings(self.without_code, self.unknown_codes, self.unknown_sources, self.unmapped, "id")

    def cached_synsets(self, synsets: Iterable[str], langs: Iterable[str] | None = None) -> int:
        """How many of `synsets` are answered completely from the cache (no request, no key)."""

        batches = self._batches(langs, quiet=True)
        count = 0
        for synset in synsets:
            ids_path = self._cache_path("getSynsetIdsFromResourceID", self._id_params(synset))
            if not ids_path.is_file():
                continue
            ids = self._babelnet_ids(synset, read_json(ids_path)["response"])
            if all(
                self._cache_path("getSynset", self._synset_params(bn_id, [code for _, code in batch])).is_file()
                for bn_id in ids
                for batch in batches
            ):
                count += 1
        return count

    @staticmethod
    def require_key() -> None:
        """Fail now, naming the variable, when no key is set (a stage that must make requests)."""
        _key_from_environment("BabelNet requests")

    # --- requests ------------------------------------------------------------------------

    def _batches(self, langs: Iterable[str] | None, quiet: bool = False) -> list[list[tuple[str, str]]]:
        wanted = list(dict.fromkeys(langs if langs is not None else self.languages))  # once each, in order
        pairs = []
        for key in wanted:
            code = self.registry.get(key).babelnet
            if code:
                pairs.append((key, code.upper()))
            elif not quiet and key not in self.without_code:
                self.without_code.append(key)
        return [pairs[i : i + self.batch_size] for i in range(0, len(pairs), self.batch_size)]

    def _id_params(self, synset: str) -> dict[str, Any]:
        return {"id": wordnet_resource_id(synset), "source": "WN", "wnVersion": self.wn_version}

    @staticmethod
    def _synset_params(bn_id: str, codes: list[str]) -> dict[str, Any]:
        return {"id": bn_id, "targetLang": codes}

    def _babelnet_ids(self, synset: str, answer: Any = None) -> list[str]:
        params = self._id_params(synset)
        if answer is None:
            answer = self._get("getSynsetIdsFromResourceID", params, f"synset {synset}")
        if not isinstance(answer, list):
            raise BabelforgeError(
                f"BabelNet getSynsetIdsFromResourceID for synset {synset}: expected a list of ids, "
                f"got {type(answer).__name__}; request {self._shown('getSynsetIdsFromResourceID', params)}"
            )
        ids: list[str] = []
        for row in answer:
            bn_id = row.get("id") if isinstance(row, dict) else None
            if isinstance(bn_id, str) and bn_id.startswith("bn:") and bn_id not in ids:
                ids.append(bn_id)
        return ids

    def _synset_senses(self, synset: str, batches: list[list[tuple[str, str]]]) -> Iterator[Sense]:

        ids = self._babelnet_ids(synset)
        if not ids and synset not in self.unmapped:
            self.unmapped.append(synset)
        rank: Counter[str] = Counter()
        for bn_id in ids:
            for batch in batches:
                params = self._synset_params(bn_id, [code for _, code in batch])
                answer = self._get("getSynset", params, f"synset {synset} ({bn_id})")
                senses = answer.get("senses") if isinstance(answer, dict) else None
                if not isinstance(senses, list):
                    raise BabelforgeError(
                        f"BabelNet getSynset for synset {synset} ({bn_id}): no `senses` list in the answer; "
                        f"request {self._shown('getSynset', params)}"
                    )
                in_batch = {key for key, _ in batch}
                for sense in senses:
                    properties = sense.get("properties") if isinstance(sense, dict) else None
                    properties = properties if isinstance(properties, dict) else {}
                    lemma, code, source = (properties.get(k) for k in ("fullLemma", "language", "source"))
                    if not (isinstance(lemma, str) and isinstance(code, str) and isinstance(source, str)):
                        raise BabelforgeError(
                            f"BabelNet getSynset for synset {synset} ({bn_id}): a sense lacks fullLemma, "
                            f"language or source; request {self._shown('getSynset', params)}"
                        )
                    # Answers also carry the default language; keep each language from its own batch.
                    made = babelnet_sense(self, synset, code, lemma, source, in_batch, rank)
                    if made is not None:
                        yield made

    def _cache_path(self, endpoint: str, params: dict[str, Any]) -> Path:

        digest = sha256_text(canonical_json({"endpoint": endpoint, "params": params}))
        return self.cache_dir / endpoint / f"{digest}.json"

    def _shown(self, endpoint: str, params: dict[str, Any]) -> str:

        return describe(f"{self.base_url}/{endpoint}", params)

    def _get(self, endpoint: str, params: dict[str, Any], what: str) -> Any:
        """The API's answer to one request: from the cache, else from the network (then cached)."""

        path = self._cache_path(endpoint, params)
        if path.is_file():
            self.cache_hits += 1
            self._saw(path)
            return read_json(path)["response"]
        key = _key_from_environment(f"{what} (not in the cache {self.cache_dir})")
        if self.session is None:
            self.session = http.make_session()
        shown = self._shown(endpoint, params)
        response = http.request(
            self.session,
            "GET",
            f"{self.base_url}/{endpoint}",
            params={**params, "key": key},
            policy=self.policy,
            give_up=lambda r: _refusal_message(r) is not None,
            sleep=self.sleep,
        )
        self.requests_made += 1
        with response:
            refusal = _refusal_message(response)
            if refusal is not None:
                raise BabelNetQuotaError(http.redact(refusal))
            if not response.ok:
                raise BabelforgeError(
                    f"BabelNet {endpoint} for {what}: HTTP {response.status_code} "
                    f"{http.redact(response.text[:200])!r}; request {shown}"
                )
            try:
                answer = response.json()
            except ValueError as error:
                raise BabelforgeError(
                    f"BabelNet {endpoint} for {what}: malformed JSON ({error}); request {shown}; "
                    f"nothing was cached for it, rerun to ask again"
                ) from None
        if isinstance(answer, dict) and "message" in answer and "senses" not in answer:
            raise BabelforgeError(
                f"BabelNet {endpoint} for {what}: {http.redact(str(answer['message']))}; request {shown}"
            )
        write_json({"endpoint": endpoint, "params": params, "response": answer}, path)
        self._saw(path)
        return answer

    def _saw(self, path: Path) -> None:
        modified = path.stat().st_mtime
        if self.newest_answer is None or modified > self.newest_answer:
            self.newest_answer = modified


def _key_from_environment(needed_for: str) -> str:

    key = os.environ.get(KEY_ENV, "").strip()
    if not key:
        raise BabelforgeError(
            f"{KEY_ENV} is not set, and BabelNet needs a key for {needed_for}; "
            f"get one at {REGISTER_URL} and `export {KEY_ENV}=<your key>`"
        )
    register_secret(key)
    return key
