"""Pixels costa invented this turn, and analysis that must not read them as the photo's own.

A generative step (a kind with `invents: true` in subtasks.yaml: outpainting, removal fills, generated objects…)
paints pixels the photo never had. Their union is the `invented` artifact, a bool (H, W) mask carried through the
turn and mapped through size changes (an outpainted canvas shifts it; an upscale resizes it). Detection,
segmentation, grounding and OCR results lying mostly (> `MOSTLY_INVENTED`) in it are dropped, unless the subtask
asks about the new content ("the person in the extended part"): HOG once "detected a person" in an outpainted
margin of CoSTA*'s sample 40, 86 % of its box invented, while the eight real people were missed.

Pure: arrays and records in, arrays and records out.

>>> import numpy as np
>>> inv = np.zeros((4, 8), bool); inv[:, :4] = True
>>> region = np.zeros((4, 8), bool); region[:, 2:5] = True
>>> round(invented_share(region, inv), 2)
0.67
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from costa.types import EditState, Subtask, ToolOutput

#: The artifact's key in an `EditState`.
INVENTED = "invented"
#: A result with more than this share of its area in invented pixels is not about the photo.
MOSTLY_INVENTED = 0.5
#: Words in a target that ask about the new content itself.
_ASKS = re.compile(
    r"\b(?:new|extended|extension|added|generated|invented|outpainted|filled|fill|margins?|expanded)\b", re.IGNORECASE
)


def invented_mask(state: EditState) -> np.ndarray | None:
    """The state's invented mask when it has one of the image's size, else None."""
    mask = state.artifacts.get(INVENTED)
    if isinstance(mask, np.ndarray) and mask.shape == (state.height, state.width):
        return mask.astype(bool, copy=False)
    return None


def invented_share(region: np.ndarray, invented: np.ndarray | None) -> float:
    """Share (0–1) of `region`'s pixels that are invented; 0 when there is no mask or the shapes differ."""
    if invented is None or invented.shape != region.shape:
        return 0.0
    area = int(region.sum())
    return float((region & invented).sum()) / area if area else 0.0


def asks_for_invented(subtask: Subtask) -> bool:
    """Whether the subtask is about the new content itself ("detect the person in the extended part")."""
    return bool(_ASKS.search(" ".join(t for t in (subtask.target, subtask.result) if t)))


def _mapped(previous: np.ndarray, new_shape: tuple[int, int], edited: np.ndarray | None) -> np.ndarray | None:
    """`previous` carried onto a canvas of `new_shape`: shifted to where the original sits (the part an outpainter
    did not paint: the bounding box of `edited`'s complement, when it has the original's size), or resized when
    the canvas is the original scaled (an upscale); None when where it went cannot be told (a crop)."""
    import cv2

    h, w = previous.shape
    nh, nw = new_shape
    if edited is not None and edited.shape == new_shape and (~edited).any():
        ys, xs = np.nonzero(~edited)
        top, left = int(ys.min()), int(xs.min())
        if int(ys.max()) - top + 1 == h and int(xs.max()) - left + 1 == w:
            out = np.zeros(new_shape, bool)
            out[top : top + h, left : left + w] = previous
            return out
    if abs(nh / h - nw / w) <= 0.02 * max(nh / h, nw / w):
        return cv2.resize(previous.astype(np.uint8), (nw, nh), interpolation=cv2.INTER_NEAREST).astype(bool)
    return None


def invented_after(before: EditState, subtask: Subtask, output: ToolOutput, invents: bool) -> np.ndarray | None:
    """The invented mask after a step that produced an image (None when nothing is known to be invented).

    Args:
        before: the state the step started from (its `invented` artifact, if any, is carried over).
        invents: the subtask's kind paints new pixels (`invents` in subtasks.yaml): the pixels it meant to change
            (`output.edited_region`, else every pixel that changed) join the mask.
    """
    if output.image is None:
        return invented_mask(before)
    shape = (int(output.image.shape[0]), int(output.image.shape[1]))
    edited = output.edited_region
    edited = edited.astype(bool) if edited is not None and edited.shape == shape else None
    previous = invented_mask(before)
    if previous is not None and previous.shape != shape:
        previous = _mapped(previous, shape, edited)
    if not invents:
        return previous
    if edited is None:
        if before.image.shape != output.image.shape:
            return previous
        edited = np.abs(before.image.astype(np.int16) - output.image.astype(np.int16)).max(axis=2) > 8
    return edited if previous is None else previous | edited


def item_region(item: Any, shape: tuple[int, int]) -> np.ndarray | None:
    """The bool (H, W) region of a box, mask or text region (None when it is of another size or outside)."""
    from costa.errors import InputError
    from costa.types import Box, Mask, TextRegion

    if isinstance(item, Mask):
        return item.data if item.data.shape == shape else None
    box = item.box if isinstance(item, TextRegion) else item
    if not isinstance(box, Box):
        return None
    try:
        return box.to_mask(*shape)
    except InputError:
        return None
