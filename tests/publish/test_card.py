"""Dataset cards: YAML front matter, per-source licences, generated body, offline load_dataset per config."""

import json
import os
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import write_table
from babelforge.core.licences import licence_from_text
from babelforge.core.provenance import provenance
from babelforge.publish import card
from tests.publish.conftest import LABELS, build, card_paths


def front_matter(folder):
    match = card.FRONT_MATTER.match((folder / "README.md").read_text(encoding="utf-8"))
    assert match, "README.md has no front matter"
    return yaml.safe_load(match.group(1))


def test_front_matter_configs_licences_languages(built_card):
    meta = front_matter(built_card)
    names = [config["config_name"] for config in meta["configs"]]
    assert names == sorted(LABELS)
    for config in meta["configs"]:
        assert config["data_files"] == [{"split": "test", "path": f"data/{config['config_name']}/test.parquet"}]
    assert [c for c in meta["configs"] if c.get("default")] == [meta["configs"][names.index("eng_Latn")]]
    # clip -> MIT, omw:fin -> CC BY 3.0 (OMW index.toml), wikt -> CC BY-SA 3.0, cldr + BabelNet -> other
    assert meta["license"] == ["cc-by-3.0", "cc-by-sa-3.0", "mit", "other"]
    assert meta["license_link"] == "LICENSES.md" and meta["license_name"]
    assert meta["language"] == ["en", "fi", "ja", "ku", "ru"]
    assert meta["size_categories"] == ["n<1K"]
    assert "zero-shot-image-classification" in meta["task_categories"]
    assert card.validate_card(built_card) == []


def test_licences_file_and_body_name_each_source(built_card):
    licences = (built_card / "LICENSES.md").read_text(encoding="utf-8")
    assert "## WIKI: BabelNet (WIKI)" in licences and "BabelNet Non-Commercial License" in licences
    assert "## cldr" in licences and "Unicode License" in licences
    assert "## omw:fin: FinnWordNet" in licences and "CC BY 3.0" in licences
    assert "@" in licences.split("## omw:fin")[1]  # the wordnet's own citation from the mirror
    body = (built_card / "README.md").read_text(encoding="utf-8")
    assert "| fin_Latn | fi | very-low | 3 | omw:fin 3 |" in body
    assert "## Build provenance" in body and "## Known limitations" in body
    assert "stage `labels`" in body and '"sha256": "' + "0" * 64 in body and '"min_classes": 10' in body
    assert "geigle-etal-2024-babel" in body and "navigli-ponzetto-2012-babelnet" in body


# The end of a `datasets` loader script: print `out`, then leave without the interpreter's teardown
# (once, under a loaded CI run, a library thread aborted it after the output was printed:
# "terminate called without an active exception", exit -6; what is checked is done by then).
PRINT_AND_LEAVE = "print(json.dumps(out, ensure_ascii=False), flush=True)\nimport os; os._exit(0)\n"


