"""Every remote input of a profile, with its pin and where the pin lives; what the profile still needs.

`inventory(params, profile)` lists what babelforge reads from outside the machine when it builds and
evaluates `profile`: the sources of `resources/sources.tsv`, the XM3600 release files, the MVL-SIB
images and the release they come from, the Hub models (NLLB, COMETKiwi, `eval.common.models`, every
model of `resources/papers/models.tsv`) and the BabelNet API. Each input's pin stays in the home its
reader already reads (`babelforge.core.pins.RemoteInput.home`): one home per kind of input, so a pin is
read where it is used and `dvc.lock` tracks it as the setting or file it already was
(docs/architecture/pins.md says why there is no separate lock file).

`readiness(...)` is the offline check of everything the profile still needs, grouped: keys, pins,
caches, curated manifests, image folders; each with what it blocks and what resolves it.

Both are pure but for what they are handed (params, the paper table's rows, a cache lookup, the
environment, a folder test); `babelforge pins` (eval/tools/pins_stage.py) does the I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from babelforge.core.errors import BabelforgeError
from babelforge.core.params import for_profile
from babelforge.core.pins import STRENGTHS, PinHome, RemoteInput, counts_by_kind, is_commit
from babelforge.core.sources import Source
from babelforge.eval.families import parse_spec
from babelforge.mvl_sib.images import topic_slug

MODELS_TSV = "resources/papers/models.tsv"
MVL_SIB_RELEASE = "WueNLP/mvl-sib"  # the published MVL-SIB: its images under data/images/ (the paper's)
MVL_SIB_IMAGES_FOLDER = "data/images/"
XM3600_FILES = (  # release file, its params key, upstream URL (babelforge.xm3600.release)
    ("captions.zip", "captions_sha256", "https://google.github.io/crossmodal-3600/web-data/captions.zip"),
    ("images.tgz", "images_sha256", "https://open-images-dataset.s3.amazonaws.com/crossmodal-3600/images.tgz"),
    (
        "image_attributions.csv",
        "attributions_sha256",
        "https://google.github.io/crossmodal-3600/web-data/image_attributions.csv",
    ),
)
# The encoder COMET's `unified_metric` checkpoint of Unbabel/wmt22-cometkiwi-da names in its hparams
# (`pretrained_model`): COMET loads its tokenizer and config by that name.
KIWI_ENCODER = "microsoft/infoxlm-large"
HUB_RESOLVE = re.compile(r"/datasets/(?P<repo>[^/]+/[^/]+)/resolve/(?P<commit>[0-9a-f]{40})/")
EVAL_STAGES = ("eval_zeroshot", "eval_retrieval", "eval_clipscore", "eval_mvl_sib")


def value(params: Mapping, dotted: str, profile: str, default=None):
    """The params value at `dotted` (a.b.c) for `profile`, `default` when a key is absent."""
    node = params
    for key in dotted.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return default
        node = node[key]
    return for_profile(node, profile, dotted)


def is_hub_model(model: str | None, exists: Callable[[str], bool]) -> bool:
    """A Hub id (owner/name), not a local folder (models/…, a path that exists)."""
    return (
        bool(model)
        and not exists(model)
        and not model.startswith(("/", ".", "~", "models/"))
        and re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", model) is not None
    )


# ------------------------------------------------------------------ the inventory


def source_inputs(sources: Sequence[Source]) -> list[RemoteInput]:
    return [
        RemoteInput(
            name=f"source:{source.name}",
            kind="source",
            pin=source.sha256,
            home=PinHome(f"source:{source.name}", f"resources/sources.tsv (row {source.name}, sha256)"),
            reads=("fetch",),
            ask=source.url.split()[0] if source.origin == "verbatim" and source.kind == "file" else "",
            note=f"{source.origin} ({source.kind})",
        )
        for source in sources
    ]


def xm3600_inputs(params: Mapping, profile: str) -> list[RemoteInput]:
    if not value(params, "xm3600_fetch.build", profile, False):
        return []
    mirror_url = value(params, "xm3600_fetch.mirror_url", profile)
    inputs = []
    for name, key, url in XM3600_FILES:
        where = f"params.yaml xm3600_fetch.{key}"
        inputs.append(
            RemoteInput(
                name=f"xm3600/{name}",
                kind="file",
                pin=value(params, f"xm3600_fetch.{key}", profile),
                home=PinHome(f"xm3600/{name}", where),
                reads=("xm3600_fetch",),
                target=("params", f"xm3600_fetch.{key}"),
                ask=f"{mirror_url.rstrip('/')}/xm3600/{name}" if mirror_url else url,
            )
        )
    return inputs


def release_commit(rows: Sequence[Mapping[str, str]]) -> str | None:
    """The one MVL-SIB release commit the manifest's URLs name (None: none, or more than one)."""
    commits = {match["commit"] for row in rows if (match := HUB_RESOLVE.search(row.get("url", "")))}
    return commits.pop() if len(commits) == 1 else None


