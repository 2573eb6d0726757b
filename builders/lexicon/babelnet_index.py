"""BabelNet senses of WordNet 3.0 synsets from a licensed local BabelNet index, read through
BabelNet's own Python package (`babelnet` on PyPI; 1.2.0 is the version read and tested here).

What the package is, from its source (babelnet 1.2.0):

- `import babelnet` reads one config file per process (the file named by `BABELNET_CONF`, else
  `babelnet_conf.yml` in the working folder) and picks its mode from it: `RPC_URL` set -> RPC mode;
  `BASE_DIR` an existing folder -> the offline mode (PyLucene inside this process); otherwise the
  online mode (the HTTP API with `RESTFUL_KEY`). The import itself asks that API for the index
  version, and configures the process's logging (root logger at DEBUG, a handler on stdout).
- RPC mode: the indices are served by `babelnet-rpc start --bn <indices>` (the Docker image
  babelscape/babelnet-rpc, which runs the package's own `babelnet.api` module behind a zerorpc
  server). Each call, e.g. `babelnet.get_synsets(WordNetSynsetID("wn:01440764n"), to_langs={...})`,
  is one zerorpc request named after the function (`get_synsets`) with one argument,
  `{"args": (...), "kwargs": {...}}`; the package replaces zerorpc's msgpack framing with cloudpickle
  (protocol 4) in both directions, so the answer is the server's own objects: a list of
  `babelnet.synset._OfflineBabelSynset`, each with `.id` (a `BabelSynsetID`, `.id` = `bn:...`) and
  `.senses()` -> `babelnet.sense.BabelSense` (`.full_lemma`, `.language` a `babelnet.language.Language`
  member named by its BabelNet code, `.source` a `babelnet.data.source.BabelSenseSource` member named
  like the HTTP API's `source`). A WordNet offset can map to more than one BabelNet synset: one
  request returns them all, in all the asked languages: 1,000 requests for the 1,000 classes.
- `BabelSense.is_automatic_translation` exists, but is not used: whether a sense is a translation
  is decided by `babelforge.lexicon.babelnet.is_translation`, the one mapping both BabelNet routes share.
- Python: the package declares `Requires-Python ==3.8.*` (pip refuses it on 3.11/3.12), yet its client
  code imports and works on 3.11 and 3.12 when installed with `--no-deps --ignore-requires-python`
  beside its dependencies (zerorpc, pyzmq, cloudpickle, aenum, ordered-set, text-unidecode: the
  `babelnet-index` extra). Checked against a server on Python 3.8 with the package installed the
  ordinary way: pickles of its plain objects and enums cross Python versions (lambdas would not;
  none is sent).

Only RPC mode is accepted: the online mode spends the HTTP quota (`senses.source: babelnet` does that,
with its own cache and batching), and the offline mode needs PyLucene built into this Python.

Every answer is cached on disk as JSON, one file per request (named by a hash of the WordNet id and
the asked language codes), holding what the adapter reads from the package's objects (BabelNet id,
then language code, full lemma, source name per sense, in the package's order) and the index
version. Not the pickles themselves: reading those back would need the package and its classes,
and unpickling runs code. So a rebuild needs neither the package nor its server.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import logging.config
import os
import socket
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import canonical_json, read_json, sha256_text, write_json
from babelforge.core.languages import registry as project_registry
from babelforge.core.progress import info, progress
from babelforge.lexicon.babelnet import babelnet_sense, sense_warnings, wordnet_resource_id
from babelforge.lexicon.senses import Sense

PACKAGE = "babelnet"
METHOD = "get_synsets"  # the package function called, and the RPC request's name
INSTALL = (
    "pip install -c constraints.txt -e '.[babelnet-index]' && "
    "pip install -c constraints.txt --no-deps --ignore-requires-python babelnet"
)
START_SERVER = "babelnet-rpc start --bn <BabelNet indices folder>"
PROBE_SECONDS = 5.0


def one_line(text: object) -> str:
    return " ".join(str(text).split())


def rpc_url(config_file: Path) -> str:
    """The `RPC_URL` of the package's config file; a one-line error when there is none."""
    where = f"{config_file} (senses.babelnet_index.config_file)"
    if not config_file.is_file():
        raise BabelforgeError(
            f"{where}: no such file; write BabelNet's babelnet_conf.yml there with the line "
            f'RPC_URL: "tcp://127.0.0.1:7790", the address `{START_SERVER}` prints'
        )
    try:
        conf = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise BabelforgeError(f"{where}: not a YAML file ({one_line(error)})") from None
    url = conf.get("RPC_URL") if isinstance(conf, dict) else None
    if not isinstance(url, str) or not url.strip():
        raise BabelforgeError(
            f"{where}: no RPC_URL; senses.source babelnet_index reads a licensed local BabelNet index through "
            f"the babelnet package's RPC server: start it with `{START_SERVER}` and set RPC_URL to the address "
            "it prints (with a key only, use senses.source babelnet: the HTTP API)"
        )
    url = url.strip()
    if urlsplit(url).scheme not in ("tcp", "ipc"):
        raise BabelforgeError(f"{where}: RPC_URL {url!r} is neither tcp://host:port nor ipc://path")
    return url


