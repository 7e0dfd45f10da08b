"""Backgrounds for the synthetic scenes: fixed-palette and random flat / gradient / noise / woven-texture fills, and
crops of the shared benchmark photos.

Photos are read from the folder named by `COSTA_BENCHMARKS_DIR` (the shared EditEval and MagicBrush images; the
benchmarks and the test suite set it to ../shared/benchmarks when that exists) when set; every function here works
without them except a "photo" background, which then raises a clear `ValueError` (the scene generators simply stop
drawing that kind). Images are RGB uint8 (H, W, 3); sizes in pixels.

Example:
    >>> import numpy as np
    >>> random_background("noise", 48, 64, np.random.default_rng(0)).shape
    (48, 64, 3)
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

BackgroundKind = Literal["flat", "gradient", "texture"]
SceneBackground = Literal["flat", "gradient", "noise", "texture", "photo"]
SCENE_BACKGROUNDS: tuple[str, ...] = ("flat", "gradient", "noise", "texture", "photo")


def benchmarks_dir() -> Path | None:
    """Return the shared benchmark data folder named by `COSTA_BENCHMARKS_DIR`, or None when unset.

    The library never looks outside its repository on its own: the benchmarks (`bench/cli.py`) and the test suite
    (`tests/conftest.py`) set the variable when ../shared/benchmarks exists.
    """
    value = os.environ.get("COSTA_BENCHMARKS_DIR")
    return Path(value) if value else None


_PHOTO_DIRS = ("editeval_v1/images", "magicbrush_sample/images/orig")
_PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png")


def photo_files(root: Path | None = None) -> tuple[Path, ...]:
    """Photos under the shared benchmarks folder (sorted, so a seed picks the same one on every machine); empty when
    the folder is absent."""
    base = benchmarks_dir() if root is None else Path(root)
    if base is None:
        return ()
    found: list[Path] = []
    for sub in _PHOTO_DIRS:
        folder = base / sub
        if folder.is_dir():
            found.extend(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in _PHOTO_SUFFIXES)
    return tuple(sorted(found))


def load_photo_crop(path: Path, height: int, width: int, rng: np.random.Generator) -> np.ndarray:
    """Return a random height × width RGB uint8 crop of the photo at `path`, scaled so the crop spans 50–90 % of the
    photo's shorter side (JPEGs are decoded at reduced size via draft mode and only the crop is resampled, so this
    takes a few ms)."""
    from PIL import Image

    with Image.open(path) as img:
        pw, ph = img.size
        span = rng.uniform(0.5, 0.9) * min(pw, ph)  # source pixels across the crop's shorter side
        zoom = max(width / pw, height / ph, min(width, height) / span)  # output pixels per source pixel
        img.draft("RGB", (math.ceil(pw * zoom), math.ceil(ph * zoom)))
        rgb = img.convert("RGB")
    zoom *= rgb.size[0] / pw  # the draft may have decoded at 1/2, 1/4 or 1/8 size
    src_w, src_h = min(rgb.size[0], width / zoom), min(rgb.size[1], height / zoom)
    x = float(rng.uniform(0, rgb.size[0] - src_w))
    y = float(rng.uniform(0, rgb.size[1] - src_h))
    crop = rgb.resize((width, height), Image.Resampling.BILINEAR, box=(x, y, x + src_w, y + src_h))
    return np.ascontiguousarray(np.asarray(crop, dtype=np.uint8))


# ------------------------------------------------------------------------------------------------- backgrounds


def make_background(kind: BackgroundKind, height: int, width: int, seed: int = 0) -> np.ndarray:
    """Return a fixed-palette RGB uint8 background.

    "flat" is one sandy colour with faint noise, "gradient" a diagonal ramp from light green to dark olive, "texture" a
    periodic woven pattern with noise — the kind of surface a smooth inpainting blurs and a patch-based one can copy.
    """
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    if kind == "flat":
        base = np.empty((height, width, 3), np.float32)
        base[:] = (214, 196, 160)
        noise = 2.0
    elif kind == "gradient":
        t = ((xx / max(width - 1, 1)) + (yy / max(height - 1, 1)))[..., None] / 2.0
        base = (1 - t) * np.array([170, 215, 150], np.float32) + t * np.array([90, 100, 40], np.float32)
        noise = 2.0
    elif kind == "texture":
        weave = np.sin(xx / 3.0) * np.cos(yy / 4.0) + 0.5 * np.sin((xx + yy) / 6.0)
        base = np.stack([150 + 45 * weave, 120 + 35 * weave, 90 + 25 * weave], axis=-1)
        noise = 6.0
    else:
        raise ValueError(f"unknown background kind {kind!r}; expected flat, gradient or texture")
    base = base + rng.normal(0.0, noise, base.shape).astype(np.float32)
    return np.clip(np.rint(base), 0, 255).astype(np.uint8)


def _luma(rgb: Sequence[float] | np.ndarray) -> float:
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]


def colour_in_band(rng: np.random.Generator, light: bool) -> np.ndarray:
    """A random RGB colour whose luma lies in 175–235 (light) or 25–85 (dark)."""
    while True:
        c = rng.uniform(0, 255, 3)
        if (175 <= _luma(c) <= 235) if light else (25 <= _luma(c) <= 85):
            return c.astype(np.float32)


def grain(rng: np.random.Generator, shape: tuple[int, ...], sigma: float) -> np.ndarray:
    """Zero-mean float32 noise with standard deviation `sigma` from uniform random bytes: several times faster than
    numpy's Gaussian sampler, and at these amplitudes it looks the same as sensor grain."""
    raw = np.frombuffer(rng.bytes(int(np.prod(shape))), np.uint8).reshape(shape)
    return (raw.astype(np.float32) - np.float32(127.5)) * np.float32(sigma / 73.9)  # uniform bytes: σ = 73.9