def mvl_sib_inputs(params: Mapping, profile: str, manifest_rows: Sequence[Mapping[str, str]]) -> list[RemoteInput]:
    """The full profile's MVL-SIB images: each manifest row (pinned by its sha256), and the release
    they come from (pinned by the commit its resolve URLs name: the manifest is that pin's home)."""
    if profile == "sample":
        return []  # the sample profile draws its images
    manifest = value(params, "mvl_sib.images.manifest", profile) or "resources/mvl_sib_images.tsv"
    inputs = [
        RemoteInput(
            name=f"mvl-sib-image:{row.get('image_id', '')}",
            kind="file",
            pin=row.get("sha256") or None,
            home=PinHome(f"mvl-sib-image:{row.get('image_id', '')}", f"{manifest} (line {line}, sha256)"),
            reads=("mvl_sib_images",),
            ask=row.get("url", ""),
        )
        for line, row in enumerate(manifest_rows, start=2)
    ]
    inputs.append(
        RemoteInput(
            name=f"hub-dataset:{MVL_SIB_RELEASE}",
            kind="hub-dataset",
            pin=release_commit(manifest_rows),
            home=PinHome(f"hub-dataset:{MVL_SIB_RELEASE}", f"{manifest} (the commit in every url)"),
            reads=("mvl_sib_images",),
            ask=MVL_SIB_RELEASE,
            repo_type="dataset",
            target=("manifest", manifest),
            note=f"the paper's images, {MVL_SIB_IMAGES_FOLDER} of the release; --update writes the manifest",
        )
    )
    return inputs


def build_model_inputs(params: Mapping, profile: str, exists: Callable[[str], bool]) -> list[RemoteInput]:
    """NLLB (nllb stage), COMETKiwi and its encoder (captions_tag), the BabelNet API (senses)."""
    inputs = []
    nllb = value(params, "nllb.source", profile)
    if nllb != "tiny" and not value(params, "nllb.local_path", profile) and is_hub_model(nllb, exists):
        inputs.append(
            hub_input(
                nllb, value(params, "nllb.revision", profile), "nllb.revision", ("nllb",), ("params", "nllb.revision")
            )
        )
    kiwi = value(params, "captions.tag.kiwi_model", profile)
    if is_hub_model(kiwi, exists):
        revision = value(params, "captions.tag.kiwi_revision", profile)
        key = "captions.tag.kiwi_revision"
        inputs.append(hub_input(kiwi, revision, key, ("captions_tag",), ("params", key)))
        inputs.append(
            read_by_name(
                KIWI_ENCODER,
                f"{kiwi}'s hparams.yaml (pretrained_model, a name)",
                ("captions_tag",),
                "COMET loads its encoder's tokenizer and config by name; the weights come from the checkpoint",
            )
        )
    if value(params, "senses.source", profile) == "babelnet":
        base = value(params, "senses.babelnet.base_url", profile) or "https://babelnet.io/v9"
        inputs.append(
            RemoteInput(
                name="service:babelnet",
                kind="service",
                pin=None,
                home=PinHome("service:babelnet", "params.yaml senses.babelnet.base_url (the API version)"),
                reads=("senses",),
                strength="unpinnable",
                note=f"a live API ({base}); every answer is cached in senses.babelnet.cache_dir, so a rebuild "
                "reads the cache",
            )
        )
    if value(params, "senses.source", profile) == "babelnet_index":
        config = value(params, "senses.babelnet_index.config_file", profile) or "babelnet_conf.yml"
        inputs.append(
            RemoteInput(
                name="service:babelnet-index",
                kind="service",
                pin=None,
                home=PinHome("service:babelnet-index", f"params.yaml senses.babelnet_index.config_file ({config})"),
                reads=("senses",),
                strength="unpinnable",
                note="the licensed BabelNet index behind the babelnet package's RPC server; its version is "
                "recorded in the senses' provenance and every answer cached in senses.babelnet_index.cache_dir",
            )
        )
    return inputs


