"""The `open_clip` family: OpenCLIP checkpoints through `open_clip_torch`.

Three ways to name one (the `ID` of `open_clip:ID@REVISION`):
- a built-in model name with its pretrained tag as the revision: `xlm-roberta-base-ViT-B-32@laion5b_s13b_b90k`,
  `nllb-clip-base-siglip@v1`, `ViT-B-32@openai`; provenance records the tag and the weights file's Hub
  commit (or its sha256);
- `hf-hub:ORG/NAME@<commit sha>`: the repo at that commit (open_clip itself takes no revision, so the
  commit's files are fetched into the Hugging Face cache first and loaded as a folder);
- a local folder as open_clip saves one (`open_clip_config.json` + weights), hashed.

Models whose text tower is a transformers model (XLM-R in OpenCLIP XLM-R, NLLB in NLLB-SigLIP)
load it by the name in their config (`text_cfg.hf_model_name`), as open_clip does: its config only
(the weights are the checkpoint's), from a folder or the Hugging Face cache. On a GPU such a model
runs wholly in fp16 (open_clip's `pure_fp16`, as transformers runs one): open_clip's `fp16` keeps
transformers' layer norms and embeddings in fp32 and fails in the text tower's first linear layer.
Other models run in open_clip's `fp16` (OpenAI's mixed precision: layer norms in fp32).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import directory_hash, sha256_file
from babelforge.core.languages import UnknownLanguageError, registry
from babelforge.core.progress import info
from babelforge.core.weights import check_weights
from babelforge.eval.models import (
    DualEncoder,
    cached_remedy,
    first_line,
    hub_dependency,
    hub_offline,
    hub_reachable,
    hub_snapshot,
)

CONFIG = "open_clip_config.json"
MARKER_FILE = CONFIG  # what every checkpoint of the family has (babelforge.eval.families.marker_file)
FOLDER_HOLDS = f"an {CONFIG} (saved by open_clip)"
# What a published open_clip repo holds besides its weights: config, tokenizer files of HF text towers.
HUB_FILES = (CONFIG, "*.json", "*.txt", "*.model")
# What open_clip reads of a transformers text tower named by its Hub id: its config and tokenizer files.
TEXT_TOWER_FILES = ("*.json", "*.txt", "*.model")
# Its weights, as open_clip prefers them (open_clip.factory._find_checkpoint_in_dir): safetensors when
# the repo has them, else the pickled ones; fetched in that order so that a repo with both is fetched once.
HUB_WEIGHTS = (("*.safetensors",), ("*.bin", "*.pth"))
# open_clip's default weights file of an hf_hub pretrained entry ending in `/`, and its safetensors twin.
HUB_DEFAULT_WEIGHTS = ("open_clip_model.safetensors", "open_clip_pytorch_model.bin")


def detect(folder: Path) -> bool:
    """A folder open_clip saved (open_clip.save_for_hf / a published hf-hub repo)."""
    return (folder / CONFIG).is_file()


class OpenClipEncoder(DualEncoder):
    """An open_clip model with its own preprocessing transform and tokenizer."""

    family = "open_clip"

    def __init__(self, model, preprocess, tokenizer, embedding_dim: int, **kwargs):
        super().__init__(**kwargs)
        self.model = model
        self.preprocess = preprocess
        self.tokenizer = tokenizer
        self._embedding_dim = embedding_dim
        self._unread_languages: set[str] = set()  # languages logged as lacking an NLLB code

    @property
    def embedding_dim(self) -> int:
        return self._embedding_dim

    def _encode_image_batch(self, images: list):
        import torch

        pixels = torch.stack([self.preprocess(image) for image in images])
        # The dtype the model computes in (fp16 on a GPU), whatever its first parameter's is.
        return self.model.encode_image(pixels.to(self.device, self.dtype))

    def _encode_text_batch(self, texts: list[str]):
        return self.model.encode_text(self.tokenizer(texts).to(self.device))

    def set_text_language(self, lang: str | None) -> None:
        """NLLB-SigLIP reads a text after its language's NLLB code (NLLB's source-language token), as
        the NLLB encoder it was trained on: set it per language. A language without an NLLB code,
        or no language, is read after the tokenizer's own default (eng_Latn), logged once."""
        inner = getattr(self.tokenizer, "tokenizer", None)
        if not callable(getattr(self.tokenizer, "set_lang_fn", None)) or inner is None:
            return
        self._default_language = getattr(self, "_default_language", None) or getattr(inner, "src_lang", None)
        code = nllb_code(lang, inner.get_vocab())
        if lang and code is None and lang not in self._unread_languages:
            self._unread_languages.add(lang)
            info(f"{self.name}: {lang} has no NLLB language code; its texts are read as {self._default_language}")
        # open_clip's set_language alone is undone: transformers' NLLB tokenizer switches back to its
        # `src_lang` on every call (_switch_to_input_mode), so the source language is set there.
        inner.src_lang = code or self._default_language

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        return open_clip_token_lengths(self.tokenizer, texts)