def check_server(url: str, config_file: Path) -> None:
    """Fail in one line, at once, when nothing listens at `url` (the package would wait 60 s, then
    raise a zerorpc traceback from inside its import)."""
    parts = urlsplit(url)
    if parts.scheme == "ipc":
        problem = None if Path(url[len("ipc://") :]).exists() else "no such socket"
    else:
        try:
            host, port = parts.hostname, parts.port
        except ValueError as error:
            raise BabelforgeError(f"{config_file}: RPC_URL {url!r}: {error}") from None
        if not host or port is None:
            raise BabelforgeError(f"{config_file}: RPC_URL {url!r} names no host and port (tcp://127.0.0.1:7790)")
        try:
            socket.create_connection((host, port), timeout=PROBE_SECONDS).close()
            problem = None
        except OSError as error:
            problem = error.strerror or one_line(error) or type(error).__name__
    if problem:
        raise BabelforgeError(
            f"no BabelNet RPC server at {url} ({problem}; RPC_URL of {config_file}): start it with "
            f"`{START_SERVER}`, or correct RPC_URL"
        )


@contextlib.contextmanager
def _own_logging() -> Iterator[None]:
    """The package configures the process's logging when imported (root logger at DEBUG, a stdout
    handler, every earlier handler closed); keep ours."""
    configure = logging.config.dictConfig
    logging.config.dictConfig = lambda config: None
    try:
        yield
    finally:
        logging.config.dictConfig = configure


def _installed() -> bool:
    try:
        return importlib.util.find_spec(PACKAGE) is not None
    except ValueError:  # None in sys.modules: importing it is blocked
        return False


def import_package(config_file: str | os.PathLike) -> Any:
    """`import babelnet` in RPC mode with `config_file` as its config; one line for whatever stops it."""
    config_file = Path(config_file).resolve()
    python = f"Python {sys.version_info.major}.{sys.version_info.minor} ({sys.executable})"
    if not _installed():
        raise BabelforgeError(
            f"senses.source babelnet_index needs BabelNet's own `babelnet` package, not installed in {python}: "
            f"{INSTALL} (it declares Python 3.8 only; its client runs on 3.11 and 3.12)"
        )
    url = rpc_url(config_file)
    package = sys.modules.get(PACKAGE)
    if package is None:
        check_server(url, config_file)
        before = os.environ.get("BABELNET_CONF")
        os.environ["BABELNET_CONF"] = str(config_file)
        try:
            with _own_logging():
                import babelnet as package
        except ModuleNotFoundError as error:
            raise BabelforgeError(
                f"the babelnet package is installed in {python} without its dependency `{error.name}`: {INSTALL}"
            ) from None
        except Exception as error:  # the package's import runs its first request: any failure is one line
            if type(error).__module__.startswith("zerorpc"):
                raise BabelforgeError(
                    f"the BabelNet RPC server at {url} (RPC_URL of {config_file}) did not answer the package's "
                    f"first request: {type(error).__name__}: {one_line(error)}; restart it with `{START_SERVER}`"
                ) from None
            raise BabelforgeError(
                f"the babelnet package failed to import on {python}: {type(error).__name__}: {one_line(error)}; "
                f"it declares Python 3.8 only: reinstall the tested version with {INSTALL}"
            ) from None
        finally:
            if before is None:
                os.environ.pop("BABELNET_CONF", None)
            else:
                os.environ["BABELNET_CONF"] = before
    from babelnet.conf import _config

    loaded = [str(Path(path).resolve()) for path in _config._loaded_files]
    if loaded != [str(config_file)] or _config.RPC_URL != url:
        raise BabelforgeError(
            f"the babelnet package was imported in this process with the config {loaded or 'of its defaults'} "
            f"(RPC_URL {_config.RPC_URL!r}), not {config_file}: it reads its config once per process; "
            "run the stage in a fresh process"
        )
    return package


