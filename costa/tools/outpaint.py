"""Outpainting: extend the canvas beyond its borders by reflection or by PatchMatch, keeping every original pixel.

Where and how much comes from the subtask (`outpaint_margins`, shared with the outpainting check):

- `params["direction"]`: left, right, top/up, bottom/down, horizontally, vertically, or all (sides);
- `result`: an aspect ratio ("16:9": grow the axis that is short of it), a growth ("50%": the canvas grows by half
  along each chosen axis, split between its chosen sides), a margin in pixels ("64px" on each chosen side), "wider"
  or "taller";
- neither: 25 % of the width on each side, horizontally.

`ReflectOutpainter` mirrors the image into the new border and, going outwards, blends the mirror into a blurred copy
of itself so the far border does not read as an obvious mirror image (milliseconds). `PatchMatchOutpainter` fills
the new border with patches copied from the image (patchmatch-cython), each side separately on a crop reaching as
far into the image as the border is deep, at a reduced scale when a side has more than `max_hole_px` pixels (caps
the seconds, as object removal does), then cross-fades the first pixels of the fill with the mirror so the seam is
continuous (~1–3 s for a 400 px image grown by half). Before filling, content of the image in colours that no seam
band has (the letters in the middle of a plain sign) is painted over in the copy PatchMatch samples from, so the
new border continues the background instead of showing fragments of that content; the original is put back as it was.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from costa.errors import ToolError
from costa.imagestats import colour_bins, palette_near
from costa.tools.base import Tool
from costa.tools.params import float_param, int_param
from costa.types import EditState, Subtask, ToolOutput

#: Default margin on each chosen side, as a share of the image's size along that axis.
DEFAULT_SIDE_SHARE = 0.25
#: Largest accepted growth of the canvas area (new area / old area): beyond it most of the image would be invented.
MAX_AREA_GROWTH = 4.0
_DIRECTIONS: dict[str, tuple[str, ...]] = {
    "left": ("left",), "right": ("right",), "top": ("top",), "up": ("top",), "upwards": ("top",),
    "upward": ("top",), "bottom": ("bottom",), "down": ("bottom",), "downwards": ("bottom",), "downward": ("bottom",),
    "horizontally": ("left", "right"), "horizontal": ("left", "right"), "sideways": ("left", "right"),
    "vertically": ("top", "bottom"), "vertical": ("top", "bottom"),
    "all": ("top", "bottom", "left", "right"), "all sides": ("top", "bottom", "left", "right"),
    "everywhere": ("top", "bottom", "left", "right"), "outwards": ("top", "bottom", "left", "right"),
}  # fmt: skip
_ASPECT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[:/x×]\s*(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)
_PERCENT = re.compile(r"^\s*(?:by\s+)?(\d+(?:\.\d+)?)\s*%\s*$", re.IGNORECASE)
_PIXELS = re.compile(r"^\s*(?:by\s+)?(\d+)\s*(?:px|pixels?)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Margins:
    """Pixels added on each side of the image."""

    top: int = 0
    bottom: int = 0
    left: int = 0
    right: int = 0

    def new_size(self, height: int, width: int) -> tuple[int, int]:
        return height + self.top + self.bottom, width + self.left + self.right

    def sides(self) -> tuple[str, ...]:
        return tuple(s for s in ("top", "bottom", "left", "right") if getattr(self, s) > 0)


def _sides(direction: Any) -> tuple[str, ...] | None:
    if direction is None or (isinstance(direction, str) and not direction.strip()):
        return None
    key = " ".join(str(direction).lower().replace("_", " ").split())
    key = key.removeprefix("to the ").removeprefix("on the ").removeprefix("the ")
    if key not in _DIRECTIONS:
        raise ToolError(f"unknown outpainting direction {direction!r}; use one of {sorted(_DIRECTIONS)}")
    return _DIRECTIONS[key]


def _split(total: int, sides: tuple[str, ...], axis_sides: tuple[str, str]) -> dict[str, int]:
    chosen = [s for s in axis_sides if s in sides]
    if not chosen:
        return {}
    if len(chosen) == 1:
        return {chosen[0]: total}
    first = total // 2
    return {chosen[0]: first, chosen[1]: total - first}


def outpaint_margins(height: int, width: int, result: str | None, options: Mapping[str, Any] | None = None) -> Margins:
    """The margins an outpainting subtask asks for on a `height` × `width` image (see the module docstring).

    Raises:
        ToolError: an unreadable result or direction, a direction that contradicts the aspect ratio, an image that
            already has the asked aspect, or growth beyond `MAX_AREA_GROWTH` × the area.
    """
    options = options or {}  # the plan's own options (subtask.params), not a tool's attempt parameters
    sides = _sides(options.get("direction"))
    text = (result or "").strip().lower()
    horizontal, vertical = ("left", "right"), ("top", "bottom")
    add: dict[str, int] = {}
    if m := _ASPECT.match(text):
        aspect = float(m.group(1)) / max(float(m.group(2)), 1e-9)
        current = width / height
        if aspect <= 0 or abs(aspect - current) / current < 0.01:
            raise ToolError(
                f"the image is already {width}x{height} (aspect {current:.2f}), so {text} needs no outpainting"
            )
        grow_wide = aspect > current
        axis = horizontal if grow_wide else vertical
        if sides is not None and not set(sides) & set(axis):
            need = "wider" if grow_wide else "taller"
            raise ToolError(
                f"making a {width}x{height} image {text} needs a {need} canvas, not one grown {sides[0]}-wards"
            )
        total = round(height * aspect) - width if grow_wide else round(width / aspect) - height
        add = _split(total, sides or axis, axis)
    else:
        if sides is None:
            sides = vertical if text in ("taller", "higher") else horizontal
        pct = _PERCENT.match(text)
        px = _PIXELS.match(text)
        if not (pct or px or text in ("", "wider", "taller", "higher", "larger", "bigger", "more")):
            raise ToolError(
                f"cannot read how far to extend the image from {result!r} (expected e.g. 16:9, 50% or 64px)"
            )
        for axis, size in ((horizontal, width), (vertical, height)):
            chosen = [s for s in axis if s in sides]
            if not chosen:
                continue
            if pct:
                add.update(_split(round(size * float(pct.group(1)) / 100.0), sides, axis))
            elif px:
                add.update({s: int(px.group(1)) for s in chosen})
            else:
                add.update({s: round(size * DEFAULT_SIDE_SHARE) for s in chosen})
    margins = Margins(**{s: max(0, v) for s, v in add.items()})
    if not margins.sides():
        raise ToolError(f"{result!r} adds no pixels to a {width}x{height} image")
    new_h, new_w = margins.new_size(height, width)
    if new_h * new_w > MAX_AREA_GROWTH * height * width:
        raise ToolError(
            f"extending {width}x{height} to {new_w}x{new_h} would invent more than {1 - 1 / MAX_AREA_GROWTH:.0%} of "
            "the picture; ask for less"
        )
    return margins


def _plan(tool: Tool, state: EditState, subtask: Subtask) -> tuple[Margins, int, int, np.ndarray]:
    """Margins, new height and width, and the bool mask of new pixels; refuses canvases above max_pixels."""
    margins = outpaint_margins(state.height, state.width, subtask.result, subtask.params)
    new_h, new_w = margins.new_size(state.height, state.width)
    limit = tool.current_settings().max_pixels
    if new_h * new_w > limit:
        raise ToolError(
            f"the extended canvas {new_w}x{new_h} = {new_h * new_w:,} pixels is above the limit of {limit:,} "
            "(COSTA_MAX_PIXELS)"
        )
    new = np.ones((new_h, new_w), dtype=bool)
    new[margins.top : margins.top + state.height, margins.left : margins.left + state.width] = False
    return margins, new_h, new_w, new


def _mirror(image: np.ndarray, margins: Margins) -> np.ndarray:
    """The image padded by mirroring without repeating the edge pixel (any margin size)."""
    pad = ((margins.top, margins.bottom), (margins.left, margins.right), (0, 0))
    if min(image.shape[:2]) < 2:
        return np.pad(image, pad, mode="edge")
    return np.pad(image, pad, mode="reflect")


def _distance_outside(new: np.ndarray) -> np.ndarray:
    """Chessboard distance (px) of each new pixel from the original rectangle; 0 on original pixels."""
    ys, xs = np.nonzero(~new)
    y1, y2, x1, x2 = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
    yy = np.arange(new.shape[0])[:, None]
    xx = np.arange(new.shape[1])[None, :]
    dy = np.maximum(np.maximum(y1 - yy, yy - y2), 0)
    dx = np.maximum(np.maximum(x1 - xx, xx - x2), 0)
    return np.maximum(dy, dx).astype(np.float32)


#: Depth (pixels) of the image's band beside each seam whose colours a new border may continue (as the check reads it).
SOURCE_BAND_PX = 24
#: Largest share of the image in colours no seam band has that is painted over before sampling: beyond it the colours
#: are the scene itself (a photo whose palette changes across it), not content on a background.
SOURCE_CLEAN_MAX_SHARE = 0.15


def _source_without_foreign(canvas: np.ndarray, image: np.ndarray, margins: Margins) -> np.ndarray:
    """`canvas` with the original's pixels in colours none of the extended sides' seam bands have (±1 CIELAB bin),
    dilated by 2 px for anti-aliasing, painted over from their surroundings (Telea): the copy PatchMatch samples.

    Unchanged when there are none or when they exceed `SOURCE_CLEAN_MAX_SHARE` of the image.
    """
    import cv2

    h, w = image.shape[:2]
    bands = []
    for side in margins.sides():
        depth = min(SOURCE_BAND_PX, w if side in ("left", "right") else h)
        bands.append(
            {
                "left": image[:, :depth],
                "right": image[:, w - depth :],
                "top": image[:depth],
                "bottom": image[h - depth :],
            }[side]
        )
    if not bands:
        return canvas
    palette = np.unique(np.concatenate([palette_near(b) for b in bands]))
    foreign = ~np.isin(colour_bins(image), palette)
    share = float(foreign.mean())
    if share == 0.0 or share > SOURCE_CLEAN_MAX_SHARE:
        return canvas
    mask = cv2.dilate(foreign.astype(np.uint8), np.ones((5, 5), np.uint8))
    cleaned = cv2.inpaint(np.ascontiguousarray(image), mask, 3, cv2.INPAINT_TELEA)
    out = canvas.copy()
    out[margins.top : margins.top + h, margins.left : margins.left + w] = cleaned
    return out


def _place_original(out: np.ndarray, image: np.ndarray, margins: Margins) -> np.ndarray:
    out[margins.top : margins.top + image.shape[0], margins.left : margins.left + image.shape[1]] = image
    return out


class ReflectOutpainter(Tool):
    """Extend the canvas by mirroring the image, softened towards the outer edge (`reflect_outpaint`).

    Params:
        far_blur: share (0–1) of a blurred copy blended in at the outer edge (0 at the seam, rising linearly).
        blur_px: Gaussian σ in pixels of that blurred copy.
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        far_blur = float_param(params, "far_blur")
        blur_px = float_param(params, "blur_px")
        margins, _, _, new = _plan(self, state, subtask)
        mirrored = _mirror(state.image, margins)
        out = mirrored
        if far_blur > 0:
            import cv2

            blurred = cv2.GaussianBlur(mirrored, (0, 0), blur_px, borderType=cv2.BORDER_REFLECT)
            distance = _distance_outside(new)
            depth = float(max(getattr(margins, s) for s in margins.sides()))
            weight = (far_blur * np.clip(distance / depth, 0.0, 1.0))[..., None]
            out = np.rint(mirrored * (1.0 - weight) + blurred * weight).astype(np.uint8)
        out = _place_original(out, state.image, margins)
        return ToolOutput(
            image=out,
            edited_region=new,
            notes=f"reflected into {', '.join(f'{s} {getattr(margins, s)} px' for s in margins.sides())}",
        )