def read_by_name(repo: str, where: str, reads: tuple[str, ...], note: str) -> RemoteInput:
    """A Hub repo a library loads by its name (at the repo's main branch): listed, not pinnable here."""
    return RemoteInput(
        name=f"hub:{repo}",
        kind="hub-model",
        pin=None,
        home=PinHome(f"hub:{repo}", where),
        reads=reads,
        strength="unpinnable",
        note=note,
    )


def hub_input(
    repo: str, revision: str | None, where: str, reads: tuple[str, ...], target: tuple[str, ...] = ()
) -> RemoteInput:
    """A Hub model pinned by a commit (`revision`; a non-commit is a tag) at `where` (a params key is
    written `params.yaml <key>`)."""
    if target and target[0] == "params":
        where = f"params.yaml {where}"
    return RemoteInput(
        name=f"hub:{repo}",
        kind="hub-model",
        pin=revision or None,
        home=PinHome(f"hub:{repo}", where),
        target=target,
        reads=reads,
        ask=repo,
        repo_type="model",
        strength="" if not revision or is_commit(revision) else "tag",
    )


def spec_inputs(
    spec: str, revision: str | None, where: str, reads: tuple[str, ...], target: tuple[str, ...] = ()
) -> list[RemoteInput]:
    """The Hub parts of one model spec (a local folder is hashed, never fetched): the main model and
    its image tower; an open_clip built-in name is pinned by its pretrained tag only."""
    try:
        ref = parse_spec(spec, revision)
    except BabelforgeError:
        return []
    inputs = []
    for part in (ref, ref.image) if ref.image else (ref,):
        if part.local or part.id.startswith(("/", ".", "~", "models/")):
            continue
        if part.family == "open_clip" and not part.id.startswith("hf-hub:"):
            inputs.append(
                RemoteInput(
                    name=f"open_clip:{part.id}",
                    kind="hub-model",
                    pin=part.revision or None,
                    home=PinHome(f"open_clip:{part.id}", where),
                    reads=reads,
                    strength="tag" if part.revision else "",
                    note="open_clip's registry maps the tag to a Hub repo, read at its main branch",
                )
            )
            continue
        # only the main model's pin has a home to write (`target`); an image tower's is in its spec text
        inputs.append(
            hub_input(part.id.removeprefix("hf-hub:"), part.revision, where, reads, target if part is ref else ())
        )
    return inputs


def eval_model_inputs(params: Mapping, profile: str) -> list[RemoteInput]:
    entries = value(params, "eval.common.models", profile) or []
    inputs = []
    for entry in entries:
        spec = entry.get("id", "") if isinstance(entry, Mapping) else str(entry)
        revision = entry.get("revision") if isinstance(entry, Mapping) else None
        inputs += spec_inputs(spec, revision, f"params.yaml eval.common.models (entry {spec})", EVAL_STAGES)
    return inputs


