"""Checks for background removal (the background is one plain colour) and background blur (the background lost its
detail), and for both that what was kept is a subject cut along its edges, in few pieces. That the subject's pixels
are untouched is `unchanged_outside`'s job (the tool declares the background as its edited region), which the
dispatcher adds.
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


def _declared_split(
    before: EditState, after: EditState, output: ToolOutput, done: str
) -> tuple[np.ndarray, np.ndarray] | Verdict:
    """(subject, background) from the tool's declared edited region (the background it `done` — removed, blurred),
    or the failing verdict when the size changed, no region was declared, or either part is too small to be one."""
    if before.image.shape != after.image.shape:
        return Verdict(0.0, ("the image size changed, so the subject cannot be compared",))
    background = output.edited_region
    if background is None or background.shape != (after.height, after.width):
        return Verdict(0.0, ("the tool did not say which pixels are background",))
    background = background.astype(bool)
    subject = ~background
    kept, changed = float(subject.mean()), float(background.mean())
    if kept < MIN_SUBJECT_SHARE:
        return Verdict(0.0, (f"the kept subject covers {kept:.2%} of the image: nothing was kept",))
    if changed < MIN_BACKGROUND_SHARE:
        return Verdict(0.0, (f"only {changed:.1%} of the image was {done}: the background is still there",))
    return subject, background


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
    split = _declared_split(before, after, output, "removed")
    if isinstance(split, Verdict):
        return split
    subject, background = split
    kept = float(subject.mean())
    pixels = after.image[background].astype(np.int16)
    fill = np.median(pixels, axis=0)
    plain = float((np.abs(pixels - fill).max(axis=1) <= FILL_TOLERANCE).mean())
    q_plain = _ramp(plain, 0.98, 0.8)
    reasons = [
        f"subject {kept:.1%} of the image; {plain:.1%} of the background is the plain fill "
        f"{tuple(int(c) for c in fill)} (≥98% → 1.0, 0 at 80%)"
    ]
    q_shape, shape_reasons = _subject_shape(before, subject)
    return Verdict(min(q_plain, q_shape), (*reasons, *shape_reasons))


def _subject_shape(before: EditState, subject: np.ndarray) -> tuple[float, list[str]]:
    """Quality and reasons for the kept subject's shape: few specks, outline along the original's edges."""
    specks = speck_share(subject)
    q_whole = _ramp(specks, 0.05, 0.25)
    reasons = [f"{specks:.1%} of the subject in specks (≤5% → 1.0, 0 at 25%)"]
    ratio = boundary_alignment(before.image, subject)
    if ratio is None:
        reasons.append("the subject's outline lies on the image border only")
        return q_whole, reasons
    q_edges = _ramp(ratio, 2.0, 1.3)
    reason = f"subject outline gradient {ratio:.1f}× its surroundings' (≥2 → 1.0, 0 at 1.3)"
    if q_edges < 1.0:
        reason += "; the cut does not follow the subject's edges"
    return min(q_whole, q_edges), [*reasons, reason]


def detail(image: np.ndarray, region: np.ndarray) -> float:
    """Mean absolute Laplacian of the grey image over `region`, in grey levels: how much fine detail it holds."""
    import cv2

    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY).astype(np.float32)
    return float(np.abs(cv2.Laplacian(grey, cv2.CV_32F, ksize=3))[region].mean())


#: Background detail below this (mean |Laplacian|, grey levels) is a plain backdrop: there is nothing to blur.
PLAIN_DETAIL = 1.0
#: Background pixels this close to the subject (px) are left out of the detail ratio (the tool's feathered band).
BAND_PX = 8


def check_background_blur(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Did the background lose its detail while the kept subject is a clean cut-out?

    Quality is the minimum of:
      - blurred: the background's fine detail (mean |Laplacian|, more than 8 px from the subject) after ÷ before
        ≤ 0.4 → 1.0, 0.0 at 0.75; a plain backdrop (detail < 1 grey level) has nothing to blur and is said so;
      - whole and cut along edges, as for background removal (a box-shaped "subject" fails).
    The subject must cover 0.5 %–98 % of the image; that its pixels are untouched is `unchanged_outside`'s job.
    """
    from costa.masks import dilate_mask

    split = _declared_split(before, after, output, "blurred")
    if isinstance(split, Verdict):
        return split
    subject, background = split
    kept = float(subject.mean())
    far = background & ~dilate_mask(subject, BAND_PX)
    far = far if far.any() else background
    was, now = detail(before.image, far), detail(after.image, far)
    if was < PLAIN_DETAIL:
        q_blur = 1.0
        reasons = [f"subject {kept:.1%} of the image; the background is plain (detail {was:.2f}): nothing to blur"]
    else:
        ratio = now / was
        q_blur = _ramp(-ratio, -0.4, -0.75)
        reasons = [
            f"subject {kept:.1%} of the image; background detail {was:.1f} → {now:.1f} grey levels "
            f"(×{ratio:.2f}; ≤0.4 → 1.0, 0 at 0.75)"
        ]
        if q_blur < 1.0:
            reasons[0] += ": the background is still sharp"
    q_shape, shape_reasons = _subject_shape(before, subject)
    return Verdict(min(q_blur, q_shape), (*reasons, *shape_reasons))


BACKGROUND_CHECKS: dict[str, CheckFn] = {
    "background_removal": check_background_removal,
    "background_blur": check_background_blur,
}
