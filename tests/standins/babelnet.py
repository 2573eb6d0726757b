"""A full-size loopback stand-in of the BabelNet HTTP API (v9): synthetic senses for every WordNet 3.0 noun
synset in every language of the registry that has a BabelNet code, for the full profile's rehearsal.

It answers the two calls `babelforge.lexicon.babelnet.BabelNetSource` makes, in BabelNet's JSON (the shape of
the small fake in tests/lexicon/conftest.py, whose `sense_json` and refusal message it reuses):

    GET /v9/getSynsetIdsFromResourceID?id=wn:01440764n&source=WN&wnVersion=WN_30&key=K
        -> [{"id": "bn:...", "pos": "NOUN", "source": "BABELNET"}]   ([] for an offset WordNet lacks)
    GET /v9/getSynset?id=bn:...&targetLang=DE&targetLang=FR&targetLang=IT&key=K
        -> {"senses": [...], ...}   (English always beside the targets; more than 3 targets: 400)

Every answer is a pure function of (seed, synset, language): the same request gets the same bytes in any
process. Each WordNet noun synset has exactly one BabelNet id (an invertible map of its offset), so a client
makes 1 + ceil(languages / 3) requests per class. What a language gets for a synset is drawn from a hash:
- nothing at all, more often for a language outside XLM-R (lower coverage, as in BabelNet);
- else 1 to 6 senses in the language's own script (letters of that script's Unicode range, as the project's
  script table assigns them; Latin is ASCII lowercase; now and then another script the registry expects for
  the language), from a mix of sources: WIKI, WIKT, WIKIDATA, OMWN_xx where BabelNet has that wordnet,
  the low-precision WIKIRED / WIKIDATA_ALIAS, the machine translations WNTR / WIKITR (sometimes first, or
  the only senses), and a copy of the synset's English lemma (the project drops both kinds);
- several sources often agree on a form (what the `agreement` ranking counts).
English lemmas come from WordNet's own data.noun (the synset offset is the byte offset of its line).

Error modes, set on the instance (also while it serves):
- `keys`: the accepted keys; any other key gets BabelNet's refusal message (it does not tell a wrong key from
  a spent quota), with `refusal_status`;
- `quota`: requests answered per key and day; past it, the refusal; `new_day()` resets the counts;
- `fail_every` / `fail_status`: every k-th request received answers that status (503, 429 with
  `Retry-After: retry_after`), deterministic by arrival order.

`counts` holds what was received, by (endpoint, outcome): `ok`, `injected` (a failure it was told to give),
`refused`, `bad` (a malformed request); `requests(endpoint)` / `answered(endpoint)` sum them. `GET /_standin/counts`
returns them as JSON (not counted), so a stand-in in another process (`serve_in_subprocess`) reports too.

    with BabelNetStandIn(keys={"k"}, quota=50_000, fail_every=997) as api:
        source = BabelNetSource(cache, base_url=api.url)   # BABELNET_KEY=k
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import os
import random
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from functools import cache, lru_cache
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from babelforge.core.languages import Language, LanguageRegistry, UnknownLanguageError
from babelforge.core.languages import registry as project_registry
from babelforge.core.scripts import SIMPLIFIED_ONLY, TRADITIONAL_ONLY, expand_script, script_of
from babelforge.lexicon.babelnet import KNOWN_SOURCES
from tests.lexicon.conftest import REFUSAL, sense_json, synset_body
from tests.loopback import LoopbackServer, QuietHandler, ServedStandIn

WORDNET_DIR = Path("/usr/share/wordnet")
API_PATH = "/v9"
COUNTS_PATH = "/_standin/counts"
MAX_TARGETS = 3
# bn id <-> WordNet offset: a bijection on 8-digit numbers (the multiplier is prime to 10**8).
BN_MULTIPLIER, BN_SHIFT, BN_MODULUS = 48_271, 12_345_678, 10**8
BN_INVERSE = pow(BN_MULTIPLIER, -1, BN_MODULUS)

# Letters of the scripts the project's script table (babelforge.core.scripts) does not list: their Unicode blocks.
EXTRA_BLOCKS = {"Goth": (0x10330, 0x1034A), "Ugar": (0x10380, 0x1039D), "Glag": (0x2C30, 0x2C5F)}
HAN_BLOCK = (0x4E00, 0x9FA5)
CORE_LETTERS = 48  # a script's first letters in code point order: its basic alphabet, not its extensions
HANGUL_SYLLABLES = (0xAC00, 0xD7A3)
UNSPACED = {"Hani", "Hans", "Hant", "Hira", "Kana", "Thai", "Laoo", "Khmr", "Mymr", "Tibt"}
SHORT_WORDS = {"Hani", "Hans", "Hant", "Hang"}  # a syllable or character per letter: 2 or 3 make a word

# (source, weight) of a sense that is not the first; the first is WIKI, WIKIDATA, WIKT or the wordnet.
LATER_SOURCES = (
    ("WIKI", 20),
    ("WIKIDATA", 16),
    ("WIKT", 12),
    ("OMWN", 12),  # OMWN_<code> where BabelNet has that wordnet, else WIKIDATA
    ("WIKIRED", 8),
    ("WIKIDATA_ALIAS", 6),
    ("WNTR", 10),
    ("WIKITR", 6),
)
FIRST_SOURCES = (("WIKI", 50), ("WIKIDATA", 20), ("WIKT", 10), ("OMWN", 20))
TRANSLATED = ("WNTR", "WIKITR")


def bn_id(offset: int) -> str:
    return f"bn:{(offset * BN_MULTIPLIER + BN_SHIFT) % BN_MODULUS:08d}n"


def offset_of(babelnet_id: str) -> int | None:
    """The WordNet offset a `bn:NNNNNNNNn` id of this stand-in stands for; None for another form."""
    digits = babelnet_id[3:11]
    if not (babelnet_id.startswith("bn:") and babelnet_id.endswith("n") and len(babelnet_id) == 12):
        return None
    if not digits.isdigit():
        return None
    return (int(digits) - BN_SHIFT) * BN_INVERSE % BN_MODULUS


def rng_for(*parts: object) -> random.Random:
    """A generator seeded by a hash of `parts`: the same draws in every process (unlike `hash`)."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


