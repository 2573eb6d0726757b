"""BabelNetIndexSource: the babelnet package's real client against a loopback stand-in of its RPC server
(tests/lexicon/babelnet_rpc_standin.py, a separate process on 127.0.0.1), compared with what
BabelNetSource reads from the loopback HTTP API for the same BabelNet data (tests/lexicon/conftest.py).

The `real_package` tests need BabelNet's `babelnet` package, which pip installs only with
`--ignore-requires-python` (it declares Python ==3.8.*; see babelforge/lexicon/babelnet_index.py):
they are skipped, with the command, where it is not installed. The other tests need no package: the
cache, the one-line errors, and the adapter over objects shaped like the package's.
"""

from __future__ import annotations

import enum
import json
import logging
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from babelforge.cli import main as cli
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_provenance, read_table
from babelforge.lexicon import babelnet_index
from babelforge.lexicon.babelnet_index import BabelNetIndexSource, PackageClient, answer_record
from babelforge.lexicon.senses import SENSE_COLUMNS, SenseSource

from .conftest import SENSES, SYNSET_IDS
from .test_senses_stage import write_inputs

TENCH, CHIHUAHUA, BIKE, WING = "01440764-n", "02085620-n", "03792782-n", "04592741-n"
ALL = ["eng_Latn", "deu_Latn", "fra_Latn", "ita_Latn", "spa_Latn", "pol_Latn", "zho_Hans", "jpn_Jpan", "nob_Latn"]
CODES = ["DE", "EN", "ES", "FR", "IT", "JA", "NO", "PL", "ZH"]  # their BabelNet codes, sorted
BROKEN = "09999999-n"  # a synset whose request fails on the server

installed = babelnet_index._installed()


def real_package(test):
    """A test of the real package: skipped where it is not installed; slow (a server process, the import)."""
    skip = pytest.mark.skipif(
        not installed, reason=f"BabelNet's babelnet package is not installed: {babelnet_index.INSTALL}"
    )
    return pytest.mark.slow(skip(test))


def rows(senses) -> list[tuple]:
    return sorted((s.synset, s.lang, s.rank, s.lemma, s.source, s.is_translation) for s in senses)


def index_data() -> dict:
    """conftest's BabelNet data (the loopback HTTP API's), keyed as the package asks for it."""
    synsets = {
        f"wn:{synset.replace('-', '')}": [[bn_id, [list(sense) for sense in SENSES[bn_id]]] for bn_id in ids]
        for synset, ids in SYNSET_IDS.items()
    }
    broken = f"wn:{BROKEN.replace('-', '')}"
    return {"version": "5.3", "synsets": {**synsets, broken: []}, "fail": [broken]}


# --- without the package ---------------------------------------------------------------


class LoopbackAnswers:
    """A client with PackageClient's `ask`, answering from conftest's data as JSON records."""

    def __init__(self):
        self.asked: list[tuple[str, list[str]]] = []
        self.data = index_data()

    def ask(self, resource_id, codes):
        self.asked.append((resource_id, list(codes)))
        return {
            "index_version": self.data["version"],
            "package": "babelnet 1.2.0",
            "not_in_package": [],
            "response": [
                {"id": bn_id, "senses": [sense for sense in senses if sense[0] in codes]}
                for bn_id, senses in self.data["synsets"][resource_id]
            ],
        }


def refuse_to_connect(config_file):
    raise AssertionError(f"connected to the package ({config_file}) for an answer the cache holds")


def index_source(tmp_path, registry, connect, **kwargs):
    return BabelNetIndexSource(
        tmp_path / "babelnet_conf.yml", tmp_path / "cache", ALL, registry=registry, connect=connect, **kwargs
    )


def test_it_is_a_sense_source_named_like_the_http_one(tmp_path, small_registry):
    source = index_source(tmp_path, small_registry, refuse_to_connect)
    assert isinstance(source, SenseSource) and source.name == "babelnet"


