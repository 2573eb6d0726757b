import pytest

from babelforge.captions import select_stage, translate_stage
from babelforge.captions.translate import translate_nbest
from babelforge.core.config import load_config
from babelforge.core.errors import BabelforgeError
from babelforge.core.params import load_params

from .conftest import REPO


def test_every_caption_gets_n_hypotheses_per_target_best_first(stub_translator):
    translator = stub_translator(num_hypotheses=3)
    captions = [("c1", "a dog"), ("c2", "a cat"), ("c3", "a dog "), ("c4", "   ")]
    rows = translate_nbest(translator, captions, "eng_Latn", {"deu_Latn": "deu_Latn", "jpn_Jpan": "jpn_Jpan"})
    assert len(rows) == 3 * 2 * 3  # the empty caption gets none
    assert {row["caption_id"] for row in rows} == {"c1", "c2", "c3"}
    c1_de = [row for row in rows if row["caption_id"] == "c1" and row["lang"] == "deu_Latn"]
    assert [row["hyp_rank"] for row in c1_de] == [0, 1, 2]
    assert [row["mt_score"] for row in c1_de] == sorted((row["mt_score"] for row in c1_de), reverse=True)
    # "a dog" and "a dog " are one text: translated once per target.
    texts_sent = [text for texts, _, _ in translator.calls for text in texts]
    assert sorted(texts_sent) == ["a cat", "a cat", "a dog", "a dog"]
    assert all(src == "eng_Latn" for _, src, _ in translator.calls)


def test_targets_are_mixed_per_text_and_chunked(stub_translator):
    translator = stub_translator(num_hypotheses=1)
    captions = [(f"c{i}", f"caption number {i}") for i in range(5)]
    rows = translate_nbest(
        translator, captions, "eng_Latn", {"deu_Latn": "deu_Latn", "fra_Latn": "fra_Latn"}, chunk_size=4
    )
    assert [len(texts) for texts, _, _ in translator.calls] == [4, 4, 2]
    assert all(len(texts) == len(targets) for texts, _, targets in translator.calls)
    assert len(rows) == 10


def test_translator_returning_too_few_results_is_an_error():
    class Broken:
        def translate(self, texts, src_lang, tgt_langs):
            return []

    with pytest.raises(BabelforgeError, match="returned 0 results"):
        translate_nbest(Broken(), [("c1", "a dog")], "eng_Latn", {"deu_Latn": "deu_Latn"})


def test_params_express_the_sample_default_and_the_papers_100_beams_25_hypotheses():
    params = load_params(REPO / "params.yaml")
    sample = load_config(translate_stage.Config, {**params, "profile": "sample"})
    full = load_config(translate_stage.Config, {**params, "profile": "full"})
    assert (sample.beam_size, sample.num_hypotheses) == (8, 8)
    assert (full.beam_size, full.num_hypotheses) == (100, 25)
    assert (sample.runner.runner, sample.runner.shard_size, full.runner.shard_size) == (
        "local",
        1000,
        1000,
    )  # memory: one shard of 25 hypotheses
    with pytest.raises(BabelforgeError, match="num_hypotheses"):
        translate_stage.Config(beam_size=4, num_hypotheses=5)
    with pytest.raises(BabelforgeError, match="beam_sise"):  # a typo is one clear line, not a TypeError
        load_config(translate_stage.Config, {"captions": {"translate": {"beam_sise": 4}}})


def test_tiny_nllb_gives_n_best_rows(tiny_nllb):
    from babelforge.translation.nllb import NllbTranslator

    translator = NllbTranslator(tiny_nllb, device="cpu", beam_size=4, num_hypotheses=3, max_decoding_length=12)
    rows = translate_nbest(
        translator,
        [("c1", "a dog on the grass"), ("c2", "two cats")],
        "eng_Latn",
        {"deu_Latn": "deu_Latn", "zho_Hans": "zho_Hans"},
    )
    assert len(rows) == 2 * 2 * 3
    for caption_id in ("c1", "c2"):
        for lang in ("deu_Latn", "zho_Hans"):
            scores = [r["mt_score"] for r in rows if r["caption_id"] == caption_id and r["lang"] == lang]
            assert scores == sorted(scores, reverse=True)


def test_profile_choices_resolve_at_any_depth():
    params = load_params(REPO / "params.yaml")
    full = load_config(select_stage.Config, {**params, "profile": "full"}).default
    sample = load_config(select_stage.Config, {**params, "profile": "sample"}).default
    assert full["langid"]["langid_v1__prob"]["min"] == 0.5
    assert sample["langid"]["langid_v1__prob"]["min"] is None
    assert full["copy"] == sample["copy"]
    with pytest.raises(BabelforgeError, match="captions.select.default.kiwi"):
        load_config(
            select_stage.Config, {"profile": "full", "captions": {"select": {"default": {"kiwi": {"sample": 0.1}}}}}
        )
