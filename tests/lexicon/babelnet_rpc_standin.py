"""A loopback stand-in for BabelNet's RPC server (the Docker image babelscape/babelnet-rpc), run as a
script: `python babelnet_rpc_standin.py DATA.json LOG.jsonl`.

The real server is `zerorpc.Server(babelnet.api)` over the indices: the package's own `api` module,
whose functions take one argument `{"args": ..., "kwargs": ...}`, with the package's cloudpickle
framing (imported with the package). This stand-in is the same, with its own module in place of
`babelnet.api` (registered before `import babelnet`: the real `api` module would ask a server for
the index version at import). It answers `version` and `get_synsets`/`get_synset` with the
package's real objects (`_OfflineBabelSynset` holding `BabelSense`s, built with their own
constructors) from DATA.json:

    {"version": "5.3", "synsets": {"wn:01440764n": [["bn:00078149n", [["EN", "tench", "WN"], ...]]]},
     "fail": ["wn:..."]}   # ids whose request raises on the server (the client gets a RemoteError)

Like the local index, an answer holds only the senses in `to_langs`. Every request is appended to
LOG.jsonl (method, argument types and ids, to_langs). It binds a free port on 127.0.0.1 and prints
`ready tcp://127.0.0.1:<port>` on stdout.
"""

from __future__ import annotations

import json
import sys
import types

DATA = json.loads(open(sys.argv[1], encoding="utf-8").read())
LOG = sys.argv[2]


def _unpack(call):
    call = call or {}
    return tuple(call.get("args", ())), dict(call.get("kwargs", {}))


def _log(method, args, kwargs):
    to_langs = kwargs.get("to_langs")
    entry = {
        "method": method,
        "arg_types": [type(arg).__name__ for arg in args],
        "args": [getattr(arg, "id", repr(arg)) for arg in args],
        "to_langs": sorted(language.name for language in to_langs) if to_langs is not None else None,
        "to_langs_type": type(to_langs).__name__,
    }
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps(entry) + "\n")


def version(call=None):
    from babelnet.versions import BabelVersion

    return BabelVersion.from_string(DATA["version"])


def get_synsets(call=None):
    from babelnet.data.source import BabelSenseSource
    from babelnet.language import Language
    from babelnet.pos import POS
    from babelnet.resources import BabelSynsetID, WordNetSynsetID
    from babelnet.sense import BabelSense
    from babelnet.synset import SynsetType, _OfflineBabelSynset

    args, kwargs = _unpack(call)
    _log("get_synsets", args, kwargs)
    to_langs = kwargs.get("to_langs")
    answer = []
    for resource in args:
        if not isinstance(resource, WordNetSynsetID):
            raise TypeError(f"the stand-in answers WordNetSynsetIDs only, not {type(resource).__name__}")
        if resource.id in DATA.get("fail", []):
            raise RuntimeError(f"index read error for {resource.id}")
        for bn_id, senses in DATA["synsets"].get(resource.id, []):
            held: list = []  # the synset's senses, filled once the synset exists (each sense points to it)
            synset = _OfflineBabelSynset(
                BabelSynsetID(bn_id), [resource], held, [], [], [], SynsetType.CONCEPT, {}, [], to_langs, False, {}
            )
            for code, lemma, source in senses:
                language = Language[code]
                if to_langs is None or language in to_langs:
                    held.append(BabelSense(lemma, language, POS.NOUN, BabelSenseSource[source], "", synset))
            answer.append(synset)
    return answer


def get_synset(call=None):
    found = get_synsets(call)
    return found[0] if found else None


def _not_here(name):
    def refuse(call=None):
        raise NotImplementedError(f"the stand-in does not serve {name}")

    return refuse


api = types.ModuleType("babelnet.api")
for name in (
    "get_senses",
    "get_senses_containing",
    "get_senses_from",
    "to_synsets",
    "iterator",
    "lexicon_iterator",
    "offset_iterator",
    "wordnet_iterator",
):
    setattr(api, name, _not_here(name))
api.version, api.get_synsets, api.get_synset = version, get_synsets, get_synset
sys.modules["babelnet.api"] = api

import babelnet  # noqa: E402,F401  (after the stand-in api module: the package's cloudpickle framing)
import zerorpc  # noqa: E402
import zmq  # noqa: E402

server = zerorpc.Server(api, heartbeat=40)
server.bind("tcp://127.0.0.1:*")
endpoint = server._events._socket.getsockopt(zmq.LAST_ENDPOINT).decode()  # the free port zmq picked
print(f"ready {endpoint}", flush=True)
server.run()