def test_load_dataset_offline_for_every_config(built_card, tmp_path):
    script = (
        "import json, sys\nfrom datasets import load_dataset\n"
        "out = {}\n"
        "for name in sys.argv[2:]:\n"
        "    ds = load_dataset(sys.argv[1], name, split='test')\n"
        "    out[name] = {'rows': ds.num_rows, 'labels': list(ds['label']), 'columns': ds.column_names}\n"
        + PRINT_AND_LEAVE
    )
    env = dict(
        os.environ,
        HF_DATASETS_OFFLINE="1",
        HF_HUB_OFFLINE="1",
        HF_HOME=str(tmp_path / "hf"),
        HF_DATASETS_CACHE=str(tmp_path / "hf" / "datasets"),
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(built_card), *sorted(LABELS)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    for lang, (labels, _) in LABELS.items():
        assert loaded[lang]["rows"] == len(labels)
        assert loaded[lang]["labels"] == [labels[idx] for idx in sorted(labels)]
        assert {"class_idx", "wnid", "label", "source"} <= set(loaded[lang]["columns"])


def test_rebuild_is_byte_identical_and_swaps_whole_folder(card_inputs, built_card):
    first = {p.relative_to(built_card): p.read_bytes() for p in built_card.rglob("*") if p.is_file()}
    (built_card / "data" / "old_Latn").mkdir()
    (built_card / "data" / "old_Latn" / "test.parquet").write_bytes(b"stale")
    again = build("babel-imagenet", card_inputs)
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert first == second
    assert not [p for p in again.parent.iterdir() if p.name.startswith(".")]


def test_the_audits_slice_of_the_labels_feeds_known_limitations(card_inputs):
    found = card_inputs / "reports" / "audit" / "datasets" / "babel-imagenet.json"
    found.parent.mkdir(parents=True)
    found.write_text(
        json.dumps(
            {
                "dataset": "babel-imagenet",
                "audited": True,
                "errors": 7,
                "warnings": 3,
                "languages": {"fin_Latn": {"group": "very-low"}, "eng_Latn": {"group": "high"}},
            }
        )
    )
    folder = build("babel-imagenet", card_inputs)
    body = (folder / "README.md").read_text(encoding="utf-8")
    assert "7 error rows and 3 warning rows over 2 languages" in body
    assert "1 languages have at most 100 classes" in body


def test_a_source_missing_from_the_omw_data_is_an_error(card_inputs):
    labels = pd.read_parquet(card_inputs / "labels.parquet")
    labels.loc[0, "source"] = "omw:nowhere"
    labels.to_parquet(card_inputs / "labels.parquet")
    with pytest.raises(BabelforgeError, match="omw:nowhere"):
        build("babel-imagenet", card_inputs)
    assert not (card_inputs / "build" / "hub" / "babel-imagenet").exists()


def test_validate_card_reports_problems(built_card):
    (built_card / "data" / "fin_Latn" / "test.parquet").unlink()
    problems = card.validate_card(built_card)
    assert any("fin_Latn" in problem and "missing" in problem for problem in problems)
    readme = built_card / "README.md"
    readme.write_text(readme.read_text().replace("- mit\n", "- not-a-licence\n"))
    assert any("not-a-licence" in problem for problem in card.validate_card(built_card))


def _write_mvl_sib_tasks(root):
    """Two task configs with the columns the mvl_sib stage writes: they differ between tasks."""
    tasks = {
        "i2s_k1": lambda lang: pd.DataFrame(
            {
                "instance_id": range(4),
                "label": [0, 1, 2, 3],
                "ref_image_ids": [["sports-00"]] * 4,
                "option_sentence_ids": [[1, 2, 3, 4]] * 4,
                "option_sentences": [[f"{lang} s{i}" for i in range(4)]] * 4,
            }
        ),
        "s2i_k3": lambda lang: pd.DataFrame(
            {
                "instance_id": range(4),
                "label": [3, 2, 1, 0],
                "ref_sentence_ids": [[1, 2, 3]] * 4,
                "ref_sentences": [[f"{lang} r{i}" for i in range(3)]] * 4,
                "option_image_ids": [["a", "b", "c", "d"]] * 4,
            }
        ),
    }
    for task, table in tasks.items():
        (root / task).mkdir(parents=True, exist_ok=True)
        for lang in ("fin_Latn", "rus_Cyrl"):
            table(lang).to_parquet(root / task / f"{lang}.parquet")


def load_features(folder, names, tmp_path):
    """{config: {column: feature as `datasets` reports it, "_rows": [first row, values as text]}},
    read by `datasets.load_dataset` offline in a fresh process."""
    script = (
        "import json, sys\nfrom datasets import load_dataset\nout = {}\n"
        "for name in sys.argv[2:]:\n"
        "    ds = load_dataset(sys.argv[1], name, split='test')\n"
        "    out[name] = {column: repr(feature) for column, feature in ds.features.items()}\n"
        "    out[name]['_row'] = {k: repr(v) for k, v in ds[0].items()}\n" + PRINT_AND_LEAVE
    )
    env = dict(
        os.environ,
        HF_DATASETS_OFFLINE="1",
        HF_HUB_OFFLINE="1",
        HF_HOME=str(tmp_path / "hf"),
        HF_DATASETS_CACHE=str(tmp_path / "hf" / "datasets"),
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(folder), *names], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def _write_mvl_sib_images(root):
    from PIL import Image

    (root / "images").mkdir()
    for name, colour in (("sports-00", "red"), ("travel-00", "blue")):
        Image.new("RGB", (8, 6), colour).save(root / "images" / f"{name}.jpg")
    pd.DataFrame(
        {
            "topic": ["sports", "travel"],
            "image_id": ["sports-00", "travel-00"],
            "file": ["images/sports-00.jpg", "images/travel-00.jpg"],
            "licence": ["CC0-1.0", "CC0-1.0"],
            "attribution": ["test", "test"],
        }
    ).to_parquet(root / "images.parquet")


def test_mvl_sib_card_has_one_config_per_task_and_language_and_an_images_config(card_inputs, tmp_path):
    root = card_inputs / "mvl_sib"
    _write_mvl_sib_tasks(root)
    _write_mvl_sib_images(root)
    folder = build("mvl-sib", card_inputs)
    meta = front_matter(folder)
    assert meta["license"] == ["cc-by-sa-4.0", "cc0-1.0"]
    names = [config["config_name"] for config in meta["configs"]]
    assert names == ["i2s_k1.fin_Latn", "i2s_k1.rus_Cyrl", "images", "s2i_k3.fin_Latn", "s2i_k3.rus_Cyrl"]
    assert meta["language"] == ["fi", "ru"]
    fin = next(config for config in meta["configs"] if config["config_name"] == "s2i_k3.fin_Latn")
    assert fin["data_files"] == [{"split": "test", "path": "data/s2i_k3.fin_Latn/test.parquet"}]
    # the images live in the `images` config only, not beside it as loose files
    assert sorted(p.name for p in folder.iterdir()) == ["LICENSES.md", "README.md", "croissant.json", "data"]
    readme = (folder / "README.md").read_text()
    assert "| images (2) | | [CC0 1.0]" in readme and "(one per task and language, plus `images`)" in readme
    assert card.validate_card(folder) == []
    # every config loads, although the tasks' columns differ; images decode as images
    loaded = load_features(folder, names, tmp_path)
    assert "ref_image_ids" in loaded["i2s_k1.rus_Cyrl"] and "ref_sentences" in loaded["s2i_k3.fin_Latn"]
    assert loaded["images"]["image"].startswith("Image(")
    assert loaded["images"]["_row"]["image_id"] == "'sports-00'"
    assert "PIL" in loaded["images"]["_row"]["image"] and "size=8x6" in loaded["images"]["_row"]["image"]


def test_mvl_sib_languages_table_has_no_empty_columns(card_inputs):
    _write_mvl_sib_tasks(card_inputs / "mvl_sib")
    readme = (build("mvl-sib", card_inputs) / "README.md").read_text()
    table = readme.split("## Languages")[1].split("## Licences")[0]
    assert "| config | language tag | rows |" in table and "group" not in table and "sources" not in table
    assert "| i2s_k1.fin_Latn | fi | 4 |" in table


def test_mvl_sib_card_holds_one_task_config_at_a_time(card_inputs, monkeypatch):
    """The task tables are counted from their Parquet footers and each is read only when the card
    writes it, then let go: the card's memory is one config's, not the dataset's millions of rows.
    What it writes is each task file's table as read, without its schema metadata."""
    import gc
    import weakref

    import pyarrow.parquet as pq

    from babelforge.mvl_sib import dataset

    root = card_inputs / "mvl_sib"
    _write_mvl_sib_tasks(root)
    _write_mvl_sib_images(root)
    read, alive = [], []
    original = dataset.task_table

    def task_table(path):
        gc.collect()
        # every table read before this one is gone (the images config is not a task table)
        assert [ref for ref in alive if ref() is not None] == []
        table = original(path)
        read.append(path.relative_to(root).as_posix())
        alive.append(weakref.ref(table))
        return table

    monkeypatch.setattr(dataset, "task_table", task_table)
    data = dataset.read_mvl_sib(card_paths(card_inputs))
    assert read == [] and data.tables["i2s_k1.fin_Latn"]["test"].rows == 4
    folder = build("mvl-sib", card_inputs)
    assert read == [
        "i2s_k1/fin_Latn.parquet",
        "i2s_k1/rus_Cyrl.parquet",
        "s2i_k3/fin_Latn.parquet",
        "s2i_k3/rus_Cyrl.parquet",
    ]
    for path in read:
        task, lang = path.removesuffix(".parquet").split("/")
        written = pq.read_table(folder / "data" / f"{task}.{lang}" / "test.parquet")
        assert written.equals(pq.read_table(root / path)) and written.schema.metadata is None


def test_prompt_and_caption_cards_from_their_stage_schemas(card_inputs):
    prompts = pd.DataFrame(
        [
            {
                "lang": lang,
                "prompt_set": "nllb",
                "template_id": i,
                "text": f"{{}} {i}",
                "english": "a photo of a {}.",
                "strategy": "tag",
                "fallback": False,
                "score": -0.5,
                "valid": True,
                "failed": [],
            }
            for lang in ("fin_Latn", "rus_Cyrl")
            for i in range(3)
        ]
    )
    prompts.to_parquet(card_inputs / "prompts.parquet")
    selected = pd.DataFrame(
        [
            {
                "caption_id": i,
                "lang": "fin_Latn",
                "text": f"kuva {i}",
                "kiwi_score": 0.5,
                "kiwi_percentile": 50.0,
                "chrf": None,
                "reason": None,
            }
            for i in range(4)
        ]
    )
    selected.to_parquet(card_inputs / "selected.parquet")
    prompts_card = build("babel-imagenet-prompts", card_inputs)
    assert front_matter(prompts_card)["license"] == "mit"
    assert [c["config_name"] for c in front_matter(prompts_card)["configs"]] == ["fin_Latn", "rus_Cyrl"]
    captions_card = build("mt-captions", card_inputs)
    assert front_matter(captions_card)["license"] == "cc-by-4.0"
    assert pd.read_parquet(captions_card / "data" / "fin_Latn" / "test.parquet")["caption_id"].tolist() == [0, 1, 2, 3]
    assert card.validate_card(prompts_card) == [] and card.validate_card(captions_card) == []


def test_the_caption_card_reads_selected_captions_one_language_at_a_time(card_inputs, monkeypatch):
    """selected.parquet as captions_select writes it (a row group per shard, every language in
    each): each config is read alone, when written, with the artifact's column types (a
    language with untranslated captions keeps an int32 hyp_rank) and without its provenance."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from babelforge.captions.dataset import read_captions
    from babelforge.captions.selected import selected_schema
    from babelforge.core import datasets
    from babelforge.core.io import write_table_parts
    from tests.publish.conftest import card_paths

    schema = selected_schema(pa.schema([("caption_id", pa.string()), ("image", pa.string())]))

    def shard(index):
        rows = []
        for i in range(3):
            for lang in ("fin_Latn", "rus_Cyrl"):
                kept = lang == "fin_Latn" or i != 1
                rows.append(
                    {
                        "caption_id": f"s{index}-{i}",
                        "lang": lang,
                        "text": f"{lang} {i}" if kept else None,
                        "hyp_rank": 0 if kept else None,
                        "kiwi_score": 0.5 if kept else None,
                        "n_hypotheses": 4,
                        "n_passed": 1 if kept else 0,
                        "reason": None if kept else "empty: all hypotheses dropped",
                        "image": f"{i}.jpg",
                    }
                )
        return pa.Table.from_pylist(rows, schema=schema)

    write_table_parts(
        [shard(0), shard(1)], card_inputs / "selected.parquet", schema, provenance={"stage": "captions_select"}
    )
    data = read_captions(card_paths(card_inputs))
    assert {lang: splits["test"].rows for lang, splits in data.tables.items()} == {"fin_Latn": 6, "rus_Cyrl": 6}
    assert all(isinstance(splits["test"], datasets.LazySplit) for splits in data.tables.values())
    assert data.provenance[str(card_inputs / "selected.parquet")] == {"stage": "captions_select"}
    reads = []
    original = datasets._language_rows
    monkeypatch.setattr(datasets, "_language_rows", lambda *args: reads.append(args[2]) or original(*args))
    folder = build("mt-captions", card_inputs)
    assert reads == ["fin_Latn", "rus_Cyrl"]
    for lang in ("fin_Latn", "rus_Cyrl"):
        written = pq.read_table(folder / "data" / lang / "test.parquet")
        assert written.schema.field("hyp_rank").type == pa.int32() and "lang" not in written.column_names
        assert b"babelforge.provenance" not in written.schema.metadata
    russian = pq.read_table(folder / "data" / "rus_Cyrl" / "test.parquet").to_pylist()
    assert [(row["caption_id"], row["hyp_rank"], row["reason"]) for row in russian if row["reason"]] == [
        ("s0-1", None, "empty: all hypotheses dropped"),
        ("s1-1", None, "empty: all hypotheses dropped"),
    ]
    assert card.validate_card(folder) == []


def test_knowledge_card_is_one_english_config_under_the_wordnet_licence(card_inputs):
    from tests.audit.conftest import wordnet_table

    wordnet_table().to_parquet(card_inputs / "wordnet.parquet")
    folder = build("knowledge", card_inputs)
    meta = front_matter(folder)
    assert [c["config_name"] for c in meta["configs"]] == ["eng_Latn"] and meta["language"] == ["en"]
    assert meta["license"] == ["mit", "other"] and "WordNet 3.0 License" in (folder / "LICENSES.md").read_text()
    table = pd.read_parquet(folder / "data" / "eng_Latn" / "test.parquet")
    assert len(table) == 30 and list(table["hypernym_path"][0]) == ["entity.n.01"]


@pytest.mark.parametrize("rows, category", [(999, "n<1K"), (1000, "1K<n<10K"), (20_370, "10K<n<100K")])
def test_size_category(rows, category):
    assert card.size_category(rows) == category


@pytest.mark.parametrize(
    "text, name, hf_id",
    [
        ("https://creativecommons.org/licenses/by/3.0/", "CC BY 3.0", "cc-by-3.0"),
        ("CC BY SA 3.0", "CC BY-SA 3.0", "cc-by-sa-3.0"),
        ("https://creativecommons.org/licenses/by-sa/", "CC BY-SA (version not stated)", "other"),
        ("https://creativecommons.org/licenses/by-nc-sa/3.0/", "CC BY-NC-SA 3.0", "cc-by-nc-sa-3.0"),
        # no element of a CC licence may be lost: BY-NC-ND is not BY-NC, BY-ND is not BY
        ("CC BY-NC-ND 4.0", "CC BY-NC-ND 4.0", "other"),
        ("https://creativecommons.org/licenses/by-nd/4.0/", "CC BY-ND 4.0", "other"),
        ("https://creativecommons.org/publicdomain/zero/1.0/", "CC0 1.0", "cc0-1.0"),
        ("wordnet", "WordNet License (Princeton-style, per wordnet)", "other"),
    ],
)
def test_licence_from_text_keeps_every_licence_element(text, name, hf_id):
    licence = licence_from_text(text)
    assert (licence.name, licence.hf_id) == (name, hf_id)


def _relabel_source(card_inputs, lang, source):
    labels = pd.read_parquet(card_inputs / "labels.parquet")
    labels.loc[labels["lang"] == lang, "source"] = source
    labels.to_parquet(card_inputs / "labels.parquet")


def test_a_source_no_rule_knows_stops_the_card_instead_of_becoming_babelnet(card_inputs):
    _relabel_source(card_inputs, "kmr_Latn", "MYSTERY")
    with pytest.raises(BabelforgeError, match="'MYSTERY' is not a known sense source") as error:
        build("babel-imagenet", card_inputs)
    assert "\n" not in str(error.value)
    assert not (card_inputs / "build" / "hub" / "babel-imagenet").exists()


def test_reviewed_labels_get_their_own_licence_line(card_inputs):
    _relabel_source(card_inputs, "fin_Latn", "review:anna")
    folder = build("babel-imagenet", card_inputs)
    licences = (folder / "LICENSES.md").read_text(encoding="utf-8")
    assert "## review:anna: Human review by anna (resources/reviews)" in licences
    assert "Licence: Apache-2.0 (babelforge label reviews)" in licences
    body = (folder / "README.md").read_text(encoding="utf-8")
    assert "| review:anna | Human review by anna (resources/reviews) | [Apache-2.0 (babelforge label reviews)]" in body
    assert "apache-2.0" in front_matter(folder)["license"]
    _relabel_source(card_inputs, "fin_Latn", "review:")
    with pytest.raises(BabelforgeError, match="names no reviewer"):
        build("babel-imagenet", card_inputs)


def test_a_card_build_reports_its_progress(card_inputs, capsys):
    build("babel-imagenet", card_inputs)
    err = capsys.readouterr().err
    rows = sum(len(labels) for labels, _ in LABELS.values())
    assert f"card babel-imagenet: writing {len(LABELS)} configs, {rows} rows" in err
    assert f"card babel-imagenet: {len(LABELS)} configs in" in err


def test_load_dataset_types_class_label_and_string_columns(built_card, card_inputs, tmp_path):
    from tests.audit.conftest import wordnet_table

    wordnet_table().to_parquet(card_inputs / "wordnet.parquet")
    pd.DataFrame(
        [
            {"caption_id": str(i), "lang": "fin_Latn", "text": f"kuva {i}", "kiwi_score": 0.5, "reason": None}
            for i in range(3)
        ]
    ).to_parquet(card_inputs / "selected.parquet")
    knowledge, captions = build("knowledge", card_inputs), build("mt-captions", card_inputs)
    labels = load_features(built_card, ["fin_Latn"], tmp_path)["fin_Latn"]
    # every ImageNet index of the labels, named by wnid (CLIP's English names repeat)
    assert labels["class_idx"].startswith("ClassLabel(names=['n01440764', 'n01443537', 'n01484850'"), labels
    assert labels["_row"]["class_idx"] == "0"
    assert load_features(knowledge, ["eng_Latn"], tmp_path / "k")["eng_Latn"]["class_idx"].count("'n0") == 30
    assert load_features(captions, ["fin_Latn"], tmp_path / "c")["fin_Latn"]["reason"] == "Value('string')"


def test_nested_provenance_is_one_line_per_entry(card_inputs):
    senses = {
        "omw": {
            f"wns/p{i:03d}/wn-data-x{i}.tab": {
                "lang": "fin_Latn",
                "licence": "CC BY 3.0",
                "name": f"wordnet {i}",
                "sha256": f"{i:064x}",
            }
            for i in range(300)
        }
    }
    labels = pd.read_parquet(card_inputs / "labels.parquet")
    record = provenance("labels", {"labels": {"min_classes": 10}}, {"senses": senses, "senses_file": "omw.parquet"})
    write_table(labels, card_inputs / "labels.parquet", sort_by=["lang", "class_idx"], provenance=record)
    body = (build("babel-imagenet", card_inputs) / "README.md").read_text(encoding="utf-8")
    section = body.split("## Build provenance")[1].split("## Known limitations")[0]
    assert max(len(line) for line in section.splitlines()) < 300
    assert '  - source `senses`:\n    - `omw`:\n      - `wns/p000/wn-data-x0.tab`: `{"lang": "fin_Latn"' in section
    assert section.count("      - `wns/p") == 300
    assert '  - source `senses_file`: `"omw.parquet"`' in section
