"""Croissant metadata of every card: mlcroissant validates it and reads the card's records offline,
the Responsible-AI fields say where rows come from, and the card's README YAML passes the checks
huggingface_hub and `datasets` make of a dataset card."""

import itertools
import json

import pandas as pd
import pytest

from babelforge.core.datasets import names
from babelforge.core.io import write_table
from babelforge.core.provenance import provenance
from babelforge.publish import card, croissant
from tests.publish.conftest import build
from tests.publish.test_card import _write_mvl_sib_images, _write_mvl_sib_tasks, front_matter


def write_inputs(dataset, folder, profile="full"):
    """The artifacts the card of `dataset` reads, small and crafted, recording the build `profile`."""
    record = provenance(dataset, {"profile": profile}, models={"translator": {"id": "nllb-tiny", "revision": "abc"}})
    if dataset == "babel-imagenet":
        from tests.publish.conftest import crafted_labels

        write_table(crafted_labels(), folder / "labels.parquet", sort_by=["lang", "class_idx"], provenance=record)
    elif dataset == "babel-imagenet-prompts":
        rows = [
            {"lang": lang, "prompt_set": "nllb", "template_id": i, "text": f"{{}} {i}", "valid": True}
            for lang in ("fin_Latn", "rus_Cyrl")
            for i in range(3)
        ]
        write_table(pd.DataFrame(rows), folder / "prompts.parquet", provenance=record)
    elif dataset == "mt-captions":
        rows = [{"caption_id": f"c{i}", "lang": "fin_Latn", "text": f"kuva {i}", "kiwi_score": 0.5} for i in range(4)]
        write_table(pd.DataFrame(rows), folder / "selected.parquet", provenance=record)
    elif dataset == "mvl-sib":
        _write_mvl_sib_tasks(folder / "mvl_sib")
        _write_mvl_sib_images(folder / "mvl_sib")
    elif dataset == "knowledge":
        from tests.audit.conftest import wordnet_table

        write_table(wordnet_table(), folder / "wordnet.parquet", provenance=record)
    elif dataset == "xm3600":
        rows = [
            {"image_id": f"k{i}", "image_locale": "fi", "code": "fi", "lang": "fin_Latn", "caption_index": n,
             "caption": f"kuva {i} {n}", "caption_tokenized": f"kuva {i} {n}"}
            for i in range(3)
            for n in range(2)
        ]  # fmt: skip
        write_table(pd.DataFrame(rows), folder / "xm3600" / "captions.parquet", provenance=record)


def load(folder):
    import mlcroissant as mlc

    return mlc.Dataset(jsonld=str(folder / croissant.FILE_NAME))


def first_records(dataset, record_set, n=3):
    return list(itertools.islice(dataset.records(record_set=record_set), n))


def parquet_rows(folder, config):
    return pd.read_parquet(folder / "data" / config / "test.parquet")


def decoded(value):
    return value.decode() if isinstance(value, bytes) else value


@pytest.mark.parametrize("dataset", names())
def test_every_card_reads_through_mlcroissant(dataset, card_inputs):
    """Validation finds no error, and each record set's first records equal the rows of its first file."""
    write_inputs(dataset, card_inputs)
    folder = build(dataset, card_inputs)
    loaded = load(folder)  # raises on a validation error
    assert not loaded.metadata.ctx.issues.errors
    metadata = json.loads((folder / croissant.FILE_NAME).read_text())
    configs = {config["config_name"] for config in front_matter(folder)["configs"]}
    included = {path for file_set in metadata["distribution"] for path in file_set["includes"]}
    assert {path.split("/")[1] for path in included} == configs  # every config's files are in a record set
    for record_set in metadata["recordSet"]:
        name = record_set["name"]
        records = first_records(loaded, name)
        assert records, f"{dataset}/{name}: no record"
        config = decoded(records[0][f"{name}/config"])
        rows = parquet_rows(folder, config)
        for record, (_, row) in zip(records, rows.iterrows()):
            for column in rows.columns:
                if column == "image":
                    assert record[f"{name}/image"].size == (8, 6)  # decoded to a PIL image
                    continue
                value, expected = record[f"{name}/{column}"], row[column]
                if isinstance(value, list):
                    assert [decoded(v) for v in value] == list(expected)
                elif pd.isna(expected):
                    assert value is None or pd.isna(value)
                else:
                    assert decoded(value) == expected
        if f"{name}/language" in records[0]:
            assert config.endswith(decoded(records[0][f"{name}/language"]))


