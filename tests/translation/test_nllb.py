"""NLLB translator: tokenizer contract, CTranslate2 translation, conversion, errors."""

from __future__ import annotations

import pytest

from babelforge.core.device import resolve_device
from babelforge.core.errors import BabelforgeError
from babelforge.translation import nllb
from babelforge.translation.nllb import Hypothesis, NllbTranslator


def test_tokenizer_contract_non_legacy_puts_source_code_first_and_eos_last(tiny_nllb):
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(tiny_nllb / "ct2"), legacy_behaviour=False)
    tokenizer.src_lang = "fra_Latn"
    tokens = tokenizer.convert_ids_to_tokens(tokenizer("a photo of a dog.")["input_ids"])
    assert tokens[0] == "fra_Latn"
    assert tokens[-1] == "</s>"
    assert tokens.count("</s>") == 1 and "fra_Latn" not in tokens[1:]
    # The reference (target) side starts with the target code too: what target_prefix feeds the decoder.
    tokenizer.tgt_lang = "deu_Latn"
    target = tokenizer.convert_ids_to_tokens(tokenizer(text_target="ein Foto")["input_ids"])
    assert target[0] == "deu_Latn" and target[-1] == "</s>"


def test_tokenizer_contract_legacy_behaviour_differs(tiny_nllb):
    # The pre-2023 transformers layout put the code after </s>; the translator must not use it.
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(tiny_nllb / "ct2"), legacy_behaviour=True)
    tokenizer.src_lang = "fra_Latn"
    tokens = tokenizer.convert_ids_to_tokens(tokenizer("a photo of a dog.")["input_ids"])
    assert tokens[-2:] == ["</s>", "fra_Latn"]


def test_translator_source_tokens_follow_non_legacy_layout(tiny_translator):
    rows = tiny_translator.source_tokens(["a photo of a {}.", "graffiti"], "deu_Latn")
    for row in rows:
        assert row[0] == "deu_Latn" and row[-1] == "</s>"
        assert row.count("deu_Latn") == 1


def test_target_prefix_is_the_language_token_and_is_stripped(tiny_translator):
    raw = tiny_translator._translator.translate_batch(
        tiny_translator.source_tokens(["a photo of a dog."], "eng_Latn"),
        target_prefix=[["zho_Hans"]],
        beam_size=1,
        max_decoding_length=8,
    )
    assert raw[0].hypotheses[0][0] == "zho_Hans"
    [[hypothesis]] = tiny_translator.translate(["a photo of a dog."], "eng_Latn", ["zho_Hans"])
    assert "zho_Hans" not in hypothesis.text


def test_translate_mixed_targets_one_list_per_input(tiny_translator):
    texts = ["a photo of a {}.", "a drawing of a {}.", "a photo of a {}."]
    targets = ["deu_Latn", "rus_Cyrl", "jpn_Jpan"]
    out = tiny_translator.translate(texts, "eng_Latn", targets)
    assert len(out) == 3
    for hypotheses in out:
        assert len(hypotheses) == 1 and isinstance(hypotheses[0], Hypothesis)
        assert isinstance(hypotheses[0].text, str) and isinstance(hypotheses[0].score, float)
    assert tiny_translator.translate([], "eng_Latn", []) == []


def test_translation_depends_on_target_and_is_deterministic(tiny_translator):
    targets = ["deu_Latn", "kor_Hang", "fra_Latn", "zho_Hans", "ell_Grek"]
    texts = ["a photo of a {}."] * len(targets)
    first = tiny_translator.translate(texts, "eng_Latn", targets)
    again = tiny_translator.translate(texts, "eng_Latn", targets)
    assert first == again
    # Same source, different forced target token -> different decoder input -> not one output for
    # every target. The random tiny model moves its output little with the token: German and Korean
    # give the same text and scores 1e-4 apart (equal once rounded under MKL's kernels), so the
    # targets are five languages in five scripts, not a pair.
    assert len({hypotheses[0].text for hypotheses in first}) > 1


def test_n_best_sorted_best_first(tiny_nllb):
    translator = NllbTranslator(tiny_nllb, device="cpu", beam_size=3, num_hypotheses=3, max_decoding_length=12)
    [hypotheses] = translator.translate(["a sculpture of a {}."], "eng_Latn", ["fra_Latn"])
    assert len(hypotheses) == 3
    scores = [h.score for h in hypotheses]
    assert scores == sorted(scores, reverse=True)


def test_provenance_properties(tiny_translator):
    assert tiny_translator.model_id == "babelforge/tiny-nllb"
    assert tiny_translator.revision == "seed-0"
    assert tiny_translator.quantization == "int8"
    assert tiny_translator.device == "cpu" and tiny_translator.compute_type == "int8"


def test_unknown_language_code_is_an_error_naming_it(tiny_translator):
    with pytest.raises(BabelforgeError, match="xyz_Latn"):
        tiny_translator.translate(["a photo"], "eng_Latn", ["xyz_Latn"])
    with pytest.raises(BabelforgeError, match="mismatch|texts but"):
        tiny_translator.translate(["a", "b"], "eng_Latn", ["deu_Latn"])


def test_missing_model_dir_is_a_clear_error(tmp_path):
    with pytest.raises(BabelforgeError, match="babelforge nllb"):
        NllbTranslator(tmp_path / "nowhere")


