"""The keys of the `mvl_sib.images` and `mvl_sib.check` groups of params.yaml.

Declared here, once: the `mvl_sib_images` and `mvl_sib_check` stages' Configs take them as their
own keys, and the `mvl_sib` stage's Config declares them as its sub-groups (params.yaml nests them
under `mvl_sib:`), so no stage module imports another for them.
"""

from __future__ import annotations

from dataclasses import dataclass

from babelforge.core.config import setting


@dataclass(frozen=True)
class ImagesSettings:
    """The keys of the `mvl_sib.images` group (also declared by the `mvl_sib` stage's Config)."""

    manifest: str = setting(
        "resources/mvl_sib_images.tsv",
        "full profile: topic, image_id, url, licence, attribution, sha256 per image",
        metavar="FILE",
    )
    per_topic: int = setting(10, "images per SIB-200 topic", minimum=1)
    thumbnail_px: int = setting(640, "long side of the thumbnails (LANCZOS)", minimum=1)
    sample_seed: int = setting(0, "seed of the generated offline set of the sample profile", minimum=0)


@dataclass(frozen=True)
class CheckSettings:
    """The keys of the `mvl_sib.check` group (also declared by the `mvl_sib` stage's Config)."""

    per_language: bool = setting(False, "print one line per language (else only languages with a problem)")
