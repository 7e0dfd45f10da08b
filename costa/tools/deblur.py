"""Image deblurring by classical filters: thresholded unsharp masking, and Wiener deconvolution with an estimated PSF.

Both first measure the image's edge blur σ and noise (`costa.imagestats`), so they adapt to the image:

- `UnsharpDeblurrer` adds back `amount` × (image − Gaussian(image, σ)) where that detail rises above the noise
  (a soft threshold at 2.5× the noise σ), so flat areas are not made grainy. Milliseconds.
- `WienerDeblurrer` deconvolves the luma channel with a Gaussian PSF of σ × `psf_scale` (Wiener–Hunt with a Laplacian
  regulariser whose weight grows with the measured noise, scikit-image), keeping the chroma. Undersizing the PSF
  (0.8 by default) trades a little sharpness for no ringing when σ is overestimated. Tens of milliseconds.

Measured on 24 synthetic scenes blurred by σ 1–2.5 px with noise σ 0.5–2: the unsharp filter gained +1.2 to +2.0 dB
PSNR against the sharp original on average and never lost more than 0.7 dB; Wiener at psf_scale 0.8 gained about
+1 dB and sharpened edges more (edge σ × 0.7 vs × 0.82), with rare losses up to 1.4 dB where texture rings.

A subtask with a target acts only inside the user's region (see `costa.tools.region`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from costa.errors import ToolError
from costa.imagestats import blur_sigma, noise_sigma
from costa.tools.base import Tool
from costa.tools.params import float_param
from costa.tools.region import feathered, target_region
from costa.types import EditState, Subtask, ToolOutput

#: PSF σ bounds in pixels: below 0.6 an image is as sharp as its pixels; above 6 a Gaussian is the wrong model.
MIN_SIGMA, MAX_SIGMA = 0.6, 6.0
#: Radius used by the unsharp filter when the image has too few edges to measure.
FALLBACK_RADIUS = 1.5
#: Pixels the region's edge is feathered over when a target limits the filter.
_FEATHER_PX = 4.0


def _compose(state: EditState, sharpened: np.ndarray, region: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The output image and its edited region: the filter's result everywhere, or blended into the target's region."""
    if region is None:
        return sharpened, np.ones((state.height, state.width), dtype=bool)
    weight = feathered(region, _FEATHER_PX)[..., None]
    out = state.image.astype(np.float32) + weight * (sharpened.astype(np.float32) - state.image.astype(np.float32))
    return np.clip(np.rint(out), 0, 255).astype(np.uint8), weight[..., 0] > 0


def _measure(image: np.ndarray, sigma_param: float) -> tuple[float | None, float]:
    """(blur σ to undo or None when unmeasurable, noise σ) — a positive `sigma_param` overrides the estimate."""
    sigma = sigma_param if sigma_param > 0 else blur_sigma(image)
    if sigma is not None:
        sigma = float(np.clip(sigma, MIN_SIGMA, MAX_SIGMA))
    return sigma, noise_sigma(image)


class UnsharpDeblurrer(Tool):
    """Sharpen by thresholded unsharp masking at the measured blur radius (`unsharp_deblur`).

    Params:
        amount: how much of the detail layer is added back (1.5 = +150 %).
        radius: Gaussian σ of the detail layer in pixels; 0 uses the measured edge blur.
        threshold: detail (levels) below which nothing is added; 0 uses 2.5 × the measured noise + 1.
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        amount = float_param(params, "amount")
        radius_param = float_param(params, "radius")
        threshold_param = float_param(params, "threshold")
        region = target_region(state, subtask, "sharpen")
        sigma, noise = _measure(state.image, radius_param)
        radius = sigma if sigma is not None else FALLBACK_RADIUS
        threshold = threshold_param if threshold_param > 0 else 2.5 * noise + 1.0

        import cv2

        image = state.image.astype(np.float32)
        detail = image - cv2.GaussianBlur(image, (0, 0), radius)
        magnitude = np.abs(detail).max(axis=2, keepdims=True)
        weight = np.clip((magnitude - threshold) / threshold, 0.0, 1.0)
        sharpened = np.clip(np.rint(image + amount * weight * detail), 0, 255).astype(np.uint8)
        out, edited = _compose(state, sharpened, region)
        measured = "measured" if sigma is not None and radius_param == 0 else "given"
        return ToolOutput(
            image=out,
            edited_region=edited,
            notes=f"unsharp mask: radius {radius:.2f} px ({measured}), amount {amount:g}, threshold {threshold:.1f}",
        )


def gaussian_psf(sigma: float) -> np.ndarray:
    """A normalised 2-D Gaussian kernel of standard deviation `sigma` px, 2⌈3σ⌉+1 px square."""
    half = int(np.ceil(3.0 * sigma))
    x = np.arange(-half, half + 1, dtype=np.float64)
    g = np.exp(-(x**2) / (2.0 * sigma * sigma))
    kernel = np.outer(g, g)
    return kernel / kernel.sum()


class WienerDeblurrer(Tool):
    """Deconvolve the luma with an estimated Gaussian PSF by Wiener–Hunt filtering (`wiener_deblur`).

    Params:
        psf_scale: the PSF's σ as a share of the measured edge blur (below 1 avoids ringing).
        noise_weight: regulariser weight per unit of noise variance (higher = smoother, less ringing).
        sigma: PSF σ in pixels; 0 measures it from the image's edges.
    """

    def load(self) -> None:
        from skimage.restoration import wiener  # ~1 s to import: once, not in the timed call

        self._wiener = wiener

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        psf_scale = float_param(params, "psf_scale")
        noise_weight = float_param(params, "noise_weight")
        sigma_param = float_param(params, "sigma")
        region = target_region(state, subtask, "sharpen")
        sigma, noise = _measure(state.image, sigma_param)
        if sigma is None:
            raise ToolError("cannot estimate the blur: the image has too few edges to measure (give a sigma)")
        psf_sigma = max(0.3, sigma * psf_scale)
        # The regulariser weight (image scaled to [0, 1]) follows the noise variance, floored so clean images
        # still get a little damping.
        balance = max(1e-3, noise_weight * 50.0 * (noise / 255.0) ** 2)

        import cv2

        ycc = cv2.cvtColor(state.image, cv2.COLOR_RGB2YCrCb).astype(np.float64)
        psf = gaussian_psf(psf_sigma)
        pad = psf.shape[0]  # reflect-pad by the PSF's width so the FFT's wrap-around does not ring at the borders
        padded = np.pad(ycc[..., 0] / 255.0, pad, mode="reflect")
        restored = self._wiener(padded, psf, balance, clip=False)[pad:-pad, pad:-pad]
        ycc[..., 0] = np.clip(restored * 255.0, 0, 255)
        sharpened = cv2.cvtColor(np.rint(ycc).astype(np.uint8), cv2.COLOR_YCrCb2RGB)
        out, edited = _compose(state, sharpened, region)
        return ToolOutput(
            image=out,
            edited_region=edited,
            notes=f"Wiener deconvolution: PSF σ {psf_sigma:.2f} px (edge blur {sigma:.2f} × {psf_scale:g}), "
            f"noise σ {noise:.1f}, balance {balance:.4f}",
        )