def answer_record(synsets: Iterable[Any]) -> list[dict[str, Any]]:
    """What the adapter reads from the package's answer (a list of `BabelSynset`), as JSON: per BabelNet
    synset its id and its senses `[language code, full lemma, source name]`, in the package's order."""
    record = []
    for synset in synsets:
        senses = []
        for sense in synset.senses():
            lemma, language, source = sense.full_lemma, sense.language.name, sense.source.name
            if not (isinstance(lemma, str) and isinstance(language, str) and isinstance(source, str)):
                raise BabelforgeError(
                    f"babelnet package: a sense of {synset.id} lacks a full_lemma, language or source: {sense!r}"
                )
            senses.append([language, lemma, source])
        record.append({"id": str(synset.id), "senses": senses})
    return record


class PackageClient:
    """The babelnet package in this process, in RPC mode on the server its config file names."""

    def __init__(self, config_file: str | os.PathLike):
        self.package = import_package(config_file)
        self.index_version = str(self.package.version())
        self.package_version = importlib.metadata.version(PACKAGE)

    def ask(self, resource_id: str, codes: Sequence[str]) -> dict[str, Any]:
        """One `get_synsets` request: the BabelNet synsets of a WordNet 3.0 id, their senses in `codes`
        (BabelNet language codes; those the package has no `Language` for are not asked, and named)."""
        import zerorpc
        from babelnet.language import Language
        from babelnet.resources import WordNetSynsetID

        languages, unknown = set(), []
        for code in codes:
            member = Language.__members__.get(code)
            if member is None:
                unknown.append(code)
            else:
                languages.add(member)
        answer: list[dict[str, Any]] = []
        if languages:  # no language at all would ask for every language
            try:
                synsets = self.package.get_synsets(WordNetSynsetID(resource_id), to_langs=languages)
            except (zerorpc.RemoteError, zerorpc.LostRemote, zerorpc.TimeoutExpired) as error:
                raise BabelforgeError(f"{type(error).__name__}: {one_line(error)}") from None
            answer = answer_record(synsets or [])
        return {
            "index_version": self.index_version,
            "package": f"{PACKAGE} {self.package_version}",
            "not_in_package": unknown,
            "response": answer,
        }


