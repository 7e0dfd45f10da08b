"""Pixel helpers for text edits: the background behind a text box, the glyph pixels in it, and word edges.

Shared by the text tools (which erase, replace and mark text) and the text checks (which must look at exactly the boxes
the tools touched). Pure numpy, so the checks that import it stay cheap to import.

Units: boxes are pixels (x, y, w, h); colours are RGB 0–255; contrasts are Euclidean RGB distances (0–441).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from costa.errors import ToolError
from costa.textmatch import TextMatch, find_matches
from costa.types import Box, TextRegion

#: Least RGB distance from the background for a pixel to count as ink (about 12 % of full scale).
MIN_GLYPH_CONTRAST = 30.0


@dataclass(frozen=True, eq=False)
class Background:
    """A per-channel plane c + a·x + b·y fitted to the pixels around a box, and the noise left around it.

    `coef` is (3, 3): rows are (c, a, b) for R, G, B with x, y in pixels relative to the box's top-left corner;
    `sigma` is the robust standard deviation of the fit's residuals (0–255 scale). A flat background has a = b = 0;
    a gradient is captured by a and b; a texture shows up as a large `sigma`.
    """

    box: Box
    coef: np.ndarray
    sigma: float

    def render(self) -> np.ndarray:
        """Return the modelled background over the box as float32 (h, w, 3) RGB."""
        ys, xs = np.mgrid[0 : self.box.h, 0 : self.box.w].astype(np.float32)
        design = np.stack([np.ones_like(xs), xs, ys], axis=-1)
        return design @ self.coef.astype(np.float32)

    @property
    def mean_colour(self) -> tuple[int, int, int]:
        """The modelled colour at the box centre, RGB 0–255."""
        c = self.coef[0] + self.coef[1] * self.box.w / 2 + self.coef[2] * self.box.h / 2
        r, g, b = (int(v) for v in np.clip(np.round(c), 0, 255))
        return (r, g, b)

    @property
    def ink_threshold(self) -> float:
        """RGB distance above which a pixel is ink rather than background noise."""
        return max(MIN_GLYPH_CONTRAST, 4.0 * self.sigma)


def expand_box(box: Box, pad: int, width: int, height: int) -> Box:
    """Grow `box` by `pad` pixels on every side, clipped to a width × height image."""
    grown = Box(box.x - pad, box.y - pad, box.w + 2 * pad, box.h + 2 * pad, box.label, box.score)
    return grown.clip(width, height)


def estimate_background(image: np.ndarray, box: Box, ring: int | None = None) -> Background:
    """Fit the background around `box` from a ring of pixels just outside it.

    Args:
        image: RGB uint8 (H, W, 3).
        box: the text box; the ring lies outside it so the glyphs themselves do not bias the fit.
        ring: ring width in pixels (default 15 % of the box height, at least 2).

    The fit is robust: pixels far from a first fit (a neighbouring letter, a stray line) are dropped and it is refitted.
    """
    height, width = image.shape[:2]
    box = box.clip(width, height)
    ring = ring if ring is not None else max(2, round(0.15 * box.h))
    outer = expand_box(box, ring, width, height)
    sel = np.ones((outer.h, outer.w), dtype=bool)
    sel[box.y - outer.y : box.y2 - outer.y, box.x - outer.x : box.x2 - outer.x] = False
    if sel.sum() < 8:  # box covers the whole image: use its own border instead
        outer = box
        sel = np.zeros((box.h, box.w), dtype=bool)
        sel[[0, -1], :] = True
        sel[:, [0, -1]] = True
    ys, xs = np.nonzero(sel)
    values = image[outer.y + ys, outer.x + xs].astype(np.float64)
    design = np.stack([np.ones_like(xs), xs + outer.x - box.x, ys + outer.y - box.y], axis=-1).astype(np.float64)
    keep = np.ones(len(values), dtype=bool)
    coef: np.ndarray = np.zeros((3, 3))
    sigma = 0.0
    for _ in range(3):
        coef, *_ = np.linalg.lstsq(design[keep], values[keep], rcond=None)
        resid = values - design @ coef
        dist = np.linalg.norm(resid, axis=1)
        mad = float(np.median(np.abs(resid[keep]))) * 1.4826
        sigma = mad
        cutoff = max(4.0 * mad, 12.0)
        new_keep = dist <= cutoff * 1.7
        if new_keep.sum() < max(8, 0.3 * len(values)) or np.array_equal(new_keep, keep):
            break
        keep = new_keep
    return Background(box, coef, sigma)


def glyph_mask(image: np.ndarray, box: Box, background: Background | None = None) -> np.ndarray:
    """Return a bool (box.h, box.w) mask of the pixels in `box` that differ from the background: the glyphs."""
    height, width = image.shape[:2]
    box = box.clip(width, height)
    bg = background if background is not None and background.box == box else estimate_background(image, box)
    crop = image[box.y : box.y2, box.x : box.x2].astype(np.float32)
    dist = np.linalg.norm(crop - bg.render(), axis=-1)
    return _drop_isolated(dist > bg.ink_threshold)


def ink_colour(image: np.ndarray, box: Box, mask: np.ndarray, background: Background) -> tuple[int, int, int]:
    """Estimate the text colour: the median of the glyph pixels farthest from the background (stroke cores, not the
    anti-aliased edges). Falls back to black or white, whichever contrasts with the background, when `mask` is empty."""
    if not mask.any():
        return contrasting_colour(background.mean_colour)
    crop = image[box.y : box.y2, box.x : box.x2].astype(np.float32)
    dist = np.linalg.norm(crop - background.render(), axis=-1)
    d = dist[mask]
    core = crop[mask][d >= np.quantile(d, 0.6)]
    r, g, b = (int(v) for v in np.median(core, axis=0).round())
    return (r, g, b)


def contrasting_colour(rgb: Sequence[float]) -> tuple[int, int, int]:
    """Return black or white, whichever contrasts more with `rgb` (by Rec. 601 luma)."""
    luma = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]
    return (0, 0, 0) if luma > 140 else (255, 255, 255)


def match_box(image: np.ndarray, match: TextMatch) -> Box:
    """Return the pixel box of a match, with a word inside a longer line snapped to the gaps between words.

    `TextMatch.box` splits the line in proportion to character widths; this moves each inner edge to the middle of the
    nearest column gap wider than 15 % of the line height, so that erasing "SALE" in "BIG SALE TODAY" neither leaves a
    letter of SALE nor bites into BIG or TODAY. An edge with no gap within one line height stays where it was.
    """
    height, width = image.shape[:2]
    line = match.region.box.clip(width, height)
    if match.whole_region:
        return line
    est = match.box.clip(width, height)
    mask = glyph_mask(image, line)
    counts = mask.sum(axis=0)
    empty = counts <= max(0, int(0.02 * line.h))
    gaps = _runs(empty, min_len=max(2, round(0.15 * line.h)))
    tolerance = line.h
    x1, x2 = est.x - line.x, est.x2 - line.x
    x1 = 0 if match.start == 0 else _snap(x1, gaps, tolerance)
    x2 = line.w if match.end >= len(match.region.text.rstrip()) else _snap(x2, gaps, tolerance)
    if x2 - x1 < 2:
        return est
    return Box(line.x + x1, line.y, x2 - x1, line.h, match.box.label, match.box.score)


def locate_text(
    image: np.ndarray, regions: Sequence[TextRegion], target: str | None
) -> tuple[tuple[TextMatch, Box], ...]:
    """Return each occurrence of `target` in `regions` with its pixel box (see `match_box`).

    Raises:
        ToolError: when nothing matches; the message names the target and what OCR read, so the planner or the user
            can see why (e.g. the target is misspelt or OCR misread it).
    """
    if not regions:
        raise ToolError(f"no text regions to search for {target!r}: run text detection first")
    matches = find_matches(regions, target)
    if not matches:
        read = "; ".join(repr(r.text) for r in regions[:8])
        more = f" and {len(regions) - 8} more" if len(regions) > 8 else ""
        raise ToolError(f"no text matching {target!r} in the image; OCR read {read}{more}")
    return tuple((m, match_box(image, m)) for m in matches)


def boxes_mask(boxes: Sequence[Box], height: int, width: int, dilate: int = 0) -> np.ndarray:
    """Return the bool (height, width) union of `boxes`, grown by `dilate` pixels."""
    mask = np.zeros((height, width), dtype=bool)
    for box in boxes:
        b = expand_box(box, dilate, width, height) if dilate else box.clip(width, height)
        mask[b.y : b.y2, b.x : b.x2] = True
    return mask


def edge_energy(image: np.ndarray, box: Box) -> float:
    """Mean gradient magnitude of the grey image inside `box` (0–255 per pixel): high on glyph edges, low on flat
    or smoothly filled areas."""
    height, width = image.shape[:2]
    b = box.clip(width, height)
    grey = image[b.y : b.y2, b.x : b.x2].astype(np.float32) @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    if min(grey.shape) < 2:
        return 0.0
    gy, gx = np.gradient(grey)
    return float(np.hypot(gx, gy).mean())


def _drop_isolated(mask: np.ndarray) -> np.ndarray:
    """Remove pixels with no 8-neighbour in the mask: background grain that crossed the threshold, never a stroke."""
    padded = np.pad(mask, 1)
    h, w = mask.shape
    neighbours = sum(
        padded[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w].astype(np.uint8)
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
        if dy or dx
    )
    return mask & (neighbours > 0)


def _runs(flags: np.ndarray, min_len: int) -> list[tuple[int, int]]:
    """Return [start, end) of runs of True at least `min_len` long; runs touching either end always count."""
    out: list[tuple[int, int]] = []
    n = len(flags)
    i = 0
    while i < n:
        if flags[i]:
            j = i
            while j < n and flags[j]:
                j += 1
            if j - i >= min_len or i == 0 or j == n:
                out.append((i, j))
            i = j
        else:
            i += 1
    return out


def _snap(x: int, gaps: list[tuple[int, int]], tolerance: float) -> int:
    best: tuple[float, int] | None = None
    for start, end in gaps:
        distance = 0.0 if start <= x <= end else float(min(abs(x - start), abs(x - end)))
        if distance <= tolerance and (best is None or distance < best[0]):
            best = (distance, (start + end) // 2)
    return best[1] if best else x
