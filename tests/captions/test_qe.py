import shutil
import subprocess
import sys
import time

import pytest

from babelforge.captions.qe import KiwiScorer, batch_order, is_hub_id, load_kiwi, resolve_checkpoint
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import sha256_file


@pytest.fixture(scope="module")
def pairs(xtd):
    refs = {(cid, lang): text for cid, lang, text in xtd.references}
    sources, translations = [], []
    for row in xtd.captions[:40]:
        for lang in ("deu_Latn", "jpn_Jpan", "rus_Cyrl"):
            sources.append(row["caption"])
            translations.append(refs[(row["caption_id"], lang)])
    return sources, translations


def test_tiny_checkpoint_has_comets_layout_and_loads_with_comet_itself(tiny_kiwi_dir, monkeypatch):
    from comet import load_from_checkpoint

    # hparams.yaml names the encoder relative to the checkpoint directory: COMET reads it from there.
    monkeypatch.chdir(tiny_kiwi_dir)

    assert (tiny_kiwi_dir / "hparams.yaml").is_file()
    assert (tiny_kiwi_dir / "checkpoints" / "model.ckpt").is_file()
    model = load_from_checkpoint(str(tiny_kiwi_dir / "checkpoints" / "model.ckpt"), reload_hparams=True)
    assert type(model).__name__ == "UnifiedMetric"
    assert model.hparams.input_segments == ["mt", "src"]


def test_a_checkpoint_built_at_another_path_is_the_same_bytes(tiny_kiwi_dir, xtd_corpus, tmp_path):
    from babelforge.captions.qe import build_tiny_kiwi

    elsewhere = build_tiny_kiwi(tmp_path / "a" / "b" / "kiwi", xtd_corpus, seed=0)
    files = sorted(p.relative_to(tiny_kiwi_dir) for p in tiny_kiwi_dir.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(elsewhere) for p in elsewhere.rglob("*") if p.is_file())
    different = [str(name) for name in files if (tiny_kiwi_dir / name).read_bytes() != (elsewhere / name).read_bytes()]
    assert different == []


def test_weights_hash_is_the_same_for_a_checkpoint_built_elsewhere(tiny_kiwi, tiny_kiwi_dir, xtd_corpus, tmp_path):
    from babelforge.captions.qe import build_tiny_kiwi, weights_sha256

    elsewhere = build_tiny_kiwi(tmp_path / "elsewhere" / "cometkiwi-tiny", xtd_corpus, seed=0)
    _, record = load_kiwi(str(elsewhere))
    assert record["weights_sha256"] == weights_sha256(tiny_kiwi)
    other_seed = build_tiny_kiwi(tmp_path / "seed1" / "cometkiwi-tiny", xtd_corpus, seed=1)
    assert load_kiwi(str(other_seed))[1]["weights_sha256"] != record["weights_sha256"]


def test_the_stage_builds_the_same_weights_from_params(tiny_kiwi, xtd_path, repo_root, tmp_path):
    """`babelforge captions_kiwi_model`: captions.input and captions.kiwi_tiny from params.yaml,
    `--out` for paths.kiwi_tiny; the same corpus and settings as the fixture give the same weights."""
    import yaml

    from babelforge.captions.qe import weights_sha256
    from babelforge.cli import main

    params = yaml.safe_load((repo_root / "params.yaml").read_text(encoding="utf-8"))
    params["captions"]["input"]["path"] = str(xtd_path)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    out = tmp_path / "kiwi"
    assert main(["captions_kiwi_model", "--params", str(tmp_path / "params.yaml"), "--out", str(out)]) == 0
    assert load_kiwi(str(out))[1]["weights_sha256"] == weights_sha256(tiny_kiwi)


def test_scores_are_in_input_order_whatever_the_batching(tiny_kiwi, pairs):
    sources, translations = pairs
    reference = KiwiScorer(tiny_kiwi, batch_size=1, device="cpu", length_sorted=False).score(sources, translations)
    assert all(0.0 < s < 1.0 for s in reference)
    assert len(set(round(s, 4) for s in reference)) > len(reference) // 2  # scores differ between pairs
    for batch_size, length_sorted in [(7, True), (7, False), (64, True)]:
        scores = KiwiScorer(tiny_kiwi, batch_size=batch_size, device="cpu", length_sorted=length_sorted).score(
            sources, translations
        )
        # Padding changes float summation order inside the encoder: equal up to ~1e-4.
        assert scores == pytest.approx(reference, abs=1e-3)
    # Reversing the input reverses the output: each score belongs to its pair.
    reversed_scores = KiwiScorer(tiny_kiwi, batch_size=7, device="cpu").score(sources[::-1], translations[::-1])
    assert reversed_scores == pytest.approx(reference[::-1], abs=1e-3)


