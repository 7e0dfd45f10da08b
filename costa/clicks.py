"""One click → the object's outline it selects, when that outline can be trusted.

`click_region` is the connected region around the click whose colour changes smoothly (a flood fill that follows
shading and stops at edges); `click_outline` offers it only when it can be an object. Used by `costa.pointing` (what
the user pointed at) and by `costa.constraints` (an independent outline to confirm a one-click mask against).

Pure: image and coordinates in, mask out.

>>> import numpy as np
>>> img = np.zeros((40, 60, 3), np.uint8); img[10:20, 30:50] = (200, 30, 30)
>>> click_region(img, 35, 15).area, click_outline(img, 35, 15).area
(200, 200)
"""

from __future__ import annotations

import numpy as np

from costa.errors import InputError
from costa.types import Mask

#: Largest colour step (per channel, 0–255) between neighbouring pixels that a flood fill from a click still follows:
#: small enough to stop at an object's edge, large enough to follow smooth shading across it.
FLOOD_TOLERANCE = 8
#: A click region covering more than this share of the image selected the background, not an object.
MAX_CLICK_SHARE = 0.6
#: A click's own region is offered as the object's outline only when its contour has at least this many times the
#: colour change of its surroundings (`costa.checks.common.boundary_alignment`; the segmentation check's full mark).
OUTLINE_ALIGNED = 2.0


def click_region(image: np.ndarray, x: int, y: int, tolerance: int = FLOOD_TOLERANCE) -> Mask:
    """The connected region of similar colour around pixel (x, y).

    Raises:
        InputError: the click is outside the image, or the region is most of the image (a background click).
    """
    import cv2

    h, w = image.shape[:2]
    if not (0 <= x < w and 0 <= y < h):
        raise InputError(f"click {x},{y} is outside the {w}x{h} image")
    flood = np.zeros((h + 2, w + 2), np.uint8)
    flags = 8 | cv2.FLOODFILL_MASK_ONLY | (255 << 8)  # floating range: compare neighbours, not the seed
    lo = up = (tolerance,) * 3
    cv2.floodFill(np.array(image, dtype=np.uint8, copy=True), flood, (int(x), int(y)), (0, 0, 0), lo, up, flags)
    data = flood[1:-1, 1:-1] > 0
    if data.sum() > MAX_CLICK_SHARE * h * w:
        raise InputError(
            f"the click at {x},{y} selected {data.mean():.0%} of the image (the background?): click on the object "
            "itself, or click two opposite corners to span a box"
        )
    return Mask(data, label="user click")


def click_outline(image: np.ndarray, x: int, y: int) -> Mask | None:
    """The click's own region (`click_region`) when it can be an object, else None and the click stands alone.

    A flood fill that leaked over a textured photo (a third of a street from a click on a coat), or caught a few
    pixels of a highlight (155 px of a dress), says nothing about the object's extent: it is not offered as the
    region (the tools then segment from the click itself, and a mask nothing confirms is shown as a candidate, never
    used as a guess). Offered are regions the checks would accept (`costa.checks.region.too_small`, the one size
    rule) whose outline follows the image's edges (`boundary_alignment` ≥ `OUTLINE_ALIGNED`: flat objects score
    20 and more, the coffee in a cup 3.7, floods leaking through photos 1.0–1.7).
    """
    from costa.checks.common import boundary_alignment
    from costa.checks.region import too_small

    try:
        mask = click_region(image, x, y)
    except InputError:
        h, w = image.shape[:2]
        if not (0 <= x < w and 0 <= y < h):
            raise
        return None
    if too_small(mask.data) is not None:
        return None
    aligned = boundary_alignment(image, mask.data)
    return mask if aligned is not None and aligned >= OUTLINE_ALIGNED else None
