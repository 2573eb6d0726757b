"""The `open_clip` family on tiny real open_clip models built offline (tests/eval/tiny_open_clip.py):
a CLIP ViT with open_clip's byte-pair tokenizer, OpenCLIP XLM-R and NLLB-SigLIP in small. What
`load_model` computes must be what open_clip's own API computes; nothing touches the network."""

from __future__ import annotations

import fnmatch
import json
import shutil
import socket
import time

import numpy as np
import pytest
from PIL import Image

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import directory_hash
from babelforge.eval.families.open_clip import (
    OpenClipEncoder,
    nllb_code,
    open_clip_token_lengths,
    precision_for,
    snapshot_commit,
)
from babelforge.eval.models import load_model
from tests.eval.tiny_open_clip import build_clip_bpe, build_xlmr_clip

# variant -> (fixture, embedding size, context length)
VARIANTS = {
    "clip-bpe": ("open_clip_bpe_dir", 16, 16),
    "xlm-roberta": ("open_clip_xlmr_dir", 16, 77),
    "nllb-siglip": ("open_clip_nllb_dir", 64, 16),
}
TEXTS = [
    "a photo of a goldfish.",
    "ein Foto von einem Hund im Garten.",
    "一张狗在草地上的照片。",
    "ምስል የውሻ በሣር ላይ።",
    "",
    "a bad photo of the " + "very " * 100 + "large dog.",
]


@pytest.fixture(params=list(VARIANTS))
def variant(request):
    """(folder, embedding size, context length) of each tiny open_clip model."""
    fixture, dim, context = VARIANTS[request.param]
    return request.getfixturevalue(fixture), dim, context


@pytest.fixture
def offline_hub(monkeypatch, tmp_path):
    """An empty Hugging Face cache, HF_HUB_OFFLINE set, and any socket connection a test failure."""
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))

    def no_network(*args, **kwargs):
        raise AssertionError(f"the network was touched: {args}")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    return cache


def images() -> list[Image.Image]:
    return [
        Image.new("RGB", (50, 40), (200, 10, 10)),
        Image.new("L", (64, 64), 128),
        Image.radial_gradient("L").convert("RGB").resize((37, 91)),
        Image.new("RGBA", (33, 33), (0, 90, 200, 100)),
    ]


def reference(folder):
    """What open_clip's own API computes for `images()` and `TEXTS`, L2-normalised."""
    import open_clip
    import torch

    model, _, preprocess = open_clip.create_model_and_transforms(f"local-dir:{folder}", device="cpu")
    model.eval()
    tokenizer = open_clip.get_tokenizer(f"local-dir:{folder}")
    with torch.inference_mode():
        image = model.encode_image(torch.stack([preprocess(i.convert("RGB")) for i in images()]))
        text = model.encode_text(tokenizer(TEXTS))
    return [(v / v.norm(dim=-1, keepdim=True)).numpy() for v in (image, text)], tokenizer


# ---------------------------------------------------------------- pure functions


def test_snapshot_commit_reads_the_commit_of_a_cached_file():
    sha = "0123456789abcdef0123456789abcdef01234567"
    assert snapshot_commit(f"/c/hub/models--timm--x/snapshots/{sha}/open_clip_model.safetensors") == sha
    assert snapshot_commit(f"/c/hub/models--timm--x/snapshots/{sha}/sub/dir/w.bin") == sha
    assert snapshot_commit(f"/c/hub/models--timm--x/snapshots/{sha[:-1]}/w.bin") is None  # 39 digits
    assert snapshot_commit(f"/c/hub/models--timm--x/snapshots/{sha.upper()}/w.bin") is None
    assert snapshot_commit(f"/c/hub/snapshots/{sha}") is None  # a folder, not a file in it
    assert snapshot_commit("/home/me/.cache/clip/ViT-B-32.pt") is None


def test_token_lengths_of_the_byte_pair_tokenizer_count_start_and_end():
    from open_clip.tokenizer import SimpleTokenizer

    tokenizer = SimpleTokenizer(context_length=8)
    texts = ["", "a", "a photo of a dog", "A   PHOTO of a dog"]
    lengths = open_clip_token_lengths(tokenizer, texts)
    assert lengths == [2, 3, 7, 7]  # lower-cased and whitespace-cleaned as the tokenizer does
    rows = tokenizer(texts, context_length=64)
    assert lengths == [int((row != 0).sum()) for row in rows]


