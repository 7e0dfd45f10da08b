"""Where a check judges a step: the grounded region the step consumed, never only the region the tool declares.

`judged_region` is the union of the masks in the state the step started from (a grounder's output, or what the user
pointed at), else of its boxes or text regions; a step that consumed none is judged as a whole-image change.
`coverage` asks that an object edit changed most of that region, and `pointing` that the region is big enough to be
an object at all: a one-click flood fill that caught a single highlight pixel fails with a message asking the user to
point better. `outside` is the unchanged-outside check on the judged region grown by a margin (tools feather and
dilate their masks a little).

All images RGB uint8 (H, W, 3), masks bool (H, W); areas in pixels.
"""

from __future__ import annotations

import math

import numpy as np

from costa.checks.common import unchanged_outside
from costa.masks import dilate_mask
from costa.types import EditState, Subtask, ToolOutput, Verdict

#: A region smaller than this many pixels, or this share of the image, cannot be an object someone asked to edit.
MIN_REGION_PX = 64
MIN_REGION_SHARE = 0.0005
#: A region nowhere thicker than this (pixels) is a sliver along an edge or a highlight, not an object.
MIN_THICKNESS_PX = 3.0
#: Share of the judged region an object edit must change: this much or more → 1.0, linear to 0 at `COVERAGE_ZERO`.
COVERAGE_FULL = 0.6
COVERAGE_ZERO = 0.3
#: A pixel counts as changed when some channel moved by more than this (out of 255).
CHANGE_TOLERANCE = 8
#: Margin around the judged region that an edit may touch (feathering, dilation): this share of the region's side,
#: at least `MIN_MARGIN_PX`.
MARGIN_SHARE = 0.15
MIN_MARGIN_PX = 16

POINT_BETTER = (
    "point better: click nearer the object's middle, add more clicks along it, or draw a box or brush over all of it"
)


def judged_region(before: EditState, shape: tuple[int, int] | None = None) -> np.ndarray | None:
    """The bool (H, W) region the step consumed: masks, else boxes, else text regions of `before`; None if none.

    Args:
        shape: (H, W) the region must have (default the image's); artifacts of another size are ignored.
    """
    h, w = shape or (before.height, before.width)
    out = np.zeros((h, w), dtype=bool)
    masks = before.artifacts.get("masks") or ()
    for m in masks:
        if m.data.shape == (h, w):
            out |= m.data
    if out.any():
        return out
    boxes = tuple(before.artifacts.get("boxes") or ()) + tuple(
        r.box for r in before.artifacts.get("text_regions") or ()
    )
    for b in boxes:
        try:
            out |= b.to_mask(h, w)
        except ValueError:  # InputError: a box outside this image (sizes changed): it locates nothing here
            continue
    return out if out.any() else None


def too_small(region: np.ndarray, what: str = "the region") -> str | None:
    """Why `region` (bool (H, W)) is too small or thin to be the object someone means, or None: under
    `MIN_REGION_PX` pixels or `MIN_REGION_SHARE` of the image, or nowhere `MIN_THICKNESS_PX` thick (a flood fill
    along one highlight row of a shiny object).

    The one rule for it: a click's region (`costa.pointing`), a grounder's masks and boxes (the artifact checks) and
    the region an edit's check judges all ask this, so none accepts what another refuses.
    """
    area = int(region.sum())
    share = area / float(region.size)
    if area < MIN_REGION_PX or share < MIN_REGION_SHARE:
        return f"{what} is {area} px ({share:.3%} of the image), too small to be the object"
    thickness = _thickness_px(region)
    if thickness < MIN_THICKNESS_PX:
        return f"{what} is at most {thickness:.0f} px thick ({area} px in all), a sliver, not the object"
    return None


def pointing(region: np.ndarray, what: str = "the region") -> Verdict | None:
    """A failing verdict asking for better pointing when `region` is `too_small`, else None."""
    why = too_small(region, what)
    return None if why is None else Verdict(0.0, (f"{why}: {POINT_BETTER}",))


def _thickness_px(region: np.ndarray) -> float:
    """Twice the largest distance from a region pixel to the outside: the widest disc that fits, in pixels."""
    import cv2

    from costa.masks import bounding_slice

    ys, xs = bounding_slice(region, pad_px=1)
    local = np.pad(region[ys, xs], 1).astype(np.uint8)
    return 2.0 * float(cv2.distanceTransform(local, cv2.DIST_L2, 3).max())


