"""The eval stages' typed configs: defaults equal params.yaml, one naming rule, flags over params."""

import importlib

import pytest
import yaml

from babelforge.cli import config_from_args, stage_parser
from babelforge.commands import COMMANDS
from babelforge.core.config import load_config
from babelforge.core.errors import BabelforgeError

EVAL_COMMANDS = sorted(name for name in COMMANDS if name.startswith("eval_"))
STAGES = [name for name in EVAL_COMMANDS if hasattr(importlib.import_module(COMMANDS[name].module), "Config")]


def test_one_naming_rule_for_commands_modules_and_dvc_stages(repo_root):
    dvc = yaml.safe_load((repo_root / "dvc.yaml").read_text())["stages"]
    for name in EVAL_COMMANDS:
        short, module = name.removeprefix("eval_"), COMMANDS[name].module
        # its own folder (a task, export), the sample profile's inputs, or an argparse tool (no Config)
        forms = (
            f"babelforge.eval.{short}.{short}_stage",
            f"babelforge.eval.sample.{short}_stage",
            f"babelforge.eval.tools.{short}_stage",
        )
        assert module in forms, name
        assert (module == forms[2]) == (name not in STAGES), name
    eval_stages = {name: stage for name, stage in dvc.items() if name.startswith("eval_")}
    assert eval_stages, "dvc.yaml has no eval stages"
    for name, stage in eval_stages.items():
        assert stage["cmd"] == f"babelforge {name}", name
        assert name in STAGES, f"dvc stage {name} runs a command without a typed Config"
    assert not (repo_root / "eval" / "cli.py").exists()


@pytest.mark.parametrize("name", STAGES)
def test_code_defaults_equal_params_yaml(name, repo_root):
    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    params["profile"] = "sample"  # a per-profile setting's code default is its sample value
    config_cls = importlib.import_module(COMMANDS[name].module).Config
    assert load_config(config_cls, params) == config_cls(), f"{name}: code defaults and params.yaml disagree"


def test_the_defaults_that_used_to_disagree():
    from babelforge.eval.sample.images_stage import Config as Images
    from babelforge.eval.sample.tiny_clip_stage import Config as TinyClip

    assert (Images().n_classes, Images().per_class, TinyClip().seeds) == (1000, 1, [0, 1, 2])


def _config(name, argv, params_path):
    module = importlib.import_module(COMMANDS[name].module)
    args = stage_parser(module.STAGE).parse_args([*argv, "--params", str(params_path)])
    return config_from_args(module.STAGE, args)


def test_flags_override_params(tmp_path, repo_root):
    params = tmp_path / "params.yaml"
    params.write_text((repo_root / "params.yaml").read_text())
    mine = tmp_path / "models" / "mine"  # --model checks that a folder it names is there
    mine.mkdir(parents=True)
    (mine / "config.json").write_text("{}")  # a transformers model folder (its family is found by its files)
    config = _config(
        "eval_zeroshot",
        [
            "--model",
            "org/clip@abc123",
            "--model",
            str(mine),
            "--language",
            "de",
            "--language",
            "fr,FY",
            "--out",
            "z.json",
            "--device",
            "cpu",
        ],
        params,
    )
    assert [(m.id, m.revision) for m in config.common.models] == [("org/clip", "abc123"), (str(mine), None)]
    assert config.languages == ["de", "fr", "FY"] and config.out == "z.json" and config.common.device == "cpu"
    assert config.common.seed == 0 and config.max_templates == 2  # the rest stays as params.yaml says
    plain = _config("eval_mvl_sib", [], params)
    assert plain.languages == ["eng_Latn", "deu_Latn", "swh_Latn", "zho_Hans", "arb_Arab"] and plain.out is None


def test_full_profile_resolves_nested_choices(repo_root):
    from babelforge.eval.retrieval.retrieval_stage import Config

    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    params["profile"] = "full"
    config = load_config(Config, params)
    assert config.images == {
        "xtd": "data/images/coco/train2014",
        "xflickrco": "data/images/xflickrco",
        "xm3600": "data/xm3600_release/images",
    }
    assert config.caption_sets[-1] == "data/xm3600/xm3600.json"  # the full profile adds XM3600 (builders/xm3600)
    assert load_config(Config, {**params, "profile": "sample"}).caption_sets == Config().caption_sets
    assert "data/xm3600/xm3600.json" not in Config().caption_sets  # the sample profile has no XM3600
    assert config.max_images is None and config.common.threads is None
    assert config.common.models[0].revision == "3d74acf9a28c67741b2f4f2ea7635f0aaf6f0268"


def test_a_typo_in_an_eval_group_is_one_line(repo_root):
    from babelforge.eval.zeroshot.zeroshot_stage import Config

    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    params["eval"]["zeroshot"]["max_template"] = 3
    with pytest.raises(BabelforgeError, match="unknown key eval.zeroshot.max_template"):
        load_config(Config, params)


def test_language_codes_resolve_through_the_registry():
    from babelforge.eval.config import CommonConfig
    from babelforge.eval.languages import language_resolver, requested_languages

    resolve = language_resolver(CommonConfig())
    assert [resolve(c) for c in ("deu_Latn", "de", "DE", "jp", "zh")] == ["deu_Latn"] * 3 + ["jpn_Jpan", "zho_Hans"]
    assert requested_languages(["de", "deu_Latn", "fr"], resolve) == ["deu_Latn", "fra_Latn"]
    assert requested_languages(None, resolve) is None
    with pytest.raises(BabelforgeError, match="unknown language 'xx'"):
        resolve("xx")
