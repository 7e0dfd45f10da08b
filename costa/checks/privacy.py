"""Checks for privacy blur: the region's fine detail is gone, and a face that was readable there no longer is.

Both measures are scaled to each region: "fine detail" is what a high-pass at σ = 4 % of the region's shorter side
keeps (the scale of eyes and mouth on a face), so a blur too weak for a large face fails even though it smooths
pixels. Pixels outside the region are checked by `unchanged_outside`, which the dispatcher adds.
"""

from __future__ import annotations

import math

import numpy as np

from costa.checks.context import CheckContext, CheckFn
from costa.masks import union_masks
from costa.types import Box, EditState, Mask, Subtask, ToolOutput, Verdict

#: Share of the original fine detail still present (projection of the new high-pass onto the old) at which the
#: region counts as obscured (→ 1.0), and at which it is plainly readable (→ 0.0).
OBSCURED_RETAINED = 0.2
READABLE_RETAINED = 0.35
#: High-pass scale as a share of the region's shorter side, and its least value in pixels.
DETAIL_SCALE_SHARE = 0.04
_MIN_DETAIL_SIGMA_PX = 1.0
#: Detail is measured this share of the region's shorter side inside its outline: the outline itself is an edge
#: a blur inside the region cannot remove (the unchanged outside meets it there).
INTERIOR_SHARE = 0.1
#: Below this mean squared high-pass (grey levels²) a region had no detail worth hiding.
_FLAT_ENERGY = 1.0
#: A face found after the edit counts as the same face when its box overlaps one found before by this IoU.
SAME_FACE_IOU = 0.3
#: Raw detections a face needs in the identity check: fewer than the detector's default, so the check is strict.
_CHECK_MIN_NEIGHBORS = 3


def _ramp(value: float, full: float, zero: float) -> float:
    if math.isnan(value):
        return 0.0
    return float(np.clip((value - zero) / (full - zero), 0.0, 1.0))


def _parts(before: EditState, after: EditState, output: ToolOutput) -> list[np.ndarray]:
    """The regions to judge: each mask the tool consumed, else its declared edited region."""
    shape = (after.height, after.width)
    masks = before.artifacts.get("masks") or ()
    parts = [m.data if isinstance(m, Mask) else np.asarray(m, bool) for m in masks]
    parts = [p for p in parts if p.shape == shape and p.any()]
    if parts:
        return parts
    region = output.edited_region
    if region is not None and region.shape == shape and region.any():
        return [region.astype(bool)]
    return []


def _bbox(mask: np.ndarray) -> Box:
    ys, xs = np.nonzero(mask)
    x1, y1 = int(xs.min()), int(ys.min())
    return Box(x1, y1, int(xs.max()) - x1 + 1, int(ys.max()) - y1 + 1)


def detail_retained(before: np.ndarray, after: np.ndarray, mask: np.ndarray) -> float | None:
    """Share of the region's fine detail that survives: ⟨hp_before, hp_after⟩ / ⟨hp_before, hp_before⟩ over `mask`.

    hp is grey level minus its Gaussian blur at σ = 4 % of the region's shorter side, read 10 % of that side inside
    the region's outline. 1.0 = untouched; a blur too weak for the region's size keeps ~0.4; a blur or pixelation
    that hides a face keeps ≤ 0.1 (pixel blocks add edges of their own, which only partly follow the old detail).
    None when the region had no detail to hide (a flat patch).
    """
    import cv2

    from costa.masks import erode_mask

    box = _bbox(mask)
    sigma = max(_MIN_DETAIL_SIGMA_PX, DETAIL_SCALE_SHARE * min(box.w, box.h))
    pad = math.ceil(3 * sigma)
    h, w = mask.shape
    x1, y1, x2, y2 = max(0, box.x - pad), max(0, box.y - pad), min(w, box.x2 + pad), min(h, box.y2 + pad)

    def highpass(image: np.ndarray) -> np.ndarray:
        grey = cv2.cvtColor(image[y1:y2, x1:x2], cv2.COLOR_RGB2GRAY).astype(np.float32)
        return grey - cv2.GaussianBlur(grey, (0, 0), sigma, borderType=cv2.BORDER_REFLECT)

    inside = erode_mask(mask[y1:y2, x1:x2], max(2, round(INTERIOR_SHARE * min(box.w, box.h))))
    if not inside.any():
        inside = mask[y1:y2, x1:x2]
    hp_before, hp_after = highpass(before)[inside], highpass(after)[inside]
    energy = float(np.mean(hp_before * hp_before))
    if energy < _FLAT_ENERGY:
        return None
    return max(0.0, float(np.mean(hp_before * hp_after)) / energy)