def changed_pixels(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Bool (H, W): pixels where some channel moved by more than `CHANGE_TOLERANCE`."""
    return np.abs(before.astype(np.int16) - after.astype(np.int16)).max(axis=2) > CHANGE_TOLERANCE


def coverage(before: np.ndarray, after: np.ndarray, region: np.ndarray) -> Verdict:
    """Did the edit change most of the grounded object? Changed share ≥ 60 % → 1.0, linear to 0 at 30 %."""
    share = float(changed_pixels(before, after)[region].mean())
    quality = float(np.clip((share - COVERAGE_ZERO) / (COVERAGE_FULL - COVERAGE_ZERO), 0.0, 1.0))
    reason = f"{share:.0%} of the grounded object changed (≥{COVERAGE_FULL:.0%} → 1.0, 0 at {COVERAGE_ZERO:.0%})"
    if quality < 1.0:
        reason += "; the edit missed most of the object"
    return Verdict(quality, (reason,))


def margin_px(region: np.ndarray) -> int:
    """Pixels around `region` an edit may touch: 15 % of its side (√area), at least 16."""
    return max(MIN_MARGIN_PX, round(MARGIN_SHARE * math.sqrt(float(region.sum()))))


def outside(
    subtask: Subtask, before: EditState, after: EditState, output: ToolOutput, whole_image: bool = False
) -> Verdict:
    """Unchanged outside the region the step consumed (grown by `margin_px`), whatever region the tool declared.

    With no consumed region the step is judged as a whole-image change: fine for a subtask without a target (an
    adjustment, a deblur), a failure for one that names a target (an edit of one object may not change everything).
    A kind that changes the whole picture by design (`whole_image` in subtasks.yaml: background removal keeps the
    target and changes everything else) is judged as a whole-image change by its own check.
    """
    if output.image is None:
        return Verdict(1.0, ("no image produced",))
    if before.image.shape != output.image.shape:
        return Verdict(1.0, ("size changed; outside check skipped",))
    region = judged_region(before)
    if whole_image:
        if region is None or not subtask.target:
            return Verdict(1.0, ("a whole-image edit: judged as a whole by its own check",))
        from costa.masks import erode_mask

        kept = erode_mask(region, margin_px(region))  # the target it keeps must stay as it was
        if not kept.any():
            return Verdict(1.0, ("the kept target is too thin to compare inside",))
        return unchanged_outside(before.image, output.image, ~kept)
    if region is None:
        if subtask.target and changed_pixels(before.image, output.image).any():
            return Verdict(
                0.0,
                (
                    f"no grounded region for {subtask.target!r} was consumed, so the step is judged as a whole-image "
                    "change, which an edit of one target must not be",
                ),
            )
        return unchanged_outside(before.image, output.image, np.ones(region_shape(before), dtype=bool))
    return unchanged_outside(before.image, output.image, dilate_mask(region, margin_px(region)))


def region_shape(state: EditState) -> tuple[int, int]:
    return state.height, state.width


#: Changed pixels beyond the judged region's margin: a connected blob of this share of the region's area (at least
#: `MIN_REGION_PX`), or this share of all the pixels out there, is an edit of something else (a second object).
ELSEWHERE_BLOB_SHARE = 0.2
ELSEWHERE_SHARE = 0.05


def changed_elsewhere(before: np.ndarray, after: np.ndarray, region: np.ndarray) -> Verdict:
    """Fail an object edit that changed pixels beyond the consumed region and its margin: a connected changed blob of
    ≥ 20 % of the region's area (≥ 64 px), or ≥ 5 % of the pixels outside, → 0; otherwise 1.0. Sizes must match."""
    import cv2

    out = ~dilate_mask(region, margin_px(region))
    changed = changed_pixels(before, after) & out
    if not out.any():
        return Verdict(1.0, ("nothing lies outside the grounded region's margin",))
    share = float(changed[out].mean())
    n, _, stats, _ = cv2.connectedComponentsWithStats(changed.astype(np.uint8), connectivity=8)
    blob = int(stats[1:, 4].max()) if n > 1 else 0
    limit = max(MIN_REGION_PX, round(ELSEWHERE_BLOB_SHARE * float(region.sum())))
    if blob >= limit or share >= ELSEWHERE_SHARE:
        return Verdict(
            0.0,
            (
                f"pixels changed outside the grounded region: {share:.1%} of the rest of the image, largest changed "
                f"patch {blob} px (limit {limit} px or {ELSEWHERE_SHARE:.0%}); the edit touched something else, such "
                "as a second object",
            ),
        )
    return Verdict(1.0, (f"{share:.2%} of the pixels outside the grounded region changed (largest patch {blob} px)",))


def kept_unchanged(subtask: Subtask, before: EditState, after: EditState) -> Verdict | None:
    """What the instruction keeps as it is ("keep the trees unchanged": `subtask.params["keep"]`) did not change, or
    None when it keeps nothing.

    The kept region is the turn's `kept` artifact (`costa.constraints`); without it a kept object was never located,
    and the verdict says so rather than passing silently. A kept background is everything outside the edit's target:
    the unchanged-outside check verifies it.
    """
    names = [str(n) for n in subtask.params.get("keep") or ()]
    if not names:
        return None
    kept = before.artifacts.get("kept")
    listed = ", ".join(names)
    if not isinstance(kept, np.ndarray) or kept.shape != (before.height, before.width) or not kept.any():
        objects = [n for n in names if n.lower() not in ("background", "backdrop", "surroundings")]
        if not objects:
            return Verdict(1.0, (f"keeps the {listed}: everything outside the target, judged by the outside check",))
        return Verdict(
            1.0,
            (f"keeps the {listed} unchanged, but the {', '.join(objects)} could not be located: not verified",),
        )
    if after.image.shape != before.image.shape:
        return Verdict(0.0, (f"the image changed size, so the kept {listed} cannot be compared",))
    moved = changed_pixels(before.image, after.image)[kept]
    share = float(moved.mean()) if moved.size else 0.0
    quality = 1.0 if share <= 0.001 else max(0.0, 1.0 - share / 0.02)
    why = f"the kept {listed}: {share:.1%} of its {int(kept.sum())} px changed"
    return Verdict(quality, (why + ("" if quality >= 1.0 else "; it must stay as it was"),))
