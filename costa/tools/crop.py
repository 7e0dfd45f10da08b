"""Crop the image to a box (the grounded object or the user's box, with a margin) or to an aspect ratio.

What to crop to comes from the state and the subtask: a box in the state (a user box or an earlier grounding step)
gives the region, the subtask's result field ("square", "16:9", "portrait"…) the aspect ratio. With both, the crop has
the asked aspect and contains the box; with only a ratio it is the largest centred crop of that ratio; with neither
("crop out the edges") the border is trimmed by `margin` of each side. Pixels are copied, never resampled, so the
result equals the source region exactly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from costa.errors import ToolError
from costa.tools.base import Tool
from costa.tools.params import float_param
from costa.types import Box, EditState, Subtask, ToolOutput

#: Aspect ratios (width / height) named in words.
NAMED_ASPECTS = {
    "square": 1.0,
    "circle": 1.0,
    "portrait": 3 / 4,
    "landscape": 4 / 3,
    "widescreen": 16 / 9,
}
_RATIO = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[:x/]\s*(\d+(?:\.\d+)?)\s*$")


@dataclass(frozen=True)
class CropRegion:
    """The crop: columns x..x+w, rows y..y+h of the source image, in pixels."""

    x: int
    y: int
    w: int
    h: int


def parse_aspect(result: str | None) -> float | None:
    """Width/height ratio named by `result` ("square", "16:9", "4x3"), None when `result` names none.

    Raises:
        ToolError: `result` looks like a ratio but has a zero side.
    """
    if not result:
        return None
    words = result.strip().casefold()
    words = re.sub(r"\s+(?:format|shape|aspect(?:\s+ratio)?|crop)$", "", words)
    if words in NAMED_ASPECTS:
        return NAMED_ASPECTS[words]
    m = _RATIO.match(words)
    if m is None:
        return None
    a, b = float(m.group(1)), float(m.group(2))
    if a <= 0 or b <= 0:
        raise ToolError(f"cannot crop to aspect ratio {result!r}: both sides must be positive")
    return a / b


def checked_box(box: Box, width: int, height: int) -> Box:
    """`box` itself when it lies wholly inside a width × height image; else `ToolError` naming it."""
    if box.x < 0 or box.y < 0 or box.x2 > width or box.y2 > height:
        raise ToolError(
            f"cannot crop to box x={box.x} y={box.y} w={box.w} h={box.h}: it is not inside the {width}x{height} image"
        )
    return box


def _fit_aspect(x1: float, y1: float, x2: float, y2: float, aspect: float, width: int, height: int) -> CropRegion:
    """The smallest crop of `aspect` containing the rectangle (grown to the ratio around its centre), shifted and
    shrunk to fit inside the image."""
    w, h = x2 - x1, y2 - y1
    if w / h < aspect:
        w = h * aspect
    else:
        h = w / aspect
    if w > width:  # cap to the image, keeping the ratio
        w, h = width, width / aspect
    if h > height:
        w, h = height * aspect, height
    cw, ch = max(1, round(w)), max(1, round(h))
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    x = int(min(max(0, round(cx - cw / 2)), width - cw))
    y = int(min(max(0, round(cy - ch / 2)), height - ch))
    return CropRegion(x, y, cw, ch)


def plan_crop(width: int, height: int, box: Box | None, aspect: float | None, margin: float) -> CropRegion:
    """Where to crop a width × height image for a box (grown by `margin` of its sides), an aspect, or both."""
    if box is not None:
        mx, my = margin * box.w, margin * box.h
        x1, y1 = max(0.0, box.x - mx), max(0.0, box.y - my)
        x2, y2 = min(float(width), box.x2 + mx), min(float(height), box.y2 + my)
        if aspect is None:
            x, y = int(np.floor(x1)), int(np.floor(y1))
            return CropRegion(x, y, int(np.ceil(x2)) - x, int(np.ceil(y2)) - y)
        return _fit_aspect(x1, y1, x2, y2, aspect, width, height)
    if aspect is not None:
        return _fit_aspect(0, 0, width, height, aspect, width, height)
    dx, dy = round(margin * width), round(margin * height)
    if 2 * dx >= width or 2 * dy >= height:
        raise ToolError(f"cannot trim {margin:.0%} from each side of a {width}x{height} image")
    return CropRegion(dx, dy, width - 2 * dx, height - 2 * dy)


class BoxCropper(Tool):
    """Crop to the box in the state (with a margin), to the aspect ratio in the result field, or both (`box_crop`).

    Params:
        margin: share of the box's width and height added on each side (with no box and no ratio: share of the
            image trimmed from each side).
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        margin = float_param(params, "margin")
        boxes = state.artifacts.get("boxes") or ()
        box = checked_box(boxes[0], state.width, state.height) if boxes else None
        aspect = parse_aspect(subtask.result)
        if subtask.result and aspect is None and box is None:
            raise ToolError(f"cannot crop to {subtask.result!r}: not an aspect ratio (square, 16:9…) and no box given")
        if box is None and subtask.target and aspect is None:
            raise ToolError(f"cannot crop to {subtask.target!r}: no box of it in the state (ground it or draw one)")
        region = plan_crop(state.width, state.height, box, aspect, margin)
        crop = np.ascontiguousarray(state.image[region.y : region.y + region.h, region.x : region.x + region.w])
        what = f"box {box.x},{box.y},{box.w},{box.h}" if box is not None else "the image"
        ratio = f" at aspect {subtask.result}" if aspect is not None else ""
        return ToolOutput(
            image=crop,
            notes=f"cropped {what}{ratio} to x={region.x} y={region.y} w={region.w} h={region.h}",
        )
