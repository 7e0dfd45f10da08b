"""Check for background removal: the background is one plain colour, and what was kept is a subject cut along its
edges, in few pieces. That the subject's pixels are untouched is `unchanged_outside`'s job (the tool declares the
background as its edited region), which the dispatcher adds.
"""

from __future__ import annotations

import math

import numpy as np

from costa.checks.common import boundary_alignment
from costa.checks.context import CheckContext, CheckFn
from costa.types import EditState, Subtask, ToolOutput, Verdict

#: A background pixel is "the fill" when no channel differs from the fill's by more than this (out of 255).
FILL_TOLERANCE = 6
#: The kept subject must cover at least this share of the image, and leave at least this much as background.
MIN_SUBJECT_SHARE = 0.005
MIN_BACKGROUND_SHARE = 0.02
#: Pieces of the subject smaller than this share of it are specks (background that leaked through).
SPECK_SHARE = 0.01


def _ramp(value: float, full: float, zero: float) -> float:
    if math.isnan(value):
        return 0.0
    return float(np.clip((value - zero) / (full - zero), 0.0, 1.0))


def speck_share(subject: np.ndarray) -> float:
    """Share of the subject's pixels that lie in pieces smaller than 1 % of it."""
    import cv2

    _, _, stats, _ = cv2.connectedComponentsWithStats(subject.astype(np.uint8), connectivity=8)
    areas = stats[1:, cv2.CC_STAT_AREA]
    total = float(areas.sum())
    return float(areas[areas < SPECK_SHARE * total].sum()) / total if total else 0.0


def check_background_removal(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Is the background plain and the subject a clean cut-out?

    Quality is the minimum of:
      - plain: share of background pixels within 6/255 of its median colour ≥ 98 % → 1.0, 0.0 at 80 %;
      - whole: share of the subject in specks (pieces < 1 % of it) ≤ 5 % → 1.0, 0.0 at 25 %;
      - cut along edges: the subject's `boundary_alignment` in the original ≥ 2.0 → 1.0, 0.0 at 1.3 (a box-shaped
        "subject" that kept its background fails).
    The subject must cover 0.5 %–98 % of the image.
    """
    if before.image.shape != after.image.shape:
        return Verdict(0.0, ("the image size changed, so the subject cannot be compared",))
    background = output.edited_region
    if background is None or background.shape != (after.height, after.width):
        return Verdict(0.0, ("the tool did not say which pixels are background",))
    background = background.astype(bool)
    subject = ~background
    kept, removed = float(subject.mean()), float(background.mean())
    if kept < MIN_SUBJECT_SHARE:
        return Verdict(0.0, (f"the kept subject covers {kept:.2%} of the image: nothing was kept",))
    if removed < MIN_BACKGROUND_SHARE:
        return Verdict(0.0, (f"only {removed:.1%} of the image was removed: the background is still there",))
    pixels = after.image[background].astype(np.int16)
    fill = np.median(pixels, axis=0)
    plain = float((np.abs(pixels - fill).max(axis=1) <= FILL_TOLERANCE).mean())
    q_plain = _ramp(plain, 0.98, 0.8)
    reasons = [
        f"subject {kept:.1%} of the image; {plain:.1%} of the background is the plain fill "
        f"{tuple(int(c) for c in fill)} (≥98% → 1.0, 0 at 80%)"
    ]
    specks = speck_share(subject)
    q_whole = _ramp(specks, 0.05, 0.25)
    reasons.append(f"{specks:.1%} of the subject in specks (≤5% → 1.0, 0 at 25%)")
    ratio = boundary_alignment(before.image, subject)
    if ratio is None:
        q_edges = 1.0
        reasons.append("the subject's outline lies on the image border only")
    else:
        q_edges = _ramp(ratio, 2.0, 1.3)
        reason = f"subject outline gradient {ratio:.1f}× its surroundings' (≥2 → 1.0, 0 at 1.3)"
        if q_edges < 1.0:
            reason += "; the cut does not follow the subject's edges"
        reasons.append(reason)
    return Verdict(min(q_plain, q_whole, q_edges), tuple(reasons))


BACKGROUND_CHECKS: dict[str, CheckFn] = {"background_removal": check_background_removal}
