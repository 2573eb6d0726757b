"""The `full` profile rehearsed end to end against loopback stand-ins, each stage's cost measured.

    python benchmarks/full_rehearsal.py --scale 1x              # about 1 % of the full build: about 4 minutes on 2 cores
    python benchmarks/full_rehearsal.py --scale 10x             # about 10 %: about 11 minutes on 2 cores
    python benchmarks/full_rehearsal.py --scale full --stages fetch,wordnet,senses,labels   # in parts
    python benchmarks/full_rehearsal.py --report                # the table and the log-log plot, into the docs

A copy of the project (tracked and untracked files, as `git ls-files` lists them) is switched to
`profile: full` and pointed at stand-ins on 127.0.0.1 that this process serves while the stages run:
the BabelNet HTTP API (synthetic senses for every class and language, tests/standins/babelnet.py), the
Hugging Face Hub (`HF_ENDPOINT`: tiny models under the real ids at their pinned commits,
tests/standins/hub_models.py; the MVL-SIB image release as the Hub dataset), and a file mirror
(`mirror_url`: the XM3600 release in its published formats, tests/standins/files.py). Nothing is
downloaded from elsewhere; the synthetic data is generated (into --work), never shipped.

Then `babelforge pins --update` pins what the profile leaves unpinned (from the stand-ins, as a user
would from the Hub) and every stage of dvc.yaml runs as `dvc repro --single-item <stage>`, in pipeline
order, each in a process of its own: its wall time, its peak RSS (the largest process of the stage's
tree, `wait4`), the bytes and files of its outputs (dvc.lock) and the requests each stand-in answered
are recorded. `dvc status` must be clean at the end. The copy runs its own frozen `babelforge` (its
root first on PYTHONPATH), and `--resume` starts the driver again on it, so the working tree can change
while a run in parts goes on. Results go to benchmarks/results/full_rehearsal.json
(one entry per scale, replaced when that scale is run again); `--report` writes the table and plot.

What is scaled (`SIZES`): ImageNet classes, BabelNet languages, MVL-SIB languages, caption rows, XM3600
images and ImageNet validation images (50 per class). The 80 templates, the 7 MVL-SIB topics and the ten
caption targets are the full profile's at every scale. Two settings differ from the full profile, both
because the stand-in models are random tiny ones: their decoding never stops by itself, so the caption
translation decodes 2 hypotheses with beam 2 up to 16 tokens (the paper: 25 of beam 100, up to 256), and
the evaluation runs the one Hub CLIP with a transformers stand-in (`openai/clip-vit-base-patch32`); the
two OpenCLIP tags of `eval.common.models` build their architecture from open_clip's own configs (a
ViT-B/32 with XLM-R base: full size whatever the weights), so no tiny stand-in exists for them. What
the real models cost is projected from measured per-item rates (`--report`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml
from bench_cli import benchmark_parser

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.project import command_env, copy_project  # noqa: E402

RESULTS = REPO / "benchmarks" / "results" / "full_rehearsal.json"
SHARED_DATA = REPO.parent / "shared" / "data"
BABELNET_KEY = "rehearsal-key"  # the stand-in's; not a secret
# fixed loopback ports: the URLs land in params.yaml and the MVL-SIB manifest, so a run in parts keeps them
PORTS = {"babelnet": 18451, "hub": 18452, "mirror": 18453}
# the project's own least classes per language, scaled with the classes (read here: a resumed copy has it scaled)
FULL_MIN_CLASSES = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))["labels"]["min_classes"]


@dataclass(frozen=True)
class Sizes:
    """What one rehearsal builds: the full profile's numbers times a scale."""

    classes: int
    languages: int  # BabelNet languages (Babel-ImageNet's)
    mvl_sib_languages: int
    captions: int
    xm3600_images: int
    imagenet_per_class: int = 50


FULL = Sizes(classes=1000, languages=298, mvl_sib_languages=205, captions=200_000, xm3600_images=3600)
SCALES = {"1x": 0.01, "10x": 0.1, "full": 1.0}


def sizes_for(scale: float) -> Sizes:
    """The full sizes times `scale`, each at least what a stage needs to run (a language needs 10 classes)."""

    def times(full: int, least: int) -> int:
        return max(least, round(full * scale))

    return Sizes(
        classes=times(FULL.classes, 10),
        languages=times(FULL.languages, 3),
        mvl_sib_languages=times(FULL.mvl_sib_languages, 2),
        captions=times(FULL.captions, 100),
        xm3600_images=times(FULL.xm3600_images, 36),
    )