def paper_model_inputs(models: Sequence) -> list[RemoteInput]:
    """Each paper model's main Hub repo, pinned in its models.tsv row (column revision); the repos its
    library then reads by name (a text model's base, an open_clip tower) are listed, not pinnable.
    `models`: babelforge.eval.paper.tables.PaperModel rows (read by the command: this shared module
    imports no place)."""
    inputs = []
    for model in models:
        where = f"{MODELS_TSV} (row {model.short}, revision)"
        reads = (f"eval_paper ({model.paper}: {model.short})",)
        target = ("tsv", MODELS_TSV, "short", model.short, "revision")
        main = spec_inputs(model.spec, model.revision or None, where, reads, target)
        inputs += main
        named = {item.ask or item.name.partition(":")[2] for item in main}
        for repo in model.hub_repos[1:]:
            if repo in named:
                continue
            inputs.append(
                read_by_name(
                    repo,
                    f"{MODELS_TSV} (row {model.short}, hub_repos: a name)",
                    reads,
                    "read by name by the model's library (its text model's base or its image tower)",
                )
            )
    return inputs


def inventory(
    params: Mapping,
    profile: str,
    sources: Sequence[Source],
    manifest_rows: Sequence[Mapping[str, str]],
    paper_models: Sequence,
    exists: Callable[[str], bool],
) -> list[RemoteInput]:
    """Every remote input of `profile`, in pipeline order (fetch, builds, eval, the papers)."""
    return (
        source_inputs(sources)
        + build_model_inputs(params, profile, exists)
        + mvl_sib_inputs(params, profile, manifest_rows)
        + xm3600_inputs(params, profile)
        + eval_model_inputs(params, profile)
        + paper_model_inputs(paper_models)
    )


# ------------------------------------------------------------------ what the profile still needs

GROUPS = ("keys", "pins", "caches", "curated manifests", "image folders")


@dataclass(frozen=True)
class Need:
    """One thing the profile still needs: its group, what it is, what it blocks, what resolves it."""

    group: str
    what: str
    blocks: str
    resolve: str


def image_folders(params: Mapping, profile: str) -> dict[str, list[str]]:
    """folder -> the eval stages whose `images` setting names it, leaving out what the pipeline writes
    itself (a folder inside a `paths` output but `paths.raw`, e.g. the fetched XM3600 images); MVL-SIB's
    images are built (`eval.mvl_sib.images` is a folder name inside `paths.mvl_sib`)."""
    paths = params.get("paths") or {}
    # data/raw is `fetch`'s output, replaced whole when it reruns: images put there are a user's, and are checked
    outputs = [str(path).rstrip("/") + "/" for name, path in paths.items() if path and name != "raw"]
    found: dict[str, list[str]] = {}
    for stage in ("zeroshot", "retrieval", "clipscore"):
        images = value(params, f"eval.{stage}.images", profile)
        folders = images.values() if isinstance(images, Mapping) else [images]
        for folder in folders:
            if isinstance(folder, str) and folder and not (folder.rstrip("/") + "/").startswith(tuple(outputs)):
                found.setdefault(folder, []).append(f"eval_{stage}")
    return found


def merged(items: Sequence[RemoteInput]) -> dict[tuple[str, str], list[str]]:
    """(repo, commit) -> every reader of it, each once, in order (a repo several homes name)."""
    found: dict[tuple[str, str], list[str]] = {}
    for item in items:
        readers = found.setdefault((item.ask, item.pin), [])
        readers += [read for read in item.reads if read not in readers]
    return found


