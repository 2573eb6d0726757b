"""Model families: every dual encoder the benchmark papers evaluate, named by one spec string.

A spec names a model the same way everywhere (`--model`, `eval.common.models`, the export, the
provenance of a run):

    [FAMILY:]ID[@REVISION][+IMAGE_SPEC]

- `FAMILY` is a name of `FAMILIES` below. Without it, a local folder is detected by its files
  (`open_clip_config.json`, `modules.json`, an M-CLIP or a transformers `config.json`) and
  anything else is a transformers (`hf`) Hub id, as before families existed.
- `ID` is a Hub id, a local folder, or (open_clip) a built-in model name or `hf-hub:ORG/NAME`.
- `REVISION` pins what is loaded: a Hub commit sha, or (open_clip built-in names) the pretrained
  tag. A local folder takes none (one is refused): it is hashed.
- `+IMAGE_SPEC` is the image tower of a family whose checkpoints are text encoders only (M-CLIP,
  multilingual sentence-transformers): the CLIP its text encoder was distilled against. The
  published checkpoints have a default (`PAIRED_IMAGE_TOWERS` of their family module).

Each family is one module with a `load(ref, device) -> DualEncoder` and, when its local folders
can be recognised, a `detect(folder) -> bool`; `FAMILIES` names them as "module:function"
strings, imported only when used (listing the families imports no model library). A new family
is one module and one line here (docs/adding_a_model_family.md, from a real addition; the families
as a user names them: docs/guides/evaluate.md, "Model families").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

from babelforge.core.declarations import imported
from babelforge.core.errors import BabelforgeError

SYNTAX = "[FAMILY:]ID[@REVISION][+IMAGE_SPEC]"


@dataclass(frozen=True)
class Family:
    """One model family: the spec prefix, the library that loads it and what it loads."""

    name: str
    library: str  # the pip package its loader imports
    loads: str  # what checkpoints it loads, for the help and the docs
    example: str  # a spec of a published checkpoint of this family
    loader: str  # "module:function": (ModelRef, device) -> DualEncoder
    detector: str | None = None  # "module:function": (folder) -> bool, this family's local folders
    text_only: bool = False  # a text encoder whose image tower is a second spec (+IMAGE_SPEC)
    # "module:function": (folder) -> (text, image) vector sizes its config files state, or None; read
    # without the library, so a mismatch is refused before torch is imported (babelforge.eval.models)
    stated_dims: str | None = None


# In detection order: a folder is the first family whose detector accepts it (`hf` last: any config.json).
FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family(
            "open_clip",
            "open_clip_torch",
            "OpenCLIP: built-in names with a pretrained tag, hf-hub: checkpoints, local folders "
            "(open_clip_config.json); XLM-R and NLLB text towers (OpenCLIP XLM-R, NLLB-SigLIP)",
            "open_clip:xlm-roberta-base-ViT-B-32@laion5b_s13b_b90k",
            "babelforge.eval.families.open_clip:load",
            "babelforge.eval.families.open_clip:detect",
        ),
        Family(
            "st",
            "sentence-transformers",
            "sentence-transformers models (modules.json): a multilingual text model plus its CLIP image model",
            "st:sentence-transformers/clip-ViT-B-32-multilingual-v1@<sha>",
            "babelforge.eval.families.sentence_transformers:load",
            "babelforge.eval.families.sentence_transformers:detect",
            text_only=True,
        ),
        Family(
            "mclip",
            "multilingual-clip",
            "M-CLIP text encoders (config.json model_type M-CLIP) plus the CLIP image tower they were distilled against",
            "mclip:M-CLIP/XLM-Roberta-Large-Vit-B-32@<sha>",
            "babelforge.eval.families.mclip:load",
            "babelforge.eval.families.mclip:detect",
            text_only=True,
        ),
        Family(
            "mclip_legacy",
            "multilingual-clip",
            "legacy M-CLIP text encoders: a transformers BERT plus its linear head pickle (`* Linear Weights.pkl`, "
            "read as numpy arrays only), plus the CLIP image tower they were distilled against",
            "mclip_legacy:M-CLIP/M-BERT-Base-ViT-B@<sha>+open_clip:ViT-B-32@openai",
            "babelforge.eval.families.mclip_legacy:load",
            "babelforge.eval.families.mclip_legacy:detect",
            text_only=True,
        ),
        Family(
            "hf",
            "transformers",
            "transformers dual encoders: CLIP, SigLIP (mSigLIP), AltCLIP, VisionTextDualEncoder",
            "hf:openai/clip-vit-base-patch32@<sha>",
            "babelforge.eval.families.hf:load",
            "babelforge.eval.families.hf:detect",
            stated_dims="babelforge.eval.families.hf:stated_dims",
        ),
    )
}


# The image tower each published text-only checkpoint was distilled against (its model card), as a
# spec: what `+IMAGE_SPEC` defaults to. open_clip's `ViT-B-32@openai` holds OpenAI's CLIP ViT-B/32 weights
# (those of openai/clip-vit-base-patch32 and of sentence-transformers' clip-ViT-B-32).
PAIRED_IMAGE_TOWERS: dict[str, str] = {
    "M-CLIP/XLM-Roberta-Large-Vit-B-32": "open_clip:ViT-B-32@openai",
    "M-CLIP/M-BERT-Base-ViT-B": "open_clip:ViT-B-32@openai",  # the legacy format (mclip_legacy)
    "M-CLIP/XLM-Roberta-Large-Vit-L-14": "open_clip:ViT-L-14@openai",
    "M-CLIP/XLM-Roberta-Large-Vit-B-16Plus": "open_clip:ViT-B-16-plus-240@laion400m_e32",
    "M-CLIP/LABSE-Vit-L-14": "open_clip:ViT-L-14@openai",
    "sentence-transformers/clip-ViT-B-32-multilingual-v1": "open_clip:ViT-B-32@openai",
}


@dataclass(frozen=True)
class ModelRef:
    """A parsed spec: which family loads `id` at `revision`, and the `image` tower of a text-only family."""

    family: str
    id: str
    revision: str | None = None
    image: ModelRef | None = None

    @property
    def local(self) -> bool:
        return Path(self.id).is_dir()

    @property
    def name(self) -> str:
        """How results, caches and plots name the model: the spec without revisions. A transformers
        model keeps its bare id (what it was called before families existed)."""
        base = self.id if self.family == "hf" else f"{self.family}:{self.id}"
        return f"{base}+{self.image.name}" if self.image else base

    def text(self) -> str:
        """The spec string that parses back to this reference."""
        base = f"{self.family}:{self.id}" + (f"@{self.revision}" if self.revision else "")
        return f"{base}+{self.image.text()}" if self.image else base

    def absolute(self) -> ModelRef:
        """The same reference with its local folders absolute (what a worker elsewhere loads)."""
        image = self.image.absolute() if self.image else None
        return replace(self, id=str(Path(self.id).resolve()) if self.local else self.id, image=image)


def family(name: str) -> Family:
    if name not in FAMILIES:
        raise BabelforgeError(unknown_family_line(f"unknown model family {name!r}"))
    return FAMILIES[name]


def unknown_family_line(what: str) -> str:
    """One line: what is wrong, the families and the spec syntax."""
    return f"{what}; model families: {', '.join(FAMILIES)}; a model spec is {SYNTAX} (e.g. {FAMILIES['open_clip'].example})"


def split_family(text: str) -> tuple[str | None, str]:
    """`open_clip:ViT-B-32` -> ("open_clip", "ViT-B-32"); no `:` (or open_clip's own `hf-hub:`, or a
    folder with a `:` in its name) -> (None, text); any other word before a `:` is an unknown family
    (a Hub id has no `:`)."""
    prefix, colon, rest = text.partition(":")
    if colon and prefix in FAMILIES:
        return prefix, rest
    if colon and prefix != "hf-hub" and re.fullmatch(r"[A-Za-z][\w.-]*", prefix) and not Path(text).exists():
        raise BabelforgeError(unknown_family_line(f"model spec {text!r}: unknown model family {prefix!r}"))
    return None, text


def parse_spec(text: str, revision: str | None = None) -> ModelRef:
    """The `ModelRef` a spec string names; `revision` (a params entry's `revision:`) pins an id
    written without `@REVISION`. A folder without a family is detected by its files."""

    text = text.strip()
    family_name, rest = split_family(text)
    if Path(rest).exists():  # a folder whose name has an @ or a +: all of it is the id
        model_id, at, pinned, plus, image_text = rest, "", "", "", ""
    else:
        main, plus, image_text = rest.partition("+")
        model_id, at, pinned = main.partition("@")
    if not model_id or (at and not pinned) or (plus and not image_text):
        raise BabelforgeError(unknown_family_line(f"model spec {text!r} is incomplete"))
    if pinned and revision and pinned != revision:
        raise BabelforgeError(f"model spec {text!r}: pinned at {pinned} and at {revision}; keep one")
    if (pinned or revision) and Path(model_id).is_dir():
        raise BabelforgeError(local_revision_line(text, model_id, pinned, revision))
    if family_name and Path(model_id).is_dir():
        check_folder_family(text, family_name, model_id)
    family_name = family_name or detect_family(model_id)
    if FAMILIES[family_name].text_only and not plus:
        image_text = PAIRED_IMAGE_TOWERS.get(model_id, "")
        if not image_text:
            raise BabelforgeError(
                f"model spec {text!r}: a {family_name} checkpoint is a text encoder; name the image tower it was "
                f"distilled against as +IMAGE_SPEC (e.g. {family_name}:{model_id}+open_clip:ViT-B-32@openai)"
            )
        plus = "+"
    image = parse_spec(image_text) if plus else None
    if image and not FAMILIES[family_name].text_only:
        raise BabelforgeError(
            f"model spec {text!r}: +IMAGE_SPEC is for text-only families "
            f"({', '.join(n for n, f in FAMILIES.items() if f.text_only)}); {family_name} has its own image tower"
        )
    if image and image.image:
        raise BabelforgeError(f"model spec {text!r}: an image tower cannot have an image tower of its own")
    return ModelRef(family_name, model_id, pinned or revision or None, image)


def local_revision_line(text: str, folder: str, pinned: str, revision: str | None) -> str:
    """One line: a revision given to a local folder, which loads what it holds (a revision would pin
    nothing; the results record the hash of its files instead)."""
    drop = f"drop @{pinned}" if pinned else f"drop `revision: {revision}` from its params.yaml eval.common.models entry"
    return (
        f"model spec {text!r}: {folder} is a local folder, loaded as its files are now (results record their "
        f"sha256) and not at a revision; {drop}, or name the Hub id to load a revision"
    )


def family_module(name: str) -> str:
    """The module of a family (its loader's): what declares its folder's files."""
    return family(name).loader.partition(":")[0]


def marker_file(name: str) -> str:
    """The file every checkpoint of a family has (its module's `MARKER_FILE`): what the Hugging Face
    cache is asked for at a pinned commit and what its local folders are recognised by."""
    return imported(f"{family_module(name)}:MARKER_FILE")


def folder_holds(name: str) -> str:
    """What a family's folder holds, for a line saying a folder is not one (its module's `FOLDER_HOLDS`)."""
    return imported(f"{family_module(name)}:FOLDER_HOLDS")


def folder_family(folder: Path) -> str | None:
    """The first family (detection order) whose detector accepts a folder's files; None when none does."""
    return next(
        (entry.name for entry in FAMILIES.values() if entry.detector and imported(entry.detector)(folder)), None
    )


def check_folder_family(text: str, name: str, folder: str) -> None:
    """One line, before any library is asked (or the Hub: a library handed a folder it does not
    recognise looks the name up there), when a spec's family prefix names a family whose files the
    local folder does not have: what the folder is by its files and the prefix that fits."""
    detector = family(name).detector
    if detector is None or imported(detector)(Path(folder)):
        return
    found = folder_family(Path(folder))
    what = (
        f"it holds {folder_holds(found)}: write {found}:{folder}"
        if found
        else f"{unrecognised_files(Path(folder))}, the files of no family"
    )
    raise BabelforgeError(
        f"model spec {text!r}: {folder} is not a checkpoint of the {name} family, which needs "
        f"{folder_holds(name)}; {what}"
    )


def unrecognised_files(folder: Path) -> str:
    """What a folder no family recognises holds instead: its config.json's model type, or which of the
    families' marker files it lacks."""
    if (folder / "config.json").is_file():
        return f"its config.json is of model_type {config_type(folder)!r}, not a dual encoder any family loads"
    markers = sorted({marker_file(name) for name in FAMILIES})
    return f"it has none of {', '.join(markers)}"


def config_type(folder: Path) -> str | None:
    """The `model_type` of a folder's config.json (None when it has none or it is not JSON)."""
    try:
        return json.loads((folder / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError, AttributeError):
        return None


def detect_family(model_id: str) -> str:
    """The family of a local folder, by its files; open_clip for an `hf-hub:` id (open_clip's own
    prefix); `hf` for any other id that is not a folder (a transformers Hub id)."""
    folder = Path(model_id)
    if model_id.startswith("hf-hub:"):
        return "open_clip"
    if not folder.is_dir():
        return "hf"
    found = folder_family(folder)
    if found:
        return found
    raise BabelforgeError(
        unknown_family_line(f"model folder {model_id}: no family recognises its files ({unrecognised_files(folder)})")
    )
