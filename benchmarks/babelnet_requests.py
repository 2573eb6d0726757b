"""BabelNet requests per ImageNet class, cold and warm cache, against a loopback API.

    python benchmarks/babelnet_requests.py [--classes 1000] [--batch-size 3] [--languages N]

A local server answers the two BabelNet calls the client makes with a synthetic synset
per class (two senses per language asked for). The first pass starts from an empty cache
(cold), the second reads the same cache (warm: it must make no request). The languages
are the registry's BabelNet languages (resources/languages.tsv), or, before that file
exists, the 298 BabelNet codes of the Babel-ImageNet release in the source mirror.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import multiprocessing
import os
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from babelforge.core.languages import REGISTRY_PATH, read_registry, registry  # noqa: E402
from babelforge.lexicon.babelnet import BabelNetSource  # noqa: E402
from babelforge.lexicon.senses import wnid_to_synset  # noqa: E402

BENCH_KEY = "benchmark-key-0000"


class SyntheticBabelNet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like the real API behind a CDN
    disable_nagle_algorithm = True  # else header and body writes meet delayed ACKs (40 ms each)
    served = None  # a multiprocessing.Value shared with the benchmark process

    def log_message(self, *args):
        pass

    def do_GET(self):
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        with self.served.get_lock():
            self.served.value += 1
        if parts.path.endswith("getSynsetIdsFromResourceID"):
            offset = query["id"][0][3:11]
            body = [{"id": f"bn:{offset}n", "pos": "NOUN", "source": "BABELNET"}]
        else:
            bn_id = query["id"][0]
            body = {
                "senses": [
                    {
                        "type": "BabelSense",
                        "properties": {
                            "fullLemma": f"{code.lower()}_{bn_id[3:11]}_{n}",
                            "language": code,
                            "source": "WIKI" if n == 0 else "WNTR",
                        },
                    }
                    for code in query.get("targetLang", [])
                    for n in range(2)
                ]
            }
        data = json.dumps(body).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def serve(port, served) -> None:
    """The fake API, in its own process so it does not share the client's interpreter lock."""
    SyntheticBabelNet.served = served
    server = ThreadingHTTPServer(("127.0.0.1", 0), SyntheticBabelNet)
    port.value = server.server_address[1]
    server.serve_forever()


def mirror_registry(workdir: Path):
    """A stand-in registry of the Babel-ImageNet release's 298 BabelNet codes (synthetic keys)."""
    mirror = REPO / ".." / "shared" / "data"
    with open(mirror / "languages" / "babel_imagenet_languages.tsv", encoding="utf-8") as handle:
        codes = [row["babelnet_code"] for row in csv.DictReader(handle, delimiter="\t")]
    columns = [
        "key",
        "name",
        "iso639_3",
        "script",
        "scripts",
        "iso639_1",
        "babelnet",
        "omw",
        "nllb",
        "langid",
        "in_xlmr",
        "in_eval_100",
        "in_sib200",
        "in_babel_imagenet",
    ]
    lines = ["\t".join(columns)]
    for number, code in enumerate(codes):
        letters = "".join(chr(97 + (number // 26**i) % 26) for i in (2, 1, 0))
        lines.append(
            "\t".join(
                [
                    f"{letters}_Zyyy",
                    code,
                    letters,
                    "Zyyy",
                    "Zyyy",
                    "",
                    code,
                    "",
                    "",
                    "",
                    "False",
                    "False",
                    "False",
                    "True",
                ]
            )
        )
    path = workdir / "languages.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return read_registry(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=3)
    parser.add_argument("--languages", type=int, default=None, help="use only the first N languages")
    args = parser.parse_args()

    with open(REPO / "resources" / "imagenet1k_classes.tsv", encoding="utf-8") as handle:
        synsets = [wnid_to_synset(row["wnid"]) for row in csv.DictReader(handle, delimiter="\t")][: args.classes]
    with tempfile.TemporaryDirectory() as tmp:
        languages_registry = registry() if REGISTRY_PATH.exists() else mirror_registry(Path(tmp))
        keys = [language.key for language in languages_registry if language.babelnet][: args.languages]
        port, served = multiprocessing.Value("i", 0), multiprocessing.Value("i", 0)
        process = multiprocessing.Process(target=serve, args=(port, served), daemon=True)
        process.start()
        while not port.value:
            time.sleep(0.01)
        os.environ["BABELNET_KEY"] = BENCH_KEY
        base_url = f"http://127.0.0.1:{port.value}/v9"
        try:
            results = {}
            for run in ("cold", "warm"):
                if run == "warm":
                    del os.environ["BABELNET_KEY"]  # a warm cache needs no key
                source = BabelNetSource(
                    Path(tmp) / "cache",
                    languages=keys,
                    batch_size=args.batch_size,
                    base_url=base_url,
                    registry=languages_registry,
                )
                served_before, start = served.value, time.perf_counter()
                n_senses = sum(1 for _ in source.senses(synsets))
                results[run] = (
                    source.requests_made,
                    served.value - served_before,
                    time.perf_counter() - start,
                    n_senses,
                )
        finally:
            process.terminate()
            process.join(timeout=5)

    expected = 1 + math.ceil(len(keys) / args.batch_size)
    print(
        f"BabelNet requests, {len(synsets)} ImageNet classes x {len(keys)} languages, "
        f"batch size {args.batch_size} (expected per class: 1 id lookup + {expected - 1} getSynset = {expected})"
    )
    for run, (made, served, seconds, n_senses) in results.items():
        print(
            f"  {run}: {made} requests ({made / len(synsets):.1f} per class; server saw {served}), "
            f"{n_senses} senses, {seconds:.1f} s ({1000 * seconds / len(synsets):.1f} ms per class)"
        )
    cold, warm = results["cold"], results["warm"]
    print(f"  warm/cold time ratio: {warm[2] / cold[2]:.3f}; warm requests: {warm[0]} (must be 0)")
    return 0 if warm[0] == 0 and warm[3] == cold[3] else 1


if __name__ == "__main__":
    sys.exit(main())
