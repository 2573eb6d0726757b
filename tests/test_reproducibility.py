"""Same bytes on another machine: the NLLB-, COMETKiwi- and CLIP-derived artifacts built by the CLI
in two subprocesses whose environments make the libraries pick other kernels (as another CPU
would: other ISA, MKL in CTranslate2, other oneDNN/OpenBLAS/numpy dispatch) and at two paths.

The stages' pin (params.yaml build.cpu_isa, set by the CLI before the libraries load) must win
over the machine. A small sample-profile build: the tiny models, 3 prompt languages, 8 captions
into 3 languages (n-best, tagged with COMETKiwi), CLIPScore and retrieval on 16 images.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO / ".." / "shared" / "data").resolve()

# Another x86-64 machine, as far as the libraries can tell: what each would pick elsewhere.
OTHER_MACHINE = {
    "CT2_FORCE_CPU_ISA": "AVX",
    "CT2_USE_MKL": "1",
    "ONEDNN_MAX_CPU_ISA": "AVX",
    "MKL_CBWR": "COMPATIBLE",
    "ATEN_CPU_CAPABILITY": "default",
    "OPENBLAS_CORETYPE": "Sandybridge",
    "NPY_DISABLE_CPU_FEATURES": "AVX2 FMA3",
}
STAGES = [
    ["nllb"],
    ["prompts"],
    ["captions_kiwi_model"],
    ["captions_translate"],
    ["captions_tag"],
    ["eval_tiny_clip"],
    ["eval_images"],
    ["eval_clipscore"],
    ["eval_retrieval"],
]
# One process per machine: the first stage pins before torch/ctranslate2/numpy load; later
# stages find the same pin. BABELFORGE_TEST_UNPINNED drops the pin (to measure what it changes).
BUILD = """
import sys
from babelforge import cli
if len(sys.argv) > 1 and sys.argv[1] == "unpinned":
    cli.PINNED_STAGES = frozenset()
for stage in {stages!r}:
    code = cli.main(stage)
    if code:
        sys.exit(f"{{stage[0]}} exited {{code}}")
"""
ARTIFACTS = [
    "models/nllb-ct2",
    "models/cometkiwi-tiny",
    "models/tiny_clip",
    "data/babel_imagenet/prompts.parquet",
    "data/babel_imagenet/prompts_summary.json",
    "data/captions",
    "reports/eval/clipscore.json",
    "reports/eval/retrieval.json",
]


def small_params() -> dict:
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    params["profile"] = "sample"
    params["captions"]["input"].update(limit=8, targets=["deu_Latn", "zho_Hans", "rus_Cyrl"])
    params["eval"]["tiny_clip"]["seeds"] = [0]
    params["eval"]["common"]["models"] = {"sample": [{"id": "models/tiny_clip/s0"}], "full": []}
    params["eval"]["images"].update(n_classes=4, caption_images=16, caption_sets=["data/raw/xtd/xtd.json"])
    for task in ("clipscore", "retrieval"):
        params["eval"][task].update(
            max_images={"sample": 16, "full": None},
            languages=["de", "zh", "ru"],
            caption_sets=["data/raw/xtd/xtd.json"],
        )
    return params


def checkout(root: Path) -> Path:
    """A project folder: params, the repo's resources, the source mirror as data/raw, 3 label languages."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root.mkdir(parents=True)
    (root / "params.yaml").write_text(yaml.safe_dump(small_params(), sort_keys=False), encoding="utf-8")
    (root / "resources").symlink_to(REPO / "resources")
    (root / "data" / "babel_imagenet").mkdir(parents=True)
    (root / "data" / "raw").symlink_to(SHARED_DATA)
    pq.write_table(
        pa.table({"lang": ["arb_Arab", "deu_Latn", "zho_Hans"]}), root / "data" / "babel_imagenet" / "languages.parquet"
    )
    return root


def digests(root: Path) -> dict[str, str]:
    out = {}
    for name in ARTIFACTS:
        path = root / name
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        # Dot folders hold the runners' timing records (data/captions/.rates), not DVC outputs.
        for file in [f for f in files if not any(part.startswith(".") for part in f.relative_to(root).parts)]:
            out[file.relative_to(root).as_posix()] = hashlib.sha256(file.read_bytes()).hexdigest()
    return out


def start_build(root: Path, machine: dict[str, str], *extra: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in OTHER_MACHINE}
    env.update(machine, PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", DVC_NO_ANALYTICS="1")
    return subprocess.Popen(
        [sys.executable, "-c", BUILD.format(stages=STAGES), *extra],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def build_on_two_machines(tmp_path: Path, *extra: str) -> tuple[dict, dict]:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"the source mirror is missing: expected it at {SHARED_DATA}")
    roots = checkout(tmp_path / "here"), checkout(tmp_path / "another" / "checkout")
    builds = [start_build(roots[0], {}, *extra), start_build(roots[1], OTHER_MACHINE, *extra)]
    for build in builds:
        output, _ = build.communicate(timeout=600)
        assert build.returncode == 0, output[-3000:]
    return digests(roots[0]), digests(roots[1])


@pytest.mark.slow
def test_artifacts_are_the_same_bytes_on_another_machine_and_path(tmp_path):
    here, there = build_on_two_machines(tmp_path)
    assert set(here) == set(there)
    assert any("captions/hypotheses/" in name and name.endswith(".parquet") for name in here)
    assert any("captions/attributes/" in name and name.endswith(".parquet") for name in here)
    different = sorted(name for name in here if here[name] != there[name])
    assert different == [], f"{len(different)} of {len(here)} files differ: {different}"


if __name__ == "__main__":
    # The figure for docs/reproducibility.md: files that differ with the pin and without it.
    import tempfile

    for mode in ("pinned", "unpinned"):
        with tempfile.TemporaryDirectory() as scratch:
            a, b = build_on_two_machines(Path(scratch), mode)
            same = [name for name in a if a[name] == b.get(name)]
            print(
                f"{mode}: {len(same)}/{len(a)} files identical; differ: "
                + ", ".join(sorted(n for n in a if a[n] != b.get(n)))
            )
