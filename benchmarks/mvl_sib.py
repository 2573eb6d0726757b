"""Benchmark: assemble every MVL-SIB task config for all SIB-200 languages.

Reads SIB-200 from the mirror, verifies and thumbnails the generated sample images, then
times the assembly (sampling + task planning + writing every Parquet file) into a
temporary folder. Prints the time of each phase, the output size, and the machine load
(the machine is shared, so wall time depends on what else runs).

    python benchmarks/mvl_sib.py [--sib-dir ../shared/data/sib-200/annotated] [--languages N]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from bench_cli import benchmark_parser

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TARGET_SECONDS = 60.0


def _default_sib_dir() -> Path:
    return REPO.parent / "shared" / "data" / "sib-200" / "annotated"


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--sib-dir", type=Path, default=_default_sib_dir())
    parser.add_argument("--languages", type=int, help="only the first N languages (default: all)")
    args = parser.parse_args()

    from babelforge.core.io import read_table
    from babelforge.core.sources import input_record
    from babelforge.mvl_sib.images import generate_sample_set, manifest_text
    from babelforge.mvl_sib.images_stage import build_images
    from babelforge.mvl_sib.mvl_sib_stage import Config, assemble_all, language_sha256
    from babelforge.mvl_sib.sib200 import list_languages, read_corpus

    load_before = os.getloadavg()
    languages = list_languages(args.sib_dir)[: args.languages] if args.languages else None
    with tempfile.TemporaryDirectory(prefix="mvl_sib_bench.") as tmp:
        tmp = Path(tmp)
        started = time.perf_counter()
        corpus = read_corpus(args.sib_dir, languages)
        read_s = time.perf_counter() - started

        started = time.perf_counter()
        entries = generate_sample_set(tmp / "images" / "generated")
        manifest = tmp / "images" / "generated" / "manifest.tsv"
        manifest.write_text(manifest_text(entries), encoding="utf-8")
        build_images(manifest, tmp / "images", per_topic=10, thumbnail_px=640, provenance_record={})
        images_s = time.perf_counter() - started

        images = read_table(tmp / "images" / "images.parquet")
        images["path"] = [str(tmp / "images" / "thumbnails" / name) for name in images["file"]]
        sources = {
            "sib200": input_record(args.sib_dir),
            "languages": {lang: {"sha256": language_sha256(args.sib_dir, lang)} for lang in corpus.languages},
        }
        out = tmp / "mvl_sib"
        out.mkdir()
        cpu_started, started = time.process_time(), time.perf_counter()
        configs = assemble_all(corpus, images, Config(), out, sources)
        assemble_s, assemble_cpu = time.perf_counter() - started, time.process_time() - cpu_started

        files = [p for p in out.rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        task_files = [p for p in files if p.suffix == ".parquet" and p.parent != out]
        rows = len(configs) * len(corpus.languages) * next(iter(configs.values()))
    load_after = os.getloadavg()

    n_lang = len(corpus.languages)
    print(
        f"MVL-SIB benchmark: {n_lang} languages × {len(configs)} task configs = {len(task_files)} files, {rows:,} rows"
    )
    print(f"  read + validate SIB-200     {read_s:6.2f} s  ({n_lang * 3} TSV files)")
    print(f"  sample images (70) verify+thumbnail {images_s:6.2f} s")
    print(
        f"  assemble all tasks          {assemble_s:6.2f} s wall, {assemble_cpu:.2f} s CPU "
        f"({assemble_s / n_lang * 1000:.0f} ms per language)"
    )
    print(
        f"  read + assemble             {read_s + assemble_s:6.2f} s  (target < {TARGET_SECONDS:.0f} s: "
        f"{'met' if read_s + assemble_s < TARGET_SECONDS else 'MISSED'}, "
        f"{TARGET_SECONDS / (read_s + assemble_s):.1f}× headroom)"
    )
    print(
        f"  output                      {size / 2**20:6.1f} MiB in {len(files)} files "
        f"({size / max(1, len(task_files)) / 1024:.0f} KiB per task file, {size / rows:.1f} B per row)"
    )
    print(f"  load average (1 min) before/after: {load_before[0]:.2f} / {load_after[0]:.2f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