class WordTokenizer:
    """A stand-in for open_clip's HFTokenizer: words are tokens; <s> and </s> around them."""

    def __init__(self, mode: str = "", clean: bool = True):
        self.tokenizer_mode = mode
        if clean:
            self.clean_fn = lambda text: " ".join(text.split()).replace("_", "")

    def tokenizer(self, texts, add_special_tokens=True, truncation=True, verbose=True):
        assert truncation is False and verbose is False
        special = ["<s>", "</s>"] if add_special_tokens else []
        return {"input_ids": [special[:1] + text.split() + special[1:] for text in texts]}


def test_token_lengths_of_a_transformers_tokenizer_clean_first_and_count_special_tokens():
    texts = ["a  b", "_ c", "a, b, c!"]
    assert open_clip_token_lengths(WordTokenizer(), texts) == [4, 3, 5]
    # `clips` mode adds its own bos, eos and class token to the bare ids
    assert open_clip_token_lengths(WordTokenizer(mode="clips"), texts) == [5, 4, 6]
    # SigLipTokenizer has no clean_fn: it canonicalises (no punctuation, lower case)
    assert open_clip_token_lengths(WordTokenizer(clean=False), ["A, B, C!", "x_y"]) == [5, 4]


def test_precision_is_fp32_on_cpu_and_fp16_on_a_gpu_wholly_for_transformers_text_towers():
    clip = {"text_cfg": {"width": 32}}
    xlmr = {"text_cfg": {"hf_model_name": "xlm-roberta-base"}}
    assert precision_for("cpu", clip) == precision_for("cpu", xlmr) == "fp32"
    assert precision_for("cuda", clip) == precision_for("cuda:1", clip) == "fp16"
    assert precision_for("cuda", xlmr) == "pure_fp16"


# ---------------------------------------------------------------- tiny models


def test_builders_are_deterministic_per_seed(open_clip_bpe_dir, open_clip_xlmr_dir, tmp_path):
    assert directory_hash(build_clip_bpe(tmp_path / "again", seed=0)) == directory_hash(open_clip_bpe_dir)
    assert directory_hash(build_clip_bpe(tmp_path / "other", seed=1)) != directory_hash(open_clip_bpe_dir)
    # the XLM-R variant's config names its text tower by path: its weights are what must agree
    again = build_xlmr_clip(tmp_path / "xlmr", seed=0)
    weights = "open_clip_model.safetensors"
    assert (again / weights).read_bytes() == (open_clip_xlmr_dir / weights).read_bytes()


def test_folder_loads_as_open_clip_detected_or_named(variant):
    folder, dim, context = variant
    detected = load_model(str(folder), device="cpu")
    named = load_model(f"open_clip:{folder}", device="cpu")
    for model in (detected, named):
        assert isinstance(model, OpenClipEncoder) and model.family == "open_clip"
        assert model.ref.family == "open_clip" and model.ref.id == str(folder)
        assert model.name == f"open_clip:{folder}"
        assert model.revision == "sha256:" + directory_hash(folder)
        assert model.embedding_dim == dim and model.max_text_length == context
        assert model.device == "cpu" and model.precision == "float32"
    assert named.encode_texts(TEXTS[:2]).tolist() == detected.encode_texts(TEXTS[:2]).tolist()


