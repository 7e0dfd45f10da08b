"""Measure how the text on a sign is drawn: the panel behind it, the letters' fill, outline and drop shadow.

OCR boxes often reach past the sign's panel onto the wall or photo around it, and the ring just outside a box is then
not the colour behind the letters: white "SALE" on a small red panel over a photo is the common case. So the panel is
measured *inside* the box: its colour is the dominant colour cluster there, fitted as a plane (c + a·x + b·y) over the
pixels of that cluster, and everything far from that plane is either letters (components inside the box) or outside
the panel (components hugging the box's border). Among the letter pixels the fill is the larger colour cluster; a
second colour is an outline when it surrounds the fill evenly, a drop shadow when it is the fill shifted by a few
pixels.

Pure numpy plus OpenCV (imported inside the functions). Units: boxes in pixels (x, y, w, h), colours RGB 0–255,
distances Euclidean RGB (0–441), offsets in pixels (dx right, dy down).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from costa.glyphs import Background
from costa.types import Box

#: Least share of the letter pixels a second colour needs to count as an outline or shadow.
_SECOND_COLOUR_SHARE = 0.12
#: Least RGB distance between the fill and a second colour for it to be a different colour.
_SECOND_COLOUR_DISTANCE = 60.0
#: RGB distance within which a pixel counts as explained by a candidate panel plane (noise of σ≈10 stays inside).
_EXPLAINED_DISTANCE = 45.0
#: Largest drop-shadow offset searched (pixels, each axis).
_MAX_SHADOW_OFFSET = 8


@dataclass(frozen=True, eq=False)
class SignStyle:
    """The measured drawing of the text in one box.

    Attributes:
        box: the box measured (clipped to the image).
        background: the panel behind the letters as a fitted plane (see `costa.glyphs.Background`).
        letters: bool (box.h, box.w): every pixel drawn for the text (fill, outline and shadow).
        fill_mask: bool (box.h, box.w): the fill's pixels only (what the font size is measured on).
        fill: the letters' colour; outline / outline_px: the outline colour and width (None / 0 when none);
        shadow / shadow_offset: the drop shadow's colour and offset (None / (0, 0) when none).
        outside: bool (box.h, box.w): pixels of the box that are not on the panel (wall or photo around a sign).
    """

    box: Box
    background: Background
    letters: np.ndarray
    fill_mask: np.ndarray
    fill: tuple[int, int, int]
    outline: tuple[int, int, int] | None = None
    outline_px: int = 0
    shadow: tuple[int, int, int] | None = None
    shadow_offset: tuple[int, int] = (0, 0)
    outside: np.ndarray | None = None

    @property
    def panel(self) -> tuple[int, int, int]:
        return self.background.mean_colour


def measure_sign(image: np.ndarray, box: Box) -> SignStyle:
    """Measure panel, letters, fill, outline and shadow of the text in `box` of the RGB uint8 `image`.

    Returns a style whose `letters` mask is empty when nothing in the box stands out from the panel.
    """
    height, width = image.shape[:2]
    box = box.clip(width, height)
    crop = image[box.y : box.y2, box.x : box.x2].astype(np.float32)
    labels, centres = _clusters(crop, 4)
    counts = np.bincount(labels.ravel(), minlength=len(centres))
    # The panel is the plane that explains the most pixels. A shaded panel spans several colour clusters, so each of
    # the largest clusters seeds a plane that is grown to every pixel near it before they are compared.
    best: tuple[float, int, Background, np.ndarray] | None = None
    for label in np.argsort(counts)[::-1][:3]:
        if counts[label] < 8:
            continue
        plane, dist = _grow_plane(crop, labels == label, box)
        explained = float((dist <= _EXPLAINED_DISTANCE).mean())
        if best is None or explained > best[0]:
            best = (explained, int(label), plane, dist)
    if best is None:
        raise ValueError(f"box {box} is too small to measure")
    _, panel_label, background, dist = best
    far = dist > background.ink_threshold
    letters, outside = _split_components(far, box)
    fill_mask, fill, second, second_mask = _fill_and_second(crop, letters, dist, centres[panel_label])
    fill_mask, letters = _one_line(crop, fill_mask, letters, fill, centres[panel_label])
    outline, outline_px, shadow, offset = None, 0, None, (0, 0)
    if second is not None:
        offset = _shadow_offset(fill_mask, second_mask)
        if offset != (0, 0):
            shadow = second
        else:
            outline, outline_px = second, _outline_width(fill_mask, second_mask)
    return SignStyle(box, background, letters, fill_mask, fill, outline, outline_px, shadow, offset, outside)


#: A glyph whose mean colour is this far (RGB distance) from the fill, and from half the fill's contrast with the
#: panel, is another text's (the black line under a red "STOP!" inside its OCR box), not the target's.
_OTHER_TEXT_DISTANCE = 60.0
#: Glyphs belong to the target's line when at least half of their height lies within the tallest glyph's rows
#: grown by this share of its height (dots and descenders stay; the next line's letters do not).
_LINE_SLACK = 0.25


def _one_line(
    crop: np.ndarray, fill_mask: np.ndarray, letters: np.ndarray, fill: tuple[int, int, int], panel: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The fill and letter pixels of the target's own line: OCR boxes overlap, so the box of "STOP!" on a sign held
    the top of the black line below it, which was measured as part of the word (a 142-px font instead of ~100) and
    painted over. Glyph components of another colour, or lying mostly outside the line's rows, are dropped; outline
    and shadow pixels stay where they touch a kept glyph. Unchanged when nothing would be left."""
    import cv2

    from costa.masks import dilate_mask

    n, comp, stats, _ = cv2.connectedComponentsWithStats(fill_mask.astype(np.uint8), connectivity=8)
    if n <= 2:
        return fill_mask, letters
    limit = max(_OTHER_TEXT_DISTANCE, 0.5 * float(np.linalg.norm(np.asarray(fill, np.float32) - panel)))
    same = [
        i for i in range(1, n) if np.linalg.norm(crop[comp == i].mean(axis=0) - np.asarray(fill, np.float32)) <= limit
    ]
    if not same:
        return fill_mask, letters
    tallest = max(same, key=lambda i: (int(stats[i, cv2.CC_STAT_HEIGHT]), int(stats[i, cv2.CC_STAT_AREA])))
    top, height = int(stats[tallest, cv2.CC_STAT_TOP]), int(stats[tallest, cv2.CC_STAT_HEIGHT])
    lo, hi = top - _LINE_SLACK * height, top + height + _LINE_SLACK * height
    keep = np.zeros_like(fill_mask)
    for i in same:
        t, h = int(stats[i, cv2.CC_STAT_TOP]), int(stats[i, cv2.CC_STAT_HEIGHT])
        inside = max(0.0, min(hi, t + h) - max(lo, t))
        if inside >= 0.5 * h:
            keep |= comp == i
    if not keep.any() or keep.sum() == fill_mask.sum():
        return fill_mask, letters
    _n2, comp2 = cv2.connectedComponents(letters.astype(np.uint8), connectivity=8)
    near = dilate_mask(keep, 3)
    touching = np.unique(comp2[near & letters])
    kept_letters = np.isin(comp2, touching[touching > 0]) & dilate_mask(keep, max(3, height // 6))
    return keep, (kept_letters | keep) & letters


def _clusters(crop: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """k-means colour clusters of the crop (seeded, deterministic): labels (h, w) and centres (k, 3) RGB."""
    import cv2

    pixels = crop.reshape(-1, 3).astype(np.float32)
    k = max(1, min(k, len(np.unique(pixels[:: max(1, len(pixels) // 4096)], axis=0))))
    cv2.setRNGSeed(0)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 1.0)
    best_labels = np.zeros((len(pixels), 1), np.int32)
    _, labels, centres = cv2.kmeans(pixels, k, best_labels, criteria, 2, cv2.KMEANS_PP_CENTERS)
    return np.asarray(labels).reshape(crop.shape[:2]), np.asarray(centres)


def _grow_plane(crop: np.ndarray, seed: np.ndarray, box: Box) -> tuple[Background, np.ndarray]:
    """Fit a plane to the seed pixels, then twice to every pixel near it; return it and each pixel's distance."""
    plane = _fit_plane(crop, seed, box)
    dist = np.linalg.norm(crop - plane.render(), axis=-1)
    for _ in range(2):
        near = dist <= max(2.0 * plane.ink_threshold, 45.0)
        if near.sum() < 8:
            break
        plane = _fit_plane(crop, near, box)
        dist = np.linalg.norm(crop - plane.render(), axis=-1)
    return plane, dist


def _fit_plane(crop: np.ndarray, sel: np.ndarray, box: Box) -> Background:
    """Robust per-channel plane over the selected pixels; its sigma is the residuals' robust spread."""
    ys, xs = np.nonzero(sel)
    values = crop[ys, xs].astype(np.float64)
    design = np.stack([np.ones_like(xs), xs, ys], axis=-1).astype(np.float64)
    keep = np.ones(len(values), dtype=bool)
    coef: np.ndarray = np.zeros((3, 3))
    sigma = 0.0
    for _ in range(3):
        coef, *_ = np.linalg.lstsq(design[keep], values[keep], rcond=None)
        resid = np.linalg.norm(values - design @ coef, axis=1)
        sigma = float(np.median(resid[keep])) * 1.4826 / np.sqrt(3.0)
        new_keep = resid <= max(4.0 * sigma * np.sqrt(3.0), 12.0)
        if new_keep.sum() < max(8, 0.3 * len(values)) or np.array_equal(new_keep, keep):
            break
        keep = new_keep
    return Background(box, coef, sigma)


def _split_components(far: np.ndarray, box: Box) -> tuple[np.ndarray, np.ndarray]:
    """Split off-panel pixels into letters and the outside of the panel (components that lie mostly in the outer
    band of the box, where wall or photo shows past a sign's edge)."""
    import cv2

    h, w = far.shape
    band = max(2, round(0.12 * min(h, w)))
    edge = np.zeros_like(far)
    edge[:band], edge[-band:], edge[:, :band], edge[:, -band:] = True, True, True, True
    n, comp = cv2.connectedComponents(far.astype(np.uint8), connectivity=8)
    letters = np.zeros_like(far)
    outside = np.zeros_like(far)
    for i in range(1, n):
        part = comp == i
        size = int(part.sum())
        if size < 3:
            continue
        touches = bool(part[0].any() or part[-1].any() or part[:, 0].any() or part[:, -1].any())
        if touches and (part & edge).sum() > 0.6 * size:
            outside |= part
        else:
            letters |= part
    return letters, outside


def _fill_and_second(
    crop: np.ndarray, letters: np.ndarray, dist: np.ndarray, panel: np.ndarray
) -> tuple[np.ndarray, tuple[int, int, int], tuple[int, int, int] | None, np.ndarray]:
    """The fill's mask and colour, and a second letter colour (outline or shadow) with its mask when there is one."""
    empty = np.zeros_like(letters)
    if letters.sum() < 8:
        return letters, (0, 0, 0), None, empty
    labels, centres = _clusters(crop[letters].reshape(-1, 1, 3), 2)
    labels = labels.ravel()
    counts = np.bincount(labels, minlength=len(centres))
    order = np.argsort(counts)[::-1]
    fill_rgb = centres[order[0]]
    fill = _core_colour(crop, letters, dist)
    if len(centres) < 2:
        return letters, fill, None, empty
    second_rgb = centres[order[1]]
    share = counts[order[1]] / counts.sum()
    if share < _SECOND_COLOUR_SHARE or np.linalg.norm(second_rgb - fill_rgb) < _SECOND_COLOUR_DISTANCE:
        return letters, fill, None, empty
    if min(_off_blend(second_rgb, fill_rgb, panel), _off_blend(fill_rgb, second_rgb, panel)) < (
        _SECOND_COLOUR_DISTANCE / 2
    ):
        return letters, fill, None, empty  # a mix of fill and panel: the anti-aliased edges of small letters
    d_fill = np.linalg.norm(crop - fill_rgb, axis=-1)
    d_second = np.linalg.norm(crop - second_rgb, axis=-1)
    fill_mask = letters & (d_fill <= d_second)
    second_mask = letters & ~fill_mask
    if _rim_share(second_mask, letters) < _rim_share(fill_mask, letters):
        # The fill is the inner colour: an outline or a shadow lies along the letters' rim, whichever is larger.
        fill_mask, second_mask, second_rgb = second_mask, fill_mask, fill_rgb
    return fill_mask, _core_colour(crop, fill_mask, dist), _rgb(second_rgb), second_mask


def _rim_share(part: np.ndarray, letters: np.ndarray) -> float:
    """Share of `part`'s pixels within 2 px of a pixel outside `letters` (the panel)."""
    from costa.masks import dilate_mask

    if not part.any():
        return 0.0
    return float((part & dilate_mask(~letters, 2)).sum() / part.sum())


def _off_blend(colour: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """RGB distance from `colour` to the nearest mix of colours `a` and `b` (the segment between them)."""
    ab = b - a
    t = float(np.clip(np.dot(colour - a, ab) / max(float(np.dot(ab, ab)), 1e-6), 0.0, 1.0))
    return float(np.linalg.norm(colour - (a + t * ab)))


def _core_colour(crop: np.ndarray, mask: np.ndarray, dist: np.ndarray) -> tuple[int, int, int]:
    """Median colour of the stroke cores: the masked pixels farthest from the panel (not the anti-aliased edges)."""
    d = dist[mask]
    return _rgb(np.median(crop[mask][d >= np.quantile(d, 0.6)], axis=0))


def _shadow_offset(fill: np.ndarray, second: np.ndarray) -> tuple[int, int]:
    """The shift of the fill that best covers the second colour; (0, 0) when no shift beats an even outline."""
    if not fill.any() or not second.any():
        return (0, 0)
    m = _MAX_SHADOW_OFFSET
    h, w = fill.shape
    padded = np.pad(fill, m)
    best, best_offset = -1.0, (0, 0)

    def agreement(dx: int, dy: int) -> float:
        # Jaccard of the visible part of the shifted fill (not hidden under the fill itself) and the second colour.
        visible = padded[m - dy : m - dy + h, m - dx : m - dx + w] & ~fill
        union = float((visible | second).sum())
        return float((visible & second).sum()) / union if union else 0.0

    for dy in range(-m, m + 1):
        for dx in range(-m, m + 1):
            score = agreement(dx, dy)
            if score > best + 1e-9:
                best, best_offset = score, (dx, dy)
    # An outline agrees about equally with every small shift; a shadow with one shift much more than its opposite.
    dx, dy = best_offset
    back = agreement(-dx, -dy)
    if max(abs(dx), abs(dy)) < 2 or best < 0.5 or back > 0.6 * best:
        return (0, 0)
    return best_offset


def _outline_width(fill: np.ndarray, second: np.ndarray) -> int:
    """Median distance (pixels) from outline pixels to the fill, rounded, at least 1."""
    import cv2

    if not fill.any():
        return 1
    distance = cv2.distanceTransform((~fill).astype(np.uint8), cv2.DIST_L2, 3)
    return max(1, round(float(np.median(distance[second])) * 1.5))


def _rgb(values: np.ndarray) -> tuple[int, int, int]:
    r, g, b = (int(v) for v in np.clip(np.round(values), 0, 255))
    return (r, g, b)


def sign_colours_kept(before: np.ndarray, after: np.ndarray, area: Box) -> tuple[float, tuple[str, ...]] | None:
    """Score whether an edit inside `area` kept the sign's own colours: its panel and its letters' fill.

    - panel: the median colour, after the edit, of the pixels that were panel before, against the panel before —
      RGB distance ≤ 25 → 1.0, 0 at 90 (a white-on-red sign painted grey fails);
    - fill: the colour of the new letters (measured like the old) against the old fill — ≤ 40 → 1.0, 0 at 140.

    Returns (quality in [0, 1], reasons), or None when the area holds no measurable letters before the edit or the
    sizes differ.
    """
    if before.shape != after.shape:
        return None
    height, width = before.shape[:2]
    area = area.clip(width, height)
    old = measure_sign(before, area)
    if old.letters.sum() < 8:
        return None
    panel_sel = ~old.letters & ~(old.outside if old.outside is not None else np.zeros_like(old.letters))
    if panel_sel.sum() < 8:
        return None
    crop = after[area.y : area.y2, area.x : area.x2].astype(np.float32)
    panel_after = np.median(crop[panel_sel], axis=0)
    panel_before = np.asarray(old.panel, dtype=np.float32)
    moved = float(np.linalg.norm(panel_after - panel_before))
    quality = float(np.clip((90.0 - moved) / 65.0, 0.0, 1.0))
    reasons = [f"sign panel {old.panel} → {_rgb(panel_after)}: RGB distance {moved:.0f} (≤25 → 1.0, 0 at 90)"]
    new = measure_sign(after, area)
    if new.fill_mask.sum() >= 8:
        shift = float(np.linalg.norm(np.asarray(new.fill, np.float32) - np.asarray(old.fill, np.float32)))
        quality = min(quality, float(np.clip((140.0 - shift) / 100.0, 0.0, 1.0)))
        reasons.append(f"letters {old.fill} → {new.fill}: RGB distance {shift:.0f} (≤40 → 1.0, 0 at 140)")
    return quality, tuple(reasons)


#: A column beside a text line is bare panel when this share of its pixels in the line's rows lie within
#: `PANEL_DISTANCE` (RGB) of the panel's colour: a longer word may run on over it, never off the panel.
PANEL_DISTANCE, PANEL_SHARE = 30.0, 0.97


def panel_colour(image: np.ndarray, sign: SignStyle) -> np.ndarray:
    """The panel's colour behind a measured line: the median RGB of its box's pixels that are neither letters nor
    outside the panel (float32 (3,); the fill's colour when there are none)."""
    crop = image[sign.box.y : sign.box.y2, sign.box.x : sign.box.x2]
    bare = ~sign.letters
    if sign.outside is not None:
        bare &= ~sign.outside
    return (np.median(crop[bare], axis=0) if bare.any() else np.asarray(sign.fill, np.float64)).astype(np.float32)


#: A column of a text line's box with less than this share of panel-coloured pixels is off the sign (the sky beside
#: it: an OCR box reaches past the panel's edge), so a new word may not run on over it.
OFF_PANEL_SHARE = 0.15


def bare_panel_run(image: np.ndarray, rows: tuple[int, int], x1: int, x2: int, panel: np.ndarray) -> tuple[int, int]:
    """Columns [x1, x2) of the image: first trimmed at each end while a column is off the panel (`OFF_PANEL_SHARE`;
    only where some column of the range is mostly panel, so an unmeasured panel trims nothing), then grown left and
    right while each column is bare panel in `rows` [y1, y2) (image pixels; see `PANEL_SHARE`)."""
    band = image[max(0, rows[0]) : rows[1]].astype(np.float32)
    if band.size == 0:
        return x1, x2
    share = (np.linalg.norm(band - panel, axis=-1) <= PANEL_DISTANCE).mean(axis=0)
    x1, x2 = max(0, x1), min(share.size, x2)
    if x2 > x1 and float(share[x1:x2].max()) >= 0.5:
        while x2 - x1 > 1 and share[x2 - 1] < OFF_PANEL_SHARE:
            x2 -= 1
        while x2 - x1 > 1 and share[x1] < OFF_PANEL_SHARE:
            x1 += 1
    column = share >= PANEL_SHARE
    while x1 > 0 and column[x1 - 1]:
        x1 -= 1
    while x2 < column.size and column[x2]:
        x2 += 1
    return x1, x2