def readiness(
    params: Mapping,
    profile: str,
    inputs: Sequence[RemoteInput],
    cached: Callable[[str, str, str], bool],
    environ: Mapping[str, str],
    is_dir: Callable[[str], bool],
    manifest_counts: Mapping[str, int],
    topics: Sequence[str],
    is_file: Callable[[str], bool] = lambda path: True,
) -> list[Need]:
    """Everything `profile` still needs, in GROUPS order. `cached(repo, commit, None)`: whether the
    Hugging Face cache holds a snapshot of that commit (babelforge.eval.paper.plan.hub_cached); `manifest_counts`: images per topic in the MVL-SIB manifest.
    The paper models (read by `eval_paper`, outside `dvc repro`) are one line per kind of need."""
    needs = []
    if value(params, "senses.source", profile) == "babelnet" and not environ.get("BABELNET_KEY"):
        needs.append(
            Need(
                "keys",
                "BABELNET_KEY is not set (the BabelNet API key; read from the environment only)",
                "senses, then labels, prompts and all built on them",
                "a key from https://babelnet.org/register, exported in your shell",
            )
        )
    config = value(params, "senses.babelnet_index.config_file", profile) or "babelnet_conf.yml"
    if value(params, "senses.source", profile) == "babelnet_index" and not is_file(config):
        needs.append(
            Need(
                "keys",
                f"{config} is missing (the babelnet package's config file: RPC_URL names the index's server)",
                "senses, then labels, prompts and all built on them",
                "docs/guides/full-profile.md, 'The licensed BabelNet index'",
            )
        )
    papers = [item for item in inputs if any(read.startswith("eval_paper") for read in item.reads)]
    builds = [item for item in inputs if item not in papers]
    update = "babelforge pins --update (network)"
    for item in builds:
        if item.state == "unpinned":
            needs.append(Need("pins", f"{item.name} ({item.home.where})", ", ".join(item.reads), update))
    unpinned_papers = [item for item in papers if item.state == "unpinned"]
    if unpinned_papers:
        shorts = list(dict.fromkeys(item.reads[0].rpartition(": ")[2].rstrip(")") for item in unpinned_papers))
        needs.append(
            Need(
                "pins",
                f"{len(unpinned_papers)} paper models in {MODELS_TSV} (column revision)",
                f"eval_paper for {', '.join(shorts[:4])}{' …' if len(shorts) > 4 else ''}",
                update,
            )
        )
    for group, items in (("builds", builds), ("papers", papers)):
        pinned = [item for item in items if item.repo_type == "model" and item.state == "pinned"]
        missing = {key: reads for key, reads in merged(pinned).items() if not cached(key[0], key[1], None)}
        if group == "papers" and missing:
            needs.append(
                Need(
                    "caches",
                    f"{len(missing)} pinned paper model(s) not in the Hugging Face cache",
                    "eval_paper",
                    "`babelforge eval_paper --plan` names each; hf download REPO --revision COMMIT",
                )
            )
            continue
        for (repo, commit), reads in missing.items():
            gated = ", gated: accept its terms on the Hub, set HF_TOKEN" if repo.startswith("Unbabel/") else ""
            needs.append(
                Need(
                    "caches",
                    f"{repo}@{commit[:12]} not in the Hugging Face cache{gated}",
                    ", ".join(reads),
                    f"hf download {repo} --revision {commit}",
                )
            )
    if profile != "sample":
        per_topic = value(params, "mvl_sib.images.per_topic", profile, 10)
        manifest = value(params, "mvl_sib.images.manifest", profile) or "resources/mvl_sib_images.tsv"
        short = [topic for topic in topics if manifest_counts.get(topic, 0) != per_topic]
        if short:
            needs.append(
                Need(
                    "curated manifests",
                    f"{manifest}: {len(short)} of {len(topics)} topics without their {per_topic} images "
                    f"({', '.join(f'{topic} {manifest_counts.get(topic, 0)}' for topic in short[:3])}"
                    f"{' …' if len(short) > 3 else ''})",
                    "mvl_sib_images and all MVL-SIB after it",
                    f"{update} writes it from {MVL_SIB_RELEASE} (docs/datasets/mvl-sib.md)",
                )
            )
        for folder, stages in sorted(image_folders(params, profile).items()):
            raw = str((params.get("paths") or {}).get("raw") or "").rstrip("/") + "/"
            if raw != "/" and (folder.rstrip("/") + "/").startswith(raw):
                # DVC removes a stage's outputs before it reruns it: images put inside `fetch`'s are deleted
                needs.append(
                    Need(
                        "image folders",
                        f"{folder} is inside {raw.rstrip('/')}, which `fetch` replaces whole when it reruns",
                        ", ".join(stages),
                        "move the images outside it (e.g. data/images/) and point the setting there",
                    )
                )
            elif not is_dir(folder):
                needs.append(
                    Need(
                        "image folders",
                        f"{folder} is missing",
                        ", ".join(stages),
                        "docs/guides/full-profile.md, 'Image folders'",
                    )
                )
    return needs


