"""Object removal by filling the masked object from its surroundings.

Two fills with a real speed/quality trade-off: `PatchMatchRemover` copies patches of nearby texture (coarse-to-fine
PatchMatch; ~1 s of CPU for a 100 px object, at most ~4 s for large ones thanks to a hole-pixel budget; keeps
texture), `TeleaRemover` propagates border colours inward (OpenCV Telea; 20–200 ms, but smooths texture into a
blur). Both dilate the mask first so the object's
anti-aliased rim is not left behind as a ghost outline, and return that dilated mask as `edited_region`; pixels
outside it are returned unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from costa.errors import ToolError
from costa.masks import bounding_slice, dilate_mask, union_masks
from costa.tools.base import Tool
from costa.tools.params import float_param, int_param
from costa.types import EditState, Subtask, ToolOutput

# PatchMatch runs on a crop around the hole: context of at least this many pixels, or the hole's own size if larger.
# On a 1024x768 image with a 120 px hole this halves the time at the same fill quality (measured: 2.5 s → 1.3 s).
_MIN_CONTEXT_PX = 32
# PatchMatch time grows with the hole's pixel count (and the pyramid's depth): a 130 000 px hole takes ~45 s on two
# CPU cores. Above this budget the crop is filled at a reduced scale and upsampled (~6 s for that hole), trading
# fine texture detail for a bounded run time.
_DEFAULT_MAX_HOLE_PX = 25_000


def _hole(state: EditState, dilate_px: float) -> np.ndarray:
    masks = state.artifacts.get("masks")
    if not masks:
        raise ToolError("cannot remove: no object mask in the state (a segmentation step must run first)")
    mask = union_masks(masks, state.height, state.width)
    if not mask.any():
        raise ToolError("cannot remove: the object mask is empty")
    hole = dilate_mask(mask, dilate_px)
    if hole.all():
        raise ToolError("cannot remove: the object covers the whole image, so there is nothing to fill from")
    return hole


def _compose(image: np.ndarray, filled: np.ndarray, hole: np.ndarray, ys: slice, xs: slice) -> np.ndarray:
    out = image.copy()
    sub = out[ys, xs]
    inside = hole[ys, xs]
    sub[inside] = filled[inside]
    return out


class PatchMatchRemover(Tool):
    """Remove the masked object by PatchMatch fill from the surrounding texture (`remove_patchmatch`).

    Params:
        dilate: pixels the mask is grown by before filling.
        patch_size: side in pixels of the square patches matched (odd, 3–15).
        max_hole_px: hole pixel budget; larger holes are filled at a reduced scale and upsampled.
    """

    def load(self) -> None:
        import patchmatch_cython

        self._inpaint = patchmatch_cython.inpaint_pyramid

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        dilate = float_param(params, "dilate")
        patch_size = int_param(params, "patch_size")
        max_hole_px = int_param(params, "max_hole_px")
        hole = _hole(state, dilate)
        ys_all, xs_all = np.nonzero(hole)
        extent = max(int(ys_all.max() - ys_all.min() + 1), int(xs_all.max() - xs_all.min() + 1))
        ys, xs = bounding_slice(hole, pad_px=max(_MIN_CONTEXT_PX, extent))
        crop = np.ascontiguousarray(state.image[ys, xs])
        crop_hole = np.ascontiguousarray(hole[ys, xs])
        if crop_hole.all():
            raise ToolError("cannot remove: no pixels around the object to fill from")
        scale = min(1.0, math.sqrt(max_hole_px / float(crop_hole.sum())))
        try:
            filled = self._fill(crop, crop_hole, patch_size, scale)
        except ValueError as e:
            raise ToolError(f"PatchMatch could not fill the hole: {e}") from e
        return ToolOutput(
            image=_compose(state.image, filled, hole, ys, xs),
            edited_region=hole,
            notes=f"filled {int(hole.sum())} px by PatchMatch "
            f"(patch {patch_size}, dilate {dilate:g}, working scale {scale:.2f})",
        )

    def _fill(self, crop: np.ndarray, hole: np.ndarray, patch_size: int, scale: float) -> np.ndarray:
        return fill_at_scale(self._inpaint, crop, hole, patch_size, scale, "remove")


def fill_at_scale(
    inpaint: Callable[..., np.ndarray], crop: np.ndarray, hole: np.ndarray, patch_size: int, scale: float, action: str
) -> np.ndarray:
    """Fill `hole` in `crop` with PatchMatch `inpaint`, at `scale` (< 1: downsample, fill, upsample back with cubic
    interpolation) — how removal and outpainting cap PatchMatch's seconds on large holes.

    Args:
        patch_size: PatchMatch patch side in pixels.
        scale: working scale in (0, 1].
        action: the verb for the error message ("remove", "outpaint").
    """
    if scale >= 1.0:
        return inpaint(crop, hole, patch_size=patch_size, seed=0)
    import cv2

    h, w = hole.shape
    size = (max(2 * patch_size, round(w * scale)), max(2 * patch_size, round(h * scale)))
    small = cv2.resize(crop, size, interpolation=cv2.INTER_AREA)
    # A small pixel is part of the hole if any full-size hole pixel falls in it, so no object colour leaks in.
    small_hole = cv2.resize(hole.astype(np.float32), size, interpolation=cv2.INTER_AREA) > 0
    if small_hole.all():
        raise ToolError(f"cannot {action}: no known pixels left around the hole at the reduced scale")
    filled = inpaint(np.ascontiguousarray(small), small_hole, patch_size=patch_size, seed=0)
    return cv2.resize(filled, (w, h), interpolation=cv2.INTER_CUBIC)


class TeleaRemover(Tool):
    """Remove the masked object by fast Telea inpainting (`remove_telea`): smooth fills, blurs texture.

    Params:
        radius: pixels around each hole pixel the inpainting draws from.
        dilate: pixels the mask is grown by before filling.
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        radius = float_param(params, "radius")
        dilate = float_param(params, "dilate")
        hole = _hole(state, dilate)

        import cv2

        filled = cv2.inpaint(state.image, hole.astype(np.uint8) * 255, radius, cv2.INPAINT_TELEA)
        full = (slice(0, state.height), slice(0, state.width))
        return ToolOutput(
            image=_compose(state.image, filled, hole, *full),
            edited_region=hole,
            notes=f"filled {int(hole.sum())} px by Telea inpainting (radius {radius:g}, dilate {dilate:g})",
        )