def evenly(items: list, count: int) -> list:
    """`count` items spread evenly over `items` (first and last included), in their order."""
    if count >= len(items):
        return list(items)
    if count == 1:
        return [items[0]]
    return [items[round(i * (len(items) - 1) / (count - 1))] for i in range(count)]


# ------------------------------------------------------------------ the project copy


def read_tsv(path: Path) -> tuple[list[str], list[list[str]]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines[0].split("\t"), [line.split("\t") for line in lines[1:] if line]


def write_tsv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    path.write_text("\n".join("\t".join(row) for row in [header, *rows]) + "\n", encoding="utf-8")


def scale_classes(project: Path, count: int) -> list[str]:
    """Keep `count` of the 1,000 ImageNet classes (evenly spread) in the copy's class list; their wnids."""
    path = project / "resources" / "imagenet1k_classes.tsv"
    header, rows = read_tsv(path)
    kept = evenly(rows, count)
    index = header.index("class_idx")
    for number, row in enumerate(kept):  # the list's indices run 0..N-1 (the wordnet stage checks it)
        row[index] = str(number)
    write_tsv(path, header, kept)
    return [row[header.index("wnid")] for row in kept]


def scale_languages(project: Path, count: int) -> list[str]:
    """Keep `count` of the registry's Babel-ImageNet languages (evenly spread): the others leave
    Babel-ImageNet in the copy's registry (`in_babel_imagenet` False), so senses asks BabelNet for these."""
    path = project / "resources" / "languages.tsv"
    header, rows = read_tsv(path)
    flag, code = header.index("in_babel_imagenet"), header.index("babelnet")
    babel = [row for row in rows if row[flag] == "True" and row[code]]
    kept = {row[0] for row in evenly(babel, count)}
    for row in rows:
        if row[flag] == "True" and row[0] not in kept:
            row[flag] = "False"
    write_tsv(path, header, rows)
    return sorted(kept)


def mvl_sib_languages(count: int) -> list[str]:
    """`count` SIB-200 language folders of the source mirror, evenly spread."""
    folders = sorted(p.name for p in (SHARED_DATA / "sib-200" / "annotated").iterdir() if p.is_dir())
    return evenly(folders, count)


def set_key(params: dict, dotted: str, value) -> None:
    node = params
    *parents, last = dotted.split(".")
    for name in parents:
        node = node.setdefault(name, {})
    node[last] = value


def configure(project: Path, sizes: Sizes, stand_ins: dict, xm3600_sha256: dict[str, str], captions: Path) -> None:
    """Switch the copy to the full profile, pointed at the stand-ins; the scaled lists written."""
    path = project / "params.yaml"
    params = yaml.safe_load(path.read_text(encoding="utf-8"))
    models = params["eval"]["common"]["models"]
    models = models["full"] if isinstance(models, dict) else models  # a resumed part: configured already
    settings = {
        "profile": "full",
        "fetch.mirror": str(SHARED_DATA),
        "senses.babelnet.base_url": stand_ins["babelnet"],
        "xm3600_fetch.mirror_url": stand_ins["mirror"],
        **{f"xm3600_fetch.{key}": digest for key, digest in xm3600_sha256.items()},
        "mvl_sib.languages": mvl_sib_languages(sizes.mvl_sib_languages),
        # a complete language has every class of the copy; the least a language keeps, scaled alike
        "audit.total_classes": sizes.classes,
        "labels.min_classes": max(1, round(FULL_MIN_CLASSES * sizes.classes / FULL.classes)),
        "captions.input.format": "table",
        "captions.input.path": str(captions),
        # the random tiny NLLB never stops by itself: a short, narrow search (see the docstring)
        "captions.translate.beam_size": 2,
        "captions.translate.num_hypotheses": 2,
        "captions.translate.max_decoding_length": 16,
        "eval.common.models": [model for model in models if not model["id"].startswith("open_clip:")],
    }
    for dotted, value in settings.items():
        set_key(params, dotted, value)
    path.write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")


# ------------------------------------------------------------------ running and measuring


@dataclass
class StageCost:
    stage: str
    seconds: float
    peak_rss_mb: float
    out_mb: float
    out_files: int
    requests: dict[str, int]
    ran: bool
    status: int


def stage_names(project: Path, env: dict) -> list[str]:
    """Every stage (each item of a `foreach` stage) in an order DVC can run them one by one: DVC's own graph
    sorted topologically, ties broken by dvc.yaml's order."""
    script = """
import json, sys, networkx as nx
from dvc.repo import Repo
declared = json.loads(sys.argv[1])
graph = Repo(".").index.graph.reverse()  # DVC's edges go from a stage to what it depends on
rank = lambda stage: f"{declared.index(stage.addressing.split('@')[0]):04d}{stage.addressing}"
print(json.dumps([stage.addressing for stage in nx.lexicographical_topological_sort(graph, key=rank)]))
"""
    declared = list(yaml.safe_load((project / "dvc.yaml").read_text())["stages"])
    command = [sys.executable, "-c", script, json.dumps(declared)]
    return json.loads(subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, check=True).stdout)


