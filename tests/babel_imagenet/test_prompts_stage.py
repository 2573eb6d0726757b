"""`babelforge nllb` (sample: tiny model) then `babelforge prompts`, end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from babelforge.cli import main
from babelforge.core.io import read_json, read_provenance, read_table, sha256_file, write_table

from .test_prompts import REPO, ROWS, write_registry

LABEL_LANGUAGES = [row[0] for row in ROWS]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, sib_dir):
    import pandas as pd
    import yaml

    root = tmp_path_factory.mktemp("stage")
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    params["profile"] = "sample"
    params["nllb"]["sib_dir"] = str(sib_dir)
    params["nllb"]["templates"] = str(REPO / "resources" / "clip_templates_en.txt")
    params["prompts"]["max_decoding_length"]["sample"] = 16  # the random model rarely stops by itself
    params["prompts"]["cache"] = str(root / "translations")
    (root / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    write_registry(root / "languages.tsv")
    write_table(
        pd.DataFrame({"lang": LABEL_LANGUAGES, "n_classes": [100] * len(LABEL_LANGUAGES)}),
        root / "languages.parquet",
        sort_by=["lang"],
    )
    assert main(["nllb", "--params", str(root / "params.yaml"), "--out", str(root / "nllb-ct2")]) == 0
    return root


def run_prompts(root: Path, out: str) -> int:
    return main(
        [
            "prompts",
            "--params",
            str(root / "params.yaml"),
            "--languages",
            str(root / "languages.parquet"),
            "--model",
            str(root / "nllb-ct2"),
            "--templates",
            str(REPO / "resources" / "clip_templates_en.txt"),
            "--registry",
            str(root / "languages.tsv"),
            "--out",
            str(root / out),
            "--summary",
            str(root / (out + ".json")),
        ]
    )


def test_nllb_stage_writes_the_tiny_model(workdir):
    metadata = read_json(workdir / "nllb-ct2" / "babelforge_model.json")
    assert metadata["model_id"] == "babelforge/tiny-nllb" and metadata["quantization"] == "int8"
    assert (workdir / "nllb-ct2" / "model.bin").exists() and (workdir / "nllb-ct2" / "tokenizer.json").exists()


def test_prompts_for_every_label_language_with_invariants(workdir):
    assert run_prompts(workdir, "prompts.parquet") == 0
    frame = read_table(workdir / "prompts.parquet")
    assert sorted(frame["lang"].unique()) == sorted(LABEL_LANGUAGES)
    for lang, group in frame.groupby("lang"):
        used = group[group["use"]]
        assert len(used) > 0, lang  # every language has prompts to use
        assert (used["text"].str.count(r"\{\}") == 1).all(), lang
        nllb = group[group["prompt_set"] == "nllb"]
        assert set(nllb["template_id"]) <= set(range(80))
        assert (nllb["fallback"] == (nllb["strategy"] == "appended")).all()
        assert (nllb["valid"] == (nllb["failed"] == "")).all()
    statuses = frame.groupby("lang")["status"].first().to_dict()
    assert statuses["fry_Latn"] == statuses["lat_Latn"] == "no_nllb_code"
    assert statuses["eng_Latn"] == "source"
    for lang, status in statuses.items():
        if status in ("no_nllb_code", "below_min_valid"):
            sets = frame[(frame["lang"] == lang) & frame["use"]].groupby("prompt_set").size().to_dict()
            assert sets == {"label_only": 1, "english": 80}, lang
    provenance = read_provenance(workdir / "prompts.parquet")
    assert provenance["models"]["nllb"]["model_id"] == "babelforge/tiny-nllb"
    assert provenance["models"]["nllb"]["revision"] == "seed-0"
    assert provenance["models"]["nllb"]["quantization"] == "int8"
    assert provenance["models"]["nllb"]["max_decoding_length"] == 16  # the sample value of a per-profile map
    summary = read_json(workdir / "prompts.parquet.json")
    assert set(summary["languages"]) == set(LABEL_LANGUAGES)


def test_prompts_rerun_is_byte_identical(workdir):
    assert run_prompts(workdir, "again.parquet") == 0
    if not (workdir / "prompts.parquet").exists():
        assert run_prompts(workdir, "prompts.parquet") == 0
    assert sha256_file(workdir / "again.parquet") == sha256_file(workdir / "prompts.parquet")


def test_a_changed_language_list_translates_only_the_new_languages(workdir, monkeypatch, capsys):
    """`-S labels.min_classes=20` changes the language list: the languages kept are not translated again."""
    import pandas as pd

    from babelforge.translation.nllb import NllbTranslator

    targets: list[str] = []
    translate = NllbTranslator.translate

    def counting(self, texts, src_lang, tgt_langs, *args, **kwargs):
        targets.extend(sorted(set(tgt_langs)))
        return translate(self, texts, src_lang, tgt_langs, *args, **kwargs)

    monkeypatch.setattr(NllbTranslator, "translate", counting)
    root = workdir / "changed"
    root.mkdir()
    (root / "params.yaml").write_text((workdir / "params.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    (root / "languages.tsv").write_text((workdir / "languages.tsv").read_text(encoding="utf-8"), encoding="utf-8")
    (root / "nllb-ct2").symlink_to(workdir / "nllb-ct2")
    import yaml

    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    params["prompts"]["cache"] = str(root / "translations")
    (root / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")

    def with_languages(languages):
        write_table(
            pd.DataFrame({"lang": languages, "n_classes": [100] * len(languages)}),
            root / "languages.parquet",
            sort_by=["lang"],
        )
        targets.clear()
        assert run_prompts(root, "prompts.parquet") == 0
        return list(targets)

    assert with_languages(["eng_Latn", "deu_Latn", "zho_Hans", "kmr_Latn"]) == ["deu_Latn", "kmr_Latn", "zho_Hans"]
    assert with_languages(["eng_Latn", "deu_Latn", "zho_Hans"]) == []  # a language dropped: nothing translated
    assert with_languages(LABEL_LANGUAGES) == ["jpn_Jpan"]  # one added: only it is translated
    assert "reused from" in capsys.readouterr().err
    # the reused translations give the same table as a build with an empty cache
    fresh = read_table(root / "prompts.parquet")
    params["prompts"]["cache"] = str(root / "empty")
    (root / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    assert run_prompts(root, "fresh.parquet") == 0
    assert read_table(root / "fresh.parquet").equals(fresh)


def test_missing_languages_file_fails_cleanly(workdir, capsys):
    code = main(
        [
            "prompts",
            "--params",
            str(workdir / "params.yaml"),
            "--languages",
            str(workdir / "nope.parquet"),
            "--registry",
            str(workdir / "languages.tsv"),
            "--out",
            str(workdir / "never.parquet"),
        ]
    )
    assert code == 1 and "babelforge labels" in capsys.readouterr().err
    assert not (workdir / "never.parquet").exists()


def test_unknown_prompts_param_fails_naming_it(workdir, tmp_path, capsys):
    import yaml

    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["prompts"]["min_vaild"] = 10  # a typo must not silently keep the default
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    code = main(
        [
            "prompts",
            "--params",
            str(tmp_path / "params.yaml"),
            "--languages",
            str(workdir / "languages.parquet"),
            "--model",
            str(workdir / "nllb-ct2"),
            "--registry",
            str(workdir / "languages.tsv"),
            "--out",
            str(tmp_path / "never.parquet"),
        ]
    )
    assert code == 1 and "min_vaild" in capsys.readouterr().err
    assert not (tmp_path / "never.parquet").exists()