def test_same_senses_as_the_http_source_then_a_rebuild_from_the_cache(
    tmp_path, small_registry, make_source, babelnet_key
):
    answers = LoopbackAnswers()
    source = index_source(tmp_path, small_registry, lambda config_file: answers)
    senses = list(source.senses([TENCH, CHIHUAHUA, BIKE, WING]))
    assert rows(senses) == rows(make_source(languages=ALL).senses([TENCH, CHIHUAHUA, BIKE, WING]))
    # one request per synset, every language in it
    assert answers.asked == [(f"wn:{s.replace('-', '')}", CODES) for s in (TENCH, CHIHUAHUA, BIKE, WING)]
    assert source.requests_made == 4 and source.unmapped == [WING]
    assert source.source_records() == {"index_version": "5.3"}

    rebuilt = index_source(tmp_path, small_registry, refuse_to_connect)
    assert rows(rebuilt.senses([TENCH, CHIHUAHUA, BIKE, WING])) == rows(senses)
    assert rebuilt.cache_hits == 4 and rebuilt.requests_made == 0
    assert rebuilt.source_records() == {"index_version": "5.3"}


def test_the_translation_flag_is_the_http_sources_mapping(tmp_path, small_registry):
    senses = list(index_source(tmp_path, small_registry, lambda config_file: LoopbackAnswers()).senses([TENCH]))
    translated = {(s.lang, s.lemma, s.source) for s in senses if s.is_translation}
    # WNTR, WIKITR, OMWN_JA are translations; OMWN_FR is not (babelnet.is_translation, not the package's rule)
    assert translated == {
        ("deu_Latn", "tench", "WNTR"),
        ("pol_Latn", "lin", "WIKITR"),
        ("jpn_Jpan", "テンチ", "OMWN_JA"),
    }


def test_answers_from_two_index_versions_are_an_error(tmp_path, small_registry):
    answers = LoopbackAnswers()
    list(index_source(tmp_path, small_registry, lambda config_file: answers).senses([TENCH]))
    answers.data["version"] = "5.2"
    with pytest.raises(BabelforgeError, match=r"BabelNet indices 5\.2, 5\.3: senses of two versions would mix"):
        list(index_source(tmp_path, small_registry, lambda config_file: answers).senses([TENCH, CHIHUAHUA]))


# Objects shaped like the package's (babelnet 1.2.0): what answer_record reads of them.
class Language(enum.Enum):  # babelnet.language.Language: members named by BabelNet code
    EN = "English"
    DE = "German"


class BabelSenseSource(enum.Enum):  # babelnet.data.source.BabelSenseSource
    WN = 1
    WIKITR = 2


class BabelSynsetID:  # babelnet.resources.BabelSynsetID: str() is its id
    def __init__(self, id_str):
        self.id = id_str

    def __str__(self):
        return self.id


class BabelSense:  # babelnet.sense.BabelSense
    def __init__(self, lemma, language, source, synset):
        self.full_lemma, self.language, self.source, self.synset_id = lemma, language, source, synset.id


class _OfflineBabelSynset:  # babelnet.synset._OfflineBabelSynset: senses() in the index's order
    def __init__(self, synset_id, senses):
        self.id = BabelSynsetID(synset_id)
        self._senses = [BabelSense(lemma, language, source, self) for lemma, language, source in senses]

    def senses(self, language=None, source=None):
        return list(self._senses)


def test_answer_record_reads_objects_shaped_like_the_packages():
    synset = _OfflineBabelSynset(
        "bn:00078149n", [("tench", Language.EN, BabelSenseSource.WN), ("Schleie", Language.DE, BabelSenseSource.WIKITR)]
    )
    assert answer_record([synset]) == [
        {"id": "bn:00078149n", "senses": [["EN", "tench", "WN"], ["DE", "Schleie", "WIKITR"]]}
    ]
    synset._senses[0].full_lemma = None
    with pytest.raises(BabelforgeError, match="a sense of bn:00078149n lacks a full_lemma"):
        answer_record([synset])


def test_the_config_file_must_name_an_rpc_server(tmp_path):
    conf = tmp_path / "babelnet_conf.yml"
    with pytest.raises(BabelforgeError, match=r"babelnet_conf.yml \(senses.babelnet_index.config_file\): no such file"):
        babelnet_index.rpc_url(conf)
    conf.write_text("RESTFUL_KEY: 'k'\n")
    with pytest.raises(BabelforgeError, match="no RPC_URL; .* start it with `babelnet-rpc start --bn"):
        babelnet_index.rpc_url(conf)
    conf.write_text('RPC_URL: "http://127.0.0.1:7790"\n')
    with pytest.raises(BabelforgeError, match="neither tcp://host:port nor ipc://path"):
        babelnet_index.rpc_url(conf)
    conf.write_text('RPC_URL: "tcp://127.0.0.1:7790"\n')
    assert babelnet_index.rpc_url(conf) == "tcp://127.0.0.1:7790"


