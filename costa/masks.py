"""Operations on boolean (H, W) masks shared by the object tools and their checks.

Masks are `bool` numpy arrays; distances are in pixels. OpenCV is imported inside the functions that need it so that
the checks, which import this module, stay cheap to import.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from costa.errors import ToolError
from costa.types import Mask


def union_masks(masks: Iterable[Mask | np.ndarray], height: int, width: int) -> np.ndarray:
    """Return the union of `masks` as one bool (height, width) array.

    Raises:
        ToolError: a mask's shape differs from the image's (e.g. masks from before an upscale).
    """
    out = np.zeros((height, width), dtype=bool)
    for m in masks:
        data = m.data if isinstance(m, Mask) else np.asarray(m, dtype=bool)
        if data.shape != (height, width):
            raise ToolError(f"mask shape {data.shape} does not match the {width}x{height} image")
        out |= data
    return out


def dilate_mask(mask: np.ndarray, radius_px: float, *, square: bool = False) -> np.ndarray:
    """Grow `mask` by `radius_px` pixels (rounded to whole pixels; ≤ 0 returns a copy).

    A disc by default; `square=True` grows by a (2r+1)² square, i.e. covers every pixel whose square window of that
    size touches the mask (what windowed measures such as SSIM need).
    """
    r = round(radius_px)
    if r <= 0:
        return mask.copy()
    import cv2

    kind = cv2.MORPH_RECT if square else cv2.MORPH_ELLIPSE
    kernel = cv2.getStructuringElement(kind, (2 * r + 1, 2 * r + 1))
    return cv2.dilate(mask.astype(np.uint8), kernel).astype(bool)


def erode_mask(mask: np.ndarray, radius_px: float) -> np.ndarray:
    """Shrink `mask` by `radius_px` pixels with a disc (≤ 0 returns a copy)."""
    r = round(radius_px)
    if r <= 0:
        return mask.copy()
    import cv2

    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    return cv2.erode(mask.astype(np.uint8), kernel, borderType=cv2.BORDER_REPLICATE).astype(bool)


def largest_component(mask: np.ndarray) -> np.ndarray:
    """Keep only the largest 8-connected component of `mask` (an empty mask stays empty)."""
    import cv2

    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    if n <= 1:
        return np.zeros_like(mask, dtype=bool)
    biggest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return labels == biggest


def ring_around(mask: np.ndarray, width_px: float) -> np.ndarray:
    """Pixels within `width_px` of `mask` but not in it: the surroundings a fill should agree with."""
    return dilate_mask(mask, width_px) & ~mask


def bounding_slice(mask: np.ndarray, pad_px: int) -> tuple[slice, slice]:
    """Row and column slices of `mask`'s bounding box grown by `pad_px` and clipped to the image.

    Used to run expensive fills and segmentations on a crop around the object rather than the whole image.
    """
    ys, xs = np.nonzero(mask)
    h, w = mask.shape
    if len(xs) == 0:
        return slice(0, h), slice(0, w)
    y1, y2 = max(0, int(ys.min()) - pad_px), min(h, int(ys.max()) + pad_px + 1)
    x1, x2 = max(0, int(xs.min()) - pad_px), min(w, int(xs.max()) + pad_px + 1)
    return slice(y1, y2), slice(x1, x2)