def outs_of(project: Path, stage: str) -> tuple[float, int]:
    """(MB, files) of the stage's outputs, as dvc.lock records them."""
    lock = yaml.safe_load((project / "dvc.lock").read_text()) or {}
    outs = ((lock.get("stages") or {}).get(stage) or {}).get("outs") or []
    return sum(out.get("size", 0) for out in outs) / 1e6, sum(out.get("nfiles", 1) for out in outs)


def run_measured(command: list[str], cwd: Path, env: dict, log: Path) -> tuple[int, float, float]:
    """(exit status, seconds, peak RSS in MB of the largest process of its tree)."""
    start = time.monotonic()
    with log.open("ab") as sink:
        sink.write(f"\n$ {' '.join(command)}\n".encode())
        sink.flush()
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, time.monotonic() - start, usage.ru_maxrss / 1024


def measure_stages(
    project: Path, stages: list[str], env: dict, counters, log: Path, force: bool, saved
) -> list[StageCost]:
    """Each stage alone, measured; `saved(costs)` after each, so a run cut off keeps what it measured."""
    costs = []
    for stage in stages:
        before, start = counters(), (log.stat().st_size if log.exists() else 0)
        command = ["dvc", "repro", "--single-item", *(["--force"] if force else []), stage]
        status, seconds, rss = run_measured(command, project, env, log)
        with log.open("rb") as stream:
            stream.seek(start)
            said = stream.read().decode(errors="replace")
        after = counters()
        out_mb, files = outs_of(project, stage)
        ran = f"Stage '{stage}' didn't change, skipping" not in said
        cost = StageCost(
            stage, round(seconds, 1), round(rss, 1), round(out_mb, 1), files,
            {name: after[name] - before[name] for name in after}, ran, status,
        )  # fmt: skip
        costs.append(cost)
        saved(costs)
        requests = ", ".join(f"{name} {count}" for name, count in cost.requests.items() if count)
        print(
            f"  {stage:<20} {seconds:8.1f} s  {rss:8.0f} MB RSS  {out_mb:9.1f} MB out  {files:7d} files"
            f"  {requests or 'no requests'}{'' if status == 0 else f'  FAILED ({status}), see {log}'}",
            flush=True,
        )
        if status != 0:
            break
    return costs


@contextmanager
def stand_ins(store: Path, sizes: Sizes, work: Path) -> Iterator[dict]:
    """The three services on 127.0.0.1, with what they hold; yields their URLs, the XM3600 pins and counters."""
    from tests.hub_standin import HubStandIn
    from tests.loopback import LoopbackServer, serving
    from tests.standins import files
    from tests.standins.babelnet import BabelNetStandIn
    from tests.standins.hub_models import publish_full_profile_models

    mirror_root = store / "mirror"
    xm3600 = files.write_xm3600_mirror(mirror_root / f"xm3600-{sizes.xm3600_images}", n_images=sizes.xm3600_images)
    with ExitStack() as stack:
        babelnet = stack.enter_context(BabelNetStandIn(keys=[BABELNET_KEY], port=PORTS["babelnet"]))
        mirror = stack.enter_context(serving(LoopbackServer(root=xm3600.folder.parent, port=PORTS["mirror"])))
        hub = stack.enter_context(HubStandIn(port=PORTS["hub"]))
        # built in a process of its own: torch would stay in this one, and Linux counts the RSS of the process a
        # stage is started from in that stage's peak (exec keeps the old high-water mark)
        build = "import sys; from pathlib import Path; from tests.standins.hub_models import build_tiny_models as b; "
        subprocess.run(
            [sys.executable, "-c", build + "b(Path(sys.argv[1]))", str(work / "models")], cwd=REPO, check=True
        )
        publish_full_profile_models(hub, work / "models")  # found built: reads the files
        hub.add("WueNLP/mvl-sib", files.mvl_sib_release_files(), repo_type="dataset")

        def counters() -> dict[str, int]:
            return {"babelnet": babelnet.requests(), "hub": len(hub.requests), "mirror": len(mirror.requests)}

        yield {
            "babelnet": babelnet.url,
            "hub": hub.url,
            "mirror": mirror.url,
            "xm3600": xm3600.pins,
            "counters": counters,
        }


