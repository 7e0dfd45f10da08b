"""Turn what the user pointed at (clicks, a typed box, a brush mask) into a `UserRegion` the tools can start from.

The embedded backend cannot find an arbitrary noun by itself, so the user points:

- one click selects the connected region around it whose colour changes smoothly (a flood fill that follows shading
  and stops at edges), given as a mask and its box when it can be an object (`click_outline`); otherwise the click
  stands alone and the tools segment from it;
- two or more clicks span a box (their bounding box);
- a typed box "x,y,w,h" is used as it is;
- a painted brush layer (or a mask image, white = region) is the region itself, given as a mask and its box.

Pure: image and coordinates in, region out.

>>> import numpy as np
>>> img = np.zeros((40, 60, 3), np.uint8); img[10:20, 30:50] = (200, 30, 30)
>>> r = region_from_pointing(img, [(35, 15)])
>>> (r.boxes[0].x, r.boxes[0].y, r.boxes[0].w, r.boxes[0].h), r.masks[0].area
((30, 10, 20, 10), 200)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from costa.clicks import click_outline
from costa.errors import InputError
from costa.images import parse_box
from costa.turn.records import UserRegion
from costa.types import Box, Mask, Point

#: Smallest box side spanned by clicks, in pixels (two clicks on almost the same spot still make a usable box).
MIN_BOX_SIDE = 8
#: Alpha (0–255) from which a pixel of a painted RGBA layer counts as painted (anti-aliased stroke edges are half in);
#: in a layer without transparency, the brightest channel must reach it (white = region, black = not).
BRUSH_LEVEL = 128
#: Label of a brush mask; `describe_region` names masks by it.
BRUSH_LABEL = "user brush"


def _painted(layer: np.ndarray) -> np.ndarray:
    """The painted pixels of one layer: (H, W) bool, grey, RGB (brightest channel) or RGBA (alpha when not opaque)."""
    a = np.asarray(layer)
    if a.dtype == bool and a.ndim == 2:
        return a
    if not (a.ndim == 2 or (a.ndim == 3 and a.shape[2] in (1, 3, 4))) or not np.issubdtype(a.dtype, np.number):
        raise InputError(f"a brush layer must be a grey, RGB or RGBA image, got shape {a.shape} dtype {a.dtype}")
    if np.issubdtype(a.dtype, np.floating) and a.size and float(np.nanmax(a)) <= 1.0:
        a = a * 255.0  # 0–1 floats
    if a.ndim == 2:
        return a >= BRUSH_LEVEL
    if a.shape[2] == 4 and (a[..., 3] < 255).any():
        return a[..., 3] >= BRUSH_LEVEL  # strokes on a transparent layer: the colour does not matter
    return a[..., :3].max(axis=2) >= BRUSH_LEVEL


def brush_mask(layers: np.ndarray | Sequence[np.ndarray], width: int, height: int) -> Mask:
    """The region painted on one brush layer (or the union of several), checked against the image size.

    A layer is an RGBA array whose opaque pixels are the strokes (as an image editor's brush layer is), or a mask
    image without transparency in which white is the region and black is not.

    Raises:
        InputError: no layer, a layer of another size than the width x height image, or nothing painted.

    >>> layer = np.zeros((4, 6, 4), np.uint8); layer[1:3, 2:5] = (255, 0, 140, 255)
    >>> brush_mask(layer, 6, 4).area
    6
    """
    stack = [layers] if isinstance(layers, np.ndarray) else list(layers)
    if not stack:
        raise InputError("no brush strokes: paint over the target first")
    data = np.zeros((height, width), bool)
    for layer in stack:
        painted = _painted(layer)
        if painted.shape != (height, width):
            raise InputError(
                f"the brush mask is {painted.shape[1]}x{painted.shape[0]} but the current image is {width}x{height} "
                "(the image changed?): clear the brush and paint it again"
            )
        data |= painted
    if not data.any():
        raise InputError("the brush mask is empty: paint over the target first")
    return Mask(data, label=BRUSH_LABEL)


def region_from_pointing(
    image: np.ndarray, clicks: Sequence[tuple[int, int]] = (), box_text: str = "", brush: Mask | None = None
) -> UserRegion:
    """The region for one turn from clicks (image pixels), an optional typed box "x,y,w,h" and a brush mask.

    The typed box wins over the brush mask's box, which wins over the clicks' box; the brush mask comes first among
    the masks.
    """
    h, w = image.shape[:2]
    boxes: list[Box] = []
    masks: list[Mask] = []
    points = tuple(Point(int(x), int(y)) for x, y in clicks)
    for p in points:
        if not (0 <= p.x < w and 0 <= p.y < h):
            raise InputError(f"click {p.x},{p.y} is outside the {w}x{h} image")
    if box_text and box_text.strip():
        boxes.append(parse_box(box_text, w, h))
    if brush is not None:
        if brush.data.shape != (h, w):
            raise InputError(
                f"the brush mask is {brush.data.shape[1]}x{brush.data.shape[0]} but the current image is {w}x{h} "
                "(the image changed?): clear the brush and paint it again"
            )
        brush_box = brush.bbox()
        if brush_box is None:
            raise InputError("the brush mask is empty: paint over the target first")
        masks.append(brush)
        if not boxes:
            boxes.append(Box(brush_box.x, brush_box.y, brush_box.w, brush_box.h, label=BRUSH_LABEL))
    if len(points) == 1:
        mask = click_outline(image, points[0].x, points[0].y)
        box = mask.bbox() if mask is not None else None
        if mask is not None and box is not None:
            masks.append(mask)
            if not boxes:
                boxes.append(Box(box.x, box.y, box.w, box.h, label="user click"))
    elif len(points) >= 2:
        x1, x2 = min(p.x for p in points), max(p.x for p in points)
        y1, y2 = min(p.y for p in points), max(p.y for p in points)
        x1, y1 = max(0, min(x1, w - MIN_BOX_SIDE)), max(0, min(y1, h - MIN_BOX_SIDE))
        x2, y2 = min(w, max(x2, x1 + MIN_BOX_SIDE)), min(h, max(y2, y1 + MIN_BOX_SIDE))
        if not boxes:
            boxes.append(Box(x1, y1, x2 - x1, y2 - y1, label="user clicks"))
    return UserRegion(boxes=tuple(boxes), masks=tuple(masks), points=points)


def describe_region(region: UserRegion) -> str:
    """One line for the chat: what the user pointed at."""
    parts = []
    for b in region.boxes:
        parts.append(f"box {b.x},{b.y},{b.w},{b.h}")
    for m in region.masks:
        parts.append(f"{'brush mask' if m.label == BRUSH_LABEL else 'clicked region'} of {m.area:,} px")
    if region.points and not region.masks and len(region.points) >= 2:
        parts.append(f"{len(region.points)} clicks")
    elif len(region.points) == 1 and not region.masks:
        parts.append(f"click at {region.points[0].x},{region.points[0].y}")
    return "; ".join(parts)
