"""Privacy blur: make what the masks cover unrecognisable, by Gaussian blur or by pixelation.

Both tools read the union of the state's masks (a face box from `haar_faces` → `box_mask`, a person, a click, a brush
mask) and change pixels only inside it; the blur strength and block size scale with each region's size, so a 40 px
face and a 400 px person are obscured alike. Retries strengthen the effect.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from costa.errors import ToolError
from costa.masks import union_masks
from costa.tools.base import Tool
from costa.tools.params import float_param
from costa.types import EditState, Mask, Subtask, ToolOutput

#: Least blur σ and pixel block side, in pixels, whatever the region's size.
MIN_SIGMA_PX = 2.0
MIN_BLOCK_PX = 4


def _regions(state: EditState, action: str) -> tuple[np.ndarray, list[np.ndarray]]:
    """The union of the masks and each mask's own pixels (overlaps are processed once, by the first mask)."""
    masks = state.artifacts.get("masks")
    if not masks:
        raise ToolError(f"cannot {action}: no region in the state (a detection, a box, a click or a brush mask first)")
    union = union_masks(masks, state.height, state.width)
    if not union.any():
        raise ToolError(f"cannot {action}: the region mask is empty")
    if union.all():
        raise ToolError(f"cannot {action}: the region covers the whole image; mark the part to hide")
    parts, done = [], np.zeros_like(union)
    for m in masks:
        data = (m.data if isinstance(m, Mask) else np.asarray(m, bool)) & ~done
        if data.any():
            parts.append(data)
            done |= data
    return union, parts


def _bbox(mask: np.ndarray) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(mask)
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


class GaussianRegionBlurrer(Tool):
    """Blur each masked region with a Gaussian whose σ is a share of the region's shorter side (`blur_region`).

    Params:
        sigma_share: σ as a share of the region's shorter side (0.15 of a 100 px face = σ 15 px).
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        share = float_param(params, "sigma_share")
        union, parts = _regions(state, "blur")

        import cv2

        out = state.image.copy()
        sigmas = []
        for part in parts:
            x1, y1, x2, y2 = _bbox(part)
            sigma = max(MIN_SIGMA_PX, share * min(x2 - x1, y2 - y1))
            pad = int(np.ceil(3 * sigma))
            cx1, cy1 = max(0, x1 - pad), max(0, y1 - pad)
            cx2, cy2 = min(state.width, x2 + pad), min(state.height, y2 + pad)
            crop = state.image[cy1:cy2, cx1:cx2]
            blurred = cv2.GaussianBlur(crop, (0, 0), sigmaX=sigma, borderType=cv2.BORDER_REFLECT)
            inside = part[cy1:cy2, cx1:cx2]
            out[cy1:cy2, cx1:cx2][inside] = blurred[inside]
            sigmas.append(sigma)
        return ToolOutput(
            image=out,
            edited_region=union,
            notes=f"blurred {len(parts)} region(s), {int(union.sum())} px, σ {min(sigmas):.1f}–{max(sigmas):.1f} px",
        )


class RegionPixelator(Tool):
    """Pixelate each masked region into square blocks of its mean colour (`pixelate_region`).

    Blocks are aligned to the region's bounding box; their side is a share of the region's shorter side.

    Params:
        block_share: block side as a share of the region's shorter side (0.2 → a 5-block-wide face; 8 blocks
            across still let a face detector find the face).
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        share = float_param(params, "block_share")
        union, parts = _regions(state, "pixelate")
        out = state.image.copy()
        blocks = []
        for part in parts:
            x1, y1, x2, y2 = _bbox(part)
            block = max(MIN_BLOCK_PX, round(share * min(x2 - x1, y2 - y1)))
            crop = state.image[y1:y2, x1:x2].astype(np.float32)
            h, w = crop.shape[:2]
            ph, pw = -h % block, -w % block
            padded = np.pad(crop, ((0, ph), (0, pw), (0, 0)), mode="edge")
            gh, gw = padded.shape[0] // block, padded.shape[1] // block
            means = padded.reshape(gh, block, gw, block, 3).mean(axis=(1, 3))
            tiled = np.repeat(np.repeat(means, block, axis=0), block, axis=1)[:h, :w]
            tiled = np.clip(np.rint(tiled), 0, 255).astype(np.uint8)
            inside = part[y1:y2, x1:x2]
            out[y1:y2, x1:x2][inside] = tiled[inside]
            blocks.append(block)
        return ToolOutput(
            image=out,
            edited_region=union,
            notes=f"pixelated {len(parts)} region(s), {int(union.sum())} px, blocks {min(blocks)}–{max(blocks)} px",
        )