@cache
def alphabet(script: str) -> str:
    """The letters synthetic lemmas in `script` are made of: ASCII lowercase for Latin; else the letters the
    project's script table gives `script` (lowercase ones for a cased script), without compatibility or
    precomposed forms, the first `CORE_LETTERS` of them; Han without the one-standard characters of the other variant (`Hans`, `Hant`)."""
    if script == "Latn":
        return "abcdefghijklmnopqrstuvwxyz"
    if script in ("Hani", "Hans", "Hant"):
        other = {"Hans": TRADITIONAL_ONLY, "Hant": SIMPLIFIED_ONLY}.get(script, TRADITIONAL_ONLY | SIMPLIFIED_ONLY)
        return "".join(c for c in map(chr, range(HAN_BLOCK[0], HAN_BLOCK[1] + 1)) if c not in other)[:3000]
    if script == "Hang":
        return "".join(map(chr, range(HANGUL_SYLLABLES[0], HANGUL_SYLLABLES[1] + 1)))[:2000]
    if script in EXTRA_BLOCKS:
        first, last = EXTRA_BLOCKS[script]
        return "".join(c for c in map(chr, range(first, last + 1)) if unicodedata.category(c).startswith("L"))
    letters = [
        c
        for c in map(chr, range(0x80, 0x10000))
        if unicodedata.category(c) in ("Lu", "Ll", "Lo") and not unicodedata.decomposition(c) and script_of(c) == script
    ]
    lower = [c for c in letters if unicodedata.category(c) == "Ll"]
    return "".join(lower or letters)[:CORE_LETTERS]