def readable_faces(before: np.ndarray, after: np.ndarray, mask: np.ndarray) -> tuple[int, int]:
    """(faces found before, of those still found after) around the region (its box grown by a quarter each side).

    A face counts when the Haar cascade (min 3 neighbours) finds a box overlapping the region; "still found" when a
    box after the edit overlaps one from before by IoU ≥ 0.3.
    """
    from costa.tools.detection import box_iou
    from costa.tools.faces import detect_faces

    box = _bbox(mask)
    h, w = mask.shape
    gx, gy = box.w // 4 + 8, box.h // 4 + 8
    x1, y1, x2, y2 = max(0, box.x - gx), max(0, box.y - gy), min(w, box.x2 + gx), min(h, box.y2 + gy)

    def faces(image: np.ndarray) -> list[Box]:
        found = detect_faces(image[y1:y2, x1:x2], _CHECK_MIN_NEIGHBORS, max_side=1024, min_weight=-10.0)
        local = Box(box.x - x1, box.y - y1, box.w, box.h)
        return [f for f in found if box_iou(f, local) > 0 or _inside(f, local)]

    old = faces(before)
    if not old:
        return 0, 0
    new = faces(after)
    return len(old), sum(any(box_iou(o, n) >= SAME_FACE_IOU for n in new) for o in old)


def _inside(a: Box, b: Box) -> bool:
    return a.x >= b.x and a.y >= b.y and a.x2 <= b.x2 and a.y2 <= b.y2


def check_privacy_blur(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Is every region unrecognisable?

    Per region, quality is the minimum of:
      - detail: share of the original fine detail retained (`detail_retained`) ≤ 0.2 → 1.0, linear to 0.0 at 0.5;
      - identity: a face the Haar cascade found there before must not be found there after (found again → 0.0).
    Quality is the worst region's; pixels outside are scored by `unchanged_outside` in the dispatcher.
    """
    if before.image.shape != after.image.shape:
        return Verdict(0.0, ("the image size changed, so the region cannot be compared",))
    parts = _parts(before, after, output)
    if not parts:
        return Verdict(0.0, ("no region to check",))
    if union_masks(parts, after.height, after.width).all():
        return Verdict(0.0, ("the region covers the whole image",))
    quality, reasons = 1.0, []
    for i, part in enumerate(parts, start=1):
        name = f"region {i}" if len(parts) > 1 else "the region"
        retained = detail_retained(before.image, after.image, part)
        if retained is None:
            reasons.append(f"{name} had no fine detail to hide")
        else:
            q = _ramp(retained, OBSCURED_RETAINED, READABLE_RETAINED)
            quality = min(quality, q)
            reasons.append(
                f"{name} keeps {retained:.0%} of its fine detail (≤{OBSCURED_RETAINED:.0%} → 1.0, 0 at "
                f"{READABLE_RETAINED:.0%})"
            )
        found, still = readable_faces(before.image, after.image, part)
        if found == 0:
            reasons.append(f"no face was detectable in {name} before; identity check not applicable")
        elif still:
            quality = 0.0
            reasons.append(f"{still} of {found} face(s) in {name} are still detectable after the edit")
        else:
            reasons.append(f"the {found} face(s) detectable in {name} before are no longer detectable")
    return Verdict(quality, tuple(reasons))


PRIVACY_CHECKS: dict[str, CheckFn] = {"privacy_blur": check_privacy_blur}
