"""Checks for the generative object and image edits: moves, size changes, crops, and the kinds no program can judge.

- object_move: the object's pixels (before, inside the grounded mask) are found again in the result, shifted the way
  the subtask asks (params.direction), and its old place changed;
- attribute_edit with attribute "size": the object is found again at the asked scale (params.scale), or at least
  larger or smaller as asked;
- image_cropping: the result equals a region of the image before pixel for pixel, has the asked aspect and holds
  the state's box;
- everything else of these kinds (materials, expressions, poses, styles, viewpoints, moves to a place): quality 0 with
  "no programmatic check can verify …", so such a step is never reported good without a judge (a VLM reflection).

Matching is normalised cross-correlation (OpenCV `matchTemplate`, imported inside the checks) of the object's
bounding-box patch; scores are in [-1, 1], 1 = identical up to brightness and contrast.
"""

from __future__ import annotations

import math

import numpy as np

from costa.checks.context import CheckContext, CheckFn
from costa.errors import ToolError
from costa.masks import union_masks
from costa.types import EditState, Subtask, ToolOutput, Verdict

#: Correlation at which the moved or resized object counts as found (1.0 = identical).
MATCH_GOOD = 0.8
#: Below this correlation the object counts as lost.
MATCH_BAD = 0.5
#: Smallest shift along the asked direction, as a share of the image side, for full quality (0 at no shift).
SHIFT_GOOD = 0.05
#: Allowed error of a size change, as a ratio of found to asked scale: within ×1.15 → 1.0, ×1.5 → 0.
SCALE_GOOD, SCALE_BAD = math.log(1.15), math.log(1.5)
_DIRECTIONS = {"left": (-1, 0), "right": (1, 0), "up": (0, -1), "down": (0, 1), "top": (0, -1), "bottom": (0, 1)}


def unverifiable(what: str) -> CheckFn:
    """A check that always fails with the reason that no program can verify `what` (a judge must)."""

    def check(ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput) -> Verdict:
        return Verdict(0.0, (f"no programmatic check can verify {what}; a judge (VLM reflection) must look at it",))

    return check


def _ramp_up(value: float, bad: float, good: float) -> float:
    """0 at `bad`, 1 at `good`, linear between (either order)."""
    if good == bad:
        return 1.0 if value >= good else 0.0
    return float(min(1.0, max(0.0, (value - bad) / (good - bad))))


def _object_patch(before: EditState) -> tuple[np.ndarray, tuple[int, int, int, int], np.ndarray] | None:
    """The object's bounding-box patch of the image before, its box (x, y, w, h), and its mask (full size)."""
    masks = before.artifacts.get("masks")
    if not masks:
        return None
    try:
        mask = union_masks(masks, before.height, before.width)
    except ToolError:
        return None
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    x0, x1, y0, y1 = int(xs.min()), int(xs.max()) + 1, int(ys.min()), int(ys.max()) + 1
    return before.image[y0:y1, x0:x1], (x0, y0, x1 - x0, y1 - y0), mask


def _best_match(image: np.ndarray, patch: np.ndarray) -> tuple[float, tuple[int, int]]:
    """Highest normalised correlation of `patch` in `image` and its top-left corner (x, y).

    Correlation ignores brightness and contrast, so a flat patch "matches" anything: the score is capped by
    1 − (mean absolute difference at the match) / 50 levels.
    """
    import cv2

    if patch.shape[0] > image.shape[0] or patch.shape[1] > image.shape[1] or min(patch.shape[:2]) < 2:
        return -1.0, (0, 0)
    scores = cv2.matchTemplate(image.astype(np.float32), patch.astype(np.float32), cv2.TM_CCOEFF_NORMED)
    _, best, _, where = cv2.minMaxLoc(scores)
    x, y = int(where[0]), int(where[1])
    region = image[y : y + patch.shape[0], x : x + patch.shape[1]].astype(np.float32)
    mad = float(np.abs(region - patch.astype(np.float32)).mean())
    return min(float(best), 1.0 - mad / 50.0), (x, y)


