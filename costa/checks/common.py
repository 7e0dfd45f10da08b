"""Measurements shared by the pixel-editing checks: unchanged-outside SSIM, colour distance, shading correlation.

All images are RGB uint8 (H, W, 3), masks bool (H, W). scikit-image and OpenCV are imported inside the functions, so
importing this module costs only numpy.
"""

from __future__ import annotations

import numpy as np

from costa.masks import dilate_mask
from costa.types import Verdict

#: SSIM at or below which the outside of an edit scores 0 (see `unchanged_outside`).
SSIM_FLOOR = 0.8
# SSIM's window side in pixels (scikit-image's default for uniform windows).
_SSIM_WIN = 7


def ssim_quality(ssim: float, threshold: float = 0.98, floor: float = SSIM_FLOOR) -> float:
    """Map an SSIM to quality: ≥ `threshold` → 1.0, falling linearly to 0.0 at `floor` (0.8) and below.

    Why linear from 0.98: re-encoding or a 1-px seam leaves SSIM ≥ 0.98, which should not cost anything; a visible
    change to the rest of the image (a shifted hue, a smudge across the frame) drives it toward 0.8 and below.
    """
    if threshold <= floor:
        raise ValueError(f"threshold must exceed the floor {floor}, got {threshold}")
    return float(np.clip((ssim - floor) / (threshold - floor), 0.0, 1.0))


def _ssim_map(before: np.ndarray, after: np.ndarray, ignore: np.ndarray | None = None) -> np.ndarray:
    """Per-pixel SSIM averaged over the colour channels, shape (H, W), exact wherever it can differ from 1.

    Pixels whose windows see no changed pixel have SSIM exactly 1, so only the bounding box of the changes (grown by
    two window radii, enough for every affected window to be computed as on the full image) is passed to scikit-image.
    Changes inside `ignore` do not widen that box: the caller will not read SSIM within a window radius of them.
    """
    from skimage.metrics import structural_similarity

    out = np.ones(before.shape[:2], dtype=np.float64)
    changed = np.any(before != after, axis=2)
    if ignore is not None:
        changed &= ~ignore
    if not changed.any():
        return out
    h, w = changed.shape
    win = min(_SSIM_WIN, h, w)
    win -= 1 - win % 2  # odd
    if win < 3:
        # Too small for a window: score each pixel 1 if unchanged else 0.
        return (~changed).astype(np.float64)
    radius = win // 2
    ys, xs = np.nonzero(changed)
    y1, y2 = max(0, int(ys.min()) - 2 * radius - 1), min(h, int(ys.max()) + 2 * radius + 2)
    x1, x2 = max(0, int(xs.min()) - 2 * radius - 1), min(w, int(xs.max()) + 2 * radius + 2)
    if min(y2 - y1, x2 - x1) < win:
        y1, y2, x1, x2 = 0, h, 0, w
    _, s = structural_similarity(
        before[y1:y2, x1:x2], after[y1:y2, x1:x2], win_size=win, channel_axis=2, data_range=255, full=True
    )
    out[y1:y2, x1:x2] = s.mean(axis=2)
    return out


