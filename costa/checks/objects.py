"""Programmatic checks for the object subtasks and for the boxes/masks that object tools pass along.

Each check follows `CheckFn`: `(ctx, subtask, before, after, output) -> Verdict`. Quality mappings are piecewise
linear with the numbers in the reasons, so a failed step says by how much it missed. The pass threshold applied by the
search is 0.8; each mapping below notes what that means in the measured unit.
"""

from __future__ import annotations

import math

import numpy as np

from costa.checks.common import boundary_alignment, ciede2000_values, shading_correlation
from costa.checks.context import CheckContext, CheckFn
from costa.checks.fills import pasted_content, removal_artifacts
from costa.checks.region import (
    POINT_BETTER,
    changed_elsewhere,
    coverage,
    judged_region,
    margin_px,
    pointing,
    too_small,
)
from costa.checks.target import background_inside, partial_object, target_consistency
from costa.colours import colour_name, parse_colour
from costa.errors import ToolError
from costa.masks import dilate_mask, erode_mask, largest_component, ring_around, union_masks
from costa.types import Box, EditState, Mask, Subtask, ToolOutput, Verdict

# Artifact sanity: an object is not `too_small` (costa.checks.region: the one rule, ≥ 64 px and 0.05 % of the
# image, ≈ 20×20 px at 1024×768, and 3 px thick somewhere) and covers at most 95 % of the image.
MAX_AREA_SHARE = 0.95
# Contour alignment (`boundary_alignment`): a mask whose outline has this many times the colour change of its
# surroundings follows the object's edges (→ 1.0); one at the lower ratio is a shape drawn across background (→ 0).
ALIGNED_RATIO = 2.0
UNALIGNED_RATIO = 1.3


def _ramp(value: float, full: float, zero: float) -> float:
    """1.0 at `full`, 0.0 at `zero`, linear between (works for either direction)."""
    if math.isnan(value):
        return 0.0
    t = (value - zero) / (full - zero)
    return float(np.clip(t, 0.0, 1.0))


def _union(masks: object, shape: tuple[int, int]) -> np.ndarray | None:
    if not masks:
        return None
    try:
        union = union_masks(masks, *shape)  # type: ignore[arg-type]
    except ToolError:  # a mask of another size (e.g. from before an upscale) cannot locate the object here
        return None
    return union if union.any() else None


def _object_mask(before: EditState, after: EditState, output: ToolOutput) -> np.ndarray | None:
    """Where the object is: the grounded region the step consumed (masks, else boxes), else masks it produced —
    never only the region the tool declares it edited."""
    shape = (after.height, after.width)
    consumed = judged_region(before, shape)
    if consumed is not None:
        return consumed
    return _union(output.artifacts.get("masks"), shape)


# ----------------------------------------------------------------------------------------------- recolouring