@cache
def lemma_scripts(language: Language) -> tuple[str, tuple[str, ...]]:
    """(the script most lemmas of `language` are written in, the other scripts the registry expects for it)."""
    key_script = language.script
    if key_script in ("Hans", "Hant"):
        main = key_script
    else:
        expanded = sorted(s for s in expand_script(key_script) if alphabet(s))
        main = "Hani" if key_script == "Jpan" else expanded[0] if expanded else "Latn"
    others = []
    for declared in language.expected_scripts:
        for script in sorted(expand_script(declared)):
            if script not in (main, "Hani") and script not in others and alphabet(script):
                others.append(script)
    return main, tuple(others)


def made_up_word(rng: random.Random, script: str) -> str:
    letters = alphabet(script)
    length = rng.randint(2, 3) if script in SHORT_WORDS else rng.randint(3, 8)
    return "".join(rng.choice(letters) for _ in range(length))


def made_up_lemma(rng: random.Random, script: str) -> str:
    """One or two made-up words; BabelNet joins words with `_` (none between words of an unspaced script)."""
    words = [made_up_word(rng, script) for _ in range(2 if rng.random() < 0.25 else 1)]
    return ("" if script in UNSPACED else "_").join(words)


def weighted(rng: random.Random, choices: tuple[tuple[str, int], ...]) -> str:
    names, weights = zip(*choices)
    return rng.choices(names, weights=weights)[0]


