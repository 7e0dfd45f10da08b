"""Global adjustments as tone curves: a right one (a smooth curve strong enough to be seen that never clips) and a
wrong one (a linear gain that clips a large share of the image), for the checks' false-pass cases
(`costa.synthetic.cases_checks`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: What a right adjustment achieves: mean luma change (0–1 scale) for brightness, spread factor for contrast.
_BRIGHTNESS_STEP = {"brighter": 0.08, "slightly brighter": 0.045, "darker": -0.08}
_CONTRAST_FACTOR = 1.3


def _luma01(x: np.ndarray) -> np.ndarray:
    return x[..., 0] * 0.299 + x[..., 1] * 0.587 + x[..., 2] * 0.114


def _to_uint8(x: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(x * 255.0), 0, 255).astype(np.uint8)


def _lightness_spread(image: np.ndarray) -> float:
    """Standard deviation of CIELAB L* over the image (what "contrast" means to a viewer and to the check)."""
    from costa.imagestats import lab_stats

    return lab_stats(image).contrast


def _solve(apply: Callable[[float], np.ndarray], measure: Callable[[np.ndarray], float], goal: float) -> np.ndarray:
    """Bisect a curve's strength in [0, 1] until `measure` of the result reaches `goal` (monotone in strength)."""
    lo, hi = 0.0, 1.0
    for _ in range(20):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if measure(apply(mid)) < goal else (lo, mid)
    return apply(hi)


def tone(image: np.ndarray, request: str, clip: bool) -> np.ndarray:
    """`request` as a right adjustment (`clip` False): a smooth curve strong enough to be seen (mean luma moved by
    `_BRIGHTNESS_STEP`, or the luma spread × `_CONTRAST_FACTOR`) that never clips; or (`clip` True) a linear gain that
    clips a large share of the image to black or white."""
    x = image.astype(np.float32) / 255.0
    if clip:  # linear gains set from the image's own levels, so 20–40 % of its values are clipped whatever it is
        p20, p40, p60, p80 = (float(v) for v in np.quantile(x, (0.2, 0.4, 0.6, 0.8)))
        if request == "more contrast":
            y = np.clip((x - p20) / max(p80 - p20, 1e-3), 0, 1)
        elif request in ("brighter", "slightly brighter"):
            y = np.clip(x / max(p60, 1e-3), 0, 1)
        elif request == "darker":
            y = np.clip((x - p40) / max(1.0 - p40, 1e-3), 0, 1)
        else:
            raise ValueError(f"no tone curve for {request!r}")
    elif request in _BRIGHTNESS_STEP:
        step = _BRIGHTNESS_STEP[request]
        base = float(_luma01(x).mean())

        def gamma(t: float) -> np.ndarray:
            return x ** (1.0 - 0.75 * t) if step > 0 else x ** (1.0 + 3.0 * t)

        y = _solve(gamma, lambda im: abs(float(_luma01(im).mean()) - base), abs(step))
    elif request == "more contrast":  # stretch L* about its mean, a* b* kept; a soft knee keeps the ends in range
        import cv2

        lab0 = cv2.cvtColor(x, cv2.COLOR_RGB2Lab)
        m = float(lab0[..., 0].mean())
        spread = _lightness_spread(image)
        for factor in (_CONTRAST_FACTOR, 1.6, 2.0, 2.6):  # saturated colours leave the gamut: stretch until it shows
            lab = lab0.copy()
            d = (lab0[..., 0] - m) * factor
            lab[..., 0] = np.where(d >= 0, m + (100.0 - m) * np.tanh(d / (100.0 - m)), m - m * np.tanh(-d / m))
            y = np.clip(cv2.cvtColor(lab, cv2.COLOR_Lab2RGB), 0, 1)
            if _lightness_spread(_to_uint8(y)) >= 1.2 * spread:
                break
    else:
        raise ValueError(f"no tone curve for {request!r}")
    if not clip:  # a channel that was not at 0 or 255 is not pushed there (that is what clipping means)
        ends = (image == 0) | (image == 255)
        y = np.where(ends, y, np.clip(y, 1.0 / 255.0, 254.0 / 255.0))
    return np.clip(np.rint(y * 255.0), 0, 255).astype(np.uint8)
