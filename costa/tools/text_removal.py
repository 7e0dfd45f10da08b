"""Remove text by filling its letters from the surrounding background.

Both tools build one mask of the matched letters (pixels that differ from the background fitted around each box, grown
by `dilate`) and fill only that mask, so the background between letters is kept and the fill has little to invent.
With no target (or "all text") every detected line is removed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from costa.errors import InputError, ToolError
from costa.glyphs import boxes_mask, locate_text
from costa.masks import dilate_mask
from costa.signstyle import measure_sign
from costa.tools.base import Tool
from costa.tools.params import float_param, int_param
from costa.tools.text_edit import inpaint_telea
from costa.types import EditState, Subtask, TextRegion, ToolOutput


def text_mask(state: EditState, target: str | None, dilate: int) -> np.ndarray:
    """Return the bool (H, W) mask of the letters of every occurrence of `target`, grown by `dilate` pixels.

    The letters are measured inside each box (`costa.signstyle.measure_sign`): their outline and drop shadow are
    included, and pixels beyond the sign's panel (wall or photo inside a loose OCR box) are left alone. A box whose
    letters cannot be told from the background (too faint) is masked whole, so it is still removed.

    Raises:
        ToolError: no text regions in the state, or none matches the target.
    """
    regions = state.artifacts.get("text_regions")
    if not regions:
        raise ToolError("no text regions in the edit state: text detection must run before text removal")
    image = state.image
    height, width = image.shape[:2]
    mask = np.zeros((height, width), dtype=bool)
    keep = np.zeros((height, width), dtype=bool)
    for _, box in locate_text(image, tuple(r for r in regions if isinstance(r, TextRegion)), target):
        sign = measure_sign(image, box)
        box = sign.box
        if sign.letters.any():
            mask[box.y : box.y2, box.x : box.x2] |= sign.letters
            if sign.outside is not None:
                keep[box.y : box.y2, box.x : box.x2] |= dilate_mask(sign.outside, 1)
        else:
            mask |= boxes_mask([box], height, width)
    return dilate_mask(mask, dilate) & ~keep


class TeleaTextRemover(Tool):
    """Remove text fast with OpenCV's Telea inpainting (smooth fill from the edges inward; about 10–50 ms). Best on
    flat or smoothly shaded backgrounds; textures come out blurred.

    Params: `radius` (inpainting neighbourhood in pixels, default 3, retry 7), `dilate` (pixels added around the
    letters, default 2, retry 5).
    """

    def load(self) -> None:
        import cv2  # noqa: F401  (fail early, in load, if OpenCV is missing)

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        mask = text_mask(state, subtask.target, int_param(params, "dilate"))
        out = inpaint_telea(state.image, mask, float_param(params, "radius"))
        return ToolOutput(image=out, edited_region=mask, notes=f"removed {subtask.target or 'all text'!r} (Telea)")


class PatchMatchTextRemover(Tool):
    """Remove text by copying patches of the surrounding background into the letters (PatchMatch): slower than Telea
    (about 0.3–2 s) but keeps textures such as paper grain, fabric or noise.

    Params: `dilate` (pixels added around the letters, default 3, retry 6), `patch_size` (pixels, odd, default 7,
    retry 5). The fill is seeded, so the same input gives the same output.
    """

    def load(self) -> None:
        import patchmatch_cython  # noqa: F401  (fail early, in load, if the package is missing)

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        from patchmatch_cython import inpaint_pyramid

        patch = int_param(params, "patch_size")
        if patch % 2 == 0:
            raise InputError(f"parameter 'patch_size' must be odd, got {patch}")
        mask = text_mask(state, subtask.target, int_param(params, "dilate"))
        image = state.image
        height, width = mask.shape
        ys, xs = np.nonzero(mask)
        # Fill a crop around the letters: PatchMatch time grows with the image, and nearby texture is the best source.
        margin = max(32, 2 * int(ys.max() - ys.min() + 1), 4 * patch)
        y1, y2 = max(0, int(ys.min()) - margin), min(height, int(ys.max()) + margin + 1)
        x1, x2 = max(0, int(xs.min()) - margin), min(width, int(xs.max()) + margin + 1)
        crop = np.ascontiguousarray(image[y1:y2, x1:x2])
        crop_mask = mask[y1:y2, x1:x2]
        try:
            filled = inpaint_pyramid(crop, crop_mask, patch_size=patch, seed=0)
        except (ValueError, IndexError) as e:
            raise ToolError(f"PatchMatch could not fill the text: {e}") from e
        out = image.copy()
        region = out[y1:y2, x1:x2]
        region[crop_mask] = np.asarray(filled, dtype=np.uint8)[crop_mask]
        return ToolOutput(image=out, edited_region=mask, notes=f"removed {subtask.target or 'all text'!r} (PatchMatch)")


def ring_colour(image: np.ndarray, x1: int, y1: int, x2: int, y2: int, ring: int) -> np.ndarray:
    """Median RGB of the pixels in a `ring`-pixel band just outside rows y1:y2, columns x1:x2 (clipped to the image);
    of the box's own border pixels when the box fills the image."""
    height, width = image.shape[:2]
    oy1, oy2, ox1, ox2 = max(0, y1 - ring), min(height, y2 + ring), max(0, x1 - ring), min(width, x2 + ring)
    band = np.ones((oy2 - oy1, ox2 - ox1), dtype=bool)
    band[y1 - oy1 : y2 - oy1, x1 - ox1 : x2 - ox1] = False
    pixels = image[oy1:oy2, ox1:ox2][band]
    if len(pixels) == 0:
        inner = image[y1:y2, x1:x2]
        pixels = np.concatenate([inner[0], inner[-1], inner[:, 0], inner[:, -1]])
    return np.median(pixels.reshape(-1, image.shape[2]), axis=0).round().astype(np.uint8)


class PaintOverTextRemover(Tool):
    """Paint each matched text box with the flat (median) colour of the ring of pixels around it (`text_paint_over`):
    the paper's cheap, low-quality removal. About a millisecond; clean on flat backgrounds, a visible flat patch on
    gradients and textures (the removal checks fail it there).

    Params: `ring` (band width in pixels sampled around each box, default 3, retry 6), `grow` (pixels added around
    each box before painting, default 1, retry 3).
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        ring, grow = int_param(params, "ring"), int_param(params, "grow")
        regions = state.artifacts.get("text_regions")
        if not regions:
            raise ToolError("no text regions in the edit state: text detection must run before text removal")
        image = state.image
        height, width = image.shape[:2]
        out = image.copy()
        edited = np.zeros((height, width), dtype=bool)
        located = locate_text(image, tuple(r for r in regions if isinstance(r, TextRegion)), subtask.target)
        for _, box in located:
            x1, y1 = max(0, box.x - grow), max(0, box.y - grow)
            x2, y2 = min(width, box.x2 + grow), min(height, box.y2 + grow)
            out[y1:y2, x1:x2] = ring_colour(image, x1, y1, x2, y2, ring)
            edited[y1:y2, x1:x2] = True
        if not edited.any():
            raise ToolError(f"no text box matched {subtask.target or 'any text'!r}")
        return ToolOutput(image=out, edited_region=edited, notes=f"painted over {len(located)} text box(es) flat")
