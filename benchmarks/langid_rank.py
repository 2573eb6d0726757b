"""Time langid.py as the audit, prompts and captions checks use it: loading the model and ranking texts.

Run from the repo root: `.venv/bin/python benchmarks/langid_rank.py [--texts 4000]`.
Loads the model from langid.py's model string and from babelforge's cache of the decoded arrays
(written into a temporary folder first), then ranks the mirror's XTD captions and OMW Wiktionary
forms with langid.py's own dense product and with the product over each text's nonzero features
(`babelforge.core.langid`). Prints the wall times, the speed-ups, and how many rankings differ (0:
the two give the same floats).
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from bench_cli import benchmark_parser


def texts_from_mirror(mirror: Path, n: int) -> list[str]:
    xtd = json.loads((mirror / "xtd" / "xtd.json").read_text(encoding="utf-8"))["captions"]
    captions = [text for per_image in xtd.values() for texts in per_image for text in texts]
    forms = []
    for lang in ("deu", "rus", "jpn", "arb", "ell", "hin", "fra", "pol"):
        for line in (mirror / "omw" / "wns" / "wikt" / f"wn-wikt-{lang}.tab").read_text(encoding="utf-8").splitlines():
            if not line.startswith("#") and line.count("\t") >= 2:
                forms.append(line.split("\t")[2])
    half = n // 2
    return captions[:: max(1, len(captions) // half)][:half] + forms[:: max(1, len(forms) // half)][:half]


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--mirror", default="../shared/data", help="the source mirror (XTD captions, OMW forms)")
    parser.add_argument("--texts", type=int, default=4000, help="texts to rank, half captions, half label forms")
    args = parser.parse_args()

    from langid.langid import LanguageIdentifier, model

    from babelforge.core.determinism import cpu_isa_from_params, pin_cpu
    from babelforge.core.params import load_params

    pin_cpu(cpu_isa_from_params(load_params(Path("params.yaml"))))  # as a stage runs
    from babelforge.core.langid import build_identifier

    texts = texts_from_mirror(Path(args.mirror), args.texts)
    start = time.perf_counter()
    LanguageIdentifier.from_modelstring(model, norm_probs=True)
    from_string = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        build_identifier(Path(tmp))  # decodes and writes the cache
        start = time.perf_counter()
        ours = build_identifier(Path(tmp))
        from_cache = time.perf_counter() - start

    start = time.perf_counter()
    dense = [ours.norm_probs(LanguageIdentifier.nb_classprobs(ours, ours.instance2fv(text))) for text in texts]
    dense_seconds = time.perf_counter() - start
    start = time.perf_counter()
    nonzero = [ours.norm_probs(ours.nb_classprobs(ours.instance2fv(text))) for text in texts]
    nonzero_seconds = time.perf_counter() - start
    differ = sum(not (a == b).all() for a, b in zip(dense, nonzero))

    print(
        f"model load      langid.py's string {from_string:.2f} s, babelforge's cache {from_cache:.3f} s "
        f"({from_string / from_cache:.0f}x)"
    )
    print(
        f"rank {len(texts)} texts dense product {dense_seconds:.2f} s, nonzero features {nonzero_seconds:.2f} s "
        f"({dense_seconds / nonzero_seconds:.1f}x); {differ} of {len(texts)} score vectors differ"
    )


if __name__ == "__main__":
    main()