def test_embeddings_are_open_clips_own(variant):
    folder, dim, _ = variant
    (ref_images, ref_texts), _ = reference(folder)
    model = load_model(str(folder), device="cpu")
    image_emb = model.encode_images(images(), batch_size=3)
    text_emb = model.encode_texts(TEXTS, batch_size=4)
    assert image_emb.shape == (len(images()), dim) and text_emb.shape == (len(TEXTS), dim)
    assert image_emb.dtype == text_emb.dtype == np.float32
    assert np.allclose(np.linalg.norm(image_emb, axis=1), 1.0, atol=1e-6)
    assert np.allclose(np.linalg.norm(text_emb, axis=1), 1.0, atol=1e-6)
    difference = max(np.abs(image_emb - ref_images).max(), np.abs(text_emb - ref_texts).max())
    print(f"{folder.name}: max abs difference to open_clip's own embeddings {difference:.3g}")
    assert difference <= 1e-6
    assert not np.allclose(text_emb[0], text_emb[1]) and not np.allclose(image_emb[0], image_emb[1])
    # batching changes nothing
    assert np.abs(model.encode_images(images(), batch_size=1) - image_emb).max() <= 1e-6
    assert np.abs(model.encode_texts(TEXTS, batch_size=1) - text_emb).max() <= 1e-6
    assert model.encode_texts([]).shape == (0, dim) and model.encode_images([]).shape == (0, dim)


def test_texts_longer_than_the_context_are_counted_as_truncated(variant):
    folder, _, context = variant
    model = load_model(str(folder), device="cpu")
    # the tokenizer's own lengths: its output, uncut (a context far beyond any text), without padding
    pad = getattr(getattr(model.tokenizer, "tokenizer", None), "pad_token_id", 0)

    def uncut_lengths(texts):
        return [int((row != pad).sum()) for row in model.tokenizer(texts, context_length=1024)]

    # a word of one token, repeated 0..context+3 times: lengths across the context's boundary
    word = next(w for w in ("photo", "a", "of", "the", "x") if uncut_lengths([w, f"{w} {w}"]) == [3, 4])
    texts = [" ".join([word] * n) for n in range(0, context + 4)] + TEXTS
    lengths = uncut_lengths(texts)
    assert model.token_lengths(texts) == lengths
    expected = sum(length > context for length in lengths)
    assert 0 < expected < len(texts) and any(length == context for length in lengths)
    model.encode_texts(texts)
    assert model.truncated_texts == expected
    model.encode_texts(texts[:1])  # short: nothing more
    model.encode_texts(texts[-1:])  # the long one again
    assert model.truncated_texts == expected + 1
    # what the model reads of a long text is its cut tokens: the same vectors as open_clip's cut
    (_, ref_texts), _ = reference(folder)
    assert np.abs(model.encode_texts(TEXTS[-1:]) - ref_texts[-1:]).max() <= 1e-6


def test_half_precision_runs_every_variant(variant):
    """What a GPU runs (fp16 weights, fp16 pixels), on the CPU: close to fp32. open_clip's mixed
    `fp16` fails on OpenCLIP XLM-R's transformers text tower; `precision_for` avoids it."""
    import open_clip
    import torch

    folder, dim, _ = variant
    name = f"local-dir:{folder}"
    config = json.loads((folder / "open_clip_config.json").read_text())["model_cfg"]
    precision = precision_for("cuda", config)
    model, _, preprocess = open_clip.create_model_and_transforms(name, precision=precision, device="cpu")
    half = OpenClipEncoder(
        model.eval(),
        preprocess,
        open_clip.get_tokenizer(name),
        embedding_dim=dim,
        name="half",
        revision="r",
        device="cpu",
        dtype=torch.float16,
    )
    assert half.precision == "float16"
    full = load_model(str(folder), device="cpu")
    for encode in ("encode_images", "encode_texts"):
        data = images() if encode == "encode_images" else TEXTS
        low, high = getattr(half, encode)(data), getattr(full, encode)(data)
        assert low.dtype == np.float32 and np.isfinite(low).all()
        assert np.abs(low - high).max() < 0.02
    if "hf_model_name" in config.get("text_cfg", {}) and "timm_model_name" not in config["vision_cfg"]:
        mixed = open_clip.create_model(name, precision="fp16", device="cpu")
        with pytest.raises(RuntimeError, match="dtype"), torch.inference_mode():
            mixed.encode_text(open_clip.get_tokenizer(name)(TEXTS[:1]))