def test_offline_full_model_fails_at_once_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-cache"))
    with pytest.raises(BabelforgeError) as error:
        nllb.convert_to_ctranslate2(nllb.FULL_MODEL_ID, tmp_path / "out", "int8", revision=nllb.FULL_MODEL_REVISION)
    message = str(error.value)
    assert nllb.FULL_MODEL_ID in message and "local_path" in message
    assert not (tmp_path / "out").exists()


def test_missing_local_path_is_not_looked_up_on_the_hub(tmp_path, capsys):
    import yaml

    from babelforge.cli import main

    params = {
        "profile": "full",
        "nllb": {
            "source": {"full": nllb.FULL_MODEL_ID},
            "quantization": "int8",
            "revision": nllb.FULL_MODEL_REVISION,
            "local_path": "models/nllb-hf",
        },
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    assert main(["nllb", "--params", str(tmp_path / "params.yaml"), "--out", str(tmp_path / "out")]) == 1
    assert "nllb.local_path models/nllb-hf: no such directory" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_device_and_compute_type_resolution(monkeypatch):
    assert nllb.resolve_compute_type("auto", "cuda") == "int8_float16"
    assert nllb.resolve_compute_type("auto", "cpu") == "int8"
    assert nllb.resolve_compute_type("float32", "cpu") == "float32"
    import ctranslate2

    # `auto` asks CTranslate2, not torch, whether a GPU is there (what the stored weights follow)
    monkeypatch.setattr(ctranslate2, "get_cuda_device_count", lambda: 0)
    assert resolve_device("auto", runtime="ctranslate2") == "cpu"
    assert nllb.resolve_quantization("auto") == "int8"
    monkeypatch.setattr(ctranslate2, "get_cuda_device_count", lambda: 1)
    assert resolve_device("auto", runtime="ctranslate2") == "cuda"
    assert nllb.resolve_quantization("auto") == "int8_float16"
    # CTranslate2 takes a GPU's index apart: a `cuda:1` setting is refused in one line
    with pytest.raises(BabelforgeError, match=r"unknown device 'cuda:1': use auto, cpu or cuda$"):
        resolve_device("cuda:1", runtime="ctranslate2")
    with pytest.raises(BabelforgeError):
        nllb.resolve_quantization("int3")


def test_tiny_model_is_byte_identical_for_the_same_seed(tiny_nllb, tmp_path, sib_dir):
    from babelforge.core.io import sha256_file
    from babelforge.translation.tiny import build_tiny_nllb

    again = build_tiny_nllb(tmp_path / "again", sib_dir=sib_dir, seed=0)
    for name in ("hf/model.safetensors", "hf/sentencepiece.bpe.model", "ct2/model.bin", "ct2/shared_vocabulary.json"):
        assert sha256_file(tiny_nllb / name) == sha256_file(again / name), name


@pytest.mark.gpu
def test_tiny_model_on_gpu_uses_int8_float16(tiny_nllb):
    if resolve_device("auto", runtime="ctranslate2") != "cuda":
        pytest.skip("no CUDA device: the GPU path runs where a GPU is present")
    translator = NllbTranslator(tiny_nllb, max_decoding_length=12)
    assert translator.device == "cuda" and translator.compute_type == "int8_float16"
    out = translator.translate(["a photo of a {}."] * 3, "eng_Latn", ["deu_Latn", "zho_Hans", "rus_Cyrl"])
    assert [len(h) for h in out] == [1, 1, 1]


@pytest.mark.gpu
def test_full_model_translates_on_gpu():
    if resolve_device("auto", runtime="ctranslate2") != "cuda":
        pytest.skip("no CUDA device: the real NLLB-200 check runs where a GPU is present")
    import os

    model_dir = os.environ.get("BABELFORGE_NLLB_CT2", "models/nllb-ct2")
    translator = NllbTranslator(model_dir)
    if translator.model_id != nllb.FULL_MODEL_ID:
        pytest.skip(f"{model_dir} holds {translator.model_id}, not {nllb.FULL_MODEL_ID}")
    [[german], [french]] = translator.translate(
        ["a photo of a dog.", "a photo of a dog."], "eng_Latn", ["deu_Latn", "fra_Latn"]
    )
    assert "Hund" in german.text and "chien" in french.text


def test_cut_to_limit_keeps_the_closing_token():
    tokens = ["eng_Latn", "▁a", "▁b", "▁c", "</s>"]
    assert nllb.cut_to_limit(tokens, 5) == (tokens, False)
    assert nllb.cut_to_limit(tokens, 3) == (["eng_Latn", "▁a", "</s>"], True)


def test_a_caption_longer_than_the_model_reads_is_cut_and_marked(tiny_translator, tiny_nllb):
    """The input limit comes from the model (the tiny one has 512 positions, recorded at conversion):
    a 5,000-word caption is translated from its beginning and marked, not a CTranslate2 error."""
    import json

    recorded = json.loads((tiny_nllb / "ct2" / nllb.METADATA_FILE).read_text())["max_source_positions"]
    assert recorded == json.loads((tiny_nllb / "hf" / "config.json").read_text())["max_position_embeddings"] == 512
    assert tiny_translator.max_input_tokens == 512
    long_caption = " ".join(["dog"] * 5000)
    assert len(tiny_translator.source_tokens([long_caption], "eng_Latn")[0]) > 512
    [[first, *_], [short, *_]] = tiny_translator.translate(
        [long_caption, "a photo of a dog."], "eng_Latn", ["deu_Latn", "deu_Latn"]
    )
    assert first.source_truncated and not short.source_truncated
