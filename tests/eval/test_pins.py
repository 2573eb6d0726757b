"""`babelforge pins`: the remote inputs of a profile listed offline, resolved with `--update` against
loopback stand-ins of the Hub (huggingface_hub through HF_ENDPOINT) and of a file mirror, each pin
written into its home, a set pin changed only when `--accept`ed; `--check` lists what is missing."""

from __future__ import annotations

import csv
import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from babelforge.eval.pins import readiness, release_image_rows, report_lines, value
from babelforge.mvl_sib.images import read_manifest
from babelforge.mvl_sib.sib200 import TOPICS
from tests.hub_standin import HubStandIn
from tests.loopback import LoopbackServer, serving
from tests.project import command_env

REPO = Path(__file__).resolve().parents[2]
XM3600 = {"captions.zip": b"zip bytes", "images.tgz": b"tgz bytes", "image_attributions.csv": b"ImageID,Author\n"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The project's params, dvc.yaml and resources/ in a folder of their own, the XM3600 and paper
    commit pins unset (as they were before they were known), profile full."""
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy(REPO / "dvc.yaml", root / "dvc.yaml")
    shutil.copytree(REPO / "resources", root / "resources")
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["profile"] = "full"
    for key in ("captions_sha256", "images_sha256", "attributions_sha256"):
        params["xm3600_fetch"][key] = None
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    # the papers' commits unset too: a loopback Hub cannot publish the real ones
    models = root / "resources/papers/models.tsv"
    models.write_text(re.sub(r"\t[0-9a-f]{40}\t", "\t\t", models.read_text()))
    return root


def point_xm3600_at(project: Path, url: str) -> None:
    """The xm3600_fetch group's mirror_url (the last group of the file to name one) set to `url`: the
    XM3600 inputs are asked there, never upstream (a test must not reach out, nor wait out the
    default retry back-off against a network it does not have)."""
    params_path = project / "params.yaml"
    before, group, rest = params_path.read_text().rpartition("\nxm3600_fetch:\n")
    text = before + group + re.sub(r"(?m)^  mirror_url:.*$", f"  mirror_url: {url}", rest, count=1)
    params_path.write_text(text)
    assert yaml.safe_load(text)["xm3600_fetch"]["mirror_url"] == url


def pins(root: Path, hub_url: str, *args: str, offline: bool = False) -> subprocess.CompletedProcess:
    env = {**command_env(), "HF_ENDPOINT": hub_url, "HF_HOME": str(root.parent / "hf")}
    env.pop("HF_HUB_OFFLINE", None)
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "babelforge.cli", "pins", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def unpinned_names(output: str) -> list[str]:
    return re.findall(r"^UNPINNED\s+(\S+)", output, flags=re.M)


def publish(hub: HubStandIn, names: list[str]) -> dict[str, str]:
    """Every UNPINNED Hub input published on the stand-in: name -> its main commit."""
    commits = {}
    for name in names:
        kind, _, repo = name.partition(":")
        if kind == "hub":
            commits[name] = hub.add(repo, {"config.json": b"{}", "modules.json": b"[]", "README.md": repo.encode()})
        elif kind == "hub-dataset":
            files = {
                f"data/images/{topic.replace('/', '-')}/{n:02d}.jpg": f"{topic} {n}".encode()
                for topic in TOPICS
                for n in range(10)
            }
            commits[name] = hub.add(repo, {**files, "README.md": b"MVL-SIB"}, repo_type="dataset")
    return commits


def read_rows(project: Path) -> list[dict]:
    with (project / "resources/papers/models.tsv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def fill_cache(hub: HubStandIn, project: Path, rows: list[dict]) -> None:
    """Every repo the paper models name, published where not yet and downloaded into the test's HF_HOME
    by huggingface_hub: the main repo at its pinned commit, the others at main."""
    wanted = []
    for row in rows:
        repos = [repo for repo in row["hub_repos"].split(",") if repo]
        for index, repo in enumerate(repos):
            commit = row["revision"] if index == 0 and re.fullmatch(r"[0-9a-f]{40}", row["revision"]) else None
            if commit is None and hub.lookup("model", repo, "main")[1] is None:
                hub.add(repo, {"config.json": b"{}", "open_clip_config.json": b"{}"})
            wanted.append((repo, commit or "main"))
    script = (
        "import sys\nfrom huggingface_hub import snapshot_download\n"
        "for line in sys.stdin.read().split():\n    repo, revision = line.split('@')\n"
        "    snapshot_download(repo, revision=revision)\n"
    )
    env = {**command_env(), "HF_ENDPOINT": hub.url, "HF_HOME": str(project.parent / "hf")}
    env.pop("HF_HUB_OFFLINE", None)
    result = subprocess.run(
        [sys.executable, "-c", script],
        input="\n".join(f"{repo}@{revision}" for repo, revision in sorted(set(wanted))),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]


def paper_plan(project: Path, hub_url: str) -> str:
    env = {**command_env(), "HF_ENDPOINT": hub_url, "HF_HOME": str(project.parent / "hf"), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "babelforge.cli", "eval_paper", "--plan", "--paper", "babel-imagenet"]
    result = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_update_resolves_every_unpinned_input_once_writes_each_home_and_never_moves_a_set_pin(project: Path):
    server = LoopbackServer()
    for name, data in XM3600.items():
        server.files[f"xm3600/{name}"] = data
    with HubStandIn() as hub, serving(server):
        params_path = project / "params.yaml"
        point_xm3600_at(project, server.url)

        listed = pins(project, hub.url)
        assert listed.returncode == 0, listed.stderr
        names = unpinned_names(listed.stdout)
        assert {"xm3600/captions.zip", "hub:Unbabel/wmt22-cometkiwi-da", "hub-dataset:WueNLP/mvl-sib"} <= set(names)
        assert "hub:sentence-transformers/clip-ViT-B-32-multilingual-v1" in names
        assert hub.requests == []  # offline: the report asks nothing
        commits = publish(hub, names)

        updated = pins(project, hub.url, "--update")
        assert updated.returncode == 0, updated.stderr
        for name in names:
            assert re.search(rf"^{re.escape(name)}: UNPINNED -> [0-9a-f]{{40,64}} \(", updated.stdout, re.M), name

        # each pin is in its home, as its reader reads it
        rows = list(csv.DictReader((project / "resources/papers/models.tsv").open(), delimiter="\t"))
        for row in rows:
            repo = row["spec"].split(":", 1)[1].split("+")[0].split("@")[0]
            if f"hub:{repo}" in commits:
                assert row["revision"] == commits[f"hub:{repo}"], row["short"]
        params = yaml.safe_load(params_path.read_text())
        assert params["captions"]["tag"]["kiwi_revision"] == commits["hub:Unbabel/wmt22-cometkiwi-da"]
        for name, data in XM3600.items():
            key = {"captions.zip": "captions_sha256", "images.tgz": "images_sha256"}.get(name, "attributions_sha256")
            assert value(params, f"xm3600_fetch.{key}", "full") == hashlib.sha256(data).hexdigest()
        release = commits["hub-dataset:WueNLP/mvl-sib"]
        entries = read_manifest(project / "resources/mvl_sib_images.tsv", per_topic=10)  # the stage's own check
        assert len(entries) == 70 and all(f"/resolve/{release}/data/images/" in entry.url for entry in entries)
        served = {entry.image_id: entry.sha256 for entry in entries}
        assert served["sports-03"] == hashlib.sha256(b"sports 3").hexdigest()

        # nothing left to pin; a second --update asks nothing of what is pinned
        after = pins(project, hub.url)
        assert unpinned_names(after.stdout) == [] and " 0 UNPINNED" in after.stdout
        asked = len(hub.requests)
        again = pins(project, hub.url, "--update")
        assert again.stdout.strip() == "nothing to resolve: every input that can be pinned is"
        assert len(hub.requests) == asked

        # a cache holding every paper repo at its pin (stand-ins under the real ids): the plan loads them all
        fill_cache(hub, project, rows_after := read_rows(project))
        plan = paper_plan(project, hub.url)
        loadable = [row["short"] for row in rows_after if row["paper"] == "babel-imagenet" and row["loads"] == "yes"]
        ready = re.findall(r"^ready +(.+?): ", plan, flags=re.M)
        assert ready == loadable and len(ready) == 12, plan  # every Babel-ImageNet model, the legacy M-CLIP too
        check = pins(project, hub.url, "--check").stdout  # the same cache, seen by --check: no paper model missing
        assert "paper model(s) not in the Hugging Face cache" not in check
        assert "facebook/nllb-200-distilled-1.3B@7be3e24664b3 not in the Hugging Face cache" in check

        # upstream moves: a set pin stays until it is accepted, then old -> new is printed
        moved = hub.add("BAAI/AltCLIP", {"config.json": b'{"v": 2}'})
        before = (project / "resources/papers/models.tsv").read_text()
        pins(project, hub.url, "--update")
        assert (project / "resources/papers/models.tsv").read_text() == before
        accepted = pins(project, hub.url, "--update", "--accept", "hub:BAAI/AltCLIP")
        old = commits["hub:BAAI/AltCLIP"]
        assert accepted.stdout.count(f"hub:BAAI/AltCLIP: {old} -> {moved}") == 2  # both papers' rows
        assert (project / "resources/papers/models.tsv").read_text().count(moved) == 2


def test_update_errors_are_one_line(project: Path):
    empty = LoopbackServer()  # a mirror without the XM3600 files: each is a 404, not retried
    with HubStandIn() as hub, serving(empty):
        point_xm3600_at(project, empty.url)
        offline = pins(project, hub.url, "--update", offline=True)
        assert offline.returncode != 0
        assert offline.stderr.strip().splitlines()[-1].endswith("HF_HUB_OFFLINE is set; unset it first")
        missing = pins(project, hub.url, "--update")  # nothing published: the first repo is not there
        assert missing.returncode != 0 and "Traceback" not in missing.stderr
        assert re.search(r"not on http://127\.0\.0\.1:\d+ .*nothing written", missing.stderr)
        # every input is tried: one repo on the Hub is pinned though the others are not there, each named once
        kiwi = hub.add("Unbabel/wmt22-cometkiwi-da", {"config.json": b"{}"})
        partly = pins(project, hub.url, "--update")
        assert partly.returncode == 1 and "Traceback" not in partly.stderr
        assert f"hub:Unbabel/wmt22-cometkiwi-da: UNPINNED -> {kiwi} (" in partly.stdout
        assert (
            value(yaml.safe_load((project / "params.yaml").read_text()), "captions.tag.kiwi_revision", "full") == kiwi
        )
        assert partly.stderr.count("hub-dataset:WueNLP/mvl-sib: dataset WueNLP/mvl-sib: not on") == 1
        for name in XM3600:  # a file that is not there is named once, as not resolved, like a repo
            assert partly.stderr.count(f"xm3600/{name}: GET {empty.url}xm3600/{name}: HTTP 404") == 1, name
        assert re.search(
            r"^babelforge pins: \d+ input\(s\) not resolved \(above\); the rest written$", partly.stderr, re.M
        )
        unknown = pins(project, hub.url, "--update", "--accept", "hub:no/such")
        assert "--accept hub:no/such: no such input" in unknown.stderr
        alone = pins(project, hub.url, "--accept", "hub:BAAI/AltCLIP")
        assert "use it with --update" in alone.stderr
    assert "\t3d74acf9" not in (project / "resources/papers/models.tsv").read_text()  # nothing written


def test_check_lists_what_the_full_profile_needs_grouped_and_the_sample_profile_is_ready(project: Path):
    with HubStandIn() as hub:
        full = pins(project, hub.url, "--check")
        sample = pins(project, hub.url, "--check", "--profile", "sample")
    assert full.returncode == 1
    out = full.stdout
    for group in ("keys (1):", "pins (", "caches (", "curated manifests (1):", "image folders ("):
        assert group in out, group
    assert "BABELNET_KEY is not set" in out
    assert "data/images/coco/train2014 is missing" in out and "blocks eval_retrieval, eval_clipscore" in out
    assert "7 of 7 topics without their 10 images" in out
    assert "facebook/nllb-200-distilled-1.3B@7be3e24664b3 not in the Hugging Face cache" in out
    assert len(out.splitlines()) <= 40  # one screen
    assert sample.returncode == 0, sample.stdout  # the sample profile builds; the paper models are listed only
    assert "BABELNET_KEY" not in sample.stdout and "image folders" not in sample.stdout


def test_readiness_sees_a_key_set_and_a_commit_cached():
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    needs = readiness(
        params, "full", [], lambda *a: True, {"BABELNET_KEY": "k"}, lambda f: True, {t: 10 for t in TOPICS}, TOPICS
    )
    assert needs == []
    needs = readiness(params, "full", [], lambda *a: True, {}, lambda f: True, {t: 10 for t in TOPICS}, TOPICS)
    assert [need.group for need in needs] == ["keys"]
    needs = readiness(params, "full", [], lambda *a: True, {"BABELNET_KEY": "k"}, lambda f: True, {}, TOPICS)
    assert "(entertainment 0, geography 0, health 0 …)" in needs[0].what
    nine = {**{t: 10 for t in TOPICS}, "travel": 9}
    needs = readiness(params, "full", [], lambda *a: True, {"BABELNET_KEY": "k"}, lambda f: True, nine, TOPICS)
    assert [need.group for need in needs] == ["curated manifests"] and "travel 9" in needs[0].what


def test_release_rows_take_the_topic_from_the_folder_or_the_name_and_pin_the_commit():
    commit = "c" * 40
    files = ["data/images/science-technology/a.jpg", "data/images/travel_01.png", "README.md", "data/x.jpg"]
    digests = {name: str(i) * 64 for i, name in enumerate(files)}
    rows = release_image_rows(files, commit, "http://hub", TOPICS, digests)
    assert [(row["topic"], row["image_id"]) for row in rows] == [
        ("science/technology", "science-technology-a"),
        ("travel", "travel-01"),
    ]
    assert rows[0]["url"] == f"http://hub/datasets/WueNLP/mvl-sib/resolve/{commit}/data/images/science-technology/a.jpg"
    assert rows[1]["sha256"] == "1" * 64
    with pytest.raises(Exception, match="names no MVL-SIB topic"):
        release_image_rows(["data/images/cats/1.jpg"], commit, "http://hub", TOPICS, {"data/images/cats/1.jpg": "0"})


def test_the_report_counts_every_input_and_names_each_unpinned_one_on_one_line(project: Path):
    with HubStandIn() as hub:
        full = pins(project, hub.url).stdout
    lines = full.splitlines()
    total, unpinned = map(
        int, re.match(r"pins \(full profile\): (\d+) remote inputs, (\d+) UNPINNED", lines[0]).groups()
    )
    table = [line.split() for line in lines[2:] if re.match(r"  [a-z-]+ +\d", line)]
    assert sum(sum(map(int, row[1:])) for row in table) == total
    assert sum(int(row[3]) for row in table) == unpinned == len(unpinned_names(full))
    from babelforge.core.pins import PinHome, RemoteInput

    noted = RemoteInput("hub:a/b", "hub-model", None, PinHome("hub:a/b", "w"), ("r",), note="why")
    assert report_lines([noted], "full")[3] == "UNPINNED   hub:a/b  (pin: w; read by r)"
    assert report_lines([noted], "full", every=True)[3].endswith("(pin: w; read by r)\n           why")
    assert report_lines([], "sample") == [
        "pins (sample profile): 0 remote inputs, 0 UNPINNED",
        "  kind             pinned        tag   unpinned unpinnable",
    ]


# ------------------------------------------------------------------ the inventory, pure


@pytest.fixture(scope="module")
def full_inventory():
    from babelforge.core.sources import read_sources
    from babelforge.eval.paper.tables import PAPERS, read_models
    from babelforge.eval.pins import inventory

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    models = [model for paper in PAPERS for model in read_models(paper)]
    rows = [{"topic": "travel", "image_id": "t1", "url": "https://x/t1.jpg", "sha256": "a" * 64}]
    items = inventory(params, "full", list(read_sources().values()), rows, models, lambda path: False)
    return {(item.name, item.home.where): item for item in items}


def named(inventory: dict, name: str) -> list:
    return [item for (item_name, _), item in inventory.items() if item_name == name]


def test_only_a_verbatim_file_source_is_asked_upstream(full_inventory):
    [licence] = named(full_inventory, "source:sib-200-license")
    [folder] = named(full_inventory, "source:sib-200")
    [derived] = named(full_inventory, "source:clip-templates")
    assert licence.ask.startswith("https://raw.githubusercontent.com/dadelani/sib-200/")
    assert folder.ask == "" and derived.ask == ""
    assert licence.home.where == "resources/sources.tsv (row sib-200-license, sha256)"


def test_build_models_eval_models_and_the_service_of_the_full_profile(full_inventory):
    [nllb] = [item for item in named(full_inventory, "hub:facebook/nllb-200-distilled-1.3B") if item.reads == ("nllb",)]
    assert (nllb.home.where, nllb.target, nllb.state) == (
        "params.yaml nllb.revision",
        ("params", "nllb.revision"),
        "pinned",
    )
    [kiwi] = named(full_inventory, "hub:Unbabel/wmt22-cometkiwi-da")
    assert kiwi.target == ("params", "captions.tag.kiwi_revision") and kiwi.reads == ("captions_tag",)
    [service] = named(full_inventory, "service:babelnet")
    assert service.state == "unpinnable" and "https://babelnet.io/v9" in service.note
    clip = [item for item in named(full_inventory, "hub:openai/clip-vit-base-patch32") if "eval_zeroshot" in item.reads]
    assert [item.pin for item in clip] == ["3d74acf9a28c67741b2f4f2ea7635f0aaf6f0268"]
    [tag] = named(full_inventory, "open_clip:xlm-roberta-base-ViT-B-32")[:1]
    assert (tag.pin, tag.state) == ("laion5b_s13b_b90k", "tag")
    [image] = [item for (name, _), item in full_inventory.items() if name == "mvl-sib-image:t1"]
    assert image.home.where == "resources/mvl_sib_images.tsv (line 2, sha256)" and image.ask == "https://x/t1.jpg"


def test_a_paper_models_other_repos_are_listed_as_read_by_name(full_inventory):
    oc = [item for item in named(full_inventory, "hub:xlm-roberta-base") if "OC B-32" in item.reads[0]]
    assert [item.state for item in oc] == ["unpinnable"]
    mc = [item for item in named(full_inventory, "hub:xlm-roberta-large") if item.reads[0].endswith("MC B-32)")]
    assert [item.state for item in mc] == ["unpinnable"]
    main = [item for item in named(full_inventory, "hub:M-CLIP/XLM-Roberta-Large-Vit-B-32") if "babel" in item.reads[0]]
    assert [item.target for item in main] == [("tsv", "resources/papers/models.tsv", "short", "MC B-32", "revision")]
    assert not [item for item in named(full_inventory, "hub:M-CLIP/XLM-Roberta-Large-Vit-B-32") if not item.repo_type]


def test_the_sample_profile_reads_no_babelnet_xm3600_or_manifest():
    from babelforge.eval.pins import build_model_inputs, mvl_sib_inputs, xm3600_inputs

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    assert build_model_inputs(params, "sample", lambda path: path.startswith("models/")) == []
    assert xm3600_inputs(params, "sample") == [] and mvl_sib_inputs(params, "sample", [{"image_id": "x"}]) == []
    hub_nllb = {**params, "nllb": {**params["nllb"], "local_path": "/data/nllb-1.3b"}}
    listed = {item.name for item in build_model_inputs(hub_nllb, "full", lambda path: False)}
    assert "hub:facebook/nllb-200-distilled-1.3B" not in listed  # a local copy of the full model is read instead
    del params["senses"]["babelnet"]["base_url"]
    [service] = [item for item in build_model_inputs(params, "full", lambda path: False) if item.kind == "service"]
    assert "https://babelnet.io/v9" in service.note
    del params["mvl_sib"]["images"]["manifest"]
    [release] = mvl_sib_inputs(params, "full", [])
    assert release.home.where.startswith("resources/mvl_sib_images.tsv") and release.state == "unpinned"


def test_image_folders_leave_out_what_the_pipeline_writes():
    from babelforge.eval.pins import image_folders

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    folders = image_folders(params, "full")
    assert folders["data/images/coco/train2014"] == ["eval_retrieval", "eval_clipscore"]
    assert not [folder for folder in folders if folder.startswith("data/xm3600_release")]
    assert image_folders(params, "sample") == {}  # the sample sets are built (paths.eval_images)


def test_the_licensed_index_route_needs_its_config_file_not_a_key_and_is_listed_as_a_service():
    from babelforge.eval.pins import build_model_inputs, readiness
    from babelforge.mvl_sib.sib200 import TOPICS

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["senses"]["source"] = "babelnet_index"
    params["senses"]["babelnet_index"]["config_file"] = "conf/bn.yml"
    ready = {t: 10 for t in TOPICS}
    needs = readiness(
        params, "full", [], lambda *a: True, {}, lambda f: True, ready, TOPICS, lambda f: f != "conf/bn.yml"
    )
    assert [need.what for need in needs] == [
        "conf/bn.yml is missing (the babelnet package's config file: RPC_URL names the index's server)"
    ]
    assert readiness(params, "full", [], lambda *a: True, {}, lambda f: True, ready, TOPICS, lambda f: True) == []
    services = [item for item in build_model_inputs(params, "full", lambda path: False) if item.kind == "service"]
    assert [(item.name, item.state) for item in services] == [("service:babelnet-index", "unpinnable")]
    assert "conf/bn.yml" in services[0].home.where


def test_an_image_folder_inside_what_fetch_replaces_is_a_need_even_when_it_exists():
    from babelforge.eval.pins import readiness
    from babelforge.mvl_sib.sib200 import TOPICS

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["eval"]["retrieval"]["images"]["full"]["xflickrco"] = "data/raw/xflickrco/images"
    ready = {t: 10 for t in TOPICS}
    needs = readiness(params, "full", [], lambda *a: True, {"BABELNET_KEY": "k"}, lambda f: True, ready, TOPICS)
    [need] = needs
    assert need.what == "data/raw/xflickrco/images is inside data/raw, which `fetch` replaces whole when it reruns"
    assert need.blocks == "eval_retrieval" and need.group == "image folders"
    params["eval"]["retrieval"]["images"]["full"]["xflickrco"] = "data/rawer/images"  # a prefix of the name only
    assert readiness(params, "full", [], lambda *a: True, {"BABELNET_KEY": "k"}, lambda f: True, ready, TOPICS) == []


def test_readiness_merges_a_repo_named_twice_and_asks_the_cache_for_the_right_repo():
    from babelforge.core.pins import PinHome, RemoteInput

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    commit = "f" * 40

    def model(reads, repo="org/m", pin=commit):
        return RemoteInput(
            f"hub:{repo}", "hub-model", pin, PinHome(f"hub:{repo}", "w"), reads, ask=repo, repo_type="model"
        )

    inputs = [
        model(("eval_zeroshot",)),
        model(("eval_retrieval", "eval_zeroshot")),
        model(("eval_paper (p: X)",), "org/p", None),
    ]
    asked = []

    def cached(repo, pin, filename):
        assert (pin, filename) == (commit, None)
        asked.append(repo)
        return repo != "org/m"

    needs = readiness(params, "sample", inputs, cached, {}, lambda f: True, {}, TOPICS)
    assert [need.group for need in needs] == ["pins", "caches"]
    assert needs[0].what.startswith("1 paper models") and needs[0].blocks == "eval_paper for X"
    assert (
        needs[1].what.startswith(f"org/m@{commit[:12]} not in") and needs[1].blocks == "eval_zeroshot, eval_retrieval"
    )
    assert asked == ["org/m"]


def test_the_cache_lookup_asks_for_the_pinned_commits_snapshot(tmp_path: Path):
    from babelforge.eval.paper.plan import hub_cached

    snapshots = tmp_path / "models--org--m" / "snapshots"
    (snapshots / ("a" * 40)).mkdir(parents=True)
    (snapshots / ("a" * 40) / "config.json").write_text("{}")
    cached = hub_cached(tmp_path)
    assert cached("org/m", "a" * 40, None) and cached("org/m", None, None)
    assert not cached("org/m", "b" * 40, None)  # another commit of the repo is not the pinned one
    (snapshots / ("b" * 40)).mkdir()
    assert not cached("org/m", "b" * 40, None)  # an empty snapshot folder holds nothing
    assert not cached("org/other", None, None)
