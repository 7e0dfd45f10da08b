"""Programmatic checks for the whole-image subtasks: upscaling, deblurring, outpainting, global adjustment.

Each follows `CheckFn` and returns the minimum of its measures' qualities, every measure in the reasons with the
numbers that map to 1.0 and to 0.0 (piecewise linear between). The search's pass threshold is 0.8. The requests
(scale factor, margins, adjustment) are read with the same parsers the tools use, so a tool that did something other
than what was asked fails.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from costa.checks.artifacts import (
    clipping_verdict,
    copied_colour_share,
    foreign_colour_verdict,
    margin_stats,
    mirror_verdict,
)
from costa.checks.context import CheckContext, CheckFn
from costa.errors import ToolError
from costa.imagestats import (
    blur_sigma,
    clipped_share,
    lab_stats,
    luma,
    noise_in_flat,
    overshoot_share,
    psnr,
    seam_jump,
    ssim,
)
from costa.types import EditState, Subtask, ToolOutput, Verdict

if TYPE_CHECKING:
    from costa.tools.outpaint import Margins


def _ramp(value: float, full: float, zero: float) -> float:
    """1.0 at `full`, 0.0 at `zero`, linear between (works for either direction)."""
    if math.isnan(value):
        return 0.0
    return float(np.clip((value - zero) / (full - zero), 0.0, 1.0))


def _verdict(parts: list[tuple[float, str]]) -> Verdict:
    return Verdict(min(q for q, _ in parts), tuple(r for _, r in parts))


def _resize(image: np.ndarray, height: int, width: int, how: str) -> np.ndarray:
    import cv2

    flag = {"area": cv2.INTER_AREA, "cubic": cv2.INTER_CUBIC}[how]
    return cv2.resize(image, (width, height), interpolation=flag)


def _region(before: EditState, after: EditState, output: ToolOutput) -> np.ndarray | None:
    """The pixels a regional edit changed (the tool's declared region); None when it covered the whole image."""
    return None if output.edited_region is None or output.edited_region.all() else output.edited_region


# ------------------------------------------------------------------------------------------------- upscaling


def check_upscaling(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Is the image `scale` × larger, the same picture, and at least as sharp as a plain bicubic upscale?

    - size: each side within 1 px of scale × the input's, else 0;
    - content: the output shrunk back to the input's size (area averaging) against the input — PSNR ≥ 30 dB → 1.0,
      0 at 22 dB; SSIM ≥ 0.90 → 1.0, 0 at 0.70 (an upscaler that smooths texture away or shifts colours fails);
    - sharpness: edge blur σ (`imagestats.blur_sigma`) of the output over that of a bicubic upscale of the input —
      ≤ 0.8 (sharper than bicubic, as a learned upscaler should be) → 1.0, 1.0 (plain interpolation) → 0.875,
      0 at 2.4 (much blurrier than bicubic); neutral when the image has too few edges to measure.
    """
    from costa.tools.upscale import parse_scale, target_size

    try:
        scale = parse_scale(subtask.result, subtask.params)
    except ToolError as e:
        return Verdict(0.0, (f"cannot tell the asked factor: {e}",))
    want_h, want_w = target_size(before.height, before.width, scale)
    if abs(after.height - want_h) > 1 or abs(after.width - want_w) > 1:
        return Verdict(
            0.0,
            (
                f"output is {after.width}x{after.height}; ×{scale:g} of {before.width}x{before.height} "
                f"is {want_w}x{want_h}",
            ),
        )
    parts = [(1.0, f"size {after.width}x{after.height} = ×{scale:g}")]
    back = _resize(after.image, before.height, before.width, "area")
    value = psnr(back, before.image)
    parts.append(
        (_ramp(min(value, 99.0), 30.0, 22.0), f"shrunk back vs input PSNR {value:.1f} dB (≥30 → 1.0, 0 at 22)")
    )
    s = ssim(back, before.image)
    parts.append((_ramp(s, 0.90, 0.70), f"shrunk back vs input SSIM {s:.3f} (≥0.90 → 1.0, 0 at 0.70)"))
    sigma_out = blur_sigma(after.image)
    sigma_bicubic = blur_sigma(_resize(before.image, after.height, after.width, "cubic"))
    if sigma_out is None or sigma_bicubic is None:
        parts.append((1.0, "too few edges to compare sharpness with a bicubic upscale (not scored)"))
    else:
        ratio = sigma_out / sigma_bicubic
        parts.append(
            (
                _ramp(ratio, 0.8, 2.4),
                f"edge blur {sigma_out:.2f} px vs bicubic {sigma_bicubic:.2f} px: ratio {ratio:.2f} "
                "(≤0.8 sharper → 1.0, 1.0 → 0.875, 0 at 2.4)",
            )
        )
    return _verdict(parts)


# ------------------------------------------------------------------------------------------------ deblurring


def check_deblurring(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Are the edges sharper, without amplified noise, halos or a tone shift?

    - sharper: edge blur σ after / before ≤ 0.90 → 1.0, 0 at 1.02 (0.8 ⇔ 0.924); without measurable edges, the
      variance of the Laplacian must grow instead (≥ 1.3× → 1.0, 0 at 1.0);
    - noise: noise σ in the flatter half of the input, after / before ≤ 2 → 1.0, 0 at 4;
    - halos and ringing: share of pixels whose luma leaves the input's 5×5 local range by > 20 levels ≤ 2 % → 1.0,
      0 at 8 %;
    - tone: |mean L* change| ≤ 2 → 1.0, 0 at 8.
    Measured inside the target's region when the edit was limited to one.
    """
    if before.image.shape != after.image.shape:
        return Verdict(0.0, ("the image size changed, so sharpness cannot be compared",))
    region = _region(before, after, output)
    b_img, a_img = before.image, after.image
    if region is not None:
        ys, xs = np.nonzero(region)
        crop = (slice(int(ys.min()), int(ys.max()) + 1), slice(int(xs.min()), int(xs.max()) + 1))
        b_img, a_img = b_img[crop], a_img[crop]
    parts: list[tuple[float, str]] = []
    s_before, s_after = blur_sigma(b_img), blur_sigma(a_img)
    if s_before is not None and s_after is not None:
        ratio = s_after / s_before
        parts.append(
            (
                _ramp(ratio, 0.90, 1.02),
                f"edge blur {s_before:.2f} → {s_after:.2f} px, ratio {ratio:.2f} (≤0.90 → 1.0, 0 at 1.02)",
            )
        )
    else:
        import cv2

        lap_b = float(cv2.Laplacian(luma(b_img), cv2.CV_32F).var())
        lap_a = float(cv2.Laplacian(luma(a_img), cv2.CV_32F).var())
        gain = lap_a / max(lap_b, 1e-6)
        parts.append(
            (_ramp(gain, 1.3, 1.0), f"too few edges for edge blur; Laplacian variance ×{gain:.2f} (≥1.3 → 1.0)")
        )
    n_before, n_after = noise_in_flat(b_img, a_img)
    noise_ratio = (n_after + 0.25) / (n_before + 0.25)  # +0.25 levels: clean synthetic images have almost no noise
    parts.append(
        (
            _ramp(noise_ratio, 2.0, 4.0),
            f"noise {n_before:.2f} → {n_after:.2f} levels, ×{noise_ratio:.2f} (≤2 → 1.0, 0 at 4)",
        )
    )
    over = overshoot_share(b_img, a_img)
    parts.append(
        (_ramp(over, 0.02, 0.08), f"{over:.1%} of pixels overshoot their surroundings by >20 (≤2% → 1.0, 0 at 8%)")
    )
    d_l = lab_stats(a_img).lightness - lab_stats(b_img).lightness
    parts.append((_ramp(abs(d_l), 2.0, 8.0), f"mean L* moved {d_l:+.1f} (≤2 → 1.0, 0 at 8)"))
    return _verdict(parts)


# ----------------------------------------------------------------------------------------------- outpainting


def _band(image: np.ndarray, side: str, depth: int) -> np.ndarray:
    """The outermost `depth` lines of `image` on `side`."""
    if side == "left":
        return image[:, :depth]
    if side == "right":
        return image[:, image.shape[1] - depth :]
    if side == "top":
        return image[:depth]
    return image[image.shape[0] - depth :]


def _background_texture(gradients: np.ndarray) -> float:
    """Mean luma gradient (levels per pixel) of a band without its strongest 20 %: the texture a fill should continue.

    The strongest steps are the edges of salient things (letters, an object's outline), which a correct extension of
    the background does not repeat; the plain mean made a clean gradient fill next to a line of text look like a
    smear (bench task 10: 0.81 vs 4.84 levels).
    """
    values = gradients.ravel()
    if values.size == 0:
        return 0.0
    cut = float(np.percentile(values, 80))
    return float(values[values <= cut].mean())


#: Depth (pixels) of the strips on both sides of a seam whose mean colours must agree: the scene may change further
#: out (a true scene around a crop holds other things), but right at the seam it continues.
SEAM_STRIP_PX = 12


def side_out(side: str) -> str:
    """The side of a new margin that touches the seam ("left" margin → its right lines)."""
    return {"left": "right", "right": "left", "top": "bottom", "bottom": "top"}[side]


def check_outpainting(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Is the canvas the asked size with the original untouched at its place, and does each new border continue it?

    - size: exactly the margins `outpaint_margins` reads from the subtask, else 0;
    - original kept: the image at its offset against the input, PSNR ≥ 45 dB → 1.0, 0 at 30 dB;
    - seam: per new side, median luma step across the seam vs the steps beside it (+1 level), ≤ 2× → 1.0, 0 at 5×;
    - colour: per side, CIELAB ΔE between the mean of the new border's strip at the seam (`SEAM_STRIP_PX`) and the
      mean of the image's strip beside it, allowed 6 + half that strip's colour spread → 1.0, 0 at three times that;
    - texture: per side, mean gradient (strongest 20 % left out, `_background_texture`) of the new border vs that
      band (+0.5), within 2.5× either way → 1.0, 0 at 8× (a flat smear next to texture, or noise next to a smooth sky);
    - no copies: per side, salient content mirrored from or cloned out of the image, and colours the image has
      elsewhere but not beside the seam (fragments of letters pasted into a plain extension; `checks.artifacts`),
      and no text read in a margin that the image did not show there.
    """
    import cv2

    from costa.tools.outpaint import outpaint_margins

    try:
        m = outpaint_margins(before.height, before.width, subtask.result, subtask.params)
    except ToolError as e:
        return Verdict(0.0, (f"cannot tell the asked extension: {e}",))
    want_h, want_w = m.new_size(before.height, before.width)
    if (after.height, after.width) != (want_h, want_w):
        return Verdict(0.0, (f"canvas is {after.width}x{after.height}, expected {want_w}x{want_h}",))
    h, w = before.height, before.width
    inner = after.image[m.top : m.top + h, m.left : m.left + w]
    kept = psnr(inner, before.image)
    parts = [
        (_ramp(min(kept, 99.0), 45.0, 30.0), f"original at offset ({m.left}, {m.top}): PSNR {kept:.1f} dB (≥45 → 1.0)")
    ]
    lab = cv2.cvtColor(after.image.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    y = luma(after.image)
    gx = np.abs(np.diff(y, axis=1))
    gy = np.abs(np.diff(y, axis=0))
    for side in m.sides():
        depth = getattr(m, side)
        strip = min(depth, SEAM_STRIP_PX)
        if side in ("left", "right"):
            rows = slice(m.top, m.top + h)
            index = m.left if side == "left" else m.left + w
            across, beside = seam_jump(after.image[rows], axis=1, index=index, robust=True)
            new_lab = _band(lab[rows, : m.left] if side == "left" else lab[rows, m.left + w :], side_out(side), strip)
            band_depth = min(depth, w)
            orig_lab = _band(lab[rows, m.left : m.left + w], side, min(strip, band_depth))
            grad_new = _background_texture(_band(gx[rows], side, max(1, depth - 1)))
            grad_orig = _background_texture(_band(gx[rows, m.left : m.left + w - 1], side, max(1, band_depth - 1)))
        else:
            cols = slice(m.left, m.left + w)
            index = m.top if side == "top" else m.top + h
            across, beside = seam_jump(after.image[:, cols], axis=0, index=index, robust=True)
            new_lab = _band(lab[: m.top, cols] if side == "top" else lab[m.top + h :, cols], side_out(side), strip)
            band_depth = min(depth, h)
            orig_lab = _band(lab[m.top : m.top + h, cols], side, min(strip, band_depth))
            grad_new = _background_texture(_band(gy[:, cols], side, max(1, depth - 1)))
            grad_orig = _background_texture(_band(gy[m.top : m.top + h - 1, cols], side, max(1, band_depth - 1)))
        jump = (across + 1.0) / (beside + 1.0)
        parts.append(
            (
                _ramp(jump, 2.0, 5.0),
                f"{side} seam step {across:.1f} vs {beside:.1f} beside: ×{jump:.2f} (≤2 → 1.0, 0 at 5)",
            )
        )
        mean_new = new_lab.reshape(-1, 3).mean(axis=0)
        flat_orig = orig_lab.reshape(-1, 3)
        distance = float(np.linalg.norm(mean_new - flat_orig.mean(axis=0)))
        allowed = 6.0 + 0.5 * float(np.sqrt(flat_orig.var(axis=0).sum()))
        parts.append(
            (
                _ramp(distance, allowed, 3 * allowed),
                f"{side} border colour ΔE {distance:.1f} from the image beside it (allowed {allowed:.1f})",
            )
        )
        ratio = (grad_new + 0.5) / (grad_orig + 0.5)
        log_ratio = abs(math.log(ratio, 2))
        parts.append(
            (
                _ramp(log_ratio, math.log2(2.5), 3.0),
                f"{side} border texture: gradient {grad_new:.2f} vs {grad_orig:.2f} in the image "
                f"(×{ratio:.2f}; within 2.5× → 1.0, 0 at 8×)",
            )
        )
    for side in m.sides():
        depth = getattr(m, side)
        parts.append(mirror_verdict(margin_stats(after.image, m.left, m.top, h, w, side, depth)))
        share = copied_colour_share(after.image, m.left, m.top, h, w, side, depth, tuple(m.sides()))
        parts.append(foreign_colour_verdict(side, share))
    parts.append(_margin_text(ctx, before, after, m))
    return _verdict(parts)


def _margin_text(ctx: CheckContext, before: EditState, after: EditState, m: Margins) -> tuple[float, str]:
    """OCR the new margins (with a sliver of the original beside each, so a word cut by the seam is read whole):
    a word read there (≥ 3 letters or digits) that the original shows elsewhere, and that is not the cut word beside
    the seam, is text copied into the margin (a patch fill or a mirror) and fails. Other text is how the scene goes on
    (a sign that continues past the crop) and is reported, not scored."""
    from costa.checks.exact import text_added

    h, w = before.height, before.width
    copied: list[str] = []
    new: list[str] = []
    original_words: set[str] | None = None
    for side in m.sides():
        depth = getattr(m, side)
        sliver = max(4, depth // 4)
        if side == "left":
            crop, orig = after.image[:, : m.left + sliver], before.image[:, :sliver]
        elif side == "right":
            crop, orig = after.image[:, m.left + w - sliver :], before.image[:, w - sliver :]
        elif side == "top":
            crop, orig = after.image[: m.top + sliver], before.image[:sliver]
        else:
            crop, orig = after.image[m.top + h - sliver :], before.image[h - sliver :]
        read = " ".join(r.text for r in ctx.reader.read(np.ascontiguousarray(crop)) if r.score >= 0.6)
        if sum(ch.isalnum() for ch in read) < 2:
            continue
        was = " ".join(r.text for r in ctx.reader.read(np.ascontiguousarray(orig)))
        added = [t for t in read.split() if sum(c.isalnum() for c in t) >= 2 and text_added(was, read, t).found]
        if not added:
            continue
        if original_words is None:
            whole = " ".join(r.text for r in ctx.reader.read(np.ascontiguousarray(before.image)) if r.score >= 0.6)
            original_words = {_word_key(t) for t in whole.split() if len(_word_key(t)) >= 3}
        dup = [t for t in added if _word_key(t) in original_words]
        if dup:
            copied.append(f"{side}: {' '.join(dup)!r}")
        others = [t for t in added if t not in dup]
        if others:
            new.append(f"{side}: {' '.join(others)!r}")
    if copied:
        return 0.0, "OCR reads words of the image copied into the new margins (" + "; ".join(copied) + ")"
    if new:
        return 1.0, "OCR reads text in the new margins that continues the scene (" + "; ".join(new) + "; not scored)"
    return 1.0, "no text read in the new margins"


def _word_key(token: str) -> str:
    return "".join(c for c in token.upper() if c.isalnum())


# ------------------------------------------------------------------------------------------------ adjustment

# Least change that counts as done, per quantity (measured in the region).
_MIN_LIGHTNESS = 3.0  # L* units
_MIN_CONTRAST_RATIO = 1.10  # L* standard deviation after / before (or before / after for less)
_MIN_CHROMA_RATIO = 1.15  # mean chroma after / before (or before / after)
_MIN_WARMTH = 3.0  # b* units
#: The least change asked for, as a share of the above: "slightly" (half the plain amount) needs half the move, never
#: less than half (a move under about 1.5 L* is not visible, so it cannot count as done).
_LEAST_SCALE = 0.5


def _asked_scale(amount: float) -> float:
    """How much of the plain minimum a request of `amount` (0–1; plain 0.25) must move: in [0.5, 1]. A bigger amount
    does not raise the bar (a region already near black cannot darken by much, and that is not a failure of degree)."""
    from costa.tools.adjust import DEFAULT_AMOUNT

    return float(np.clip(amount / DEFAULT_AMOUNT, _LEAST_SCALE, 1.0))


def check_adjustment(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Did the asked statistic move the asked way by at least a visible amount, without clipping detail away?

    Moved (CIELAB, inside the target's region when limited to one; each least move below is for the plain amount, and a
    smaller asked amount — "slightly", "a bit more" — needs proportionally less, down to half): brightness — mean L* by
    ≥ 3 → 1.0, 0 at 0 or the wrong way; contrast — L* standard deviation × ≥ 1.10 (or ÷ for less) → 1.0, 0 at ×1.0 (a
    flat image, L* spread < 0.5, cannot be made more contrasty); saturation — mean chroma × ≥ 1.15 (or ÷) → 1.0, 0 at
    ×1.0 (an image without colour cannot be made more saturated); warmth — mean b* by ≥ 3 the asked way → 1.0; black and
    white — mean chroma ≤ 2 → 1.0, 0 at 8; sepia — warm tint (mean b* ≥ 8 and b* > a* ≥ 0) with little chroma spread (≤
    8) → 1.0.
    Clipping: share of pixels with a channel at 0 or 255, after minus before, ≤ 2 % → 1.0, 0 at 10 %; and crushed
    shadows and blown highlights separately (`checks.artifacts.clipping_verdict`): a tail the adjustment was not asked
    to move toward may grow by 1 % at most.
    """
    from costa.tools.adjust import parse_adjustment

    if before.image.shape != after.image.shape:
        return Verdict(0.0, ("the image size changed, so the adjustment cannot be compared",))
    try:
        adj = parse_adjustment(subtask.result, subtask.params)
    except ToolError as e:
        return Verdict(0.0, (str(e),))
    region = _region(before, after, output)
    sb, sa = lab_stats(before.image, region), lab_stats(after.image, region)
    parts: list[tuple[float, str]] = []
    way = "more" if adj.sign > 0 else "less"
    scale = _asked_scale(adj.amount)
    if adj.quantity == "brightness":
        moved = (sa.lightness - sb.lightness) * adj.sign
        least = _MIN_LIGHTNESS * scale
        parts.append(
            (
                _ramp(moved, least, 0.0),
                f"mean L* {sb.lightness:.1f} → {sa.lightness:.1f} (≥{least:.1f} the asked way → 1.0)",
            )
        )
    elif adj.quantity == "contrast" and sb.contrast < 0.5:
        flat = f"the image is flat (L* spread {sb.contrast:.2f})"
        parts.append((0.0, f"{flat}: there is no contrast to increase") if adj.sign > 0 else (1.0, flat))
    elif adj.quantity == "contrast":
        ratio = (sa.contrast + 1e-6) / (sb.contrast + 1e-6)
        ratio = ratio if adj.sign > 0 else 1.0 / ratio
        least = 1.0 + (_MIN_CONTRAST_RATIO - 1.0) * scale
        parts.append(
            (
                _ramp(ratio, least, 1.0),
                f"L* spread {sb.contrast:.1f} → {sa.contrast:.1f}: ×{ratio:.2f} {way} (≥{least:.2f} → 1.0)",
            )
        )
    elif adj.quantity == "saturation":
        if sb.chroma < 2.0 and adj.sign > 0:
            parts.append((0.0, f"the image has no colour to saturate (mean chroma {sb.chroma:.1f})"))
        elif sb.chroma < 2.0:
            parts.append((1.0, f"the image was already without colour (mean chroma {sb.chroma:.1f})"))
        else:
            ratio = (sa.chroma + 1e-6) / (sb.chroma + 1e-6)
            ratio = ratio if adj.sign > 0 else 1.0 / ratio
            least = 1.0 + (_MIN_CHROMA_RATIO - 1.0) * scale
            parts.append(
                (
                    _ramp(ratio, least, 1.0),
                    f"mean chroma {sb.chroma:.1f} → {sa.chroma:.1f}: ×{ratio:.2f} {way} (≥{least:.2f} → 1.0)",
                )
            )
    elif adj.quantity == "warmth":
        moved = (sa.b - sb.b) * adj.sign
        least = _MIN_WARMTH * scale
        parts.append(
            (
                _ramp(moved, least, 0.0),
                f"mean b* {sb.b:.1f} → {sa.b:.1f} (≥{least:.1f} {'warmer' if adj.sign > 0 else 'cooler'} → 1.0)",
            )
        )
    elif adj.quantity == "grayscale":
        parts.append((_ramp(sa.chroma, 2.0, 8.0), f"mean chroma {sa.chroma:.1f} (≤2 → 1.0, 0 at 8)"))
    else:  # sepia
        import cv2

        lab = cv2.cvtColor(after.image.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
        pixels = lab.reshape(-1, 3) if region is None else lab[region]
        spread = float(np.hypot(pixels[:, 1] - sa.a, pixels[:, 2] - sa.b).mean())
        tinted = 1.0 if sa.b >= 8.0 and sa.b > sa.a >= 0.0 else 0.0
        parts.append((tinted, f"mean tint a* {sa.a:.1f}, b* {sa.b:.1f} (warm brown needs b* ≥ 8 and b* > a* ≥ 0)"))
        parts.append((_ramp(spread, 8.0, 20.0), f"colour spread {spread:.1f} around the tint (≤8 → 1.0, 0 at 20)"))
    grown = clipped_share(after.image, region) - clipped_share(before.image, region)
    parts.append((_ramp(grown, 0.02, 0.10), f"clipped pixels {grown:+.1%} (≤2% more → 1.0, 0 at 10%)"))
    more_contrast = adj.quantity == "contrast" and adj.sign > 0
    darker = more_contrast or (adj.quantity == "brightness" and adj.sign < 0)
    brighter = more_contrast or (adj.quantity == "brightness" and adj.sign > 0)
    parts.extend(clipping_verdict(before.image, after.image, region, darker, brighter))
    return _verdict(parts)


IMAGE_CHECKS: dict[str, CheckFn] = {
    "image_upscaling": check_upscaling,
    "image_deblurring": check_deblurring,
    "outpainting": check_outpainting,
    "global_adjustment": check_adjustment,
}