def ssim_outside(before: np.ndarray, after: np.ndarray, region: np.ndarray) -> float | None:
    """Mean SSIM (per channel, 7×7 windows) over the pixels outside `region` grown by a window radius.

    The growth keeps windows that straddle the edit's border from counting against it: every window averaged here
    lies wholly outside `region`. Returns None when nothing lies outside (the edit covers the whole image).

    Raises:
        ValueError: the images or the region differ in size (a bug in the caller: check sizes first).
    """
    if before.shape != after.shape or region.shape != before.shape[:2]:
        raise ValueError(f"sizes differ: before {before.shape}, after {after.shape}, region {region.shape}")
    region = region.astype(bool)
    outside = ~dilate_mask(region, _SSIM_WIN // 2, square=True)
    if not outside.any():
        return None
    return float(_ssim_map(before, after, ignore=region)[outside].mean())


def unchanged_outside(
    before: np.ndarray, after: np.ndarray, region: np.ndarray | None, threshold: float = 0.98
) -> Verdict:
    """Check that an edit left the image outside its edited region alone.

    Quality is `ssim_quality(ssim_outside(...))`: SSIM ≥ `threshold` → 1.0, linearly down to 0.0 at SSIM 0.8. The
    SSIM is a mean over the whole outside, so it catches global damage (a shifted tone, a smear across the frame)
    rather than a few stray pixels.

    Args:
        before, after: the images before and after the step.
        region: bool (H, W) mask of the pixels the tool meant to change; None when it did not say.
        threshold: SSIM from which the outside counts as untouched.

    Returns:
        A neutral 1.0 verdict when the size changed (an upscale: nothing to compare pixel for pixel), when no region
        was declared (the whole-image SSIM is then given as a reason only) or when the region is the whole image;
        otherwise the scored verdict.

    Raises:
        ValueError: `region`'s shape is not the image's (a bug in the tool that declared it).
    """
    if before.shape != after.shape:
        return Verdict(1.0, ("size changed; outside check skipped",))
    if region is None:
        whole = _ssim_map(before, after).mean()
        return Verdict(1.0, (f"no edited region declared; whole-image SSIM {whole:.3f} (not scored)",))
    value = ssim_outside(before, after, region)
    if value is None:
        return Verdict(1.0, ("the edit covers the whole image; nothing outside it to compare",))
    quality = ssim_quality(value, threshold)
    reason = f"SSIM outside the edited region {value:.3f} (≥{threshold:g} → 1.0, 0 at {SSIM_FLOOR:g})"
    if quality < 1.0:
        reason += "; pixels outside the edited region changed"
    return Verdict(quality, (reason,))


def _lab_pixels(image: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of the masked pixels, shape (N, 3); L in 0–100."""
    from skimage.color import rgb2lab

    pixels = image[mask].reshape(-1, 1, 3)
    return rgb2lab(pixels).reshape(-1, 3)


def ciede2000_values(image: np.ndarray, mask: np.ndarray, rgb: tuple[int, int, int]) -> np.ndarray:
    """ΔE2000 of every masked pixel to the colour `rgb`, shape (N,). ~1 is a just-noticeable difference.

    Raises:
        ValueError: the mask is empty.
    """
    if not mask.any():
        raise ValueError("cannot measure colour in an empty mask")
    from skimage.color import deltaE_ciede2000, rgb2lab

    target = rgb2lab(np.array([[rgb]], dtype=np.float64) / 255.0).reshape(1, 3)
    return deltaE_ciede2000(_lab_pixels(image, mask), target)


def ciede2000_mean(image: np.ndarray, mask: np.ndarray, rgb: tuple[int, int, int]) -> float:
    """Mean ΔE2000 of the masked pixels to the colour `rgb` (see `ciede2000_values`)."""
    return float(ciede2000_values(image, mask, rgb).mean())


def shading_correlation(before: np.ndarray, after: np.ndarray, mask: np.ndarray) -> float | None:
    """Pearson correlation of CIELAB lightness inside `mask` before vs after: 1.0 = shading kept exactly.

    Returns:
        The correlation in [-1, 1]; 0.0 when the result is flat (shading destroyed) although the object was not;
        None when the object itself has no shading (L* standard deviation under 0.5), so there is nothing to keep.
    """
    if not mask.any():
        raise ValueError("cannot measure shading in an empty mask")
    l_before = _lab_pixels(before, mask)[:, 0]
    l_after = _lab_pixels(after, mask)[:, 0]
    if l_before.std() < 0.5:
        return None
    if l_after.std() < 1e-6:
        return 0.0
    return float(np.corrcoef(l_before, l_after)[0, 1])


#: Band widths (pixels) for `boundary_alignment`: the contour band is this wide on each side of the mask's edge…
_EDGE_BAND_PX = 1
#: …and the reference bands lie between these distances inside and outside it.
_REF_BAND_PX = (3, 6)
#: Least reference gradient (CIELAB units per pixel): on a flat, noise-free image a ratio would divide by ~0.
_GRADIENT_FLOOR = 1.0


def _colour_gradient(image: np.ndarray) -> np.ndarray:
    """Per-pixel colour gradient magnitude (CIELAB units per pixel; the largest over L*, a*, b*), lightly smoothed."""
    import cv2

    lab = cv2.cvtColor(image.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    smooth = cv2.GaussianBlur(lab, (0, 0), 1.0)
    out = np.zeros(image.shape[:2], np.float32)
    for c in range(3):
        gx = cv2.Sobel(smooth[..., c], cv2.CV_32F, 1, 0, ksize=3) / 8.0
        gy = cv2.Sobel(smooth[..., c], cv2.CV_32F, 0, 1, ksize=3) / 8.0
        np.maximum(out, np.hypot(gx, gy), out=out)
    return out


def boundary_alignment(image: np.ndarray, mask: np.ndarray) -> float | None:
    """How strongly a mask's contour follows image edges: median colour gradient on the contour ÷ the larger mean
    gradient in bands 3–6 px inside and outside it (at least 1 CIELAB unit per pixel).

    The median asks that most of the outline lie on an edge, so a mask that shares one side with the object and cuts
    through background elsewhere scores low too. A mask cut along an object's edge scores well above 2 (≥ 2.8 on the
    synthetic scenes); a box whose sides cross flat or textured background scores about 1 or less. Contour pixels
    within 3 px of the image border are ignored (the frame is not an edge the mask chose).

    Returns:
        The ratio, or None when the mask has no contour away from the image border (empty, or the whole image).
    """
    from costa.masks import erode_mask

    mask = mask.astype(bool)
    away = np.zeros_like(mask)
    away[3:-3, 3:-3] = True
    edge = dilate_mask(mask, _EDGE_BAND_PX) & ~erode_mask(mask, _EDGE_BAND_PX) & away
    if not edge.any() or mask.all():
        return None
    near, far = _REF_BAND_PX
    inside = erode_mask(mask, near) & ~erode_mask(mask, far) & away
    outside = dilate_mask(mask, far) & ~dilate_mask(mask, near) & away
    gradient = _colour_gradient(image)
    reference = max([float(gradient[b].mean()) for b in (inside, outside) if b.any()] + [_GRADIENT_FLOOR])
    return float(np.median(gradient[edge])) / reference