def readiness_lines(needs: Sequence[Need], profile: str) -> list[str]:
    if not needs:
        return [f"ready: the {profile} profile has every key, pin, cache, manifest and image folder it needs"]
    lines = [f"the {profile} profile still needs {len(needs)} things (offline check; what each blocks -> fix):"]
    for group in GROUPS:
        part = [need for need in needs if need.group == group]
        if part:
            lines.append(f"{group} ({len(part)}):")
            lines += [f"  - {need.what}\n      blocks {need.blocks} -> {need.resolve}" for need in part]
    return lines


# ------------------------------------------------------------------ the report


def report_lines(inputs: Sequence[RemoteInput], profile: str, every: bool = False) -> list[str]:
    """The counts by kind and state, then one line per UNPINNED input (every input with `every`)."""
    table = counts_by_kind(list(inputs))
    unpinned = [item for item in inputs if item.state == "unpinned"]
    lines = [
        f"pins ({profile} profile): {len(inputs)} remote inputs, {len(unpinned)} UNPINNED",
        f"  {'kind':<12}" + "".join(f"{state:>11}" for state in STRENGTHS),
    ]
    for kind, states in table.items():
        lines.append(f"  {kind:<12}" + "".join(f"{states[state]:>11}" for state in STRENGTHS))
    for item in inputs if every else unpinned:
        line = f"{item.pin_text():<10} {item.name}  (pin: {item.home.where}; read by {', '.join(item.reads)})"
        lines.append(line + (f"\n{'':<11}{item.note}" if every and item.note else ""))
    if unpinned:
        lines.append(
            f"{len(unpinned)} UNPINNED: `babelforge pins --update` resolves each once where the network is "
            "reachable and writes its pin; `babelforge pins --check` lists everything else the profile needs"
        )
    return lines


def release_image_rows(
    files: Sequence[str], commit: str, endpoint: str, topics: Sequence[str], digests: Mapping[str, str]
) -> list[dict[str, str]]:
    """Manifest rows for the MVL-SIB release's images (`files`: paths in the repo at `commit`): each
    image's topic is the topic its folder or file name starts with; its URL resolves it at `commit`."""
    rows = []
    for path in sorted(files):
        pure = PurePosixPath(path)
        if not path.startswith(MVL_SIB_IMAGES_FOLDER) or pure.suffix.lower() not in (".jpg", ".jpeg", ".png"):
            continue
        parts = [topic_slug(part) for part in pure.relative_to(MVL_SIB_IMAGES_FOLDER).parts]
        topic = next(
            (t for t in topics for part in parts if part == topic_slug(t) or part.startswith(topic_slug(t) + "-")),
            None,
        )
        if topic is None:
            topic = next((t for t in topics if parts[-1].startswith(topic_slug(t).split("-")[0])), None)
        if topic is None:
            raise BabelforgeError(f"{MVL_SIB_RELEASE}@{commit[:12]}: {path} names no MVL-SIB topic; nothing written")
        stem = topic_slug(pure.stem)
        rows.append(
            {
                "topic": topic,
                "image_id": stem if stem.startswith(topic_slug(topic).split("-")[0]) else f"{topic_slug(topic)}-{stem}",
                "url": f"{endpoint.rstrip('/')}/datasets/{MVL_SIB_RELEASE}/resolve/{commit}/{path}",
                "licence": "as released in the MVL-SIB dataset (CC BY-SA 4.0; permissively licensed images)",
                "attribution": f"MVL-SIB release {MVL_SIB_RELEASE}@{commit}",
                "sha256": digests[path],
            }
        )
    return rows
