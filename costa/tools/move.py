"""Move or resize an object: cut it out, paste it shifted or scaled, inpaint the hole and the seams (`sd_object_move`).

The tool class is `costa.tools.inpaint.SdObjectMover`; this module holds its geometry. The request is parsed from the
subtask into a typed `Relocation` (shift as shares of the image's width and height, scale factor); phrasing it cannot
read ("next to the sofa", "rotate it") is a `ToolError`, never a guess. The object's own pixels are pasted exactly
(resampled only when scaled); the hole it leaves and a thin ring around its new outline are inpainted with the shared
Stable Diffusion inpainting pipeline (the same loaded instance as `sd_inpaint`), at native resolution in a window
around them, so pixels outside that window are returned bit for bit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from costa.errors import ToolError
from costa.types import Subtask

_DIRECTIONS = {"left": (-1, 0), "right": (1, 0), "up": (0, -1), "down": (0, 1), "top": (0, -1), "bottom": (0, 1)}
_AMOUNTS = {"slightly": 0.5, "a little": 0.5, "a bit": 0.5, "a lot": 2.0, "far": 2.0, "much": 2.0}
_FILLER = re.compile(
    r"\b(?:to|the|move|moved|it|toward|towards|of|image|picture|photo|frame|side|corner|edge|further|more|and|"
    r"upward|upwards|downward|downwards|leftward|rightward|by)\b"
)
_SIZE_WORDS = {"larger": True, "bigger": True, "enlarged": True, "smaller": False, "shrunk": False, "tiny": False}


@dataclass(frozen=True)
class Relocation:
    """Where the object goes: shifted by (dx, dy) shares of the image's width and height, scaled by `scale`
    about its centre (1.0 = same size)."""

    dx: float = 0.0
    dy: float = 0.0
    scale: float = 1.0


def _move_request(subtask: Subtask, shift: float) -> Relocation:
    if subtask.params.get("relation") or subtask.params.get("anchor"):
        raise ToolError(
            f"cannot move to a place ({subtask.params.get('relation')} {subtask.params.get('anchor')}): "
            "only directions (left, right, up, down, top left…) are supported"
        )
    text = str(subtask.params.get("direction") or subtask.result or "").casefold().strip()
    if not text:
        raise ToolError("object move needs a direction (left, right, up, down…)")
    amount = shift
    percent = re.search(r"(\d+(?:\.\d+)?)\s*%", text)
    if percent:
        amount = float(percent.group(1)) / 100.0
        text = text.replace(percent.group(0), " ")
    for words, factor in _AMOUNTS.items():
        if words in text:
            amount, text = shift * factor, text.replace(words, " ")
    rest = _FILLER.sub(" ", re.sub(r"[-,]", " ", text)).split()
    unknown = [w for w in rest if w not in _DIRECTIONS]
    if unknown or not rest:
        raise ToolError(f"cannot read the move {text!r}: unknown word(s) {unknown or rest}; say left, right, up, down")
    ux = float(np.sign(sum(_DIRECTIONS[w][0] for w in rest)))
    uy = float(np.sign(sum(_DIRECTIONS[w][1] for w in rest)))
    if ux == 0 and uy == 0:
        raise ToolError(f"the move {text!r} cancels out (opposite directions)")
    return Relocation(ux * amount, uy * amount)


def _size_request(subtask: Subtask, scale_step: float) -> Relocation:
    attribute = str(subtask.params.get("attribute") or "size").casefold()
    if attribute != "size":
        raise ToolError(f"sd_object_move changes only size, not {attribute!r}")
    asked = subtask.params.get("scale")
    if isinstance(asked, int | float) and not isinstance(asked, bool):
        if not 0.1 <= float(asked) <= 4.0:
            raise ToolError(f"scale {asked} is outside [0.1, 4]")
        return Relocation(scale=float(asked))
    word = (subtask.result or "").casefold().strip()
    for w, larger in _SIZE_WORDS.items():
        if w in word.split():
            return Relocation(scale=scale_step if larger else 1.0 / scale_step)
    raise ToolError(f"cannot read the size change {subtask.result!r}: say larger or smaller, or give params.scale")


def parse_relocation(subtask: Subtask, shift: float = 0.2, scale_step: float = 1.5) -> Relocation:
    """The subtask's move (object_move: direction in params.direction or the result, "20%", "a little") or size
    change (attribute_edit: params.scale, or result larger/smaller) as a `Relocation`.

    Args:
        shift: default move, as a share of the image side.
        scale_step: factor for a plain "larger" (its inverse for "smaller").

    Raises:
        ToolError: the request is a place, another attribute, or words it cannot read.
    """
    if subtask.kind == "object_move":
        return _move_request(subtask, shift)
    if subtask.kind == "attribute_edit":
        return _size_request(subtask, scale_step)
    raise ToolError(f"sd_object_move does not serve {subtask.kind!r}")


@dataclass(frozen=True)
class Placement:
    """The object at its new place: its pixels and mask (full image size) and its new box (x, y, w, h)."""

    image: np.ndarray
    mask: np.ndarray
    box: tuple[int, int, int, int]


def place_object(image: np.ndarray, mask: np.ndarray, where: Relocation) -> Placement:
    """`image` with the masked object pasted (scaled, shifted) and its new mask; the move is clamped so the object
    stays inside the image.

    Raises:
        ToolError: the mask is empty, the object cannot move that way (already at the edge), or the scaled object
            would not fit.
    """
    import cv2

    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        raise ToolError("the object's mask is empty")
    h, w = mask.shape
    x0, y0, x1, y1 = int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1
    patch, patch_mask = image[y0:y1, x0:x1], mask[y0:y1, x0:x1]
    bw, bh = x1 - x0, y1 - y0
    nw, nh = max(1, round(bw * where.scale)), max(1, round(bh * where.scale))
    if nw > w or nh > h:
        raise ToolError(f"the object scaled ×{where.scale:.2f} ({nw}x{nh}) does not fit the {w}x{h} image")
    if where.scale != 1.0:
        interp = cv2.INTER_LINEAR if where.scale > 1 else cv2.INTER_AREA
        patch = cv2.resize(patch, (nw, nh), interpolation=interp)
        patch_mask = cv2.resize(patch_mask.astype(np.uint8), (nw, nh), interpolation=cv2.INTER_NEAREST) > 0
    cx, cy = (x0 + x1) / 2 + where.dx * w, (y0 + y1) / 2 + where.dy * h
    nx = int(min(max(0, round(cx - nw / 2)), w - nw))
    ny = int(min(max(0, round(cy - nh / 2)), h - nh))
    if where.scale == 1.0 and (nx, ny) == (x0, y0):
        raise ToolError(f"the object at {x0},{y0} ({bw}x{bh}) is already at the image's edge in that direction")
    out = image.copy()
    new_mask = np.zeros_like(mask)
    region = out[ny : ny + nh, nx : nx + nw]
    region[patch_mask] = patch[patch_mask]
    new_mask[ny : ny + nh, nx : nx + nw] = patch_mask
    return Placement(out, new_mask, (nx, ny, nw, nh))