class PatchMatchOutpainter(Tool):
    """Extend the canvas with PatchMatch fill from the image's own patches (`patchmatch_outpaint`).

    Params:
        patch_size: side in pixels of the square patches matched (odd, 3–15).
        max_hole_px: pixel budget per side; a larger side is filled at a reduced scale and upsampled.
        seam_px: width in pixels over which the fill is cross-faded with the mirror next to the seam.
    """

    def load(self) -> None:
        import patchmatch_cython

        self._inpaint = patchmatch_cython.inpaint_pyramid

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        patch_size = int_param(params, "patch_size")
        max_hole_px = int_param(params, "max_hole_px")
        seam_px = float_param(params, "seam_px")
        margins, new_h, new_w, new = _plan(self, state, subtask)
        mirrored = _mirror(state.image, margins)
        canvas = _source_without_foreign(mirrored, state.image, margins)
        known = ~new
        scales = []
        # One side at a time, vertical sides (full height) after horizontal ones so corners draw on filled pixels.
        for side in ("left", "right", "top", "bottom"):
            depth = getattr(margins, side)
            if depth == 0:
                continue
            context = min(depth, state.width if side in ("left", "right") else state.height)
            if side == "left":
                ys, xs = slice(0, new_h), slice(0, depth + context)
            elif side == "right":
                ys, xs = slice(0, new_h), slice(new_w - depth - context, new_w)
            elif side == "top":
                ys, xs = slice(0, depth + context), slice(0, new_w)
            else:
                ys, xs = slice(new_h - depth - context, new_h), slice(0, new_w)
            crop = np.ascontiguousarray(canvas[ys, xs])
            hole = np.ascontiguousarray(~known[ys, xs])
            if not hole.any():
                continue
            if hole.all():
                raise ToolError("cannot outpaint: no image pixels next to the new border to copy from")
            scale = min(1.0, math.sqrt(max_hole_px / float(hole.sum())))
            scales.append(scale)
            try:
                filled = self._fill(crop, hole, patch_size, scale)
            except ValueError as e:
                raise ToolError(f"PatchMatch could not fill the {side} border: {e}") from e
            region = canvas[ys, xs]
            region[hole] = filled[hole]
            known[ys, xs] |= hole
        if seam_px > 0:
            weight = np.clip(_distance_outside(new) / seam_px, 0.0, 1.0)[..., None]
            canvas = np.rint(mirrored * (1.0 - weight) + canvas * weight).astype(np.uint8)
        out = _place_original(canvas, state.image, margins)
        return ToolOutput(
            image=out,
            edited_region=new,
            notes=f"PatchMatch fill of {', '.join(f'{s} {getattr(margins, s)} px' for s in margins.sides())} "
            f"(patch {patch_size}, working scale {min(scales, default=1.0):.2f})",
        )

    def _fill(self, crop: np.ndarray, hole: np.ndarray, patch_size: int, scale: float) -> np.ndarray:
        from costa.tools.removal import fill_at_scale

        return fill_at_scale(self._inpaint, crop, hole, patch_size, scale, "outpaint")