class WordNetNouns:
    """English lemmas of WordNet 3.0 noun synsets, read from data.noun at the synset's byte offset."""

    def __init__(self, dict_dir: Path | None):
        path = Path(dict_dir) / "data.noun" if dict_dir else None
        self.fd = os.open(path, os.O_RDONLY) if path and path.is_file() else None

    @lru_cache(maxsize=200_000)  # noqa: B019 - one reader per stand-in, kept as long as the stand-in
    def lemmas(self, offset: int) -> tuple[str, ...] | None:
        """The synset's lemmas (`Tinca_tinca` as WordNet writes them); None when WordNet has no noun synset there.
        Without WordNet, every offset is a synset with one made-up English lemma."""
        if self.fd is None:
            return (made_up_lemma(rng_for("english", offset), "Latn"),)
        line = os.pread(self.fd, 4096, offset).split(b"\n", 1)[0].decode("utf-8", "replace")
        fields = line.split(" ")
        if len(fields) < 6 or fields[0] != f"{offset:08d}" or fields[2] != "n":
            return None
        count = int(fields[3], 16)
        return tuple(fields[4 + 2 * i] for i in range(count))

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class BabelNetStandIn(ServedStandIn):
    """The stand-in, served on 127.0.0.1 while open (a context manager); `url` is the API root for `base_url`."""

    def __init__(
        self,
        keys: Iterable[str] = (),
        *,
        quota: int | None = None,
        fail_every: int | None = None,
        fail_status: int = 503,
        retry_after: str = "0",
        refusal_status: int = 403,
        registry: LanguageRegistry | None = None,
        wordnet_dir: Path | None = WORDNET_DIR,
        seed: int = 0,
        port: int = 0,
    ):
        self.keys = set(keys)
        self.quota = quota
        self.fail_every = fail_every
        self.fail_status = fail_status
        self.retry_after = retry_after
        self.refusal_status = refusal_status
        self.registry = registry if registry is not None else project_registry()
        self.wordnet = WordNetNouns(wordnet_dir)
        self.seed = seed
        self.counts: Counter[tuple[str, str]] = Counter()
        self.used: Counter[str] = Counter()  # requests answered per key today
        self.received = 0
        # LoopbackServer takes a fixed port in newer checkouts; port 0 (a free one) works with any.
        self.server = LoopbackServer(handler=BabelNetHandler, **({"port": port} if port else {}))
        self.server.standin = self
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{API_PATH}"

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        self.wordnet.close()

    # ------------------------------------------------------------ bookkeeping

    def new_day(self) -> None:
        """The quota's day changes: every key may make `quota` requests again."""
        with self.lock:
            self.used.clear()

    def requests(self, endpoint: str | None = None) -> int:
        """Requests received (every outcome), for one endpoint or all."""
        with self.lock:
            return sum(n for (name, _), n in self.counts.items() if endpoint in (None, name))

    def answered(self, endpoint: str | None = None) -> int:
        """Requests answered with data (what a client counts as a request made), for one endpoint or all."""
        with self.lock:
            return sum(n for (name, outcome), n in self.counts.items() if outcome == "ok" and endpoint in (None, name))

    def counts_json(self) -> dict:
        with self.lock:
            return {
                "received": self.received,
                "counts": [[name, outcome, n] for (name, outcome), n in sorted(self.counts.items())],
            }

    def admit(self, endpoint: str, key: str | None) -> str:
        """The outcome a request gets before its content is looked at: injected, refused or ok (counted)."""
        with self.lock:
            self.received += 1
            if self.fail_every and self.received % self.fail_every == 0:
                outcome = "injected"
            elif key not in self.keys or (self.quota is not None and self.used[key] >= self.quota):
                outcome = "refused"
            else:
                outcome = "ok"
                self.used[key] += 1
            self.counts[(endpoint, outcome)] += 1
            return outcome

    def malformed(self, endpoint: str) -> None:
        """A request that passed `admit` but names nothing valid: counted as `bad`, not `ok`."""
        with self.lock:
            self.counts[(endpoint, "ok")] -= 1
            self.counts[(endpoint, "bad")] += 1

    # ------------------------------------------------------------ the synthetic lexicon

    def synset_ids(self, resource: str) -> list[dict] | None:
        """getSynsetIdsFromResourceID's answer for `wn:01440764n`; None when the id is not a WordNet noun id."""
        if not (resource.startswith("wn:") and len(resource) == 12 and resource[3:11].isdigit()):
            return None
        if resource[11] != "n":
            return []  # verbs, adjectives, adverbs: this stand-in knows nouns only
        offset = int(resource[3:11])
        if self.wordnet.lemmas(offset) is None:
            return []
        return [{"id": bn_id(offset), "pos": "NOUN", "source": "BABELNET"}]

    def senses(self, babelnet_id: str, codes: list[str]) -> list[dict] | None:
        """getSynset's `senses` for the target `codes` (English first, as BabelNet's default language)."""
        offset = offset_of(babelnet_id)
        english = self.wordnet.lemmas(offset) if offset is not None else None
        if english is None:
            return None
        rows = [(code, lemma, source) for code in ["EN", *codes] for lemma, source in self.lemmas(offset, code)]
        return [sense_json(babelnet_id, number, *row) for number, row in enumerate(rows)]

    @lru_cache(maxsize=400_000)  # noqa: B019 - per stand-in; a rehearsal asks each (synset, language) once or twice
    def lemmas(self, offset: int, code: str) -> tuple[tuple[str, str], ...]:
        """(lemma, source) of one synset in one language (BabelNet code), in the API's order."""
        english = self.wordnet.lemmas(offset) or ()
        if code == "EN":
            return tuple((lemma, "WN") for lemma in english)
        language = self.registry.from_babelnet(code)
        rng = rng_for(self.seed, offset, code)
        coverage = 0.92 if language.in_xlmr else 0.3 + 0.5 * rng_for(self.seed, code).random()
        if rng.random() >= coverage:
            return ()  # BabelNet has nothing for this synset in this language
        main, others = lemma_scripts(language)
        wordnet_source = f"OMWN_{code}" if f"OMWN_{code}" in KNOWN_SOURCES else "WIKIDATA"
        forms = [made_up_lemma(rng, main) for _ in range(rng.randint(1, 3))]
        if others and rng.random() < 0.15:
            forms.append(made_up_lemma(rng, rng.choice(others)))
        senses: list[tuple[str, str]] = []
        for number in range(rng.randint(1, 6 if language.in_xlmr else 3)):
            source = weighted(rng, FIRST_SOURCES if number == 0 else LATER_SOURCES)
            source = wordnet_source if source == "OMWN" else source
            if source in TRANSLATED:
                lemma = forms[0] if rng.random() < 0.3 else made_up_lemma(rng, main)  # MT agrees now and then
            else:
                # the first sense takes the first form; the others mostly agree with an earlier one
                lemma = forms[0] if number == 0 else rng.choice(forms)
            senses.append((lemma, source))
        if english and rng.random() < 0.15:  # the English name, untranslated (WIKI titles, Wikidata labels)
            senses.insert(rng.randint(0, len(senses)), (rng.choice(english), rng.choice(("WIKI", "WIKIDATA"))))
        if rng.random() < 0.12:  # machine translations first, or only machine translations
            translated = [(made_up_lemma(rng, main), rng.choice(TRANSLATED))]
            senses = translated + (senses if rng.random() < 0.6 else [])
        return tuple(senses)