def image_folders(project: Path, store: Path, wnids: list[str], sizes: Sizes) -> None:
    """The image sets the full profile reads from folders a user fills: generated once per size, linked in."""
    from tests.standins import files

    imagenet = store / f"imagenet-{len(wnids)}x{sizes.imagenet_per_class}"
    if not imagenet.is_dir():
        files.write_imagenet_val(imagenet.with_suffix(".part"), wnids, sizes.imagenet_per_class)
        imagenet.with_suffix(".part").rename(imagenet)
    captions_images = store / "caption-images"
    if not captions_images.is_dir():
        part = captions_images.with_suffix(".part")
        files.write_caption_set_images(SHARED_DATA / "xtd" / "xtd.json", part / "coco")
        files.write_caption_set_images(SHARED_DATA / "xtd" / "xflickrco.json", part / "xflickrco")
        part.rename(captions_images)
    for link, target in {
        "data/imagenet/val": imagenet,
        "data/images/coco/train2014": captions_images / "coco",
        "data/images/xflickrco": captions_images / "xflickrco",
    }.items():
        (project / link).parent.mkdir(parents=True, exist_ok=True)
        (project / link).symlink_to(target, target_is_directory=True)


def freeze_package(project: Path, repo: Path = REPO) -> None:
    """The copy's own `babelforge` package, as files at its root (first on its PYTHONPATH): the
    installed package is the working tree's, and a rehearsal in parts runs for hours while that
    tree is edited; what runs must be the code the copy's dvc.lock records. The package's layout is
    the repository's `.static-imports/babelforge` (links into `builders/`, `eval/`, ...), which a
    copy leaves out because it copies files, not links: each link is followed to its folder and that
    folder is taken from the copy."""
    frozen = project / "babelforge"
    frozen.mkdir()
    package = repo / ".static-imports" / "babelforge"
    for entry in sorted(package.iterdir()):
        source = project / entry.resolve().relative_to(repo.resolve())
        if entry.name == "resources":  # data, not code: the copy's own folder, as the installed package has it
            (frozen / entry.name).symlink_to(Path("..") / source.relative_to(project), target_is_directory=True)
        elif source.is_dir():
            shutil.copytree(source, frozen / entry.name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, frozen / entry.name)


def frozen_package_env(work: Path, scales: list[str], environ: dict[str, str]) -> dict[str, str] | None:
    """The environment that puts a resumed run's frozen package (its copy's root) first on the import
    path, or None when it is first already, no copy is frozen yet, or several scales (several copies) run."""
    if len(scales) != 1:
        return None
    project = work / scales[0] / "project"
    first = environ.get("PYTHONPATH", "").split(os.pathsep)[0]
    if not (project / "babelforge").is_dir() or first == str(project):
        return None
    return {**environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(project), environ.get("PYTHONPATH")]))}


