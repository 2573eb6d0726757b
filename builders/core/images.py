"""Opening an image file as an RGB picture, or saying why it cannot be used.

The one image reader of the eval image sets (screening and encoding) and of the MVL-SIB
thumbnails, so every stage sees the same pixels and the same reasons. `open_rgb(path)` returns
`(image, None)` or `(None, reason)`, a reason of `babelforge.core.bad_rows.REASONS`:

    missing_file     no such file
    symlink_loop     a symbolic link to itself (or a ring of them): no file at its end
    empty_file       zero bytes
    not_an_image     PIL cannot identify it (a text file named .png), or its mode has no RGB
    truncated_image  identified, but its pixels do not decode (cut off, or broken data: PIL
                     raises the same OSError for both on load())
    image_too_large  more pixels than PIL's decompression-bomb limit (Image.MAX_IMAGE_PIXELS,
                     left at PIL's default): PIL only warns between 1x and 2x the limit; here the
                     warning is an error too, so a 30,000 x 30,000 "photo" is never decoded

Images that decode are converted, never skipped: EXIF orientation is applied, CMYK and palette
images become RGB, 16-bit greys are scaled to 8 bits (PIL's own conversion clips them at 255,
which turns most of a 16-bit image white), and transparent pixels are composited on white.
`ImageFile.LOAD_TRUNCATED_IMAGES` is never set: a cut-off image would be padded with grey,
differently per PIL version, and scored as if it were whole.
"""

from __future__ import annotations

import errno
import os
import warnings
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from babelforge.core.bad_rows import REASONS
from babelforge.core.errors import BabelforgeError

# Bump when open_rgb's pixels change (EXIF, alpha, 16-bit handling): the eval embedding cache
# keys its shards on it, so vectors of the old pixels are never read back.
READER_VERSION = "1"

# Transparent pixels go on white: a transparent logo or product photo is seen on a white page
# (browsers and viewers show it so); dropping alpha instead shows whatever colour the encoder left
# under the transparent pixels (often black, sometimes noise), which nobody saw. White is also a
# fixed choice, so the pixels do not depend on the file's hidden colour values.
BACKGROUND = (255, 255, 255)
_ALPHA_MODES = ("RGBA", "LA", "PA", "RGBa")
_SIXTEEN_BIT = ("I;16", "I;16L", "I;16B", "I;16N", "I")


def open_rgb(path: str | os.PathLike) -> tuple[Image.Image | None, str | None]:
    """The file at `path` as a loaded RGB image and None, or None and the reason it is unusable."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None, "missing_file"
    except NotADirectoryError:  # a parent of the path is a file
        return None, "missing_file"
    except OSError as error:
        if error.errno == errno.ELOOP:  # a link to itself, or a ring of links
            return None, "symlink_loop"
        raise BabelforgeError(f"{path}: cannot read it ({error.strerror})") from None
    if not path.is_file():  # a folder named like an image
        return None, "not_an_image"
    if size == 0:
        return None, "empty_file"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                image.load()
                return to_rgb(image), None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        return None, "image_too_large"
    except UnidentifiedImageError:
        return None, "not_an_image"
    except ValueError:  # a mode PIL cannot convert to RGB
        return None, "not_an_image"
    except PermissionError as error:  # this machine's problem, not the file's: no reason fits
        raise BabelforgeError(f"{path}: cannot read it ({error.strerror})") from None
    except (OSError, SyntaxError, EOFError):  # identified, but its data does not decode
        return None, "truncated_image"


def read_rgb(path: str | os.PathLike) -> Image.Image:
    """The file at `path` as RGB; an error naming the file and the reason when it cannot be."""
    image, reason = open_rgb(path)
    if image is None:
        raise BabelforgeError(f"{path}: {REASONS[reason]} ({reason})")
    return image


def to_rgb(image: Image.Image) -> Image.Image:
    """A loaded image upright and in RGB (see the module's docstring for each mode)."""
    try:
        ImageOps.exif_transpose(image, in_place=True)
    except (SyntaxError, ValueError, TypeError, KeyError, OSError):  # an unreadable EXIF block: left as stored
        pass
    if image.mode == "RGB":
        return image.copy()  # a copy that outlives the file handle, like every other branch
    if image.mode in _SIXTEEN_BIT:
        # 16-bit greys (PNG, PGM; older PIL decodes them to 32-bit "I", read as 16-bit too): the high byte.
        values = np.asarray(image).astype(np.int64)
        return Image.fromarray((np.clip(values, 0, 65535) >> 8).astype(np.uint8), "L").convert("RGB")
    if image.mode in _ALPHA_MODES or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, BACKGROUND + (255,))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return image.convert("RGB")  # CMYK, YCbCr, L, 1, P without transparency