def test_the_rai_fields_say_sources_licences_models_and_limitations(card_inputs):
    write_inputs("babel-imagenet-prompts", card_inputs)
    metadata = json.loads((build("babel-imagenet-prompts", card_inputs) / croissant.FILE_NAME).read_text())
    assert metadata["conformsTo"] == [croissant.CROISSANT, croissant.CROISSANT_RAI]
    assert metadata["license"] == ["https://opensource.org/licenses/MIT"]
    assert metadata["inLanguage"] == ["fi-Latn", "ru-Cyrl"]
    assert "NLLB-200" in metadata["rai:dataPreprocessingProtocol"]  # the machine-translated part
    assert metadata["rai:machineAnnotationTools"] == ["translator: nllb-tiny (revision abc)"]
    assert any("machine output" in item for item in metadata["rai:dataLimitations"])
    assert metadata["prov:wasDerivedFrom"][0]["name"] == "English templates"
    assert "@inproceedings{geigle-etal-2024-babel" in metadata["citeAs"]
    assert card.SAMPLE_TAG not in metadata["keywords"] and "Evaluation of" in metadata["rai:dataUseCases"]


def test_labels_name_every_source_licence_and_no_machine_translation(card_inputs):
    write_inputs("babel-imagenet", card_inputs)
    metadata = json.loads((build("babel-imagenet", card_inputs) / croissant.FILE_NAME).read_text())
    derived = [item["name"] for item in metadata["prov:wasDerivedFrom"]]
    assert {"clip", "omw:fin", "wikt", "cldr", "WIKI"} <= {name.split("`")[1] for name in derived}
    assert metadata["rai:dataPreprocessingProtocol"].startswith("No machine translation")


def test_a_sample_build_is_marked_in_its_croissant_metadata(card_inputs):
    write_inputs("mt-captions", card_inputs, profile="sample")
    metadata = json.loads((build("mt-captions", card_inputs) / croissant.FILE_NAME).read_text())
    assert card.SAMPLE_TAG in metadata["keywords"]
    assert metadata["description"].startswith("This is a SAMPLE build")
    assert metadata["rai:dataLimitations"][0].startswith("This is a SAMPLE build")
    assert metadata["rai:dataUseCases"].startswith("None beyond exercising")


@pytest.mark.parametrize("dataset", names())
def test_the_card_yaml_passes_the_hubs_dataset_card_checks(dataset, card_inputs):
    """huggingface_hub parses the front matter into DatasetCardData; `datasets` reads its configs (the
    checks both make offline before a push)."""
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard

    write_inputs(dataset, card_inputs)
    folder = build(dataset, card_inputs)
    loaded = DatasetCard.load(folder / "README.md")
    configs = MetadataConfigs.from_dataset_card_data(loaded.data)
    assert sorted(configs) == sorted(c["config_name"] for c in loaded.data.configs)
    assert loaded.data.license and loaded.data.language and loaded.data.pretty_name


def test_record_sets_group_configs_by_task_or_language():
    assert croissant.record_set_name("i2s_k1.fin_Latn", "fin_Latn", "mvl-sib") == "i2s_k1"
    assert croissant.record_set_name("images", None, "mvl-sib") == "images"
    assert croissant.record_set_name("fin_Latn", "fin_Latn", "babel-imagenet") == "babel-imagenet"
    assert croissant.language_tag("fin_Latn", "fi") == "fi-Latn"


def test_the_croissant_version_is_the_one_babelforge_version_that_built_every_artifact():
    """Artifacts of two babelforge versions name none (no version would be true of the whole card)."""
    from babelforge.core.datasets import spec

    def version(*versions):
        records = {f"artifact{i}": {"stage": "labels", "version": v} for i, v in enumerate(versions)}
        return croissant.croissant(spec("babel-imagenet"), [], {}, [], [], records, []).get("version")

    assert version("0.3.0", "0.3.0") == "0.3.0"
    assert version("0.3.0", "0.4.0") is None
    assert version() is None