def test_repeated_pairs_are_scored_once_and_get_the_same_score(tiny_kiwi, pairs):
    sources, translations = pairs
    scorer = KiwiScorer(tiny_kiwi, batch_size=8, device="cpu")
    calls = []
    original = tiny_kiwi.prepare_sample
    tiny_kiwi.prepare_sample = lambda samples, stage: calls.append(len(samples)) or original(samples, stage=stage)
    try:
        scores = scorer.score(sources[:5] * 3, translations[:5] * 3)
    finally:
        tiny_kiwi.prepare_sample = original
    assert sum(calls) == 5
    assert scores[:5] == scores[5:10] == scores[10:]


def test_length_sorted_order_is_by_length_and_stable():
    assert batch_order([5, 1, 5, 0], True) == [3, 1, 0, 2]
    assert batch_order([5, 1, 5, 0], False) == [0, 1, 2, 3]


def test_a_moved_checkpoint_still_loads_from_its_bundled_encoder(tiny_kiwi_dir, tmp_path, pairs):
    moved = tmp_path / "elsewhere"
    shutil.copytree(tiny_kiwi_dir, moved)
    model, record = load_kiwi(str(moved))
    sources, translations = pairs
    original, original_record = load_kiwi(str(tiny_kiwi_dir))
    # the provenance identifies the weights, not the file (which records its build path)
    assert record["weights_sha256"] == original_record["weights_sha256"]
    a = KiwiScorer(model, device="cpu").score(sources[:6], translations[:6])
    b = KiwiScorer(original, device="cpu").score(sources[:6], translations[:6])
    assert a == pytest.approx(b, abs=1e-6)


def test_rebuild_is_byte_identical(tiny_kiwi_dir, xtd_corpus):
    from babelforge.captions.qe import build_tiny_kiwi

    before = {p.relative_to(tiny_kiwi_dir): sha256_file(p) for p in tiny_kiwi_dir.rglob("*") if p.is_file()}
    build_tiny_kiwi(tiny_kiwi_dir, xtd_corpus, seed=0)
    after = {p.relative_to(tiny_kiwi_dir): sha256_file(p) for p in tiny_kiwi_dir.rglob("*") if p.is_file()}
    assert before == after


def test_missing_local_checkpoint_fails_naming_the_stage(tmp_path):
    with pytest.raises(BabelforgeError, match="captions_kiwi_model"):
        resolve_checkpoint(str(tmp_path / "nothing"))
    with pytest.raises(BabelforgeError, match="captions_kiwi_model"):
        resolve_checkpoint("models/cometkiwi-missing")


def test_corrupt_local_checkpoint_is_one_clear_error(tmp_path):
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "model.ckpt").write_bytes(b"not a checkpoint")
    (tmp_path / "hparams.yaml").write_text("class_identifier: unified_metric\n", encoding="utf-8")
    with pytest.raises(BabelforgeError, match="cannot be loaded as a COMET checkpoint"):
        load_kiwi(str(tmp_path))


def test_gated_hub_model_offline_fails_at_once_saying_how_to_get_access(monkeypatch, tmp_path):
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))  # whatever this machine holds
    start = time.monotonic()
    with pytest.raises(BabelforgeError) as error:
        load_kiwi("Unbabel/wmt22-cometkiwi-da")
    assert time.monotonic() - start < 5
    message = str(error.value)
    assert "Unbabel/wmt22-cometkiwi-da" in message and "HF_TOKEN" in message and "licence" in message
    assert "local checkpoint" in message


def test_hub_ids_and_local_paths_are_told_apart():
    assert is_hub_id("Unbabel/wmt22-cometkiwi-da")
    assert not is_hub_id("models/cometkiwi-tiny")
    assert not is_hub_id("./kiwi")
    assert not is_hub_id("/abs/kiwi")
    assert not is_hub_id("kiwi/checkpoints/model.ckpt")