def rehearse(scale_name: str, work: Path, only: list[str] | None, resume: bool, force: bool = False) -> dict:
    from tests.standins import files

    sizes = sizes_for(SCALES[scale_name])
    run_dir = work / scale_name
    project = run_dir / "project"
    store = work / "store"
    store.mkdir(parents=True, exist_ok=True)
    log = run_dir / "rehearsal.log"
    captions = store / f"captions-{sizes.captions}.parquet"
    hf_home = run_dir / "hf"
    print(f"rehearsal {scale_name}: {asdict(sizes)}", flush=True)
    started = time.monotonic()
    if not (resume and project.is_dir()):  # a part of a run goes on in the copy the run began
        shutil.rmtree(project, ignore_errors=True)
        shutil.rmtree(hf_home, ignore_errors=True)
        project.mkdir(parents=True)
        log.write_text("")
        copy_project(project)
        freeze_package(project)
        wnids = scale_classes(project, sizes.classes)
        scale_languages(project, sizes.languages)
        if not captions.exists():
            files.write_caption_input(captions, sizes.captions)
        image_folders(project, store, wnids, sizes)
    with stand_ins(store, sizes, work) as served:
        configure(project, sizes, served, served["xm3600"], captions)
        env = {
            **command_env(project),
            "HF_ENDPOINT": served["hub"],
            "HF_HOME": str(hf_home),
            "BABELNET_KEY": BABELNET_KEY,
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "NO_PROXY": "127.0.0.1",
        }
        env.pop("HF_HUB_OFFLINE", None)
        pinned, seconds, _ = run_measured(["babelforge", "pins", "--update"], project, env, log)
        print(f"  pins --update: exit {pinned} in {seconds:.1f} s (the paper models are eval_paper's, not stood in)")
        stages = [name for name in stage_names(project, env) if not only or name.split("@")[0] in only or name in only]

        def result(costs: list[StageCost], clean: bool | None = None) -> dict:
            return {
                "scale": scale_name,
                "sizes": asdict(sizes),
                "stages": [asdict(cost) for cost in costs],
                "dvc_status_clean": clean,
                "measured": time.strftime("%Y-%m-%d"),
                "machine": machine(),
            }

        # the first save of a new run replaces the scale's entry; every later one adds to it
        costs = measure_stages(
            project, stages, env, served["counters"], log, force,
            lambda costs: save(result(costs), merge=resume or len(costs) > 1),
        )  # fmt: skip
        status = subprocess.run(["dvc", "status"], cwd=project, env=env, capture_output=True, text=True)
    clean = "Data and pipelines are up to date" in status.stdout
    print(f"rehearsal {scale_name}: {time.monotonic() - started:.0f} s; dvc status {'clean' if clean else 'NOT clean'}")
    if not clean:
        print(status.stdout[-2000:])
    final = result(costs, clean)
    save(final, merge=True)
    return final


def machine() -> str:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        "unknown CPU",
    )
    return f"{os.cpu_count()} cores, {cpu}"


def merged(earlier: dict | None, result: dict) -> dict:
    """A run's result with an earlier part's stages of the same scale and sizes kept (a later part's row of a
    stage replaces the earlier one); the total is the stages' sum."""
    stages = {row["stage"]: row for row in (earlier or {}).get("stages", []) if earlier["sizes"] == result["sizes"]}
    # a stage a later part found up to date keeps the row of the part that ran it
    stages.update({row["stage"]: row for row in result["stages"] if row["ran"] or row["stage"] not in stages})
    return {**result, "stages": list(stages.values()), "seconds": round(sum(r["seconds"] for r in stages.values()), 1)}


def save(result: dict, merge: bool) -> None:
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results[result["scale"]] = merged(results.get(result["scale"]) if merge else None, result)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument(
        "--scale",
        action="append",
        choices=list(SCALES),
        help="1x (about 4 minutes on 2 cores), 10x (about 11) or full (hours; use --stages); repeatable, required",
    )
    parser.add_argument("--stages", help="comma list: only these stages (their inputs must be built: a part)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/babelforge-rehearsal"), help="work folder")
    parser.add_argument("--resume", action="store_true", help="go on in the copy of the last run of this scale")
    parser.add_argument("--force", action="store_true", help="run the stages even when DVC finds them up to date")
    parser.add_argument("--report", action="store_true", help="write the table and plot from the saved results")
    args = parser.parse_args()
    if args.report:
        from benchmarks.rehearsal_report import write_report

        write_report(RESULTS)
        return 0
    if not args.scale:
        # A rehearsal takes minutes to hours, so a plain run says what to choose rather than start one.
        parser.error(
            "choose a size: --scale 1x (about 4 minutes on 2 cores), --scale 10x (about 11 minutes), "
            "--scale full --stages ... (hours, in parts), or --report (the table from saved results)"
        )
    only = args.stages.split(",") if args.stages else None
    if args.resume and (env := frozen_package_env(args.work.resolve(), args.scale, dict(os.environ))):
        # the stand-ins this process serves import babelforge too: a resumed part must serve them from
        # the copy's frozen code, not the working tree's (edited since the run began), so start again on it
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    failed = False
    for scale_name in args.scale:
        result = rehearse(scale_name, args.work.resolve(), only, args.resume, args.force)
        failed |= any(stage["status"] for stage in result["stages"]) or not result["dvc_status_clean"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
