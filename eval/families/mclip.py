"""The `mclip` family: M-CLIP text encoders (`multilingual-clip`) with the CLIP image tower they were distilled against.

A text-only family: texts go through multilingual-clip's own `MultilingualCLIP.forward` (a
transformers text model, mean pooling, a linear map into the CLIP space), images through the
image tower of the spec's `+IMAGE_SPEC`, loaded by its own family (`babelforge.eval.families.paired`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.eval.families import config_type
from babelforge.eval.families.paired import PairedEncoder, check_dims
from babelforge.eval.models import (
    WEIGHTS,
    checkpoint_source,
    dtype_for,
    first_line,
    hub_dependency,
    load_pinned,
    load_ref,
    position_limit,
    text_length_limit,
)

MARKER_FILE = "config.json"  # what every checkpoint of the family has (babelforge.eval.families.marker_file)
FOLDER_HOLDS = "a config.json of model_type M-CLIP (saved by multilingual-clip)"


def detect(folder: Path) -> bool:
    """A folder saved by multilingual-clip's MultilingualCLIP (config.json model_type `M-CLIP`)."""
    return config_type(folder) == "M-CLIP"


# ------------------------------------------------------------------ M-CLIP


class DeviceTokenizer:
    """The checkpoint's tokenizer as `MultilingualCLIP.forward` calls it (`tokenizer(texts, padding=True,
    return_tensors="pt")`), but cutting at the text encoder's limit and putting the batch on the
    model's device: the library tokenizes uncut and leaves the batch on the CPU."""

    def __init__(self, tokenizer, max_length: int | None, device: str):
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.device = device

    def __call__(self, texts, **kwargs):
        if self.max_length:
            kwargs.update(truncation=True, max_length=self.max_length)
        return self.tokenizer(texts, **kwargs).to(self.device)


class MClipEncoder(PairedEncoder):
    """multilingual-clip's `MultilingualCLIP` for texts, the paired image tower for images."""

    family = "mclip"

    def __init__(self, model, tokenizer, **kwargs):
        super().__init__(**kwargs)
        self.model = model
        self.tokenizer = tokenizer
        self.device_tokenizer = DeviceTokenizer(tokenizer, self.max_text_length, self.device)

    def _encode_text_batch(self, texts: list[str]):
        return self.model(texts, self.device_tokenizer)

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self.tokenizer(list(texts), truncation=False, verbose=False)["input_ids"]]


# Parameters a checkpoint may lack without changing what `forward` computes (it reads the last
# hidden state, never the pooler that AutoModel adds to the text model).
UNUSED_PARAMETERS = (".pooler.",)


def model_base(folder: Path, ref) -> Path | None:
    """The folder of the text model an M-CLIP checkpoint names (config.json `modelBase`), which
    MultilingualCLIP.__init__ loads by that name (AutoModel.from_pretrained): itself when it is a
    folder; a Hub id's folder in the Hugging Face cache (its config and weights at `main`, as the
    library reads it), fetched first when the Hub can be asked; offline, one line naming it. None when
    the config names none (the library says what is wrong)."""
    try:
        name = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("modelBase")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(name, str) or not name:
        return None
    if Path(name).is_dir():
        return Path(name)
    what = f"model {ref.name}: its text model"
    return hub_dependency(name, [("config.json",), WEIGHTS], what, "config.json modelBase", network=not ref.local)


def load(ref, device: str) -> MClipEncoder:
    """A MultilingualCLIP folder (or Hub id at `ref.revision`) plus the image tower `ref.image`."""
    from multilingual_clip.pt_multilingual_clip import MultilingualCLIP
    from transformers import AutoTokenizer

    # A folder: the local one, or the cache's snapshot of the pinned commit (every file read at it).
    source, revision = checkpoint_source(ref, MARKER_FILE)
    base = model_base(Path(source), ref)
    image_model = load_ref(ref.image, device)

    def from_folder(folder: str):
        # MultilingualCLIP.__init__ builds its text model with AutoModel.from_pretrained(config.modelBase)
        # (a Hub id such as xlm-roberta-large): given its folder instead (`modelBase=` overrides the
        # config's). The checkpoint's weights replace those. Its `_load_state_dict_into_model` override
        # is not called by transformers >= 4.50; transformers' own loader fills every parameter
        # (checked below: none left random).
        options = {"modelBase": str(base)} if base is not None else {}
        loaded = MultilingualCLIP.from_pretrained(folder, output_loading_info=True, **options)
        return loaded, AutoTokenizer.from_pretrained(folder)

    try:
        (model, info), tokenizer = load_pinned(ref, source, from_folder)
    except (OSError, ValueError) as error:
        raise BabelforgeError(
            f"model {ref.name}@{revision}: multilingual-clip cannot load it from {source} ({first_line(error)}); "
            "offline, use a local folder or pre-fill the Hugging Face cache"
        ) from None
    missing = [key for key in info.get("missing_keys", ()) if not any(part in key for part in UNUSED_PARAMETERS)]
    if missing:
        raise BabelforgeError(
            f"model {ref.name}@{revision}: the checkpoint lacks {len(missing)} weights of the text encoder "
            f"(e.g. {missing[0]}); they would be random"
        )
    model = model.to(device=device, dtype=dtype_for(device)).eval()
    text_dim = int(model.config.numDims)
    check_dims(ref, text_dim, image_model)
    return MClipEncoder(
        model,
        tokenizer,
        image_model=image_model,
        text_dim=text_dim,
        name=ref.name,
        revision=f"{revision}+{image_model.revision}",
        device=device,
        max_text_length=text_length_limit(
            position_limit(model.transformer), getattr(tokenizer, "model_max_length", None)
        ),
        ref=ref,
    )
