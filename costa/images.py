"""Reading, validating and writing images: everything becomes RGB uint8 (H, W, 3) or a clear `InputError`."""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from costa.errors import InputError
from costa.types import Box, Mask, Point

DEFAULT_MAX_PIXELS = 40_000_000


def to_rgb_array(img: Image.Image, max_pixels: int = DEFAULT_MAX_PIXELS, name: str = "image") -> np.ndarray:
    """Convert any PIL image (palette, CMYK, 16-bit, alpha, animated) to RGB uint8; refuse oversized ones."""
    w, h = img.size
    if w * h > max_pixels:
        raise InputError(f"{name} is {w}x{h} = {w * h:,} pixels; the limit is {max_pixels:,}")
    if getattr(img, "is_animated", False):
        img.seek(0)  # animated GIF/WebP: edit the first frame
    img = ImageOps.exif_transpose(img)
    if img.mode in ("I;16", "I;16B", "I;16L", "I"):
        arr = np.asarray(img, dtype=np.float64)
        top = 65535.0 if arr.max() > 255 else 255.0
        img = Image.fromarray(np.clip(arr / top * 255.0 + 0.5, 0, 255).astype(np.uint8), "L")
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        rgba = img.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        img = Image.alpha_composite(background, rgba)
    return np.ascontiguousarray(np.asarray(img.convert("RGB"), dtype=np.uint8))


def load_image(source: str | Path | bytes, max_pixels: int = DEFAULT_MAX_PIXELS) -> np.ndarray:
    """Read an image file (or bytes) into RGB uint8, with a message naming the problem when it can't."""
    name = "image" if isinstance(source, bytes) else str(source)
    if not isinstance(source, bytes):
        p = Path(source)
        if not p.exists():
            raise InputError(f"image {p} does not exist")
        if not p.is_file():
            raise InputError(f"image {p} is not a file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            fp = io.BytesIO(source) if isinstance(source, bytes) else source
            with Image.open(fp) as img:
                w, h = img.size
                if w * h > max_pixels:
                    raise InputError(
                        f"{name} is {w}x{h} = {w * h:,} pixels; the limit is {max_pixels:,} (COSTA_MAX_PIXELS)"
                    )
                img.load()
                return to_rgb_array(img, max_pixels, name)
    except InputError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as e:
        # Pillow's own limit trips before the header check above for very large images: quote costa's limit
        raise InputError(
            f"{name} has more pixels than the limit of {max_pixels:,} (COSTA_MAX_PIXELS); send a smaller image"
        ) from e
    except UnidentifiedImageError as e:
        raise InputError(f"{name} is not an image costa can read (unknown or corrupt format)") from e
    except (OSError, SyntaxError, ValueError) as e:
        raise InputError(f"{name} is corrupt or truncated: {e}") from e


def save_image(image: np.ndarray, path: str | Path) -> Path:
    """Write RGB uint8 to `path` (format from the suffix); create the folder."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(image).save(p)
    return p


def parse_box(text: str, width: int, height: int) -> Box:
    """Parse "x,y,w,h" (pixels) and check it lies inside a width × height image."""
    parts = text.replace(" ", "").split(",")
    try:
        x, y, w, h = (int(float(v)) for v in parts)
    except (ValueError, OverflowError) as e:  # OverflowError: "inf", "1e999"
        raise InputError(f"--box must be x,y,w,h in pixels, got {text!r}") from e
    if w <= 0 or h <= 0:
        raise InputError(f"--box width and height must be positive, got {text!r}")
    if x < 0 or y < 0 or x + w > width or y + h > height:
        raise InputError(f"--box {text} is outside the {width}x{height} image")
    return Box(x, y, w, h, label="user box")


_NEGATIVE_WORDS = ("neg", "negative", "bg", "background", "-")
_POSITIVE_WORDS = ("pos", "positive", "fg", "object", "+")


def parse_point(text: str, width: int, height: int) -> Point:
    """Parse a click "x,y" (on the object) or "x,y,neg" (on background), in pixels, inside a width × height image."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (2, 3):
        raise InputError(f"--point must be x,y or x,y,neg in pixels, got {text!r}")
    positive = True
    if len(parts) == 3:
        flag = parts[2].lower()
        if flag not in _NEGATIVE_WORDS + _POSITIVE_WORDS:
            raise InputError(f"--point {text!r}: the third field must be 'neg' (background) or 'pos', got {parts[2]!r}")
        positive = flag in _POSITIVE_WORDS
    try:
        x, y = (int(float(v)) for v in parts[:2])
    except (ValueError, OverflowError) as e:  # OverflowError: "inf", "1e999"
        raise InputError(f"--point must be x,y or x,y,neg in pixels, got {text!r}") from e
    if not (0 <= x < width and 0 <= y < height):
        raise InputError(
            f"--point {x},{y} is outside the {width}x{height} image (x must be 0–{width - 1}, y 0–{height - 1})"
        )
    return Point(x, y, positive)


def load_mask(path: str | Path, width: int, height: int) -> Mask:
    """Read a mask image (non-zero = selected) that must match the image size and select something."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"mask {p} does not exist")
    try:
        with Image.open(p) as img:
            img.load()
            grey = np.asarray(img.convert("L"))
    except (UnidentifiedImageError, OSError) as e:
        raise InputError(f"mask {p} is not a readable image") from e
    if grey.shape != (height, width):
        raise InputError(f"mask {p} is {grey.shape[1]}x{grey.shape[0]} but the image is {width}x{height}")
    data = grey > 127
    if not data.any():
        raise InputError(f"mask {p} is empty: paint the region to edit in white")
    return Mask(data, label="user mask")