class BabelNetIndexSource:
    """`SenseSource` over a licensed local BabelNet index, through BabelNet's own package (RPC mode),
    with an on-disk answer cache. It yields the senses `BabelNetSource` yields for the same data, so
    the senses stage writes them to the same file (`babelnet.parquet`).

    config_file: the package's `babelnet_conf.yml` (its `RPC_URL` names the server).
    cache_dir: one JSON file per request under `<cache_dir>/get_synsets/`.
    languages: registry keys to collect (default: every registry language with a BabelNet code).
    connect: builds the client on the first answer not in the cache (default `PackageClient`).
    """

    name = "babelnet"

    def __init__(
        self,
        config_file: str | os.PathLike,
        cache_dir: str | os.PathLike,
        languages: Sequence[str] | None = None,
        *,
        registry=None,
        connect: Callable[[Path], Any] = PackageClient,
    ):
        self.config_file = Path(config_file)
        self.cache_dir = Path(cache_dir)
        self.registry = registry if registry is not None else project_registry()
        self.languages = (
            list(languages)
            if languages is not None
            else [language.key for language in self.registry if language.babelnet]
        )
        self.connect = connect
        self.client = None
        self.requests_made = 0  # requests sent (cache misses)
        self.cache_hits = 0
        self.index_versions: set[str] = set()  # of the answers used
        self.unknown_codes: Counter[str] = Counter()  # senses skipped: language code not in the registry
        self.unknown_sources: Counter[str] = Counter()  # senses kept, but from a source not in KNOWN_SOURCES
        self.without_code: list[str] = []  # wanted languages that have no BabelNet code
        self.not_in_package: set[str] = set()  # BabelNet codes the package has no Language for: not asked
        self.unmapped: list[str] = []  # synsets BabelNet has no id for

    # --- SenseSource ---------------------------------------------------------------------

    def senses(self, synsets: Iterable[str], langs: Iterable[str] | None = None) -> Iterator[Sense]:
        synsets = list(synsets)
        wanted = self._wanted(langs)
        if self.cached_synsets(synsets, langs) < len(synsets) and self.client is None:
            self.client = self.connect(self.config_file)  # now: a missing package or server is one line, at once
        for synset in progress(synsets, desc="babelnet index", total=len(synsets), unit="synset"):
            yield from self._synset_senses(synset, wanted, self._answer(synset, wanted, synsets))
        if len(self.index_versions) > 1:
            raise BabelforgeError(
                f"the answers in {self.cache_dir} come from BabelNet indices {', '.join(sorted(self.index_versions))}: "
                f"senses of two versions would mix; empty {self.cache_dir} and rerun"
            )
        for line in self.warnings():
            info(f"babelnet index: {line}")

    def source_records(self) -> dict[str, Any]:
        """What the senses came from, for provenance: the BabelNet index version of the answers used
        (read from the cache on a rebuild, so the artifact keeps its bytes)."""
        return {"index_version": ", ".join(sorted(self.index_versions)) or None}

    def warnings(self) -> list[str]:
        """What was skipped or unusual in this run, one line each (the counts, not every case)."""
        lines = sense_warnings(self.without_code, self.unknown_codes, self.unknown_sources, self.unmapped, "synset")
        if self.not_in_package:
            lines.insert(
                1 if self.without_code else 0,
                f"{len(self.not_in_package)} BabelNet codes have no Language in the babelnet package, not asked: "
                + ", ".join(sorted(self.not_in_package)),
            )
        return lines

    def cached_synsets(self, synsets: Iterable[str], langs: Iterable[str] | None = None) -> int:
        """How many of `synsets` are answered from the cache (no package, no server)."""
        codes = [code for _, code in self._wanted(langs, quiet=True)]
        return sum(1 for synset in synsets if self._cache_path(self._request(synset, codes)).is_file())

    # --- requests ------------------------------------------------------------------------

    def _wanted(self, langs: Iterable[str] | None, quiet: bool = False) -> list[tuple[str, str]]:
        pairs = []
        for key in dict.fromkeys(langs if langs is not None else self.languages):  # once each, in order
            code = self.registry.get(key).babelnet
            if code:
                pairs.append((key, code.upper()))
            elif not quiet and key not in self.without_code:
                self.without_code.append(key)
        return pairs

    @staticmethod
    def _request(synset: str, codes: Sequence[str]) -> dict[str, Any]:
        return {"method": METHOD, "id": wordnet_resource_id(synset), "to_langs": sorted(set(codes))}

    def _cache_path(self, request: dict[str, Any]) -> Path:
        return self.cache_dir / METHOD / f"{sha256_text(canonical_json(request))}.json"

    def _answer(self, synset: str, wanted: list[tuple[str, str]], synsets: list[str]) -> dict[str, Any]:
        """The package's answer for one synset: from the cache, else from the server (then cached)."""
        request = self._request(synset, [code for _, code in wanted])
        path = self._cache_path(request)
        if path.is_file():
            self.cache_hits += 1
            entry = read_json(path)
        else:
            if self.client is None:
                self.client = self.connect(self.config_file)
            try:
                entry = {"request": request, **self.client.ask(request["id"], request["to_langs"])}
            except BabelforgeError as error:
                raise BabelforgeError(
                    f"babelnet package, {METHOD}({request['id']}) for synset {synset}: {error}; "
                    f"{self.cached_synsets(synsets, [key for key, _ in wanted])} of {len(synsets)} synsets are "
                    f"cached in {self.cache_dir}: rerun to resume, cached answers are reused"
                ) from None
            self.requests_made += 1
            write_json(entry, path)
        if not isinstance(entry.get("response"), list):
            raise BabelforgeError(f"{path}: no `response` list: a damaged cache entry; delete it and rerun")
        self.index_versions.add(str(entry.get("index_version")))
        self.not_in_package.update(entry.get("not_in_package") or ())
        return entry

    def _synset_senses(self, synset: str, wanted: list[tuple[str, str]], entry: dict[str, Any]) -> Iterator[Sense]:
        keys = {key for key, _ in wanted}
        if not entry["response"] and synset not in self.unmapped:
            self.unmapped.append(synset)
        rank: Counter[str] = Counter()
        for babel_synset in entry["response"]:
            for code, lemma, source in babel_synset["senses"]:
                made = babelnet_sense(self, synset, code, lemma, source, keys, rank)
                if made is not None:
                    yield made
