"""Artifacts a person would see: mirrored or duplicated content in outpainted margins, smears and seams in a fill.

Measures used by the outpainting check (`costa.checks.image`) and, through `removal_artifacts`, by the removal
checks. Each function is pure over RGB uint8 arrays (OpenCV imported inside), returns numbers with their units, and
the `*_verdict` helpers map them to a `Verdict` with the numbers that give 1.0 and 0.0.

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
- **Smear and seam in a fill** (`fill_statistics`): inside a filled hole, texture (mean gradient) against the ring
  around it — a Telea smear over textured ground is much flatter — and the colour step across the hole's outline
  against the steps just outside it — a visible seam.

Units: pixels; grey levels 0–255; correlations in [-1, 1]; shares in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from costa.imagestats import colour_bins, palette_near
from costa.types import Verdict

#: Grey-level step (0–255 per pixel, along the extension axis) that counts as salient structure in a margin.
SALIENT_STEP = 20.0
#: Share of margin pixels with a salient step from which the margin holds content worth protecting.
SALIENT_SHARE = 0.005
#: Detail correlation with the flipped original band: ≤ 0.5 → 1.0, 0 at 0.8 (when the margin is salient).
MIRROR_FULL, MIRROR_ZERO = 0.5, 0.8
#: Block correlation at or above which a margin block is a clone of the original.
CLONE_NCC = 0.98
#: Least median gradient (grey levels per pixel) around a fill for a smooth fill to count as a smear: above the
#: ~0.5 of a flat or gradient wall's sensor noise, below the 2–4 of visible grain or texture.
SMEAR_MIN_TEXTURE = 1.5
#: Texture ratio (fill + 0.5) / (ring + 0.5): ≥ `SMEAR_FULL` → 1.0, 0 at `SMEAR_ZERO`. Right fills of textured ground
#: keep ≈ 1; a blurred fill keeps ≈ 0.2–0.3 of it.
SMEAR_FULL, SMEAR_ZERO = 0.6, 0.35
#: Fine grain shows a smooth fill only over a wide hole (a disc this many pixels across fits in it); strong texture
#: (median gradient from `SMEAR_STRONG_TEXTURE`) shows it over any hole, even thin strokes of removed text.
SMEAR_MIN_THICKNESS_PX = 16.0
SMEAR_STRONG_TEXTURE = 6.0


def _thickness(mask: np.ndarray) -> float:
    """Twice the largest distance (px) from a mask pixel to the outside: the widest disc that fits."""
    import cv2

    return 2.0 * float(cv2.distanceTransform(np.pad(mask, 1).astype(np.uint8), cv2.DIST_L2, 3).max())


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


# -------------------------------------------------------------------------------------------- removal fills


@dataclass(frozen=True)
class FillStats:
    """Texture and seam of a filled hole: `texture_in` / `texture_ring` are median gradients (grey levels per pixel)
    inside the hole and in a ring around it; `seam` is the mean grey step across the hole's outline and `beside`
    the mean step one ring further out."""

    texture_in: float
    texture_ring: float
    seam: float
    beside: float


def fill_statistics(after: np.ndarray, mask: np.ndarray) -> FillStats | None:
    """Measure the filled `mask` (bool H×W) of `after`; None when the mask is empty, the whole image, or too thin."""
    import cv2

    from costa.masks import dilate_mask, erode_mask

    mask = mask.astype(bool)
    if not mask.any() or mask.all():
        return None
    grey = _grey(after)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3) / 8.0
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3) / 8.0
    gradient = np.hypot(gx, gy)
    core = erode_mask(mask, 3)
    ring = dilate_mask(mask, 12) & ~dilate_mask(mask, 3)
    outline = dilate_mask(mask, 1) & ~erode_mask(mask, 1)
    beside = dilate_mask(mask, 6) & ~dilate_mask(mask, 4)
    if core.sum() < 16 or ring.sum() < 16 or not outline.any() or not beside.any():
        return None
    # Medians: a neighbouring word or an outline in the ring is a minority of its pixels and must not read as texture.
    return FillStats(
        float(np.median(gradient[core])),
        float(np.median(gradient[ring])),
        float(gradient[outline].mean()),
        float(gradient[beside].mean()),
    )


#: Shading the surroundings predict across a fill, in grey levels, below which a flat fill is fine.
SHADING_MIN_LEVELS = 8.0
PLANE_SEED_LEVELS = 6.0  # grey levels around the ring's median that seed the plane fit


def _plane(grey: np.ndarray, where: np.ndarray) -> np.ndarray | None:
    """Least-squares plane a + b·x + c·y through the grey levels at `where`; coefficients (a, b, c), or None."""
    ys, xs = np.nonzero(where)
    if len(xs) < 16:
        return None
    design = np.stack([np.ones(len(xs)), xs, ys], axis=1).astype(np.float64)
    values = grey[ys, xs].astype(np.float64)
    # Start from the dominant surface (within 6 levels of the median): a sign's frame or a neighbouring word that
    # fills a third of the ring is a step, not shading, and a plain least-squares start would tilt towards it.
    keep = np.abs(values - np.median(values)) <= PLANE_SEED_LEVELS
    if keep.sum() < 16:
        keep = np.ones(len(xs), dtype=bool)
    for _ in range(4):  # refit without outliers (a neighbouring word or an edge in the ring is not the shading)
        coef, *_ = np.linalg.lstsq(design[keep], values[keep], rcond=None)
        residual = np.abs(values - design @ coef)
        mad = float(np.median(residual[keep]))
        keep = residual <= max(4.0, 3.0 * mad)
        if keep.sum() < 16:
            return None
    return coef


def shading_kept(after: np.ndarray, mask: np.ndarray) -> tuple[float, str] | None:
    """Does the fill carry on the shading of its surroundings? A plane fitted to a ring around `mask` predicts the
    grey ramp across it; when that ramp spans ≥ 8 levels, the plane fitted inside the fill must span ≥ 0.5 of it
    (1.0; 0 at 0.2): a flat patch on a gradient fails. None when the surroundings are flat or there is too little."""
    from costa.masks import dilate_mask, erode_mask

    grey = _grey(after)
    ring = dilate_mask(mask, 12) & ~dilate_mask(mask, 3)
    core = erode_mask(mask, 1)
    outer, inner = _plane(grey, ring), _plane(grey, core)
    if outer is None or inner is None:
        return None
    ys, xs = np.nonzero(core)
    span = float(abs(outer[1]) * (xs.max() - xs.min()) + abs(outer[2]) * (ys.max() - ys.min()))
    if span < SHADING_MIN_LEVELS:
        return None
    # The fill's ramp along the surroundings' direction (a ramp the other way is no continuation).
    along = float(inner[1] * outer[1] * (xs.max() - xs.min()) ** 2 + inner[2] * outer[2] * (ys.max() - ys.min()) ** 2)
    own = along / span
    ratio = own / span
    quality = float(np.clip((ratio - 0.2) / 0.3, 0.0, 1.0))
    return quality, (
        f"the surroundings shade {span:.0f} levels across the fill, the fill {own:.0f}: ×{ratio:.2f} "
        "(≥0.5 → 1.0, 0 at 0.2; lower is a flat patch)"
    )


def removal_artifacts(
    after: np.ndarray, mask: np.ndarray | None, grain: bool = False, grain_min_px: float = SMEAR_MIN_THICKNESS_PX
) -> Verdict:
    """Score a removal's fill for a smear (texture lost) and a seam (a step along the hole's outline).

    - smear: (texture inside + 0.5) / (texture in the ring + 0.5) ≥ 0.6 → 1.0, 0 at 0.35 (only when the ring is
      textured: median gradient ≥ 6 levels per pixel, or with `grain` (an object's hole) ≥ 1.5 over a hole at least
      `grain_min_px` (16) thick; a flat wall's fill may be smooth, and text strokes smoothed over grain do not show);
    - seam: (step on the outline + 1) / (step beside it + 1) ≤ 2.5 → 1.0, 0 at 5.

    Returns a neutral 1.0 verdict (with the reason) when there is no mask or it is too small to measure.
    """
    if mask is None:
        return Verdict(1.0, ("no filled region declared; smear and seam not measured",))
    stats = fill_statistics(after, mask)
    if stats is None:
        return Verdict(1.0, ("filled region too small or too thin to measure smear and seam",))
    parts: list[tuple[float, str]] = []
    if stats.texture_ring >= SMEAR_STRONG_TEXTURE or (
        grain and stats.texture_ring >= SMEAR_MIN_TEXTURE and _thickness(mask) >= grain_min_px
    ):
        ratio = (stats.texture_in + 0.5) / (stats.texture_ring + 0.5)
        parts.append(
            (
                float(np.clip((ratio - SMEAR_ZERO) / (SMEAR_FULL - SMEAR_ZERO), 0.0, 1.0)),
                f"texture inside the fill {stats.texture_in:.1f} vs {stats.texture_ring:.1f} around it: ×{ratio:.2f} "
                f"(≥{SMEAR_FULL:g} → 1.0, 0 at {SMEAR_ZERO:g}; lower is a smear)",
            )
        )
    else:
        parts.append((1.0, f"surroundings are smooth (gradient {stats.texture_ring:.1f}); no smear to measure"))
    jump = (stats.seam + 1.0) / (stats.beside + 1.0)
    parts.append(
        (
            float(np.clip((5.0 - jump) / 2.5, 0.0, 1.0)),
            f"step on the fill's outline {stats.seam:.1f} vs {stats.beside:.1f} beside it: ×{jump:.2f} "
            "(≤2.5 → 1.0, 0 at 5; higher is a seam)",
        )
    )
    return Verdict(min(q for q, _ in parts), tuple(r for _, r in parts))


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


# ------------------------------------------------------------------------------------------ copied into fills

#: Width of the ring around a fill whose colours the fill may use, in pixels.
FILL_RING_PX = 6
#: Fill pixels in colours the ring lacks but the rest of the image has: share → 1.0 at or below, 0 at or above.
FILL_FOREIGN_FULL, FILL_FOREIGN_ZERO = 0.02, 0.08


def copied_into_fill(after: np.ndarray, region: np.ndarray | None) -> tuple[float, str] | None:
    """Quality and reason for a fill (e.g. removed text) that shows colours its surroundings do not have but the
    rest of the image does: PatchMatch pasting foliage from outside a sign into the sign's panel. None when the
    region is empty or has no ring to compare with.

    A true fill continues what surrounds it, so its colours are the ring's (±1 CIELAB bin, which covers shading and
    blends); content copied from elsewhere brings that place's colours.
    """
    from costa.masks import dilate_mask

    if region is None or region.shape != after.shape[:2] or not region.any():
        return None
    ring = dilate_mask(region, FILL_RING_PX) & ~region
    if ring.sum() < 20:
        return None
    bins = colour_bins(after)
    own = palette_near(after[ring][:, None, :])
    rest = ~dilate_mask(region, 3 * FILL_RING_PX)
    seen, counts = np.unique(bins[rest], return_counts=True)
    elsewhere = seen[counts >= 20]
    inside = bins[region]
    share = float((~np.isin(inside, own) & np.isin(inside, elsewhere)).mean())
    q = float(np.clip((FILL_FOREIGN_ZERO - share) / (FILL_FOREIGN_ZERO - FILL_FOREIGN_FULL), 0.0, 1.0))
    reason = (
        f"fill: {share:.1%} of its pixels in colours its surroundings lack but the image has elsewhere "
        f"(≤{FILL_FOREIGN_FULL:.0%} → 1.0, 0 at {FILL_FOREIGN_ZERO:.0%})"
    )
    if q < 1.0:
        reason += ": content from elsewhere in the image was pasted in"
    return q, reason


#: Side (pixels) of the blocks `fill_cloned_share` compares (at its working scale).
FILL_BLOCK_PX = 16
#: `fill_cloned_share` works on the image downscaled to at most this side (pixels).
FILL_CLONE_SIDE_PX = 640


def fill_cloned_share(after: np.ndarray, hole: np.ndarray, size: int = FILL_BLOCK_PX) -> tuple[float, int] | None:
    """How much of a fill is a verbatim copy of some other place of the image, beyond how often the image repeats
    itself: (excess share of the fill's salient blocks, salient blocks looked at), or None when the hole holds no
    whole block.

    A fill that continues its surroundings (diffusion, texture synthesis on grass or noise) rarely matches any
    `size`-pixel block elsewhere exactly; PatchMatch on a large hole in a structured photo pastes whole pieces (a
    bowl's rim into a salad). Blocks wholly inside the hole are matched (normalised correlation ≥ `CLONE_NCC`) against
    every place whose window stays clear of the hole; the same is done for blocks of the ring around it, each
    excluding its own neighbourhood, and that share (the image's own self-similarity: a tiled wall, stripes) is
    subtracted.
    """
    import cv2

    from costa.masks import dilate_mask

    if hole.shape != after.shape[:2] or not hole.any():
        return None
    grey = _grey(after).astype(np.float32)
    scale = min(1.0, FILL_CLONE_SIDE_PX / max(grey.shape))  # a 12-MP photo: each template match would take 60 ms
    if scale < 1.0:
        grey = cv2.resize(grey, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA).astype(np.float32)
        hole = cv2.resize(hole.astype(np.uint8), (grey.shape[1], grey.shape[0]), interpolation=cv2.INTER_NEAREST) > 0
        if not hole.any():
            return None
    h, w = grey.shape
    if h < 3 * size or w < 3 * size:
        return None
    # valid[y, x]: the window at (y, x) does not touch the hole (grown by 2 px)
    grown = cv2.dilate(hole.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(np.float32)
    touches = cv2.boxFilter(grown, -1, (size, size), normalize=False, anchor=(0, 0), borderType=cv2.BORDER_CONSTANT)
    valid = touches[: h - size + 1, : w - size + 1] < 0.5
    inside = cv2.boxFilter((~hole).astype(np.float32), -1, (size, size), normalize=False, anchor=(0, 0))
    whole = inside[: h - size + 1, : w - size + 1] < 0.5  # windows wholly inside the hole
    ring = (dilate_mask(hole, 3 * size) & ~dilate_mask(hole, 2)).astype(np.float32)
    in_ring = cv2.boxFilter(ring, -1, (size, size), normalize=False, anchor=(0, 0))
    ring_ok = in_ring[: h - size + 1, : w - size + 1] >= size * size - 0.5

    def share(ok: np.ndarray, own_place: bool) -> tuple[int, int]:
        ys, xs = np.nonzero(ok[::size, ::size])
        corners = list(zip((ys * size).tolist(), (xs * size).tolist(), strict=True))
        salient = found = 0
        for y, x in corners[:: max(1, len(corners) // 48)]:
            block = np.ascontiguousarray(grey[y : y + size, x : x + size])
            if (np.abs(np.diff(block, axis=1)) > SALIENT_STEP).mean() < 4 * SALIENT_SHARE or block.std() < 4.0:
                continue
            salient += 1
            score = cv2.matchTemplate(grey, block, cv2.TM_CCOEFF_NORMED)
            score[~valid] = -1.0
            if own_place:
                score[max(0, y - size) : y + size + 1, max(0, x - size) : x + size + 1] = -1.0
            if float(score.max()) >= CLONE_NCC:
                found += 1
        return found, salient

    found, salient = share(whole, own_place=False)
    if salient == 0:
        return None
    base_found, base_salient = share(ring_ok, own_place=True)
    baseline = base_found / base_salient if base_salient else 0.0
    return max(0.0, found / salient - baseline), salient


def surround_variation(image: np.ndarray, hole: np.ndarray, sectors: int = 8, width: int = 12) -> float | None:
    """How much the surroundings of `hole` differ from side to side beyond a shading plane: the mean, over `sectors`
    angular sectors of a `width`-px ring, of the CIELAB ΔE between the sector's mean residual colour and zero, after a
    plane (per channel, over the ring) is taken out. None when the ring is too small.

    One stationary texture (grass, gravel, a brick wall, a gradient) scores about 0–3.5; a hole in a structured
    photo (a face, a salad bowl's rim on one side and the tray on another) scores 4–15. Content copied into such a
    hole from elsewhere is a guess about what was behind; copied within one texture it is that texture.
    """
    import cv2

    from costa.masks import dilate_mask

    if hole.shape != image.shape[:2] or not hole.any():
        return None
    ring = dilate_mask(hole, width) & ~dilate_mask(hole, 2)
    ry, rx = np.nonzero(ring)
    if len(rx) < 16 * sectors:
        return None
    lab = cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_RGB2LAB).astype(np.float64)
    lab[..., 0] *= 100.0 / 255.0
    lab[..., 1:] -= 128.0
    values = lab[ry, rx]
    design = np.stack([np.ones(len(rx)), rx, ry], axis=1).astype(np.float64)
    coef, *_ = np.linalg.lstsq(design, values, rcond=None)
    residual = values - design @ coef
    ys, xs = np.nonzero(hole)
    angle = np.arctan2(ry - ys.mean(), rx - xs.mean())
    sector = ((angle + np.pi) / (2 * np.pi) * sectors).astype(int) % sectors
    means = [np.linalg.norm(residual[sector == k].mean(axis=0)) for k in range(sectors) if (sector == k).sum() > 10]
    return float(np.mean(means)) if means else None