def test_no_server_is_one_line_at_once(tmp_path):
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        url = f"tcp://127.0.0.1:{closed.getsockname()[1]}"
    with pytest.raises(BabelforgeError, match=f"no BabelNet RPC server at {url} .*start it with `babelnet-rpc"):
        babelnet_index.check_server(url, tmp_path / "babelnet_conf.yml")
    with pytest.raises(BabelforgeError, match="no such socket"):
        babelnet_index.check_server(f"ipc://{tmp_path}/socket", tmp_path / "babelnet_conf.yml")


def stage_params(tmp_path, repo_root, wordnet_reader, config_file) -> str:
    """params.yaml of the full profile with senses.source babelnet_index (the loopback API's synsets)."""
    params_file = write_inputs(tmp_path, repo_root, "http://127.0.0.1:9/v9", wordnet_reader)
    params = yaml.safe_load(Path(params_file).read_text())
    params["senses"]["source"] = {"sample": "omw", "full": "babelnet_index"}
    params["senses"]["babelnet_index"] = {"config_file": str(config_file), "cache_dir": str(tmp_path / "index-cache")}
    Path(params_file).write_text(yaml.safe_dump(params))
    return params_file


def run_senses(params, tmp_path, out="senses"):
    return cli(["senses", "--params", params, "--wordnet", str(tmp_path / "wn.parquet"), "--out", str(tmp_path / out)])


@pytest.mark.slow  # runs the stage
def test_the_stage_without_the_package_stops_in_one_line(tmp_path, repo_root, wordnet_reader, monkeypatch, capsys):
    params = stage_params(tmp_path, repo_root, wordnet_reader, tmp_path / "babelnet_conf.yml")
    monkeypatch.setitem(sys.modules, "babelnet", None)  # as where it is not installed
    assert run_senses(params, tmp_path) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert "babelforge senses: error: senses.source babelnet_index needs BabelNet's own `babelnet` package" in err
    assert "pip install -c constraints.txt --no-deps --ignore-requires-python babelnet" in err
    assert not (tmp_path / "senses" / "babelnet.parquet").exists()


# --- the package's real client, against a stand-in of its RPC server ------------------------