@pytest.mark.skipif("not __import__('torch').cuda.is_available()")
def test_on_a_gpu_every_variant_runs_in_fp16_close_to_fp32(variant):
    folder, dim, _ = variant
    gpu, cpu = load_model(str(folder), device="cuda"), load_model(str(folder), device="cpu")
    assert gpu.precision == "float16"
    assert np.abs(gpu.encode_images(images()) - cpu.encode_images(images())).max() < 0.02
    assert np.abs(gpu.encode_texts(TEXTS) - cpu.encode_texts(TEXTS)).max() < 0.02


# ---------------------------------------------------------------- hf-hub: and built-in names, offline


def cache_repo(cache, repo: str, folder, sha: str) -> None:
    """`folder` as the Hugging Face cache holds a repo's commit `sha` (refs/main names it)."""
    root = cache / f"models--{repo.replace('/', '--')}"
    shutil.copytree(folder, root / "snapshots" / sha)
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(sha)


def test_hf_hub_repo_loads_from_the_cache_at_its_commit(open_clip_xlmr_dir, offline_hub):
    sha = "89abcdef0123456789abcdef0123456789abcdef"
    cache_repo(offline_hub, "babelforge/tiny-open-clip-xlmr", open_clip_xlmr_dir, sha)
    local = load_model(str(open_clip_xlmr_dir), device="cpu")
    for spec in (
        f"open_clip:hf-hub:babelforge/tiny-open-clip-xlmr@{sha}",
        f"hf-hub:babelforge/tiny-open-clip-xlmr@{sha}",
    ):
        model = load_model(spec, device="cpu")
        assert model.name == "open_clip:hf-hub:babelforge/tiny-open-clip-xlmr" and model.revision == sha
        assert np.abs(model.encode_texts(TEXTS) - local.encode_texts(TEXTS)).max() <= 1e-6
        assert np.abs(model.encode_images(images()) - local.encode_images(images())).max() <= 1e-6


def test_hf_hub_weights_are_fetched_in_one_format_safetensors_first(monkeypatch, tmp_path):
    """A repo with both formats (as open_clip publishes: .safetensors and .bin) is fetched once."""
    from babelforge.eval.families import open_clip as family

    def fetcher(repo_files):
        fetched = []

        def hub_snapshot(repo, revision, filename, patterns):
            fetched.append(tuple(patterns))
            folder = tmp_path / repo
            folder.mkdir(parents=True, exist_ok=True)
            for name in repo_files:
                if any(fnmatch.fnmatch(name, pattern) for pattern in patterns):
                    (folder / name).write_text(name)
            return folder

        return fetched, hub_snapshot

    for files, rounds in (
        (["open_clip_config.json", "open_clip_model.safetensors", "open_clip_pytorch_model.bin"], 2),
        (["open_clip_config.json", "open_clip_pytorch_model.bin"], 3),
    ):
        fetched, fake = fetcher(files)
        monkeypatch.setattr(family, "hub_snapshot", fake)
        folder = family.hub_folder(f"org/repo{rounds}", "0" * 40)
        assert len(fetched) == rounds and fetched[0] == family.HUB_FILES
        weights = sorted(p.name for p in folder.iterdir() if p.suffix in (".safetensors", ".bin"))
        assert weights == [files[1]]
    fetched, fake = fetcher([])  # cached already (offline): every call answers the same folder
    (tmp_path / "org" / "cached").mkdir(parents=True)
    (tmp_path / "org" / "cached" / "open_clip_model.safetensors").write_text("w")
    monkeypatch.setattr(family, "hub_snapshot", fake)
    family.hub_folder("org/cached", "0" * 40)
    assert fetched == [family.HUB_FILES]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("open_clip:hf-hub:babelforge/tiny-open-clip", "no revision pinned"),
        ("open_clip:hf-hub:babelforge/not-cached@" + "0" * 40, "not in the Hugging Face cache"),
        ("open_clip:ViT-B-32@no_such_tag", "no such pretrained tag; ViT-B-32 has openai, "),
        ("open_clip:NoSuchNet-B-99@openai", "not an open_clip built-in model name"),
        ("open_clip:ViT-B-32", "no revision pinned"),
        (
            "open_clip:ViT-B-32@openai",
            "its weights (timm/vit_base_patch32_clip_224.openai) are not in the Hugging Face cache",
        ),
        ("open_clip:xlm-roberta-base-ViT-B-32@laion5b_s13b_b90k", "are not in the Hugging Face cache"),
    ],
)
def test_what_cannot_be_loaded_offline_fails_at_once_in_one_line(spec, says, offline_hub):
    start = time.monotonic()
    with pytest.raises(BabelforgeError) as error:
        load_model(spec, device="cpu")
    message = str(error.value)
    assert says in message and "\n" not in message
    assert time.monotonic() - start < 5


