"""`babelforge eval_export`: Babel-ImageNet in CLIP_benchmark's layout reads back as what was built."""

import json
import os

import pandas as pd
import pytest
import yaml

from babelforge.cli import main
from babelforge.core.io import write_table
from babelforge.eval.export.clip_benchmark import (
    FALLBACK_FILES,
    LABELS_FILE,
    PROMPTS_FILE,
    layout,
    read_fallbacks,
    read_layout,
)
from tests.eval.conftest import REGISTRY_ROWS
from tests.registry import write_registry


@pytest.fixture
def built(tmp_path):
    """labels.parquet and prompts.parquet as the pipeline writes them, in a project folder."""
    write_registry(tmp_path / "resources" / "languages.tsv", REGISTRY_ROWS)
    labels = [
        *(
            {"class_idx": c, "lang": "eng_Latn", "label": f"thing {c}", "rank": 0, "is_duplicate": False}
            for c in range(5)
        ),
        {"class_idx": 0, "lang": "deu_Latn", "label": "Goldfisch", "rank": 0, "is_duplicate": False},
        {"class_idx": 0, "lang": "deu_Latn", "label": "Karausche", "rank": 1, "is_duplicate": False},  # not the best
        {"class_idx": 3, "lang": "deu_Latn", "label": "Weißer Hai", "rank": 0, "is_duplicate": False},
        {"class_idx": 1, "lang": "fry_Latn", "label": "goudfisk", "rank": 0, "is_duplicate": False},
        {"class_idx": 4, "lang": "jpn_Jpan", "label": "ホホジロザメ", "rank": 0, "is_duplicate": False},
    ]
    write_table(
        pd.DataFrame(labels),
        tmp_path / "data" / "babel_imagenet" / "labels.parquet",
        sort_by=["lang", "class_idx", "rank"],
    )
    prompts = [
        {"lang": "deu_Latn", "template_id": 0, "text": "ein Foto von {}.", "prompt_set": "nllb", "use": True},
        {"lang": "deu_Latn", "template_id": 1, "text": "kaputt", "prompt_set": "nllb", "use": False},
        {"lang": "deu_Latn", "template_id": 2, "text": "{} {im} Bild.", "prompt_set": "nllb", "use": True},
        {"lang": "deu_Latn", "template_id": 3, "text": "eine Zeichnung von {}.", "prompt_set": "nllb", "use": True},
        {"lang": "jpn_Jpan", "template_id": 0, "text": "{}の写真。", "prompt_set": "nllb", "use": True},
        {"lang": "fry_Latn", "template_id": 0, "text": "a photo of a {}.", "prompt_set": "english", "use": True},
    ]
    write_table(pd.DataFrame(prompts), tmp_path / "data" / "babel_imagenet" / "prompts.parquet")
    (tmp_path / "params.yaml").write_text(
        yaml.safe_dump({"profile": "sample", "eval": {"common": {"registry": "resources/languages.tsv"}}})
    )
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)


def test_export_reads_back_identically(built):
    from babelforge.babel_imagenet.prompts import read_templates
    from babelforge.core.io import read_table
    from babelforge.eval.labels import ENGLISH_TEMPLATES, labels_by_language, translated_templates

    assert main(["eval_export", "--out", "cb"]) == 0
    labels, prompts = read_layout(built / "cb")
    manifest = json.loads((built / "cb" / "export.json").read_text())
    code_to_key = {code: entry["key"] for code, entry in manifest["languages"].items()}
    assert code_to_key == {"EN": "eng_Latn", "DE": "deu_Latn", "FY": "fry_Latn", "JA": "jpn_Jpan"}
    built_labels = labels_by_language(read_table(built / "data" / "babel_imagenet" / "labels.parquet"))
    assert {code_to_key[c]: v for c, v in labels.items()} == built_labels
    assert labels["DE"] == {0: "Goldfisch", 3: "Weißer Hai"}
    translated = translated_templates(read_table(built / "data" / "babel_imagenet" / "prompts.parquet"))
    english = read_templates(ENGLISH_TEMPLATES)
    # German: its usable translations, less the one str.format cannot fill; Frisian: English fallback, said so
    assert prompts["DE"] == ["ein Foto von {}.", "eine Zeichnung von {}."] != translated["deu_Latn"]
    assert prompts["JA"] == translated["jpn_Jpan"] and prompts["EN"] == english
    assert "FY" not in prompts and read_fallbacks(built / "cb") == {"english-fallback": {"FY": english}}
    assert {c: (e["prompts"], e["prompts_file"]) for c, e in manifest["languages"].items()} == {
        "EN": ("english", PROMPTS_FILE),
        "DE": ("translated", PROMPTS_FILE),
        "FY": ("english-fallback", "nllb_dist13b_prompts.en-fallback.json"),
        "JA": ("translated", PROMPTS_FILE),
    }
    assert manifest["provenance"]["stage"] == "eval_export"
    # a second export of the same build is the same bytes
    first = {p.name: p.read_bytes() for p in (built / "cb").iterdir()}
    assert main(["eval_export", "--out", "cb"]) == 0
    assert first == {p.name: p.read_bytes() for p in (built / "cb").iterdir()}


def test_export_is_what_clip_benchmark_reads(built):
    assert main(["eval_export", "--out", "cb", "--language", "de"]) == 0
    classnames = json.loads((built / "cb" / LABELS_FILE).read_text(encoding="utf-8"))
    templates = json.loads((built / "cb" / PROMPTS_FILE).read_text(encoding="utf-8"))
    language = "de"  # what a user types: `clip_benchmark eval --dataset babel_imagenet --language de`
    idxs, names = classnames[language.upper()]
    filled = [t.replace("{}", "{c}").format(c=name) for name in names for t in templates[language.upper()]]
    assert idxs == [0, 3] and filled[0] == "ein Foto von Goldfisch." and list(classnames) == ["DE"]


def test_layout_refuses_two_languages_with_one_code():
    from babelforge.core.errors import BabelforgeError

    with pytest.raises(BabelforgeError, match="both export as 'ZH'"):
        layout(
            {"zho_Hans": {0: "猫"}, "zho_Hant": {0: "貓"}},
            {"zho_Hans": ["{}"], "zho_Hant": ["{}"]},
            {"zho_Hans": "zh", "zho_Hant": "ZH"},
        )


@pytest.mark.parametrize("fallback, kind", [("english", "english-fallback"), ("label", "label-fallback")])
def test_fallback_prompts_are_never_exported_under_the_translated_name(built, capsys, fallback, kind):
    """CLIP_benchmark reads nllb_dist13b_prompts.json: a language without usable translations is not
    in it (scoring it there would report English templates as translated prompts); its templates
    are in a file whose name says which fallback they are."""
    assert main(["eval_export", "--out", "cb", "--set", f"eval.export.fallback={fallback}"]) == 0
    translated = json.loads((built / "cb" / PROMPTS_FILE).read_text(encoding="utf-8"))
    assert sorted(translated) == ["DE", "EN", "JA"]
    name = FALLBACK_FILES[kind]
    assert name.startswith("nllb_dist13b_prompts.") and name.endswith(f".{kind.replace('english', 'en')}.json")
    assert sorted(p.name for p in (built / "cb").iterdir()) == sorted([LABELS_FILE, PROMPTS_FILE, name, "export.json"])
    held = json.loads((built / "cb" / name).read_text(encoding="utf-8"))
    assert list(held) == ["FY"] and (held["FY"] == ["{}"]) == (fallback == "label")
    assert f"1 with {fallback} fallback prompts, in {name}" in capsys.readouterr().err