@pytest.fixture(scope="session")
def standin(tmp_path_factory):
    """The stand-in server (one per test process, as the package reads its config once per process)
    and a babelnet_conf.yml naming it."""
    if not installed:
        pytest.skip(f"BabelNet's babelnet package is not installed: {babelnet_index.INSTALL}")
    folder = tmp_path_factory.mktemp("babelnet_rpc")
    (folder / "data.json").write_text(json.dumps(index_data()))
    log = folder / "requests.jsonl"
    script = Path(__file__).with_name("babelnet_rpc_standin.py")
    process = subprocess.Popen(
        [sys.executable, str(script), str(folder / "data.json"), str(log)],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("ready tcp://127.0.0.1:"), f"the stand-in did not start: {line!r}"
        conf = folder / "babelnet_conf.yml"
        conf.write_text(f'RPC_URL: "{line.split()[1]}"\nLOG_STDOUT_LEVEL: "DEBUG"\n')
        yield {"conf": conf, "log": log, "url": line.split()[1]}
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def package_client(standin):
    """The real package imported in this process with the stand-in's config (once), and the root
    logger before and after that import."""
    root = logging.getLogger()
    before = (root.level, list(root.handlers))
    client = PackageClient(standin["conf"])
    return client, before, (root.level, list(root.handlers))


def requests_logged(standin) -> list[dict]:
    log = standin["log"]
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@real_package
def test_real_client_yields_what_the_http_source_yields(
    tmp_path, small_registry, make_source, babelnet_key, standin, package_client
):
    client = package_client[0]
    assert client.package.__name__ == "babelnet"
    assert client.index_version == "5.3" and client.package_version == "1.2.0"
    before = len(requests_logged(standin))
    source = index_source(tmp_path, small_registry, lambda config_file: client)
    senses = list(source.senses([TENCH, CHIHUAHUA, BIKE, WING]))
    assert rows(senses) == rows(make_source(languages=ALL).senses([TENCH, CHIHUAHUA, BIKE, WING]))
    german_bike = [(s.lemma, s.rank, s.source) for s in senses if s.synset == BIKE and s.lang == "deu_Latn"]
    assert german_bike == [("Mountainbike", 0, "WIKI"), ("Geländefahrrad", 1, "WIKIDATA_ALIAS")]

    # what went over the wire: one get_synsets per synset, a WordNetSynsetID, every language at once
    sent = requests_logged(standin)[before:]
    assert [(r["method"], r["arg_types"], r["args"]) for r in sent] == [
        ("get_synsets", ["WordNetSynsetID"], [f"wn:{s.replace('-', '')}"]) for s in (TENCH, CHIHUAHUA, BIKE, WING)
    ]
    assert all(r["to_langs"] == CODES and r["to_langs_type"] == "set" for r in sent)

    # the cache answers a rebuild: no request, no package needed
    rebuilt = index_source(tmp_path, small_registry, refuse_to_connect)
    assert rows(rebuilt.senses([TENCH, CHIHUAHUA, BIKE, WING])) == rows(senses)
    assert len(requests_logged(standin)) == before + 4

    # the answers are the package's own classes, unpickled on this side
    from babelnet.language import Language
    from babelnet.resources import WordNetSynsetID

    answer = client.package.get_synsets(WordNetSynsetID("wn:01440764n"), to_langs={Language.DE})
    assert [f"{type(s).__module__}.{type(s).__name__}" for s in answer] == ["babelnet.synset._OfflineBabelSynset"]
    assert {type(sense).__name__ for sense in answer[0].senses()} == {"BabelSense"}


@real_package
def test_importing_the_package_keeps_the_process_logging(package_client):
    _, before, after = package_client
    assert after == before  # the package's dictConfig (root at DEBUG, a stdout handler) was not applied
    assert logging.getLogger().level != logging.DEBUG


@real_package
def test_a_server_error_stops_in_one_line_and_keeps_the_answers(tmp_path, small_registry, package_client):
    source = index_source(tmp_path, small_registry, lambda config_file: package_client[0])
    with pytest.raises(BabelforgeError) as raised:
        list(source.senses([TENCH, BROKEN, CHIHUAHUA]))
    message = str(raised.value)
    assert "\n" not in message
    assert f"get_synsets(wn:09999999n) for synset {BROKEN}: RemoteError" in message
    assert "index read error for wn:09999999n" in message
    assert "1 of 3 synsets are cached" in message and "rerun to resume" in message
    assert index_source(tmp_path, small_registry, refuse_to_connect).cached_synsets([TENCH, BROKEN, CHIHUAHUA]) == 1


@real_package
def test_another_config_in_the_same_process_is_refused(tmp_path, standin, package_client):
    other = tmp_path / "other_conf.yml"
    other.write_text(f'RPC_URL: "{standin["url"]}"\n')
    with pytest.raises(BabelforgeError, match="imported in this process with the config .* it reads its config once"):
        PackageClient(other)


@real_package
def test_the_stage_builds_babelnet_parquet_from_the_index(
    tmp_path, repo_root, wordnet_reader, babelnet_api, babelnet_key, standin, package_client
):
    params = stage_params(tmp_path, repo_root, wordnet_reader, standin["conf"])
    assert run_senses(params, tmp_path) == 0
    out = tmp_path / "senses" / "babelnet.parquet"
    assert sorted(path.name for path in (tmp_path / "senses").iterdir()) == ["babelnet.parquet"]
    assert read_provenance(out)["sources"] == {"babelnet_index": {"index_version": "5.3"}}

    # the HTTP route on the same data writes the same rows
    http_params = yaml.safe_load(Path(params).read_text())
    http_params["senses"]["source"] = {"sample": "omw", "full": "babelnet"}
    http_params["senses"]["babelnet"]["base_url"] = babelnet_api.url
    (tmp_path / "http.yaml").write_text(yaml.safe_dump(http_params))
    assert run_senses(str(tmp_path / "http.yaml"), tmp_path, out="http") == 0
    by_index, by_http = (
        read_table(path, columns=list(SENSE_COLUMNS)) for path in (out, tmp_path / "http" / "babelnet.parquet")
    )
    pd.testing.assert_frame_equal(by_index, by_http)

    # a rebuild reads the cache only: no request, the same bytes
    before, asked = out.read_bytes(), len(requests_logged(standin))
    assert run_senses(params, tmp_path) == 0
    assert out.read_bytes() == before and len(requests_logged(standin)) == asked