def check_recoloration(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Is the object now the asked colour, with its shading kept?

    Colour: median ΔE2000 of the object's pixels to the target ≤ 10 → 1.0, linear to 0.0 at 30 (0.8 ⇔ ΔE 14).
    Shading: Pearson correlation of L* before/after ≥ 0.9 → 1.0, linear to 0.0 at 0.5 (0.8 ⇔ 0.82); a flat fill has
    correlation 0. Quality is the minimum of the two.
    """
    rgb = parse_colour(subtask.result or "")
    if rgb is None:
        return Verdict(0.0, (f"{subtask.result!r} is not a colour I can check against",))
    mask = _object_mask(before, after, output)
    if mask is None:
        return Verdict(0.0, ("no object mask to check the colour in",))
    if before.image.shape != after.image.shape:
        return Verdict(0.0, ("the image size changed, so the object cannot be compared",))
    tiny = pointing(mask, "the grounded object")
    if tiny is not None:
        return tiny
    grounded = _grounding(subtask, before.image, mask)
    median_de = float(np.median(ciede2000_values(after.image, mask, rgb)))
    q_colour = _ramp(median_de, 10.0, 30.0)
    reasons = [f"median ΔE2000 to {colour_name(rgb)} {rgb}: {median_de:.1f} (≤10 → 1.0, 0 at 30)"]
    corr = shading_correlation(before.image, after.image, mask)
    if corr is None:
        q_shade = 1.0
        reasons.append("the object had no shading to keep")
    else:
        q_shade = _ramp(corr, 0.9, 0.5)
        reasons.append(f"shading correlation {corr:.2f} (≥0.9 → 1.0, 0 at 0.5)")
    q_cover = 1.0
    if _colour_before(before.image, mask, rgb) > 10.0:  # an object already of that colour need not change
        covered = coverage(before.image, after.image, mask)
        q_cover = covered.quality
        reasons.extend(covered.reasons)
    elsewhere = changed_elsewhere(before.image, after.image, mask)
    reasons.extend(grounded.reasons + elsewhere.reasons)
    return Verdict(min(q_colour, q_shade, q_cover, grounded.quality, elsewhere.quality), tuple(reasons))


def _grounding(
    subtask: Subtask, image: np.ndarray, region: np.ndarray, what: str = "the grounded region", box_ok: bool = False
) -> Verdict:
    """Before the edit: does `region` match the target phrase (`target_consistency`), cover its whole object
    (`partial_object`) and, unless `box_ok`, hold little of its surroundings (`background_inside`)? Quality is the
    worst of them. Removal passes `box_ok`: filling a box's background corners from their surroundings changes
    nothing a person sees, while recolouring them does."""
    verdicts = [target_consistency(image, region, subtask.target), partial_object(image, region, what)]
    if not box_ok:
        verdicts.append(background_inside(image, region, what))
    return _combine(verdicts)


def _colour_before(image: np.ndarray, mask: np.ndarray, rgb: tuple[int, int, int]) -> float:
    """Median ΔE2000 of the object's pixels to the asked colour before the edit."""
    return float(np.median(ciede2000_values(image, mask, rgb)))


# --------------------------------------------------------------------------------------------------- removal

# A pixel counts as changed when some channel moved by more than this (out of 255): above noise and re-encoding.
_CHANGE_TOLERANCE = 8


def _lab(image: np.ndarray) -> np.ndarray:
    import cv2

    return cv2.cvtColor(image.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)


def _gradient_energy(lightness: np.ndarray, where: np.ndarray) -> float:
    """Mean Sobel gradient magnitude of L* over `where`, in L* units per pixel."""
    import cv2

    gx = cv2.Sobel(lightness, cv2.CV_32F, 1, 0, ksize=3) / 8.0
    gy = cv2.Sobel(lightness, cv2.CV_32F, 0, 1, ksize=3) / 8.0
    return float(np.hypot(gx, gy)[where].mean())


def check_removal(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Is the object gone, and does the fill look like its surroundings?

    Its measures, quality = their minimum:
      - gone: share of the object's pixels left unchanged (no channel moved > 8/255) ≤ 20 % → 1.0, 0.0 at 50 %;
      - colour: ΔE76 between the mean CIELAB of the fill and of a surrounding ring, allowed 5 + half the ring's own
        colour spread (textured surroundings vary more) → 1.0, 0.0 at three times that;
      - texture: ratio of mean L* gradient magnitude in the fill's interior to the ring's, within 2× either way → 1.0,
        0.0 at 8× (a smooth smear over texture, or a noisy patch on a flat wall);
      - pasted: the fill is not verbatim copies of other places of the photo (`costa.checks.fills.pasted_content`);
      with the smear and seam of `removal_artifacts`, the grounding and what changed elsewhere.
    """
    if before.image.shape != after.image.shape:
        return Verdict(0.0, ("the image size changed, so the removal cannot be compared",))
    obj = _object_mask(before, after, output)  # the grounded object the step consumed
    if obj is None or not obj.any():
        return Verdict(0.0, ("no grounded object to check the removal of",))
    tiny = pointing(obj, "the grounded object")
    if tiny is not None:
        return tiny
    grounded = _grounding(subtask, before.image, obj, box_ok=True)
    elsewhere = changed_elsewhere(before.image, after.image, obj)
    hole = obj
    if output.edited_region is not None and output.edited_region.shape == obj.shape:
        hole = obj | (output.edited_region.astype(bool) & dilate_mask(obj, margin_px(obj)))  # the fill's own dilation

    changed = np.abs(before.image.astype(np.int16) - after.image.astype(np.int16)).max(axis=2) > _CHANGE_TOLERANCE
    unchanged_share = 1.0 - float(changed[obj].mean())
    q_gone = _ramp(unchanged_share, 0.2, 0.5)
    reasons = [f"{unchanged_share:.0%} of the object's pixels unchanged (≤20% → 1.0, 0 at 50%)"]

    ring_width = max(6, round(0.3 * math.sqrt(float(hole.sum()))))
    ring = ring_around(hole, ring_width)
    if not ring.any():
        return Verdict(0.0, (*reasons, "the region covers the whole image; nothing to compare the fill with"))
    lab = _lab(after.image)
    fill_mean, ring_mean = lab[hole].mean(axis=0), lab[ring].mean(axis=0)
    distance = float(np.linalg.norm(fill_mean - ring_mean))
    spread = float(np.sqrt(lab[ring].var(axis=0).sum()))
    allowed = 5.0 + 0.5 * spread
    q_colour = _ramp(distance, allowed, 3.0 * allowed)
    reasons.append(
        f"fill vs surroundings mean colour ΔE {distance:.1f} (allowed {allowed:.1f}, 0 at {3 * allowed:.1f})"
    )

    interior = erode_mask(hole, 2)
    if not interior.any():
        interior = hole
    g_fill = _gradient_energy(lab[..., 0], interior)
    g_ring = _gradient_energy(lab[..., 0], ring)
    # +0.5 L*/px keeps the ratio meaningful on flat walls where both energies are just sensor noise.
    log_ratio = abs(math.log2((g_fill + 0.5) / (g_ring + 0.5)))
    q_texture = _ramp(log_ratio, 1.0, 3.0)
    reasons.append(
        f"texture: gradient {g_fill:.2f} in the fill vs {g_ring:.2f} around it "
        f"(ratio within 2× → 1.0, 0 at 8×; got {2**log_ratio:.1f}×)"
    )
    artifacts = removal_artifacts(
        after.image, hole, grain=True
    )  # a smear or a seam a person would see (costa.checks.fills)
    pasted = pasted_content(before.image, after.image, hole)  # copies of other places of the photo
    reasons.extend(artifacts.reasons + pasted.reasons + grounded.reasons + elsewhere.reasons)
    quality = min(q_gone, q_colour, q_texture, artifacts.quality, pasted.quality, grounded.quality, elsewhere.quality)
    return Verdict(quality, tuple(reasons))


# ------------------------------------------------------------------------------------ segmentation, detection


def _mask_verdict(mask: Mask, shape: tuple[int, int], *, compactness: bool) -> Verdict:
    if mask.data.shape != shape:
        return Verdict(0.0, (f"mask {mask.label!r} has shape {mask.data.shape}, the image is {shape}",))
    share = mask.area / float(shape[0] * shape[1])
    name = f"mask {mask.label!r}" if mask.label else "mask"
    if mask.area == 0:
        return Verdict(0.0, (f"{name} is empty",))
    if share > MAX_AREA_SHARE:
        return Verdict(0.0, (f"{name} covers {share:.0%} of the image: nothing was separated",))
    tiny = too_small(mask.data, name)
    if tiny is not None:
        return Verdict(0.0, (f"{tiny}: {POINT_BETTER}",))
    reasons = [f"{name} covers {share:.1%} of the image"]
    quality = 1.0
    if compactness:
        main = float(largest_component(mask.data).sum()) / mask.area
        quality = _ramp(main, 0.8, 0.4)
        reasons.append(f"largest piece holds {main:.0%} of it (≥80% → 1.0, 0 at 40%)")
    return Verdict(quality, tuple(reasons))


def _produced(name: str, after: EditState, output: ToolOutput) -> tuple:
    value = output.artifacts.get(name)
    if value is None:
        value = after.artifacts.get(name)
    return tuple(value or ())


def _combine(verdicts: list[Verdict]) -> Verdict:
    return Verdict(min(v.quality for v in verdicts), tuple(r for v in verdicts for r in v.reasons))


def check_segmentation(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Are the masks plausible objects, cut along the object's edges?

    Each mask must be non-empty and not the whole image, mostly one piece (largest piece ≥ 80 % → 1.0, 0 at 40 %),
    and its contour must follow image edges (`boundary_alignment` ≥ 2.0 → 1.0, linear to 0.0 at 1.3): a box that
    cuts through background has about as much colour change on its sides as around them, so it fails even when it
    contains the object. Quality is the worst mask's.
    """
    masks = _produced("masks", after, output)
    if not masks:
        return Verdict(0.0, ("no masks were produced",))
    verdicts = []
    for m in masks:
        v = _mask_verdict(m, (after.height, after.width), compactness=True)
        if v.quality > 0.0:
            v = _combine([v, _boundary_verdict(after.image, m)])
        verdicts.append(v)
    union = _union(masks, (after.height, after.width))
    if union is not None and all(v.quality > 0.0 for v in verdicts) and before.image.shape == after.image.shape:
        verdicts.append(_grounding(subtask, before.image, union, "the mask"))
    return _combine(verdicts)


def _boundary_verdict(image: np.ndarray, mask: Mask) -> Verdict:
    name = f"mask {mask.label!r}" if mask.label else "mask"
    ratio = boundary_alignment(image, mask.data)
    if ratio is None:
        return Verdict(1.0, (f"{name} has no contour inside the frame to compare with image edges",))
    quality = _ramp(ratio, ALIGNED_RATIO, UNALIGNED_RATIO)
    reason = (
        f"{name} contour gradient {ratio:.1f}× its surroundings' (≥{ALIGNED_RATIO:g} → 1.0, 0 at {UNALIGNED_RATIO:g})"
    )
    if quality < 1.0:
        reason += "; its outline does not follow the object's edges"
    return Verdict(quality, (reason,))


def _box_verdict(box: Box, width: int, height: int) -> Verdict:
    name = f"box {box.label!r}" if box.label else "box"
    where = f"{box.x},{box.y},{box.w},{box.h}"
    inside_w = max(0, min(width, box.x2) - max(0, box.x))
    inside_h = max(0, min(height, box.y2) - max(0, box.y))
    inside_share = inside_w * inside_h / float(box.w * box.h)
    if inside_share < 0.5:
        return Verdict(0.0, (f"{name} {where} lies mostly outside the {width}x{height} image",))
    share = inside_w * inside_h / float(width * height)
    if share > MAX_AREA_SHARE:
        return Verdict(0.0, (f"{name} {where} covers {share:.0%} of the image: it does not locate anything",))
    tiny = too_small(box.to_mask(height, width), f"{name} {where}")
    if tiny is not None:
        return Verdict(0.0, (f"{tiny}: {POINT_BETTER}",))
    return Verdict(1.0, (f"{name} {where} covers {share:.1%} of the image",))


def check_detection(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Were boxes found, in bounds and of sane size, with confidence? Best score ≥ 0.5 → 1.0, linear to 0 at 0."""
    boxes = _produced("boxes", after, output)
    if not boxes:
        return Verdict(0.0, ("no boxes were found",))
    sanity = _combine([_box_verdict(b, after.width, after.height) for b in boxes])
    best = max(b.score for b in boxes)
    q_score = _ramp(best, 0.5, 0.0)
    return Verdict(min(sanity.quality, q_score), (*sanity.reasons, f"best detection score {best:.2f} (≥0.5 → 1.0)"))


# ----------------------------------------------------------------------------------------- artifact checks


def check_masks_artifact(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Intermediate masks: at least one, each the image's size, covering 0.05 %–95 % of it."""
    masks = _produced("masks", after, output)
    if not masks:
        return Verdict(0.0, ("no masks were produced",))
    return _combine([_mask_verdict(m, (after.height, after.width), compactness=False) for m in masks])


def check_boxes_artifact(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Intermediate boxes: at least one, each mostly inside the image, covering 0.05 %–95 % of it."""
    boxes = _produced("boxes", after, output)
    if not boxes:
        return Verdict(0.0, ("no boxes were produced",))
    return _combine([_box_verdict(b, after.width, after.height) for b in boxes])


OBJECT_CHECKS: dict[str, CheckFn] = {
    "object_recoloration": check_recoloration,
    "object_removal": check_removal,
    "object_segmentation": check_segmentation,
    "object_detection": check_detection,
}

OBJECT_ARTIFACT_CHECKS: dict[str, CheckFn] = {
    "masks": check_masks_artifact,
    "boxes": check_boxes_artifact,
}
