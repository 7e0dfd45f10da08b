"""Object masks from boxes: GrabCut segmentation, and the box itself as a crude instant mask.

Boxes come from a detector or the user (pixel (x, y, w, h)); one mask is produced per box, in the same order, with the
box's label and score.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from costa.errors import InputError, ToolError
from costa.masks import largest_component
from costa.tools.base import Tool
from costa.tools.params import int_param
from costa.types import Box, EditState, Mask, Subtask, ToolOutput

# A segmentation that keeps more than this share of its box did not separate the object from anything: fail it.
MAX_BOX_SHARE = 0.95
# GrabCut models the background from pixels around the box; this much context (at least, or half the box's larger
# side) is cropped around it so the colour model is local and the run time does not grow with the image.
_MIN_CONTEXT_PX = 16


def state_boxes(state: EditState) -> tuple[Box, ...]:
    """The state's boxes clipped to the image; `ToolError` when there are none or one lies outside it."""
    boxes = state.artifacts.get("boxes")
    if not boxes:
        raise ToolError("cannot segment: no boxes in the state (a detection step or a user box must come first)")
    clipped = []
    for box in boxes:
        try:
            clipped.append(box.clip(state.width, state.height))
        except InputError as e:
            raise ToolError(str(e)) from e
    return tuple(clipped)


class GrabCutSegmenter(Tool):
    """Cut the object out of each box with OpenCV GrabCut (`grabcut_segment`).

    GrabCut fits colour models to the box (probable object) and its surroundings (background) and separates them with
    a graph cut; the largest connected piece is kept. Fails (ToolError) when nothing or nearly the whole box is kept,
    which means the object could not be told apart from its background.

    Params:
        iterations: GrabCut refinement rounds (more = slower, steadier).
        margin: pixels added on every side of the box first, for boxes that clip the object.
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        iterations = int_param(params, "iterations")
        margin = int_param(params, "margin")
        masks = tuple(self._segment(state.image, box, iterations, margin) for box in state_boxes(state))
        return ToolOutput(
            artifacts={"masks": masks},
            notes=f"GrabCut segmented {len(masks)} object(s) ({iterations} iterations, margin {margin} px)",
        )

    def _segment(self, image: np.ndarray, box: Box, iterations: int, margin: int) -> Mask:
        return Mask(grabcut_in_box(image, box, iterations, margin), box.label, box.score, box.verification)


def grabcut_in_box(image: np.ndarray, box: Box, iterations: int = 5, margin: int = 0) -> np.ndarray:
    """Bool (H, W) mask of the object GrabCut separates inside `box` (grown by `margin` px): its largest piece.

    Raises:
        ToolError: the box covers the whole image, GrabCut fails, or it keeps nothing or nearly the whole box.
    """
    import cv2

    h, w = image.shape[:2]
    x1, y1 = max(0, box.x - margin), max(0, box.y - margin)
    x2, y2 = min(w, box.x2 + margin), min(h, box.y2 + margin)
    pad = max(_MIN_CONTEXT_PX, max(x2 - x1, y2 - y1) // 2)
    cx1, cy1, cx2, cy2 = max(0, x1 - pad), max(0, y1 - pad), min(w, x2 + pad), min(h, y2 + pad)
    crop = np.ascontiguousarray(image[cy1:cy2, cx1:cx2])
    # GrabCut treats everything outside the rectangle as known background; a rectangle touching the crop edge on
    # a side leaves no background there, which is fine, but it needs some background somewhere.
    rect = (x1 - cx1, y1 - cy1, x2 - x1, y2 - y1)
    if rect[2] * rect[3] >= (cx2 - cx1) * (cy2 - cy1):
        raise ToolError(f"cannot segment box {box.x},{box.y},{box.w},{box.h}: it covers the whole image")
    gc_mask = np.zeros(crop.shape[:2], np.uint8)
    bgd_model = np.zeros((1, 65), np.float64)
    fgd_model = np.zeros((1, 65), np.float64)
    cv2.setRNGSeed(0)  # GrabCut's k-means initialisation draws from OpenCV's global RNG: seed it for repeatability.
    try:
        cv2.grabCut(crop, gc_mask, rect, bgd_model, fgd_model, iterations, cv2.GC_INIT_WITH_RECT)
    except cv2.error as e:
        raise ToolError(f"GrabCut failed on box {box.x},{box.y},{box.w},{box.h}: {e}") from e
    fg = (gc_mask == cv2.GC_FGD) | (gc_mask == cv2.GC_PR_FGD)
    fg = largest_component(fg)
    area = int(fg.sum())
    box_area = rect[2] * rect[3]
    if area == 0:
        raise ToolError(f"GrabCut found no object in box {box.x},{box.y},{box.w},{box.h}")
    if area > MAX_BOX_SHARE * box_area:
        raise ToolError(
            f"GrabCut kept {area / box_area:.0%} of box {box.x},{box.y},{box.w},{box.h}: "
            "the object could not be separated from its background"
        )
    full = np.zeros((h, w), dtype=bool)
    full[cy1:cy2, cx1:cx2] = fg
    return full


class BoxMasker(Tool):
    """Use each box itself as its object's mask (`box_mask`): instant, but includes the background in the box."""

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        masks = tuple(
            Mask(b.to_mask(state.height, state.width), b.label, b.score, b.verification) for b in state_boxes(state)
        )
        return ToolOutput(artifacts={"masks": masks}, notes=f"used {len(masks)} box(es) as masks")