def check_object_move(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Was the object moved the asked way? quality = min(found, shift along the direction, old place changed).

    - found: correlation of the object's patch in the result, 0 at 0.5, 1 at 0.8;
    - shift: the displacement of the best match projected on the asked direction, 0 at none, 1 at 5 % of the image
      side; a larger shift across the direction than along it gives 0 ("moved up" when "left" was asked);
    - vacated: share of the object's old pixels that changed (no channel moved > 8/255 counts as unchanged) outside
      its new place, 0 at 10 %, 1 at 50 %.
    """
    direction = str(subtask.params.get("direction") or "").split()
    vector = [_DIRECTIONS[w] for w in direction if w in _DIRECTIONS]
    if not vector:
        return unverifiable(f"a move to {subtask.result or 'an unnamed place'!r}")(ctx, subtask, before, after, output)
    if before.image.shape != after.image.shape:
        return Verdict(0.0, ("the image size changed, so the move cannot be measured",))
    found = _object_patch(before)
    if found is None:
        return Verdict(0.0, ("no mask of the object before the move, so the move cannot be measured",))
    patch, (x0, y0, w, h), mask = found
    score, (nx, ny) = _best_match(after.image, patch)
    q_found = _ramp_up(score, MATCH_BAD, MATCH_GOOD)
    dx, dy = (nx - x0) / after.width, (ny - y0) / after.height
    ux = float(np.sign(sum(v[0] for v in vector)))
    uy = float(np.sign(sum(v[1] for v in vector)))
    along = dx * ux + dy * uy
    across = abs(dx * (1 - abs(ux))) + abs(dy * (1 - abs(uy)))
    q_shift = 0.0 if across > max(along, 0.0) else _ramp_up(along, 0.0, SHIFT_GOOD)
    changed = np.abs(before.image.astype(np.int16) - after.image.astype(np.int16)).max(axis=2) > 8
    new_place = np.zeros_like(mask)
    new_place[ny : ny + h, nx : nx + w] = True
    old = mask & ~new_place
    vacated = float(changed[old].mean()) if old.any() else 1.0
    q_vacated = _ramp_up(vacated, 0.1, 0.5)
    reasons = (
        f"object found again with correlation {score:.2f} (1.0 at ≥ {MATCH_GOOD}, 0 at ≤ {MATCH_BAD})",
        f"shift {dx:+.1%} of the width, {dy:+.1%} of the height; along {'/'.join(direction)} {along:+.1%} "
        f"(1.0 at ≥ {SHIFT_GOOD:.0%}), across {across:.1%}",
        f"{vacated:.0%} of its old place changed (1.0 at ≥ 50 %)",
    )
    return Verdict(min(q_found, q_shift, q_vacated), reasons)


def check_size_change(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Does the object now have the asked size? The object's patch is resized over scales 1/4…4 (×1.1 steps) and
    matched in the result; the best-matching scale must be within ×1.15 of params.scale (0 at ×1.5), or, with no scale
    given, larger than 1.1 for "larger" and smaller than 0.9 for "smaller"; the match itself must be found (0.5 → 0,
    0.8 → 1)."""
    import cv2

    found = _object_patch(before)
    if found is None:
        return Verdict(0.0, ("no mask of the object before the size change, so its size cannot be measured",))
    patch = found[0]
    best_score, best_scale = -1.0, 1.0
    for k in range(-15, 16):
        s = 1.1**k
        h, w = round(patch.shape[0] * s), round(patch.shape[1] * s)
        if h < 4 or w < 4 or h > after.height or w > after.width:
            continue
        resized = cv2.resize(patch, (w, h), interpolation=cv2.INTER_LINEAR if s > 1 else cv2.INTER_AREA)
        score, _ = _best_match(after.image, resized)
        if score > best_score:
            best_score, best_scale = score, s
    q_found = _ramp_up(best_score, MATCH_BAD, MATCH_GOOD)
    asked = subtask.params.get("scale")
    larger = (subtask.result or "").strip().casefold() == "larger"
    if isinstance(asked, int | float) and not isinstance(asked, bool) and asked > 0:
        error = abs(math.log(best_scale / float(asked)))
        q_scale = 1.0 - _ramp_up(error, SCALE_GOOD, SCALE_BAD)
        want = f"asked ×{float(asked):.2f}"
    else:
        q_scale = 1.0 if (best_scale > 1.1 if larger else best_scale < 0.9) else 0.0
        want = f"asked {'larger' if larger else 'smaller'}"
    reasons = (f"object found at ×{best_scale:.2f} its old size with correlation {best_score:.2f}; {want}",)
    return Verdict(min(q_found, q_scale), reasons)


def check_attribute_edit(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Size changes are measured (`check_size_change`); other attributes cannot be checked by a program."""
    attribute = str(subtask.params.get("attribute") or "")
    if attribute == "size":
        return check_size_change(ctx, subtask, before, after, output)
    return unverifiable(f"a change of {attribute or 'an attribute'} to {subtask.result!r}")(
        ctx, subtask, before, after, output
    )


def check_cropping(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Is the result exactly a smaller region of the image before, of the asked shape, holding the asked box?

    The result is located in the old image (normalised correlation); quality is 1 only when its pixels equal that
    region exactly (a crop copies pixels), the width/height ratio is within 2 % (or 1 px) of an aspect named in the
    result field, and the region contains the state's box (the grounded target or the user's box). A near match
    (correlation ≥ 0.8 but pixels changed) scores at most 0.5; any other failure 0.
    """
    from costa.tools.crop import parse_aspect

    if after.height > before.height or after.width > before.width:
        return Verdict(0.0, ("the result is larger than the image before: not a crop",))
    if after.image.shape == before.image.shape:
        return Verdict(0.0, ("the result has the same size as before: nothing was cropped",))
    score, (x, y) = _best_match(before.image, after.image)
    region = before.image[y : y + after.height, x : x + after.width]
    where = f"({x}, {y}, {after.width}x{after.height})"
    if region.shape != after.image.shape or not np.array_equal(region, after.image):
        diff = (
            int(np.abs(region.astype(np.int16) - after.image.astype(np.int16)).max())
            if region.shape == after.image.shape
            else 255
        )
        return Verdict(
            0.5 * _ramp_up(score, 0.8, 0.95),
            (f"best match {where} has correlation {score:.2f} but its pixels differ by up to {diff} levels",),
        )
    reasons = [f"the result equals the old image's region {where} pixel for pixel"]
    quality = 1.0
    try:
        aspect = parse_aspect(subtask.result)
    except ToolError:
        aspect = None
    if aspect is not None:
        got = after.width / after.height
        off_px = min(abs(after.width - aspect * after.height), abs(after.height - after.width / aspect))
        ok = abs(got / aspect - 1.0) <= 0.02 or off_px <= 1.0
        quality = min(quality, 1.0 if ok else 0.0)
        reasons.append(f"aspect {got:.3f} for asked {subtask.result!r} ({aspect:.3f}): {'ok' if ok else 'wrong'}")
    boxes = before.artifacts.get("boxes") or ()
    if boxes:
        b = boxes[0]
        inside = x <= b.x and y <= b.y and b.x2 <= x + after.width and b.y2 <= y + after.height
        quality = min(quality, 1.0 if inside else 0.0)
        reasons.append(f"box {b.x},{b.y},{b.w},{b.h} {'is' if inside else 'is NOT'} inside the crop")
    return Verdict(quality, tuple(reasons))


GEOMETRY_CHECKS: dict[str, CheckFn] = {
    "object_move": check_object_move,
    "attribute_edit": check_attribute_edit,
    "image_cropping": check_cropping,
    "style_transfer": unverifiable("an artistic style"),
    "viewpoint_change": unverifiable("a new camera viewpoint"),
}