def to_uint8(image: np.ndarray) -> np.ndarray:
    """Round a float RGB image to uint8, clipping to 0–255."""
    return np.clip(image + np.float32(0.5), 0, 255).astype(np.uint8)


def random_background(
    kind: str,
    height: int,
    width: int,
    rng: np.random.Generator,
    *,
    light: bool = True,
    strength: float = 1.0,
    photos: Sequence[Path] = (),
) -> np.ndarray:
    """Return a random RGB uint8 background of `kind` (one of `SCENE_BACKGROUNDS`).

    Args:
        light: colours in the light luma band (175–235) when True, the dark band (25–85) otherwise, so text of the
            opposite band stays legible everywhere; photos ignore it.
        strength: scales the noise / texture amplitude (1.0: grain σ 7 over ±15 blotches, weave amplitude ±20).
        photos: photo files for kind "photo".

    Raises:
        ValueError: unknown kind, or "photo" with no photos.
    """
    shape = (height, width, 3)
    if kind == "photo":
        if not photos:
            raise ValueError("background 'photo' needs photo files; none were found (see `photo_files`)")
        return load_photo_crop(photos[int(rng.integers(len(photos)))], height, width, rng)
    base_colour = colour_in_band(rng, light)
    xs = np.arange(width, dtype=np.float32)[None, :]
    ys = np.arange(height, dtype=np.float32)[:, None]
    if kind == "flat":
        base = np.broadcast_to(base_colour, shape)
        noise = 1.5
    elif kind == "gradient":
        other = colour_in_band(rng, light)
        theta = rng.uniform(0, 2 * math.pi)
        u = (xs - width / 2) * np.float32(math.cos(theta)) + (ys - height / 2) * np.float32(math.sin(theta))
        t = ((u - u.min()) / max(float(u.max() - u.min()), 1.0))[..., None]
        base = base_colour + t * (other - base_colour)
        noise = 1.5
    elif kind == "noise":
        from PIL import Image

        # Low-frequency blotches (bicubic upsampling of a coarse random field) under fine grain: paper, plaster.
        coarse = rng.integers(0, 256, (max(2, height // 24), max(2, width // 24), 3), dtype=np.uint8)
        blotch = np.asarray(Image.fromarray(coarse).resize((width, height), Image.Resampling.BICUBIC), np.float32)
        base = base_colour + (blotch - np.float32(127.5)) * np.float32(0.12 * strength)
        noise = 7.0 * strength
    elif kind == "texture":
        fx, fy, fd = rng.uniform(2.5, 5.0), rng.uniform(2.5, 5.0), rng.uniform(5.0, 9.0)
        weave = np.sin(xs / fx) * np.cos(ys / fy) + 0.5 * np.sin((xs + ys) / fd)
        tint = np.array([1.0, 0.85, 0.7], np.float32) * np.float32(20.0 * strength)
        base = base_colour + weave[..., None] * tint
        noise = 4.0 * strength
    else:
        raise ValueError(f"unknown background kind {kind!r}; expected one of {SCENE_BACKGROUNDS}")
    return to_uint8(base + grain(rng, shape, noise))


def pick_background(rng: np.random.Generator, background: str | None, photos: Sequence[Path]) -> str:
    """Validate `background`, or draw one of `SCENE_BACKGROUNDS` ("photo" only when `photos` is not empty)."""
    if background is not None:
        if background not in SCENE_BACKGROUNDS:
            raise ValueError(f"unknown background kind {background!r}; expected one of {SCENE_BACKGROUNDS}")
        return background
    kinds = SCENE_BACKGROUNDS if photos else tuple(k for k in SCENE_BACKGROUNDS if k != "photo")
    return kinds[int(rng.integers(len(kinds)))]
