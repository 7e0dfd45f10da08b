"""Artifacts a person would see in a removal's fill: smears, seams, lost shading, content copied into it.

Measures used, through `removal_artifacts`, by the removal checks (`costa.checks.text`, `costa.checks.objects`) and
by reflection's preservation expert. Each function is pure over RGB uint8 arrays (OpenCV imported inside) and returns
numbers with their units, or a quality with the numbers that give 1.0 and 0.0.

- **Smear and seam in a fill** (`fill_statistics`, `removal_artifacts`): inside a filled hole, texture (mean
  gradient) against the ring around it — a Telea smear over textured ground is much flatter — and the colour step
  across the hole's outline against the steps just outside it — a visible seam.
- **Copied into a fill** (`copied_into_fill`, `fill_cloned_share`): colours the fill's surroundings lack but the
  image has, and blocks of the fill cloned from elsewhere in the image.

Units: pixels; grey levels 0–255; shares in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from costa.checks.artifacts import CLONE_NCC, SALIENT_SHARE, SALIENT_STEP
from costa.imagestats import colour_bins, luma, palette_near
from costa.types import Verdict

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
    grey = luma(after)
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

    grey = luma(after)
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


def fill_cloned_share(
    after: np.ndarray, hole: np.ndarray, size: int = FILL_BLOCK_PX, side: int = FILL_CLONE_SIDE_PX
) -> tuple[float, int] | None:
    """How much of a fill is a verbatim copy of some other place of the image, beyond how often the image repeats
    itself: (excess share of the fill's salient blocks, salient blocks looked at), or None when the hole holds no
    whole block.

    A fill that continues its surroundings (diffusion, texture synthesis on grass or noise) rarely matches any
    `size`-pixel block elsewhere exactly; PatchMatch on a large hole in a structured photo pastes whole pieces (a
    bowl's rim into a salad). Blocks wholly inside the hole are matched (normalised correlation ≥ `CLONE_NCC`) against
    every place whose window stays clear of the hole; the same is done for blocks of the ring around it, each
    excluding its own neighbourhood, and that share (the image's own self-similarity: a tiled wall, stripes) is
    subtracted. `side`: the image is measured downscaled to at most this many pixels (resampling blurs a verbatim
    copy below `CLONE_NCC`, so a copy pasted at full resolution shows fully only at full resolution).
    """
    import cv2

    from costa.masks import dilate_mask

    if hole.shape != after.shape[:2] or not hole.any():
        return None
    grey = luma(after).astype(np.float32)
    scale = min(1.0, side / max(grey.shape))  # a 12-MP photo: each template match would take 60 ms
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


#: Where a removal's check looks for pasted content (`pasted_content`): surroundings that differ from side to side at
#: least this much (`surround_variation`, ΔE; one stationary texture scores 0–3.5), at least this many detailed
#: blocks in the fill, and the excess share of them copied verbatim from elsewhere: ≤ `PASTED_OK` → 1.0, 0 at
#: `PASTED_BAD`. The same bars as reflection's preservation expert (tool_tables/reflection.yaml), checked on the real
#: suite's dev removals (`bench real_checks --kinds removal`): right fills copied 0 %, pasted ones 35–83 %.
PASTED_MIN_VARIATION = 3.7
PASTED_MIN_BLOCKS = 4
PASTED_OK, PASTED_BAD = 0.1, 0.3
#: `pasted_content` measures photos up to this side at full resolution (larger ones downscaled to it).
PASTED_SIDE_PX = 1600


def pasted_content(before: np.ndarray, after: np.ndarray, hole: np.ndarray) -> Verdict:
    """Is a removal's fill made of verbatim copies of other places of the photo (a column of street signs standing in
    the road, shore bushes in the water)? Judged only where the hole's surroundings differ from side to side:
    texture copied into a hole within one texture (grass into a lawn) is that texture. Measured at full resolution
    up to `PASTED_SIDE_PX`, whatever scale the fill was made at."""
    variation = surround_variation(before, hole)
    if variation is None or variation < PASTED_MIN_VARIATION:
        shown = "too small a ring" if variation is None else f"ΔE {variation:.1f} < {PASTED_MIN_VARIATION:g}"
        return Verdict(1.0, (f"surroundings alike on every side ({shown}): copies of them are the background",))
    cloned = fill_cloned_share(after, hole, side=PASTED_SIDE_PX)
    if cloned is None or cloned[1] < PASTED_MIN_BLOCKS:
        return Verdict(1.0, ("too few detailed blocks in the fill to tell whether it was copied from elsewhere",))
    share, blocks = cloned
    q = float(np.clip((PASTED_BAD - share) / (PASTED_BAD - PASTED_OK), 0.0, 1.0))
    reason = (
        f"{share:.0%} of the fill's {blocks} detailed blocks are verbatim copies of other places of the photo "
        f"(≤{PASTED_OK:.0%} → 1.0, 0 at {PASTED_BAD:.0%})"
    )
    return Verdict(q, (reason + (": content from elsewhere was pasted in" if q < 1.0 else ""),))