def test_a_text_tower_that_is_not_there_fails_in_one_line(open_clip_xlmr_dir, offline_hub, tmp_path):
    folder = tmp_path / "moved"
    shutil.copytree(open_clip_xlmr_dir, folder)
    config = json.loads((folder / "open_clip_config.json").read_text())
    config["model_cfg"]["text_cfg"]["hf_model_name"] = "babelforge/no-such-xlm-roberta"
    (folder / "open_clip_config.json").write_text(json.dumps(config))
    with pytest.raises(
        BabelforgeError, match=r"text tower babelforge/no-such-xlm-roberta .* not in the Hugging Face cache"
    ) as error:
        load_model(str(folder), device="cpu")
    assert "\n" not in str(error.value)


def test_a_folder_without_model_cfg_fails_in_one_line(tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "open_clip_config.json").write_text(json.dumps({"embed_dim": 16}))
    with pytest.raises(BabelforgeError, match="has no model_cfg") as error:
        load_model(str(folder), device="cpu")
    assert "\n" not in str(error.value)


# ---------------------------------------------------------------- NLLB language codes


def test_nllb_code_goes_through_the_registry_and_the_tokenizers_vocabulary():
    vocabulary = {"deu_Latn": 1, "kmr_Latn": 2, "eng_Latn": 3}
    assert nllb_code("deu_Latn", vocabulary) == "deu_Latn"
    assert nllb_code("kur_Latn", vocabulary) == "kmr_Latn"  # the registry's nllb column, not the key
    assert nllb_code("fry_Latn", vocabulary) is None  # no NLLB code
    assert nllb_code("jpn_Jpan", vocabulary) is None  # a code the tokenizer lacks
    assert nllb_code(None, vocabulary) is None
    assert nllb_code("xxx_Zzzz", {"xxx_Zzzz": 1}) == "xxx_Zzzz"  # a key of another registry


def test_nllb_siglip_reads_each_text_after_its_languages_code(open_clip_nllb_dir, capsys):
    """Every task passes the texts' language: NLLB-SigLIP's texts start with that language's NLLB
    code, as open_clip's tokenizer writes them after set_language; no language is eng_Latn."""
    import open_clip
    import torch

    model = load_model(str(open_clip_nllb_dir), device="cpu")
    tokenizer = open_clip.get_tokenizer(f"local-dir:{open_clip_nllb_dir}")
    own, _ = open_clip.create_model_from_pretrained(f"local-dir:{open_clip_nllb_dir}", device="cpu")
    own.eval()
    texts = ["ein Hund im Garten", "eine Katze"]

    def library(code):
        # open_clip's tokenizer.set_language(code) has no effect with this transformers: the NLLB
        # tokenizer resets to its src_lang on each call, so the reference sets src_lang
        tokenizer.tokenizer.src_lang = code
        with torch.inference_mode():
            vectors = own.encode_text(tokenizer(texts))
        return (vectors / vectors.norm(dim=-1, keepdim=True)).numpy()

    german = model.encode_texts(texts, lang="deu_Latn")
    assert np.abs(german - library("deu_Latn")).max() < 1e-6
    assert np.abs(model.encode_texts(texts) - library("eng_Latn")).max() < 1e-6
    assert np.abs(german - model.encode_texts(texts)).max() > 1e-3  # the code changes the vectors
    frisian = model.encode_texts(texts, lang="fry_Latn")  # no NLLB code: read as eng_Latn, said once
    model.encode_texts(texts, lang="fry_Latn")
    assert np.abs(frisian - library("eng_Latn")).max() < 1e-6
    assert capsys.readouterr().err.count("fry_Latn has no NLLB language code") == 1