def test_importing_the_captions_modules_loads_no_heavy_library():
    code = (
        "import sys, babelforge.cli, babelforge.captions.qe, babelforge.captions.select_stage, "
        "babelforge.captions.tag_stage, babelforge.captions.translate_stage, babelforge.captions.kiwi_model_stage;"
        "heavy = [m for m in ('torch', 'comet', 'transformers', 'pandas', 'huggingface_hub', 'ctranslate2') "
        "if m in sys.modules]; print(heavy)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.gpu
def test_real_cometkiwi_prefers_a_translation_to_a_wrong_language_output(xtd):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU and access to the gated Unbabel/wmt22-cometkiwi-da")
    try:
        model, _ = load_kiwi("Unbabel/wmt22-cometkiwi-da")
    except BabelforgeError as error:
        pytest.skip(str(error))
    refs = {(cid, lang): text for cid, lang, text in xtd.references}
    rows = xtd.captions[:50]
    sources = [row["caption"] for row in rows]
    good = [refs[(row["caption_id"], "deu_Latn")] for row in rows]
    wrong = [refs[(row["caption_id"], "jpn_Jpan")] for row in rows[1:] + rows[:1]]
    scorer = KiwiScorer(model, batch_size=16, device="cuda")
    assert sum(g > w for g, w in zip(scorer.score(sources, good), scorer.score(sources, wrong))) > 45


def test_a_hub_id_in_the_local_cache_loads_offline_through_comets_loader(tiny_kiwi_dir, tmp_path, monkeypatch, pairs):
    """The `full` path (Hub id -> cached snapshot -> comet.load_from_checkpoint), run on the
    tiny checkpoint laid out as the Hugging Face cache holds a downloaded model."""
    revision = "0" * 40
    repo = tmp_path / "hf" / "hub" / "models--Unbabel--wmt22-cometkiwi-da"
    snapshot = repo / "snapshots" / revision
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(revision)
    shutil.copytree(tiny_kiwi_dir / "checkpoints", snapshot / "checkpoints")
    shutil.copy(tiny_kiwi_dir / "hparams.yaml", snapshot / "hparams.yaml")  # no bundled encoder/
    from huggingface_hub import constants

    # huggingface_hub reads HF_HOME once, at its import: point its cache constant here.
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tiny_kiwi_dir)  # the relative encoder path of hparams.yaml stands for a Hub encoder id
    model, record = load_kiwi("Unbabel/wmt22-cometkiwi-da")
    assert record == {"id": "Unbabel/wmt22-cometkiwi-da", "revision": revision}
    sources, translations = pairs
    original, _ = load_kiwi(str(tiny_kiwi_dir))
    assert KiwiScorer(model, device="cpu").score(sources[:4], translations[:4]) == pytest.approx(
        KiwiScorer(original, device="cpu").score(sources[:4], translations[:4]), abs=1e-6
    )


def pair_of_length(tokenizer, translation: str, tokens: int) -> str:
    """A source that makes (translation, source) exactly `tokens` long as COMET joins the pair."""
    for words in range(1, 2 * tokens):
        source = " ".join(["dog"] * words)
        length = len(tokenizer(translation, source, truncation=False, verbose=False)["input_ids"])
        if length == tokens:
            return source
        assert length < tokens, f"no source of {tokens} tokens with {translation!r}"
    raise AssertionError("unreachable")


def test_a_pair_longer_than_the_kiwi_encoder_is_flagged_exactly_where_comet_cuts_it(tiny_kiwi):
    """The limit is the loaded model's (the tiny one: 256 positions); a pair one token over it is
    flagged, and COMET scores it on its beginning: more source text no longer changes the score."""
    scorer = KiwiScorer(tiny_kiwi, device="cpu")
    assert scorer.max_tokens == tiny_kiwi.encoder.model.config.max_position_embeddings - 2 == 256
    translation = "ein Hund läuft am Strand"
    tokenizer = tiny_kiwi.encoder.tokenizer
    fits = pair_of_length(tokenizer, translation, scorer.max_tokens)
    over = pair_of_length(tokenizer, translation, scorer.max_tokens + 1)
    assert scorer.truncated([fits, over, "a dog"], [translation] * 3) == [False, True, False]
    more = " cat house tree"
    fits_scores = scorer.score([fits, fits + more], [translation] * 2)
    over_scores = scorer.score([over, over + more], [translation] * 2)
    assert fits_scores[0] != fits_scores[1]  # read whole: the added words count
    assert over_scores[0] == over_scores[1]  # cut: the added words are never read
    with pytest.raises(ValueError, match="2 sources but 1 translations"):
        scorer.truncated([fits, over], [translation])


def test_a_kiwi_device_torch_would_not_take_is_one_line_before_the_model_moves():
    """The scorer resolves its device by core's rule (core/device.py), as the other GPU stages do: `auto`
    picks CUDA only where torch sees it, and a misspelt device stops before `model.to` fails deep inside torch."""

    import torch

    def torch_has_cuda() -> bool:
        return torch.cuda.is_available()

    class Model:
        def __init__(self):
            self.moved_to = []

        def to(self, device):
            self.moved_to.append(device)

    model = Model()
    expected = "cuda" if torch_has_cuda() else "cpu"
    assert KiwiScorer(model).device == expected and model.moved_to == [expected]
    with pytest.raises(BabelforgeError, match="unknown device 'gpu'"):
        KiwiScorer(Model(), device="gpu")
