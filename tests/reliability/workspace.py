"""A small built project for the fault cases: the sample profile on a cut-down copy of the
source mirror (four OMW files, three SIB-200 languages), every long stage built once.

Stages run as `babelforge` subprocesses with the workspace as their working directory, as
`dvc repro` runs them, so an exit code, a message and a killed process are all real.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
MIRROR = (REPO / ".." / "shared" / "data").resolve()

# The cut-down mirror: enough for a few languages of labels and prompts, and MVL-SIB.
OMW_FILES = (
    "wns/fra/wn-data-fra.tab",
    "wns/wikt/wn-wikt-deu.tab",
    "wns/wikt/wn-wikt-pol.tab",
    "wns/wikt/wn-wikt-fra.tab",
)
SIB_LANGUAGES = ("eng_Latn", "deu_Latn", "fra_Latn")

# What the build writes (the outputs every case must leave byte for byte as they were).
BUILT = ("data", "models")
# The long stages, in build order, with their command lines.
STAGES = {
    "wordnet": ["wordnet"],
    "senses": ["senses"],
    "labels": ["labels"],
    "mvl_sib_images": ["mvl_sib_images"],
    "mvl_sib": ["mvl_sib"],
    "nllb": ["nllb"],
    "prompts": ["prompts"],
    # the models params.yaml lists: an eval stage loads and checks them before it reads its inputs
    "eval_tiny_clip": ["eval_tiny_clip"],
}


def babelforge() -> list[str]:
    """The CLI as this interpreter runs it (no reliance on PATH)."""
    return [sys.executable, "-m", "babelforge.cli"]


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("BABELNET_KEY", "HF_TOKEN")}
    env.update(
        {
            "PYTHONPATH": str(REPO),
            "DVC_NO_ANALYTICS": "1",
            "PYTHONUNBUFFERED": "1",
            "BABELFORGE_HTTP_POLICY": "attempts=2,base_delay=0.01,max_delay=0.05,max_retry_after=60,timeout=1",
        }
    )
    env.update(extra or {})
    return env


@dataclass
class Workspace:
    root: Path

    def run(
        self, args: list[str], env: dict[str, str] | None = None, timeout: int = 300, preexec_fn=None
    ) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*babelforge(), *args],
            cwd=self.root,
            env=environment(env),
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=preexec_fn,
        )

    def start(self, args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
        return subprocess.Popen(
            [*babelforge(), *args],
            cwd=self.root,
            env=environment(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def build(self, stage: str) -> None:
        result = self.run(STAGES[stage])
        assert result.returncode == 0, f"babelforge {stage} failed:\n{result.stderr[-3000:]}"

    def digests(self, folders=BUILT) -> dict[str, str]:
        """sha256 of every file under the built folders (temp and lock files included: they must not stay)."""
        found = {}
        for folder in folders:
            for path in sorted((self.root / folder).rglob("*")):
                if path.is_file():
                    found[path.relative_to(self.root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
        return found


def leftovers(root: Path) -> list[str]:
    """Temp, lock and partial files anywhere under `root`: a finished or failed run leaves none."""
    return sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.name.endswith((".tmp", ".old", ".lock", ".part")) and path.name.startswith(".")
    )


def make_sources(root: Path) -> None:
    """The cut-down mirror under `root/sources` (read by the stages through params.yaml)."""
    for name in OMW_FILES:
        (root / "sources" / "omw" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(MIRROR / "omw" / name, root / "sources" / "omw" / name)
    for code in SIB_LANGUAGES:
        shutil.copytree(MIRROR / "sib-200" / "annotated" / code, root / "sources" / "sib-200" / code)


def write_params(root: Path) -> Path:
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    params["profile"] = "sample"
    params["senses"]["omw_dir"] = "sources/omw"
    params["mvl_sib"]["sib_dir"] = "sources/sib-200"
    params["nllb"]["sib_dir"] = "sources/sib-200"
    params["wordnet"]["nltk_data"] = str(root / ".cache" / "nltk_data")
    # small and quick: thumbnails of 64 px, one slot strategy, greedy and short decoding
    params["mvl_sib"]["images"]["thumbnail_px"] = 64
    params["prompts"].update(strategies=["brace"], beam_size=1, max_decoding_length=8)
    path = root / "params.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def build_workspace(root: Path, stages=tuple(STAGES)) -> Workspace:
    """Sources, params.yaml, `resources` (a link to the repository's) and every stage in `stages`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "resources").symlink_to(REPO / "resources")
    (root / "dvc.yaml").symlink_to(REPO / "dvc.yaml")
    make_sources(root)
    write_params(root)
    workspace = Workspace(root)
    for stage in stages:
        workspace.build(stage)
    return workspace


def copy_workspace(source: Workspace, dest: Path) -> Workspace:
    """An independent copy (for cases that change or kill what is built)."""
    shutil.copytree(source.root, dest, symlinks=True, ignore=shutil.ignore_patterns(".cache"))
    return Workspace(dest)
