"""Where an image-wide tool (deblur, adjustment) acts: the whole image, or the target the user pointed at.

A subtask without a target acts on the whole image. One with a target ("sharpen the car", "darken the sky") acts
inside the masks, else the boxes, already in the state (the user's brush or box, or a grounding step's output); the
embedded tools cannot find a named thing by themselves, so a target with no region is a `GroundingError` that says
what would locate it — never a silent whole-image edit.
"""

from __future__ import annotations

import numpy as np

from costa.errors import GroundingError
from costa.masks import union_masks
from costa.types import EditState, Subtask

GROUND_ADVICE = "draw a box or brush over it (or click it), or enable the neural detector (grounding_dino)"


def target_region(state: EditState, subtask: Subtask, verb: str) -> np.ndarray | None:
    """The bool (H, W) region to act on, or None for the whole image.

    Args:
        verb: what the tool does, for the message ("sharpen", "brighten").

    Raises:
        GroundingError: the subtask names a target but the state has no mask or box for it, or they are empty.
    """
    if not subtask.target:
        return None
    masks = state.artifacts.get("masks")
    if masks:
        region = union_masks(masks, state.height, state.width)
    else:
        boxes = state.artifacts.get("boxes")
        if not boxes:
            raise GroundingError(f"cannot {verb} only {subtask.target!r}: I cannot locate it by myself", GROUND_ADVICE)
        region = np.zeros((state.height, state.width), dtype=bool)
        for b in boxes:
            region |= b.to_mask(state.height, state.width)
    if not region.any():
        raise GroundingError(f"cannot {verb} {subtask.target!r}: its region is empty", GROUND_ADVICE)
    return region


def feathered(region: np.ndarray, radius_px: float) -> np.ndarray:
    """A float32 (H, W) weight: 1 inside `region`, falling to 0 over `radius_px` outside it (0 = a hard edge).

    The weight is zero outside the region grown by `radius_px`, so the changed pixels stay within that growth.
    """
    weight = region.astype(np.float32)
    if radius_px <= 0:
        return weight
    import cv2

    distance = cv2.distanceTransform((~region).astype(np.uint8), cv2.DIST_L2, 5)
    return np.clip(1.0 - distance / float(radius_px), 0.0, 1.0).astype(np.float32)
