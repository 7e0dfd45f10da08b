"""Whole-image measurements shared by the image tools, their checks and the benchmarks.

Edge blur (`blur_sigma`), sensor noise (`noise_sigma`), overshoot beyond the local range (`overshoot_share`), CIELAB
statistics (`lab_stats`), clipped pixels (`clipped_share`), PSNR and a seam-continuity measure. Images are RGB uint8
(H, W, 3); lightness is BT.601 luma in 0–255 unless a function says CIELAB. OpenCV is imported inside the functions,
so importing this module costs only numpy.

Example:
    >>> import numpy as np
    >>> flat = np.full((32, 32, 3), 128, np.uint8)
    >>> blur_sigma(flat) is None, clipped_share(flat), psnr(flat, flat)
    (True, 0.0, inf)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Gaussian σ (px) of the re-blur used by `blur_sigma`.
_REBLUR_SIGMA = 2.0
#: Least number of edge pixels `blur_sigma` needs for an estimate.
_MIN_EDGE_PIXELS = 20
#: Largest σ (px) `blur_sigma` reports: beyond it edges are too soft to measure against a σ=2 re-blur.
MAX_BLUR_SIGMA = 8.0


def luma(image: np.ndarray) -> np.ndarray:
    """BT.601 luma of an RGB uint8 image as float32 (H, W) in 0–255."""
    rgb = image.astype(np.float32)
    return 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]


def _gradient(y: np.ndarray) -> np.ndarray:
    import cv2

    gx = cv2.Sobel(y, cv2.CV_32F, 1, 0, ksize=3) / 8.0
    gy = cv2.Sobel(y, cv2.CV_32F, 0, 1, ksize=3) / 8.0
    return np.hypot(gx, gy)


def blur_sigma(image: np.ndarray, min_contrast: float = 2.0) -> float | None:
    """Estimate the Gaussian blur σ (px) of the image's edges by re-blurring, or None when it has too few edges.

    Why it works: a step edge blurred by σ has peak gradient ∝ 1/σ; blurring it again by σ_r gives ∝ 1/√(σ² + σ_r²).
    The median ratio r of the two peak gradients over the strongest edge pixels (local maxima in the top 3 % of
    gradient magnitude) gives σ = σ_r / √(r² − 1). A sharp photo measures ~0.5–0.9 px, a visibly soft one ≥ 1.5 px.

    Args:
        min_contrast: least gradient (luma levels per px) an edge pixel needs; it is raised to 4× the measured noise
            σ, so the peaks of grain or sensor noise are not taken for edges.

    Returns:
        σ in pixels, capped at `MAX_BLUR_SIGMA`; None when fewer than 20 edge pixels are found.
    """
    import cv2

    y = luma(image)
    g0 = _gradient(y)
    g1 = _gradient(cv2.GaussianBlur(y, (0, 0), _REBLUR_SIGMA))
    threshold = max(float(np.percentile(g0, 97)), min_contrast, 4.0 * noise_sigma(image))
    peaks = (g0 >= cv2.dilate(g0, np.ones((3, 3), np.uint8))) & (g0 > threshold)
    ratio = g0[peaks] / np.maximum(g1[peaks], 1e-6)
    ratio = ratio[ratio > 1.0]
    if len(ratio) < _MIN_EDGE_PIXELS:
        return None
    r = float(np.median(ratio))
    if r <= 1.0 + 1e-6:
        return MAX_BLUR_SIGMA
    return float(min(MAX_BLUR_SIGMA, _REBLUR_SIGMA / math.sqrt(r * r - 1.0)))


def noise_sigma(image: np.ndarray) -> float:
    """Estimate the standard deviation of additive noise (luma levels) from the flatter half of the image.

    Immerkær's estimator: the response to the 3×3 mask [[1,−2,1],[−2,4,−2],[1,−2,1]] cancels smooth content, and
    σ = √(π/2) · mean|response| / 6. Only pixels whose gradient is at or below the median count, so edges do not
    read as noise.
    """
    import cv2

    y = luma(image).astype(np.float64)
    if min(y.shape) < 3:
        return 0.0
    kernel = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float64)
    response = cv2.filter2D(y, cv2.CV_64F, kernel)[1:-1, 1:-1]
    g = _gradient(y.astype(np.float32))[1:-1, 1:-1]
    flat = g <= np.median(g)
    return float(math.sqrt(math.pi / 2.0) * np.abs(response[flat]).mean() / 6.0)


def noise_in_flat(before: np.ndarray, after: np.ndarray) -> tuple[float, float]:
    """Noise σ (luma levels) of `before` and of `after`, both measured in the flatter half of `before`.

    Measuring both on the same pixels tells noise amplified by sharpening from edges made crisper.
    """
    import cv2

    kernel = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float64)
    yb = luma(before).astype(np.float64)
    ya = luma(after).astype(np.float64)
    g = _gradient(yb.astype(np.float32))[1:-1, 1:-1]
    flat = g <= np.median(g)
    out = []
    for y in (yb, ya):
        response = cv2.filter2D(y, cv2.CV_64F, kernel)[1:-1, 1:-1]
        out.append(float(math.sqrt(math.pi / 2.0) * np.abs(response[flat]).mean() / 6.0))
    return out[0], out[1]


def overshoot_share(before: np.ndarray, after: np.ndarray, radius_px: int = 2, tolerance: float = 20.0) -> float:
    """Share of pixels whose luma in `after` leaves `before`'s local range (a (2r+1)² window) by more than
    `tolerance` levels: the halos and ringing a sharpening filter adds beside edges."""
    import cv2

    yb, ya = luma(before), luma(after)
    kernel = np.ones((2 * radius_px + 1, 2 * radius_px + 1), np.uint8)
    high, low = cv2.dilate(yb, kernel), cv2.erode(yb, kernel)
    beyond = np.maximum(ya - high, low - ya)
    return float((beyond > tolerance).mean())


def clipped_share(image: np.ndarray, mask: np.ndarray | None = None) -> float:
    """Share of pixels (inside `mask` if given) with a channel at 0 or 255 — detail lost to clipping."""
    clipped = np.any((image == 0) | (image == 255), axis=2)
    if mask is not None:
        if not mask.any():
            return 0.0
        clipped = clipped[mask]
    return float(clipped.mean())


@dataclass(frozen=True)
class LabStats:
    """CIELAB statistics of an image region: mean L* (0–100), L* standard deviation (contrast), mean chroma C*ab
    (saturation), mean a* and b* (b* > 0 is yellow/warm, < 0 blue/cool)."""

    lightness: float
    contrast: float
    chroma: float
    a: float
    b: float


def lab_stats(image: np.ndarray, mask: np.ndarray | None = None) -> LabStats:
    """CIELAB (D65) statistics of `image` (inside `mask` when given).

    Raises:
        ValueError: the mask is empty.
    """
    import cv2

    lab = cv2.cvtColor(image.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    pixels = lab.reshape(-1, 3) if mask is None else lab[mask]
    if len(pixels) == 0:
        raise ValueError("cannot measure colour statistics over an empty region")
    chroma = np.hypot(pixels[:, 1], pixels[:, 2])
    return LabStats(
        lightness=float(pixels[:, 0].mean()),
        contrast=float(pixels[:, 0].std()),
        chroma=float(chroma.mean()),
        a=float(pixels[:, 1].mean()),
        b=float(pixels[:, 2].mean()),
    )


def psnr(result: np.ndarray, truth: np.ndarray) -> float:
    """PSNR in dB of `result` against `truth` (same shape, peak 255); inf when identical."""
    if result.shape != truth.shape:
        raise ValueError(f"PSNR needs equal shapes, got {result.shape} and {truth.shape}")
    mse = float(np.mean((result.astype(np.float64) - truth.astype(np.float64)) ** 2))
    return math.inf if mse == 0 else 10.0 * math.log10(255.0**2 / mse)


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    """Mean SSIM of two RGB uint8 images of equal shape (7×7 windows, per channel)."""
    from skimage.metrics import structural_similarity

    win = min(7, a.shape[0], a.shape[1])
    win -= 1 - win % 2
    if win < 3:
        return 1.0 if np.array_equal(a, b) else 0.0
    return float(structural_similarity(a, b, win_size=win, channel_axis=2, data_range=255))


def seam_jump(image: np.ndarray, axis: int, index: int, depth_px: int = 6, robust: bool = False) -> tuple[float, float]:
    """How abrupt a seam is: the absolute luma step across the seam, and the step between neighbouring lines within
    `depth_px` on either side of it, each averaged over the positions along the seam.

    The seam lies between line `index − 1` and line `index` along `axis` (0: between rows, 1: between columns). A
    seamless join has a step across it like the steps beside it. `robust` takes the median over positions instead of
    the mean: an edge of the scene that happens to lie on part of the seam is a minority of its length, while a seam
    a tool made runs along all of it.
    """
    y = luma(image)
    if axis == 1:
        y = y.T
    n = y.shape[0]
    if not 0 < index < n:
        raise ValueError(f"seam index {index} must be inside (0, {n})")
    reduce = np.median if robust else np.mean
    across = float(reduce(np.abs(y[index] - y[index - 1])))
    lo, hi = max(1, index - depth_px), min(n - 1, index + depth_px)
    steps = [np.abs(y[i] - y[i - 1]) for i in range(lo, hi + 1) if i != index]
    beside = float(reduce(np.mean(steps, axis=0))) if steps else across
    return across, beside


#: Side of a CIELAB histogram bin (ΔE units) for palettes: a band's colours count with their neighbours.
COLOUR_BIN = 8.0


def colour_bins(image: np.ndarray) -> np.ndarray:
    """Integer CIELAB bin per pixel (L, a, b each `COLOUR_BIN` wide) of an RGB uint8 array, shape (H, W)."""
    import cv2

    lab = cv2.cvtColor(np.ascontiguousarray(image).astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    q = np.floor(lab / COLOUR_BIN).astype(np.int64)
    return (q[..., 0] * 64 + (q[..., 1] + 32)) * 64 + (q[..., 2] + 32)


def palette_near(image: np.ndarray, min_share: float = 0.0) -> np.ndarray:
    """The colour bins of `image` and every bin one step away in L, a or b (shading and anti-aliasing beside a
    colour count as that colour): what a region "has" when asking whether another region shows new colours.

    `min_share` keeps only bins holding at least that share of the pixels (the dominant colours of a noisy texture,
    not every colour its grain touches).
    """
    bins, counts = np.unique(colour_bins(image), return_counts=True)
    if min_share > 0:
        bins = bins[counts >= min_share * counts.sum()]
    offsets = [(dl * 64 + da) * 64 + db for dl in (-1, 0, 1) for da in (-1, 0, 1) for db in (-1, 0, 1)]
    return np.unique((bins[:, None] + np.asarray(offsets)[None, :]).ravel())