class BabelNetHandler(QuietHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the real API behind its CDN; every reply has Content-Length
    disable_nagle_algorithm = True  # else the header and body writes wait on delayed ACKs
    server: LoopbackServer

    def do_GET(self):
        standin: BabelNetStandIn = self.server.standin
        parts = urlsplit(self.path)
        if parts.path == COUNTS_PATH:
            return self.json(200, standin.counts_json())
        query = parse_qs(parts.query)
        endpoint = parts.path.rsplit("/", 1)[-1]
        outcome = standin.admit(endpoint, (query.get("key") or [None])[0])
        if outcome == "injected":
            headers = {"Retry-After": standin.retry_after} if standin.fail_status == 429 else {}
            return self.json(standin.fail_status, {"message": "Service temporarily unavailable"}, headers)
        if outcome == "refused":
            return self.json(standin.refusal_status, {"message": REFUSAL})
        if not parts.path.startswith(f"{API_PATH}/"):
            standin.malformed(endpoint)
            return self.json(404, {"message": "Unknown method."})
        if endpoint == "getSynsetIdsFromResourceID":
            ids = standin.synset_ids((query.get("id") or [""])[0]) if query.get("source") == ["WN"] else None
            if ids is None:
                standin.malformed(endpoint)
                return self.json(400, {"message": "Wrong parameters."})
            return self.json(200, ids)
        if endpoint == "getSynset":
            targets = query.get("targetLang", [])
            if len(targets) > MAX_TARGETS:
                standin.malformed(endpoint)
                return self.json(400, {"message": "Too many target languages."})
            try:
                senses = standin.senses((query.get("id") or [""])[0], [code.upper() for code in targets])
            except UnknownLanguageError:
                senses = None
            if senses is None:
                standin.malformed(endpoint)
                return self.json(400, {"message": "Wrong parameters."})
            return self.json(200, synset_body(senses, targets))
        standin.malformed(endpoint)
        return self.json(404, {"message": "Unknown method."})

    def json(self, status: int, payload, headers: dict | None = None) -> None:
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self.reply(status, body, {"Content-Type": "application/json; charset=utf-8", **(headers or {})})


# ------------------------------------------------------------ in a process of its own


class RemoteStandIn:
    """A stand-in serving in another process (its own interpreter lock): its `url` and its counts."""

    def __init__(self, url: str):
        self.url = url

    def counts(self) -> Counter[tuple[str, str]]:
        import urllib.request

        root = self.url.removesuffix(API_PATH)
        with urllib.request.urlopen(f"{root}{COUNTS_PATH}", timeout=10) as response:
            data = json.load(response)
        return Counter({(name, outcome): n for name, outcome, n in data["counts"]})

    def answered(self, endpoint: str | None = None) -> int:
        return sum(n for (name, outcome), n in self.counts().items() if outcome == "ok" and endpoint in (None, name))


def _serve_forever(options: dict, ready) -> None:
    standin = BabelNetStandIn(**options)
    ready.send(standin.url)
    ready.close()
    standin.server.serve_forever(poll_interval=0.05)


@contextlib.contextmanager
def serve_in_subprocess(**options) -> Iterator[RemoteStandIn]:
    """`BabelNetStandIn(**options)` serving in a child process until the block ends (then terminated): the
    client's interpreter lock is not the server's, as with the real API. `registry` must be picklable."""
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_serve_forever, args=(options, sender), daemon=True)
    process.start()
    sender.close()
    try:
        if not receiver.poll(60):
            raise RuntimeError("the BabelNet stand-in process did not start within 60 s")
        yield RemoteStandIn(receiver.recv())
    finally:
        process.terminate()
        process.join(timeout=10)
