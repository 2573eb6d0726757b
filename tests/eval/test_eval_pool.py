"""The eval stages on Ray (issue 47 items 3 and 4): one actor pool for the whole stage run, shared by
every model and image set (eval_retrieval over 3 models x 2 caption sets starts one, where it started
one per model and set), with
the same bytes as the local runner; and a cluster address that is not Ray stops every eval stage in
one line before any model loads."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import yaml

from babelforge.cli import main
from tests.eval.conftest import write_babel_imagenet_tables, write_sample_project
from tests.loopback import LoopbackServer, serving

EVAL_STAGES = ("eval_zeroshot", "eval_retrieval", "eval_clipscore", "eval_mvl_sib")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The sample eval project, its retrieval over two caption sets (two image sets: 6 and 4 images)."""
    root = write_sample_project(tmp_path_factory.mktemp("pool-project"))
    captions = json.loads((root / "captions.json").read_text(encoding="utf-8"))
    second = {
        "images": captions["images"][2:],
        "captions": {code: texts[2:] for code, texts in captions["captions"].items()},
    }
    (root / "captions_b.json").write_text(json.dumps(second, ensure_ascii=False), encoding="utf-8")
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    params["eval"]["retrieval"]["caption_sets"] = ["captions.json", "captions_b.json"]
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert main(["eval_tiny_clip"]) == 0
        assert main(["eval_images"]) == 0
        write_babel_imagenet_tables(root)
        yield root
    finally:
        os.chdir(cwd)


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.mark.slow
@pytest.mark.local_ray
def test_eval_retrieval_on_ray_starts_one_pool_for_both_image_sets(project, monkeypatch):
    from babelforge.core import ray_runner

    local = ["--set", "eval.common.cache=.cache/pool-local", "--out", "local.json"]
    assert main(["eval_retrieval", *local]) == 0
    starts = []
    original = ray_runner._actor_pool
    monkeypatch.setattr(ray_runner, "_actor_pool", lambda config: starts.append(config) or original(config))
    on_ray = ["--runner", "ray", "--set", "eval.runner.concurrency=2", "--set", "eval.runner.local_cpus=2"]
    assert main(["eval_retrieval", *on_ray, "--set", "eval.common.cache=.cache/pool-ray", "--out", "ray.json"]) == 0
    assert len(starts) == 1  # one pool for the stage run, not one per model and image set
    cached = {path.name for path in (project / ".cache" / "pool-ray").iterdir() if path.is_dir()}
    models = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))["eval"]["common"]["models"]
    assert len(models) > 1 and len(cached) == 2 * len(models)  # every model and image set encoded by that pool
    assert cached <= {path.name for path in (project / ".cache" / "pool-local").iterdir()}
    for key in cached:  # the runner never changes the bytes
        assert folder_bytes(project / ".cache" / "pool-ray" / key) == folder_bytes(
            project / ".cache" / "pool-local" / key
        )
    rows = {
        name: json.loads((project / name).read_text(encoding="utf-8"))["rows"] for name in ("local.json", "ray.json")
    }
    assert {row["dataset"] for row in rows["ray.json"]} == {"captions", "captions_b"}
    assert rows["ray.json"] == rows["local.json"]


@pytest.mark.parametrize("stage", EVAL_STAGES)
def test_a_port_that_is_not_ray_stops_an_eval_stage_before_a_model_loads(project, stage, monkeypatch, capsys):
    pytest.importorskip("ray")
    from babelforge.eval import inputs

    loaded = []
    monkeypatch.setattr(inputs, "load_model", lambda *args: loaded.append(args))
    with serving(LoopbackServer()) as server:
        address = f"127.0.0.1:{server.server_address[1]}"
        began = time.monotonic()
        code = main([stage, "--runner", "ray", "--set", f"eval.runner.address={address}", "--out", "x.json"])
        seconds = time.monotonic() - began
    assert code == 1 and not loaded
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"babelforge {stage}: error: ray: no cluster answered at {address}: something")
    assert seconds < 5, seconds  # not connect_timeout (20 s), nor a model load first


def test_a_port_that_is_not_ray_stops_captions_translate_before_it_runs_a_shard(tmp_path, monkeypatch, capsys):
    pytest.importorskip("ray")
    from babelforge.captions import translate_stage

    ran = []
    monkeypatch.setattr(translate_stage, "run_sharded", lambda *args, **kwargs: ran.append(args))
    (tmp_path / "nllb").mkdir()  # a model folder that exists: the stage gets as far as its runner
    with serving(LoopbackServer()) as server:
        address = f"127.0.0.1:{server.server_address[1]}"
        began = time.monotonic()
        code = main(
            ["captions_translate", "--set", "captions.runner.runner=ray", "--set", f"captions.runner.address={address}"]
            + ["--set", f"paths.nllb_model={tmp_path / 'nllb'}", "--out", str(tmp_path / "data")]
        )
        seconds = time.monotonic() - began
    assert code == 1 and not ran
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1 and errors[0].startswith(
        f"babelforge captions_translate: error: ray: no cluster answered at {address}: something"
    ), errors
    assert seconds < 5, seconds