def nllb_code(lang: str | None, vocabulary) -> str | None:
    """The NLLB code of a registry key, when the tokenizer knows it (None otherwise): the registry's
    `nllb` column, else the key itself (registry keys are Flores-200 codes, as NLLB's are)."""
    if not lang:
        return None
    try:
        code = registry().get(lang).nllb or lang
    except UnknownLanguageError:
        code = lang
    return code if code in vocabulary else None


def open_clip_token_lengths(tokenizer, texts: Sequence[str]) -> list[int]:
    """Each text's length in an open_clip tokenizer's tokens, uncut, as the tokenizer counts them
    before it cuts to its `context_length`: the text cleaned as the tokenizer cleans it, then a
    transformers tokenizer inside (XLM-R, NLLB, SigLIP's: `HFTokenizer`, `SigLipTokenizer`) with
    its special tokens (in `clips` mode its own 3); the CLIP byte-pair tokenizer adds start and end."""
    inner = getattr(tokenizer, "tokenizer", None)
    if not callable(inner):
        return [len(tokenizer.encode(text)) + 2 for text in texts]  # encode() cleans
    clean = getattr(tokenizer, "clean_fn", None)
    if clean is None:  # SigLipTokenizer cleans without a clean_fn
        from open_clip.tokenizer import basic_clean, canonicalize_text

        def clean(text):
            return canonicalize_text(basic_clean(text))

    cleaned = [clean(text) for text in texts]
    if getattr(tokenizer, "tokenizer_mode", "") == "clips":  # bos + text + eos + ... + cls
        ids = inner(cleaned, add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
        return [len(row) + 3 for row in ids]
    return [len(row) for row in inner(cleaned, truncation=False, verbose=False)["input_ids"]]


def snapshot_commit(path: str | Path) -> str | None:
    """The Hub commit of a file in the Hugging Face cache (`.../snapshots/<sha>/<file>`), else None."""
    match = re.search(r"/snapshots/([0-9a-f]{40})/", Path(path).as_posix())
    return match.group(1) if match else None


def builtin_source(name: str, tag: str) -> tuple[str, dict, dict]:
    """(what was loaded, its pretrained config, its model config) of a built-in name and pretrained
    tag; one line naming the known names or tags otherwise; the weights fetched into the cache."""
    import open_clip
    from open_clip.pretrained import download_pretrained, get_pretrained_cfg

    if name not in open_clip.list_models():
        raise BabelforgeError(
            f"model open_clip:{name}: not an open_clip built-in model name (open_clip.list_models(): "
            f"{len(open_clip.list_models())} names), an hf-hub:ORG/NAME id or a local folder"
        )
    tags = open_clip.list_pretrained_tags_by_model(name)
    pretrained = get_pretrained_cfg(name, tag)
    if not pretrained:
        raise BabelforgeError(
            f"model open_clip:{name}@{tag}: no such pretrained tag; {name} has {', '.join(tags) or 'none'}"
        )
    label = f"open_clip:{name}@{tag}"
    cached = weights_cached(pretrained, label)
    try:
        # Cached: read there without the network (open_clip asks the Hub for `main` first, else).
        with hub_offline() if cached else contextlib.nullcontext():
            weights = download_pretrained(pretrained)
    except Exception as error:  # huggingface_hub / urllib raise many kinds when offline
        raise BabelforgeError(
            f"model {label}: its weights are not in the Hugging Face cache and cannot be "
            f"downloaded ({type(error).__name__}); pre-fill the cache or use a local folder"
        ) from None
    commit = snapshot_commit(weights)
    where = pretrained.get("hf_hub", "").rstrip("/")
    repo = os.path.split(pretrained.get("hf_hub", ""))[0]  # `org/name/` or `org/name/file.bin`
    check_weights(weights, cached_remedy(repo, commit) if commit else f"delete it and load {label} again")
    loaded = f"{tag} {where}@{commit}" if commit else f"{tag} sha256:{sha256_file(weights)}"
    return loaded, pretrained, open_clip.get_model_config(name)


def weights_cached(pretrained: dict, label: str) -> bool:
    """Whether a pretrained tag's weights are in the Hugging Face cache (then read without the network);
    False when they are not but can be downloaded; one line at once when neither (offline: HF_HUB_OFFLINE
    set or the Hub unreachable), instead of the retries of a download. A URL's weights (OpenAI's own,
    fetched by urllib, not through the Hub): True."""
    from huggingface_hub import constants, try_to_load_from_cache

    hub = pretrained.get("hf_hub", "")
    if "file" in pretrained or not hub:
        # a URL (OpenAI's own, fetched by urllib into ~/.cache/clip): no Hub cache to look in
        url = pretrained.get("url", "")
        cached = Path("~/.cache/clip").expanduser() / os.path.basename(url)
        if url and not cached.is_file() and constants.HF_HUB_OFFLINE:
            raise BabelforgeError(f"model {label}: its weights ({url}) are not downloaded and HF_HUB_OFFLINE is set")
        return True
    # `org/name/` is the repo's default weights file, `org/name/file.bin` that file: each looked for
    # as safetensors first, as open_clip.pretrained.download_pretrained_from_hf does.
    repo, filename = os.path.split(hub)
    if not filename or filename == HUB_DEFAULT_WEIGHTS[1]:
        candidates = HUB_DEFAULT_WEIGHTS
    elif filename.endswith((".bin", ".pth")):
        candidates = (filename[:-4] + ".safetensors", filename)
    else:
        candidates = (filename,)
    if any(isinstance(try_to_load_from_cache(repo, file), str) for file in candidates):
        return True
    if hub_reachable():
        return False
    raise BabelforgeError(
        f"model {label}: its weights ({repo}) are not in the Hugging Face cache and the Hub is unreachable "
        f"(or HF_HUB_OFFLINE is set); pre-fill the cache (huggingface-cli download {repo}) or use a local folder"
    )


def text_tower_ready(model_config: dict, label: str, tokenizer_too: bool, network: bool = True) -> None:
    """The transformers text tower a config names (`text_cfg.hf_model_name`, which open_clip reads by
    that id at `main`: its config only, the weights are the checkpoint's; its tokenizer,
    `hf_tokenizer_name`, when the tokenizer is not in the model's folder) a folder or in the Hugging
    Face cache, fetched first when it is not and the Hub can be asked (and `network`: not for a local
    folder, which loads without it); otherwise one line at once."""
    text_cfg = model_config.get("text_cfg", {})
    needed = [(text_cfg.get("hf_model_name"), "config.json", "hf_model_name")]
    if tokenizer_too:
        needed.append((text_cfg.get("hf_tokenizer_name"), "tokenizer_config.json", "hf_tokenizer_name"))
    for name, filename, key in needed:
        if name and not Path(name).is_dir():
            what = f"model {label}: its text tower"
            hub_dependency(name, [(filename,)], what, f"text_cfg.{key}", TEXT_TOWER_FILES, network=network)


def hub_folder(repo: str, revision: str) -> Path:
    """The files of the open_clip repo `repo` at `revision` in the Hugging Face cache: config and
    tokenizer, and one format of its weights (safetensors first, as open_clip prefers)."""
    folder = hub_snapshot(repo, revision, CONFIG, HUB_FILES)
    for patterns in HUB_WEIGHTS:
        if any(any(folder.glob(pattern)) for group in HUB_WEIGHTS for pattern in group):
            break  # cached already, or fetched by the patterns before
        folder = hub_snapshot(repo, revision, CONFIG, patterns)
    return folder


def precision_for(device: str, model_config: dict) -> str:
    """open_clip's `precision` of a model on `device` (module docstring): fp32 on CPU; on a GPU fp16,
    wholly (`pure_fp16`) when its text tower is a transformers model."""
    if not device.startswith("cuda"):
        return "fp32"
    return "pure_fp16" if model_config.get("text_cfg", {}).get("hf_model_name") else "fp16"


def load(ref, device: str) -> OpenClipEncoder:
    import open_clip

    options: dict = {}
    if ref.local or ref.id.startswith("hf-hub:"):
        if ref.local:
            folder, revision = Path(ref.id).resolve(), "sha256:" + directory_hash(ref.id)
        else:
            folder, revision = hub_folder(ref.id.removeprefix("hf-hub:"), ref.revision), ref.revision
        name = f"local-dir:{folder}"
        try:
            config = json.loads((folder / CONFIG).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise BabelforgeError(f"model {ref.name}: cannot read its {CONFIG} ({error})") from None
        model_config = config.get("model_cfg") if isinstance(config, dict) else None
        if not isinstance(model_config, dict):
            raise BabelforgeError(f"model {ref.name}: its {CONFIG} has no model_cfg (not saved by open_clip?)")
        # the folder holds the tokenizer; a local one loads without the network
        text_tower_ready(model_config, ref.name, tokenizer_too=False, network=not ref.local)
    else:
        revision, pretrained, model_config = builtin_source(ref.id, ref.revision)
        text_tower_ready(model_config, ref.name, tokenizer_too=True)
        name = ref.id
        options["pretrained"] = ref.revision
        # open_clip does not apply a tag's QuickGELU itself (it warns): OpenAI's weights need it.
        options["force_quick_gelu"] = bool(pretrained.get("quick_gelu"))
    try:
        with hub_offline():  # every input is a folder or in the cache now
            model, _, preprocess = open_clip.create_model_and_transforms(
                name, precision=precision_for(device, model_config), device=device, **options
            )
            tokenizer = open_clip.get_tokenizer(name)
    except (OSError, RuntimeError, ValueError, KeyError) as error:
        raise BabelforgeError(f"model {ref.name}@{revision}: open_clip cannot load it ({first_line(error)})") from None
    model.eval()
    return OpenClipEncoder(
        model,
        preprocess,
        tokenizer,
        embedding_dim=int(model_config["embed_dim"]),
        name=ref.name,
        revision=revision,
        device=device,
        max_text_length=int(tokenizer.context_length),
        ref=ref,
    )
