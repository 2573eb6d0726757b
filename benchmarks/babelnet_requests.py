"""BabelNet requests per ImageNet class, cold and warm cache, against a loopback API.

    python benchmarks/babelnet_requests.py                 # 20 classes: seconds
    python benchmarks/babelnet_requests.py --classes 1000  # every ImageNet class: over 10 minutes on 2 cores

The full-profile rehearsal's BabelNet stand-in (tests/standins/babelnet.py), serving in a
process of its own, answers the two calls the client makes with synthetic senses for every
class in every language asked for. The first pass starts from an empty cache (cold), the
second reads the same cache (warm: it must make no request). The languages are the
registry's BabelNet languages (resources/languages.tsv).
"""

from __future__ import annotations

import csv
import math
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_cli import benchmark_parser  # noqa: E402

from babelforge.core.languages import registry  # noqa: E402
from babelforge.lexicon.babelnet import BabelNetSource  # noqa: E402
from babelforge.lexicon.senses import wnid_to_synset  # noqa: E402
from tests.standins.babelnet import serve_in_subprocess  # noqa: E402

BENCH_KEY = "benchmark-key-0000"


def server_rate(url: str, offsets: list[int], codes: list[str], count: int) -> float:
    """Requests per second the stand-in answers alone: one keep-alive connection, no client cache, the
    client's mix (an id lookup, then getSynset with three languages)."""
    import http.client
    from urllib.parse import urlencode, urlsplit

    from tests.standins.babelnet import bn_id

    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    per_class = 1 + math.ceil(len(codes) / 3)
    start = time.perf_counter()
    for number in range(count):
        offset, step = offsets[(number // per_class) % len(offsets)], number % per_class
        if step == 0:
            query = {"id": f"wn:{offset:08d}n", "source": "WN", "wnVersion": "WN_30", "key": BENCH_KEY}
            path = "getSynsetIdsFromResourceID"
        else:
            targets = codes[3 * (step - 1) : 3 * step]
            query = [("id", bn_id(offset)), *(("targetLang", code) for code in targets), ("key", BENCH_KEY)]
            path = "getSynset"
        connection.request("GET", f"{parts.path}/{path}?{urlencode(query)}")
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"the stand-in answered HTTP {response.status}")
    connection.close()
    return count / (time.perf_counter() - start)


def main() -> int:
    parser = benchmark_parser(__doc__)
    # The default is small so a plain run finishes in seconds: each class costs ~1 s cold against all
    # 298 languages on 2 cores, so the 1,000 classes of ImageNet are a run of their own (by flag).
    parser.add_argument(
        "--classes", type=int, default=20, help="ImageNet classes asked for (1000: all of them, over 10 minutes)"
    )
    parser.add_argument("--batch-size", type=int, default=3, help="languages per getSynset request")
    parser.add_argument("--languages", type=int, default=None, help="use only the first N languages")
    parser.add_argument("--raw", type=int, default=2_000, help="requests of the server-alone rate (0: skip)")
    args = parser.parse_args()

    with open(REPO / "resources" / "imagenet1k_classes.tsv", encoding="utf-8") as handle:
        synsets = [wnid_to_synset(row["wnid"]) for row in csv.DictReader(handle, delimiter="\t")][: args.classes]
    languages_registry = registry()
    keys = [language.key for language in languages_registry if language.babelnet][: args.languages]
    with tempfile.TemporaryDirectory() as tmp, serve_in_subprocess(keys=[BENCH_KEY]) as api:
        os.environ["BABELNET_KEY"] = BENCH_KEY
        results = {}
        for run in ("cold", "warm"):
            if run == "warm":
                del os.environ["BABELNET_KEY"]  # a warm cache needs no key
            source = BabelNetSource(
                Path(tmp) / "cache",
                languages=keys,
                batch_size=args.batch_size,
                base_url=api.url,
                registry=languages_registry,
            )
            served_before, start = api.answered(), time.perf_counter()
            n_senses = sum(1 for _ in source.senses(synsets))
            seconds = time.perf_counter() - start
            results[run] = (source.requests_made, api.answered() - served_before, seconds, n_senses)
        codes = [languages_registry.get(key).babelnet for key in keys]
        offsets = [int(synset[:8]) for synset in synsets]
        rate = server_rate(api.url, offsets, codes, args.raw) if args.raw else None

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
    print(f"  cold: {cold[0] / cold[2]:.0f} requests/s through the client (its cache writes included)")
    if rate is not None:
        print(f"  the stand-in alone: {rate:.0f} requests/s ({args.raw} requests, one keep-alive connection)")
    print(f"  warm/cold time ratio: {warm[2] / cold[2]:.3f}; warm requests: {warm[0]} (must be 0)")
    return 0 if warm[0] == 0 and warm[3] == cold[3] else 1


if __name__ == "__main__":
    sys.exit(main())
