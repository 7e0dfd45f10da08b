"""Graded quality against ground truth: how well a step did what was asked, in [0, 1], where the truth is known.

One meaning of quality for the tables, the search and the α preview: not whether a check passed, but how close the
result is to the ideal one. Each grade names its measure; every one is 1.0 for the ideal result.

- masks: IoU with the true mask;
- upscaling: SSIM against the image before it was shrunk;
- deblurring: SSIM against the sharp image;
- outpainting: SSIM of the new margins against the scene that was really there;
- removal: SSIM against the true background over the removed region (grown 2 px, as the tools bench measures PSNR);
- recolouring: the mean of three parts: colour (median ΔE2000 to the asked colour inside the true mask, ≤ 10 → 1.0,
  linear to 0.0 at 30), shading (correlation of L* before/after there, ≥ 0.9 → 1.0, 0.0 at 0.5) and the SSIM outside
  the mask (grown 7 px so no SSIM window sees the edit).

PSNR is reported beside SSIM (`psnr_db`) for readers who think in dB; the grade itself is SSIM, which stays in [0, 1]
and compares structure, not only mean error.

Example:
    >>> import numpy as np
    >>> a = np.zeros((4, 4), bool); a[:2] = True
    >>> b = np.zeros((4, 4), bool); b[:1] = True
    >>> mask_grade(b, a).value
    0.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from costa.masks import dilate_mask


@dataclass(frozen=True)
class Grade:
    """A graded quality in [0, 1], the measure it came from, and further measures for reports (name → value)."""

    value: float
    measure: str
    details: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        if not 0.0 <= self.value <= 1.0 or math.isnan(self.value):
            raise ValueError(f"a grade must be in [0, 1], got {self.value}")


def _unit(x: float) -> float:
    return 0.0 if math.isnan(x) else float(min(1.0, max(0.0, x)))


def _ramp(value: float, full: float, zero: float) -> float:
    return _unit((value - zero) / (full - zero))


def _ssim_map(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-pixel SSIM (7×7 windows, mean over channels) of two RGB uint8 images of one shape."""
    from skimage.metrics import structural_similarity

    win = min(7, a.shape[0], a.shape[1])
    win -= 1 - win % 2
    if win < 3:
        return np.full(a.shape[:2], 1.0 if np.array_equal(a, b) else 0.0)
    _, full = structural_similarity(a, b, win_size=win, channel_axis=2, data_range=255, full=True)
    return np.asarray(full, np.float64).mean(axis=2)


def psnr_db(result: np.ndarray, truth: np.ndarray, region: np.ndarray | None = None) -> float:
    """PSNR in dB of `result` against `truth` (over the bool `region` when given); inf when identical there."""
    sel = (slice(None),) if region is None else (region,)
    diff = result[sel].astype(np.float64) - truth[sel].astype(np.float64)
    mse = float(np.mean(diff**2)) if diff.size else 0.0
    return math.inf if mse == 0 else 10.0 * math.log10(255.0**2 / mse)


def mask_grade(mask: np.ndarray, truth: np.ndarray) -> Grade:
    """IoU of a predicted bool mask with the true one (0 when both are empty)."""
    union = int(np.logical_or(mask, truth).sum())
    iou = 0.0 if union == 0 else int(np.logical_and(mask, truth).sum()) / union
    return Grade(iou, "mask IoU")


def image_grade(result: np.ndarray, truth: np.ndarray, measure: str, region: np.ndarray | None = None) -> Grade:
    """SSIM of `result` against `truth` (mean over `region` when given), with PSNR in the details; 0.0 when the
    result does not have the truth's shape (e.g. an upscale by the wrong factor)."""
    if result.shape != truth.shape:
        return Grade(0.0, measure, (("shape mismatch", 1.0),))
    full = _ssim_map(result, truth)
    if region is not None and not region.any():
        raise ValueError("image_grade needs a non-empty region")
    value = float(full[region].mean()) if region is not None else float(full.mean())
    return Grade(_unit(value), measure, (("PSNR dB", psnr_db(result, truth, region)),))


def upscale_grade(result: np.ndarray, high_res: np.ndarray) -> Grade:
    """Upscaling: SSIM against the image before it was shrunk."""
    return image_grade(result, high_res, "SSIM vs true high-res")


def deblur_grade(result: np.ndarray, sharp: np.ndarray) -> Grade:
    """Deblurring: SSIM against the sharp image."""
    return image_grade(result, sharp, "SSIM vs sharp")


def outpaint_grade(result: np.ndarray, truth: np.ndarray, origin: tuple[int, int], size: tuple[int, int]) -> Grade:
    """Outpainting: SSIM of the new margins against the true scene; `origin` (x, y) and `size` (h, w) locate the
    input inside the result."""
    if result.shape != truth.shape:
        return Grade(0.0, "margin SSIM vs true scene", (("shape mismatch", 1.0),))
    new = np.ones(result.shape[:2], bool)
    x0, y0 = origin
    new[y0 : y0 + size[0], x0 : x0 + size[1]] = False
    if not new.any():
        return Grade(0.0, "margin SSIM vs true scene", (("no margin added", 1.0),))
    return image_grade(result, truth, "margin SSIM vs true scene", new)


def removal_grade(result: np.ndarray, background: np.ndarray, removed: np.ndarray, grow_px: int = 2) -> Grade:
    """Removal: SSIM against the true background over the removed region grown by `grow_px`."""
    return image_grade(result, background, "SSIM vs true background", dilate_mask(removed, grow_px))


def recolour_grade(before: np.ndarray, result: np.ndarray, truth_mask: np.ndarray, rgb: tuple[int, int, int]) -> Grade:
    """Recolouring: mean of the colour, shading and outside-SSIM parts (see the module docstring)."""
    from costa.checks.common import ciede2000_values, shading_correlation

    if result.shape != before.shape:
        return Grade(0.0, "recolour ΔE/shading/outside", (("shape mismatch", 1.0),))
    delta_e = float(np.median(ciede2000_values(result, truth_mask, rgb)))
    corr = shading_correlation(before, result, truth_mask)
    outside = ~dilate_mask(truth_mask, 7)
    ssim_out = float(_ssim_map(before, result)[outside].mean()) if outside.any() else 1.0
    q_colour = _ramp(delta_e, 10.0, 30.0)
    q_shade = 1.0 if corr is None else _ramp(corr, 0.9, 0.5)
    value = (q_colour + q_shade + _unit(ssim_out)) / 3.0
    details = [("median ΔE2000", delta_e), ("outside SSIM", ssim_out)]
    if corr is not None:
        details.append(("shading corr", float(corr)))
    return Grade(_unit(value), "recolour ΔE/shading/outside", tuple(details))
