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
    if img.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        img = Image.fromarray(to_uint8(np.asarray(img)), "L")
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        rgba = img.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        img = Image.alpha_composite(background, rgba)
    return np.ascontiguousarray(np.asarray(img.convert("RGB"), dtype=np.uint8))


def to_uint8(arr: np.ndarray) -> np.ndarray:
    """Samples of any type as uint8: floats in [0, 1] scaled by 255 (a float image is [0, 1] by convention; larger
    ones by their largest value), 16-bit and other integers by their type's or the data's range; NaN is 0.

    >>> to_uint8(np.array([0.0, 0.5, 1.0], np.float32)).tolist()
    [0, 128, 255]
    >>> to_uint8(np.array([0, 32896, 65535], np.uint16)).tolist()
    [0, 128, 255]
    >>> to_uint8(np.array([0, 100, 200], np.int32)).tolist()  # an 8-bit range in a wide integer type
    [0, 100, 200]
    """
    if arr.dtype == np.uint8:
        return arr
    a = np.nan_to_num(arr.astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    top = float(a.max()) if a.size else 1.0
    if arr.dtype.kind == "f":
        scale = 255.0 if top <= 1.0 else 255.0 / top
    elif arr.dtype.kind == "b":
        scale = 255.0
    else:
        scale = 1.0 if top <= 255 else 255.0 / (65535.0 if top <= 65535 else top)
    return np.clip(a * scale + 0.5, 0, 255).astype(np.uint8)


def sample_note(data: bytes) -> str | None:
    """What the user should know about the samples of an image file that is not 8 bits per channel (float, 16-bit),
    or None (read from the TIFF tags or the PNG's mode)."""
    try:
        with Image.open(io.BytesIO(data)) as img:
            bits = img.tag_v2.get(258) if hasattr(img, "tag_v2") else None
            fmt = img.tag_v2.get(339) if hasattr(img, "tag_v2") else None
            mode = img.mode
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        mode, bits, fmt = "", None, None
        arr = _read_tiff(data)
        if arr is None:
            return None
        kind, depth = arr.dtype.kind, arr.dtype.itemsize * 8
        fmt, bits = (3 if kind == "f" else 1), depth
    first = lambda v: (v[0] if isinstance(v, tuple) else v) if v is not None else None  # noqa: E731
    if mode == "F" or first(fmt) == 3:
        return f"The image has {first(bits) or 32}-bit floating-point samples: values in [0, 1] were scaled to 8 bits."
    if mode in ("I;16", "I;16B", "I;16L", "I") or (first(bits) or 8) > 8:
        return f"The image has {first(bits) or 16} bits per channel: it was scaled to 8 bits for editing."
    return None


def _read_tiff(data: bytes) -> np.ndarray | None:
    """A TIFF Pillow cannot open (3-channel float, planar…) read by tifffile; None when it is not a TIFF."""
    if data[:4] not in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
        return None
    try:
        import tifffile
    except ImportError:
        return None
    try:
        return np.asarray(tifffile.imread(io.BytesIO(data), key=0))
    except Exception:  # tifffile raises many types for a corrupt file; the caller says it is unreadable
        return None


def _tiff_rgb(arr: np.ndarray, max_pixels: int, name: str) -> np.ndarray:
    """tifffile's array (H×W, H×W×C or C×H×W, any sample type) as RGB uint8."""
    if arr.ndim == 3 and arr.shape[0] in (1, 3, 4) and arr.shape[2] not in (1, 3, 4):
        arr = np.moveaxis(arr, 0, -1)  # planar
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3 or arr.shape[2] not in (1, 2, 3, 4):
        raise InputError(f"{name} is a TIFF of shape {arr.shape}: costa reads grey, RGB or RGBA images")
    h, w = arr.shape[:2]
    if w * h > max_pixels:
        raise InputError(f"{name} is {w}x{h} = {w * h:,} pixels; the limit is {max_pixels:,} (COSTA_MAX_PIXELS)")
    grey = arr.shape[2] <= 2
    rgb = to_uint8(arr[:, :, :1].repeat(3, 2) if grey else arr[:, :, :3])
    if arr.shape[2] in (2, 4):  # alpha: flattened onto white, as for other formats
        alpha = to_uint8(arr[:, :, -1:]).astype(np.float64) / 255.0
        rgb = (rgb * alpha + 255.0 * (1.0 - alpha) + 0.5).astype(np.uint8)
    return np.ascontiguousarray(rgb)


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
        data = source if isinstance(source, bytes) else Path(source).read_bytes()
        tiff = _read_tiff(data)
        if tiff is not None:
            return _tiff_rgb(tiff, max_pixels, name)
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
