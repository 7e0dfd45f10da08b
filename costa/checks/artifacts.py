"""Artifacts a person would see in outpainted margins (mirrored or duplicated content, foreign colours), and clipped
shadows and highlights. The measures of a removal's fill (smears, seams, copied content) are in `costa.checks.fills`.

Measures used by the outpainting and adjustment checks (`costa.checks.image`). Each function is pure over RGB uint8
arrays (OpenCV imported inside), returns numbers with their units, and the `*_verdict` helpers map them to a quality
with the numbers that give 1.0 and 0.0.

- **Mirrored margins** (`mirror_similarity`): a reflect outpainter copies the band of the image beside each new
  margin, flipped. On a plain wall that is harmless; next to a sign it paints half a letter, reversed. The measure is
  the correlation of the margin's fine detail (grey minus a Gaussian blur, σ 2 px) with the flipped band, counted only
  when the margin holds salient structure *across* the seam (strong gradients along the extension axis: lines that
  simply continue across the seam look the same mirrored and are fine).
- **Duplicated content** (`duplicated_share`): blocks of the margin with strong edges that reappear unflipped, almost
  exactly (normalised cross-correlation ≥ 0.98), somewhere in the original — a patch fill that cloned a letter —
  beyond how often the image's own strip beside the seam reappears elsewhere in it (a sign's letters recur).
- **Foreign colours** (`copied_colour_share`): margin pixels whose colour the image's own band beside the seam does
  not have, but the image holds elsewhere — fragments of letters or of an object pasted into a plain extension,
  which the block measure misses when they are cut into strokes. A scene that truly goes on keeps the colours it had
  at the seam; a new colour that the image never had (a generator inventing content) is not counted here.
- **Text in a margin** is read by the check itself with the OCR engine (`costa.checks.image`).

Units: pixels; grey levels 0–255; correlations in [-1, 1]; shares in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from costa.imagestats import colour_bins, palette_near

#: Grey-level step (0–255 per pixel, along the extension axis) that counts as salient structure in a margin.
SALIENT_STEP = 20.0
#: Share of margin pixels with a salient step from which the margin holds content worth protecting.
SALIENT_SHARE = 0.005
#: Detail correlation with the flipped original band: ≤ 0.5 → 1.0, 0 at 0.8 (when the margin is salient).
MIRROR_FULL, MIRROR_ZERO = 0.5, 0.8
#: Block correlation at or above which a margin block is a clone of the original.
CLONE_NCC = 0.98


@dataclass(frozen=True)
class MarginStats:
    """One new margin's measures: `salient` (share of pixels with a strong step along the extension axis),
    `mirror` (detail correlation with the flipped original band, -1…1; 0 when not salient) and `cloned` (share of
    its salient blocks found unflipped in the original)."""

    side: str
    salient: float
    mirror: float
    cloned: float


def _grey(image: np.ndarray) -> np.ndarray:
    return image.astype(np.float32) @ np.array([0.299, 0.587, 0.114], dtype=np.float32)


def _detail(grey: np.ndarray) -> np.ndarray:
    import cv2

    return grey - cv2.GaussianBlur(grey, (0, 0), 2.0)


def _oriented(canvas: np.ndarray, side: str, left: int, top: int, height: int, width: int, depth: int):
    """The margin on `side` and the original band beside it, both turned so that the extension runs along x and the
    seam lies between the margin's last column and the band's first."""
    rows, cols = slice(top, top + height), slice(left, left + width)
    if side == "left":
        return canvas[rows, left - depth : left], canvas[rows, left : left + depth]
    if side == "right":
        x = left + width
        return canvas[rows, x : x + depth][:, ::-1], canvas[rows, x - depth : x][:, ::-1]
    if side == "top":
        return canvas[top - depth : top, cols].T, canvas[top : top + depth, cols].T
    y = top + height
    return canvas[y : y + depth, cols].T[:, ::-1], canvas[y - depth : y, cols].T[:, ::-1]


def margin_stats(after: np.ndarray, left: int, top: int, height: int, width: int, side: str, depth: int) -> MarginStats:
    """Measure the new margin on `side` (`depth` pixels) of an outpainted canvas.

    Args:
        after: the outpainted canvas; the original occupies rows top…top+height, columns left…left+width.
        side: "left", "right", "top" or "bottom"; depth: the margin's size in pixels.
    """
    grey = _grey(after)
    span = min(depth, width if side in ("left", "right") else height)
    if span < 2:
        return MarginStats(side, 0.0, 0.0, 0.0)
    margin, band = _oriented(grey, side, left, top, height, width, span)
    margin, band = np.ascontiguousarray(margin), np.ascontiguousarray(band)
    salient = float((np.abs(np.diff(margin, axis=1)) > SALIENT_STEP).mean())
    if salient < SALIENT_SHARE:
        return MarginStats(side, salient, 0.0, 0.0)
    dm = _detail(margin[:, ::-1])  # column k: k pixels out from the seam
    db = _detail(band)
    # Plain reflection mirrors about the seam line; reflect-101 skips the edge column: margin column k is band column
    # k + 1 (either shift is tried).
    pairs = [(dm, db), (dm[:, :-1], db[:, 1:]), (dm[:, 1:], db[:, :-1])]
    mirror = max(_ncc(a, b) for a, b in pairs)

    original = grey[top : top + height, left : left + width]
    if side in ("top", "bottom"):
        original = np.ascontiguousarray(original.T)
    true_margin = margin[:, ::-1] if side in ("right", "bottom") else margin  # undo the turn: clones are unflipped
    cloned = _cloned_share(np.ascontiguousarray(true_margin), original)
    if cloned > 0.0:  # an image that repeats itself (a word's letters recur) shows the same next to the seam
        at = 0 if side in ("left", "top") else original.shape[1] - span
        strip = np.ascontiguousarray(original[:, at : at + span])
        cloned = max(0.0, cloned - _cloned_share(strip, original, at=at))
    return MarginStats(side, salient, mirror, cloned)


def _ncc(a: np.ndarray, b: np.ndarray) -> float:
    a = a - a.mean()
    b = b - b.mean()
    denom = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / denom) if denom > 1e-6 else 0.0


def _cloned_share(margin: np.ndarray, original: np.ndarray, at: int | None = None) -> float:
    """Share of the margin's salient square blocks that match some place of the original almost exactly.

    With `at` (the column of the original where `margin` itself lies: it is a strip of the original), each block's
    own place (± one block) is left out of its search: how often the image repeats itself elsewhere."""
    import cv2

    size = int(min(margin.shape[1], 32, margin.shape[0]))
    if size < 8 or original.shape[0] < size or original.shape[1] < size:
        return 0.0
    scale = min(1.0, 384.0 / max(original.shape))
    small = original if scale == 1.0 else cv2.resize(original, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    salient = found = 0
    corners = [
        (y, x) for y in range(0, margin.shape[0] - size + 1, size) for x in range(0, margin.shape[1] - size + 1, size)
    ]
    for y, x in corners[:: max(1, len(corners) // 64)]:
        block = np.ascontiguousarray(margin[y : y + size, x : x + size])
        if (np.abs(np.diff(block, axis=1)) > SALIENT_STEP).mean() < 4 * SALIENT_SHARE:
            continue
        if _ncc(block, block[:, ::-1]) > 0.5:
            continue  # looks the same flipped (a line across the seam, a round blob): a match proves no copying
        salient += 1
        tmpl = block if scale == 1.0 else cv2.resize(block, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        if min(tmpl.shape) < 4 or tmpl.shape[0] > small.shape[0] or tmpl.shape[1] > small.shape[1]:
            continue
        score = cv2.matchTemplate(small.astype(np.float32), tmpl.astype(np.float32), cv2.TM_CCOEFF_NORMED)
        if at is not None:
            r = max(1, round(size * scale))
            sy, sx = round(y * scale), round((at + x) * scale)
            score[max(0, sy - r) : sy + r + 1, max(0, sx - r) : sx + r + 1] = -1.0
        if float(score.max()) >= CLONE_NCC:
            found += 1
    return found / salient if salient else 0.0


def mirror_verdict(stats: MarginStats) -> tuple[float, str]:
    """Quality and reason for one margin: mirrored or cloned salient content fails."""
    if stats.salient < SALIENT_SHARE:
        return 1.0, f"{stats.side} margin holds no salient structure to mirror ({stats.salient:.1%} strong steps)"
    q_mirror = float(np.clip((MIRROR_ZERO - stats.mirror) / (MIRROR_ZERO - MIRROR_FULL), 0.0, 1.0))
    q_clone = float(np.clip((0.5 - stats.cloned) / 0.3, 0.0, 1.0))
    reason = (
        f"{stats.side} margin: detail correlation with the flipped image beside it {stats.mirror:.2f} "
        f"(≤{MIRROR_FULL} → 1.0, 0 at {MIRROR_ZERO}), {stats.cloned:.0%} of its salient blocks cloned from the image "
        f"(≤20% → 1.0, 0 at 50%)"
    )
    if min(q_mirror, q_clone) < 1.0:
        reason += ": the margin repeats content of the image (mirrored or copied) that a person would see"
    return min(q_mirror, q_clone), reason


#: Depth (pixels) of the image's band beside a seam whose colours a margin may continue.
COLOUR_BAND_PX = 24
#: Share of margin pixels in copied foreign colours: ≤ `FOREIGN_FULL` → 1.0, 0 at `FOREIGN_ZERO`.
FOREIGN_FULL, FOREIGN_ZERO = 0.004, 0.02


def copied_colour_share(
    after: np.ndarray,
    left: int,
    top: int,
    height: int,
    width: int,
    side: str,
    depth: int,
    extended: tuple[str, ...] = (),
) -> float:
    """Share of the `side` margin's pixels whose colour is absent from the image's band beside the seam (±1 bin)
    but present elsewhere in the image (at least 20 pixels of it): content copied into the extension.

    The top and bottom margins include the corners (the left and right ones stop at the original's rows); a corner
    continues the left or right side too when that side is also `extended`, so their bands' colours count there.
    """
    if depth < 1:
        return 0.0
    original = after[top : top + height, left : left + width]
    band_px = min(COLOUR_BAND_PX, width if side in ("left", "right") else height)
    if side == "left":
        margin, band = after[top : top + height, :left], original[:, :band_px]
    elif side == "right":
        margin, band = after[top : top + height, left + width :], original[:, width - band_px :]
    elif side == "top":  # rows above the original, corners included
        margin, band = after[:top], original[:band_px]
    else:
        margin, band = after[top + height :], original[height - band_px :]
    if margin.size == 0:
        return 0.0
    bands = [band]
    if side in ("top", "bottom"):
        side_px = min(COLOUR_BAND_PX, width)
        bands += [original[:, :side_px] for s in extended if s == "left"]
        bands += [original[:, width - side_px :] for s in extended if s == "right"]
    near = np.unique(np.concatenate([palette_near(b) for b in bands]))
    values, counts = np.unique(colour_bins(original), return_counts=True)
    elsewhere = values[counts >= max(20, original.shape[0] * original.shape[1] // 5000)]
    bins = colour_bins(margin).ravel()
    copied = ~np.isin(bins, near) & np.isin(bins, elsewhere)
    return float(copied.mean())


def foreign_colour_verdict(side: str, share: float) -> tuple[float, str]:
    """Quality and reason for one margin's copied foreign colours."""
    q = float(np.clip((FOREIGN_ZERO - share) / (FOREIGN_ZERO - FOREIGN_FULL), 0.0, 1.0))
    reason = (
        f"{side} margin: {share:.2%} of its pixels in colours the image has elsewhere but not beside the seam "
        f"(≤{FOREIGN_FULL:.1%} → 1.0, 0 at {FOREIGN_ZERO:.0%})"
    )
    if q < 1.0:
        reason += ": pieces of the image's content were pasted into the extension"
    return q, reason


# -------------------------------------------------------------------------------------------------- clipping

#: A pixel whose three channels are all at or below / at or above these levels has lost its shadow / highlight detail.
SHADOW_LEVEL, HIGHLIGHT_LEVEL = 3, 252


def clipped_tails(image: np.ndarray, mask: np.ndarray | None = None) -> tuple[float, float]:
    """Shares (0–1) of pixels (inside `mask` if given) crushed to black and blown to white (all channels)."""
    low = np.all(image <= SHADOW_LEVEL, axis=2)
    high = np.all(image >= HIGHLIGHT_LEVEL, axis=2)
    if mask is not None:
        if not mask.any():
            return 0.0, 0.0
        low, high = low[mask], high[mask]
    return float(low.mean()), float(high.mean())


def clipping_verdict(
    before: np.ndarray, after: np.ndarray, mask: np.ndarray | None, toward_shadows: bool, toward_highlights: bool
) -> list[tuple[float, str]]:
    """Score the growth of crushed shadows and blown highlights separately.

    A tail the adjustment was asked to move toward (darker → shadows, brighter → highlights, more contrast → both)
    may grow by 3 % of the pixels (→ 1.0, 0 at 10 %); the other by 1 % (→ 1.0, 0 at 5 %): brightening must not crush
    the shadows, and a warmth change should clip neither.
    """
    lb, hb = clipped_tails(before, mask)
    la, ha = clipped_tails(after, mask)
    out: list[tuple[float, str]] = []
    for name, grown, asked in (("shadows crushed to black", la - lb, toward_shadows),
                               ("highlights blown to white", ha - hb, toward_highlights)):  # fmt: skip
        full, zero = (0.03, 0.10) if asked else (0.01, 0.05)
        quality = float(np.clip((zero - grown) / (zero - full), 0.0, 1.0))
        out.append((quality, f"{name} {grown:+.1%} (≤{full:.0%} → 1.0, 0 at {zero:.0%})"))
    return out
