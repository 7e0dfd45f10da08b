"""Does replaced text fit where the old text was? Size, weight, place, and the text around it (issue 18 part 7).

OCR reading the new word is not enough: "GO!" replacing "STOP!" on a real sign was drawn half as large again in a
thin regular face, overflowed the sign's line and covered the line below it, and passed at 1.00. Measured on the
images, never on the tool's claim:

- **size**: the new letters' height against the old letters' (median height of the tall glyphs, tilt-robust,
  `costa.tools.text_edit.glyph_stats`), corrected for the strings' own shapes (capitals against lower case: the
  ratio of the two strings' letter heights when rendered in one face) → within `SIZE_FULL` × either way 1.0, 0 at
  `SIZE_ZERO` ×;
- **weight**: stroke width relative to letter height, new against old → within `WEIGHT_FULL` × 1.0, 0 at
  `WEIGHT_ZERO` ×;
- **place**: the new letters' pixels, and any pixel the edit changed (by more than `CHANGE_TOLERANCE`: letters
  on a background of their own colour are no new ink), beyond the old text's place, as a share of the new letters
  → ≤ `OVERFLOW_FULL` 1.0, 0 at `OVERFLOW_ZERO`. The place is the old text's box grown by a quarter of the letter
  height, trimmed to the panel and along its line as far as the sign's bare panel reaches
  (`costa.signstyle.bare_panel_run` on the image before): a longer word may run on over empty panel ('OPEN' →
  'CLOSED' on a card), never off the panel, over a frame or onto other things;
- **other text**: the share of the other lines' glyph pixels (OCR's other regions, measured before) that changed →
  ≤ `COVERED_FULL` 1.0, 0 at `COVERED_ZERO`.

New letters are the pixels of the old letters' colour in the result that were not already that colour before,
except on the old letters themselves (a sign's frame of the same red is not text). All images RGB uint8.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from costa.types import Box, Verdict

SIZE_FULL, SIZE_ZERO = 1.25, 1.6
WEIGHT_FULL, WEIGHT_ZERO = 1.3, 1.8
OVERFLOW_FULL, OVERFLOW_ZERO = 0.02, 0.1
COVERED_FULL, COVERED_ZERO = 0.03, 0.1
#: RGB distance from the old letters' colour within which a pixel is drawn in that colour.
INK_DISTANCE = 60.0
#: A pixel of another line's glyphs counts as covered when some channel moved by more than this.
COVER_TOLERANCE = 40
#: A pixel beyond the new text's place counts as drawn over when some channel moved by more than this (RGB levels).
CHANGE_TOLERANCE = 12


def _log_ramp(ratio: float, full: float, zero: float) -> float:
    off = abs(math.log(max(ratio, 1e-6)))
    return float(np.clip((math.log(zero) - off) / (math.log(zero) - math.log(full)), 0.0, 1.0))


def _linear(value: float, full: float, zero: float) -> float:
    return float(np.clip((zero - value) / (zero - full), 0.0, 1.0))


def _grown(box: Box, px: int, py: int, width: int, height: int) -> Box:
    x1, y1 = max(0, box.x - px), max(0, box.y - py)
    return Box(x1, y1, min(width, box.x2 + px) - x1, min(height, box.y2 + py) - y1)


def _shape_ratio(old: str, new: str) -> float:
    """How much taller `new`'s letters are than `old`'s when both are drawn in one face (capitals vs lower case)."""
    from costa.tools.text_edit import _rendered, glyph_stats, load_font

    font = load_font(100, False)
    a, b = _rendered(font, old), _rendered(font, new)
    if a is None or b is None:
        return 1.0
    ha, hb = glyph_stats(a)[0], glyph_stats(b)[0]
    return hb / ha if ha > 0 and hb > 0 else 1.0


def _glyphs(image: np.ndarray, box: Box) -> tuple[np.ndarray, tuple[int, int, int], np.ndarray] | None:
    """The target line's fill glyphs in `box` (bool, the box's shape), their colour and the panel's colour (the
    median RGB of the box's pixels that are not letters), or None."""
    from costa.signstyle import measure_sign, panel_colour

    try:
        sign = measure_sign(image, box)
    except ValueError:
        return None
    if sign.fill_mask.sum() < 8:
        return None
    return sign.fill_mask, sign.fill, panel_colour(image, sign)


def _measured_like_the_old(
    after: np.ndarray, new_mask: np.ndarray, area: Box, old_box: Box, fallback: tuple[float, float]
) -> tuple[float, float]:
    """(letter height, stroke) of the new letters segmented as the old ones were (`measure_sign` on the old box
    grown to hold the new letters), so a segmentation's wider anti-aliased rim is on both sides of the weight
    ratio; the colour rule's `fallback` when that box cannot be measured.

    Measured with the colour rule alone, a same-face 'FOOD' over 'MUSEUM' read ×0.65 the old weight and failed."""
    from costa.tools.text_edit import glyph_stats

    ys, xs = np.nonzero(new_mask)
    h, w = after.shape[:2]
    x1, y1 = min(old_box.x, area.x + int(xs.min())), min(old_box.y, area.y + int(ys.min()))
    x2, y2 = max(old_box.x2, area.x + int(xs.max()) + 1), max(old_box.y2, area.y + int(ys.max()) + 1)
    x1, y1, x2, y2 = max(0, x1), max(0, y1), min(w, x2), min(h, y2)
    measured = _glyphs(after, Box(x1, y1, x2 - x1, y2 - y1))
    if measured is None:
        return fallback
    stats = glyph_stats(measured[0])
    return stats if stats[0] > 0 else fallback


def text_fit(
    before: np.ndarray, after: np.ndarray, old_box: Box, old_text: str, new_text: str, others: Sequence[Box] = ()
) -> Verdict:
    """Score how the new text fits the old one's place (see the module docstring).

    Args:
        old_box: where the old text was (its OCR box on `before`).
        others: boxes of the other text lines on `before` (their glyphs must stay as they were).
    """
    from costa.tools.text_edit import glyph_stats

    height, width = before.shape[:2]
    measured = _glyphs(before, old_box)
    if measured is None or before.shape != after.shape:
        return Verdict(1.0, ("the old letters cannot be measured; fit not judged",))
    old_mask, fill, panel = measured
    old_h, old_stroke = glyph_stats(old_mask)
    if old_h <= 0:
        return Verdict(1.0, ("the old letters have no height; fit not judged",))
    reach = max(4, round(old_h))
    # along the line the new letters are looked for as far as a word three times as long would reach
    area = _grown(old_box, max(reach, old_box.w), reach, width, height)
    colour = np.asarray(fill, np.float32)

    def inked(image: np.ndarray) -> np.ndarray:
        crop = image[area.y : area.y2, area.x : area.x2].astype(np.float32)
        return np.linalg.norm(crop - colour, axis=-1) <= INK_DISTANCE

    was_letters = np.zeros((area.h, area.w), bool)
    ox, oy = old_box.x - area.x, old_box.y - area.y
    was_letters[oy : oy + old_box.h, ox : ox + old_box.w] = old_mask
    from costa.masks import dilate_mask

    near_old = dilate_mask(was_letters, 2)
    already = inked(before) & ~near_old
    new_mask = inked(after) & ~already
    if new_mask.sum() < 8:
        return Verdict(0.0, (f"no letters of the old text's colour {fill} are drawn where {old_text!r} was",))
    new_h, new_stroke = _measured_like_the_old(after, new_mask, area, old_box, glyph_stats(new_mask))
    size = (new_h / old_h) / _shape_ratio(old_text, new_text)
    weight = (new_stroke / max(new_h, 1.0)) / max(old_stroke / old_h, 1e-3)
    q_size = _log_ramp(size, SIZE_FULL, SIZE_ZERO)
    q_weight = _log_ramp(weight, WEIGHT_FULL, WEIGHT_ZERO)
    allowed = np.zeros_like(new_mask)
    slack = max(3, round(0.25 * old_h))
    y1, y2 = max(0, oy - slack), min(area.h, oy + old_box.h + slack)
    x1, x2 = max(0, ox - slack), min(area.w, ox + old_box.w + slack)
    from costa.signstyle import bare_panel_run

    band = before[:, area.x : area.x2]
    x1, x2 = bare_panel_run(band, (area.y + y1, area.y + y2), x1, x2, panel)
    allowed[y1:y2, x1:x2] = True
    # Letters drawn on a background of their own colour (dark letters off the panel on a night sky) are not "new
    # ink" there: every pixel the edit changed beyond the place counts too, against the new letters' size.
    a = before[area.y : area.y2, area.x : area.x2].astype(np.int16)
    b = after[area.y : area.y2, area.x : area.x2].astype(np.int16)
    changed = np.abs(a - b).max(axis=2) > CHANGE_TOLERANCE
    overflow = float(((new_mask | changed) & ~allowed).sum()) / float(new_mask.sum())
    q_overflow = _linear(overflow, OVERFLOW_FULL, OVERFLOW_ZERO)
    covered, total = 0, 0
    for other in others:
        glyphs = _glyphs(before, other)
        if glyphs is None:
            continue
        mask = glyphs[0].copy()
        # the old text's own box overlaps its neighbours' (OCR boxes do): its letters are not the other line's
        ix1, iy1 = max(other.x, old_box.x), max(other.y, old_box.y)
        ix2, iy2 = min(other.x2, old_box.x2), min(other.y2, old_box.y2)
        if ix2 > ix1 and iy2 > iy1:
            sub = old_mask[iy1 - old_box.y : iy2 - old_box.y, ix1 - old_box.x : ix2 - old_box.x]
            mask[iy1 - other.y : iy2 - other.y, ix1 - other.x : ix2 - other.x] &= ~dilate_mask(sub, 2)
        a = before[other.y : other.y2, other.x : other.x2].astype(np.int16)
        b = after[other.y : other.y2, other.x : other.x2].astype(np.int16)
        moved = np.abs(a - b).max(axis=2) > COVER_TOLERANCE
        covered += int((moved & mask).sum())
        total += int(mask.sum())
    share = covered / total if total else 0.0
    q_covered = _linear(share, COVERED_FULL, COVERED_ZERO)
    reasons = [
        f"new letters {new_h:.0f} px tall vs the old {old_h:.0f} px: ×{size:.2f} for these strings "
        f"(within {SIZE_FULL}× → 1.0, 0 at {SIZE_ZERO}×)" + ("" if q_size >= 1.0 else ": not the old text's size"),
        f"stroke {new_stroke:.1f} px vs {old_stroke:.1f} px for its height: ×{weight:.2f} "
        f"(within {WEIGHT_FULL}× → 1.0, 0 at {WEIGHT_ZERO}×)"
        + ("" if q_weight >= 1.0 else ": not the old text's weight"),
        f"{overflow:.1%} of the new letters lie beyond the old text's place (≤{OVERFLOW_FULL:.0%} → 1.0, 0 at "
        f"{OVERFLOW_ZERO:.0%})" + ("" if q_overflow >= 1.0 else ": the new text overflows its place"),
        f"{share:.1%} of the other lines' letters changed (≤{COVERED_FULL:.0%} → 1.0, 0 at {COVERED_ZERO:.0%})"
        + ("" if q_covered >= 1.0 else ": the new text covers other text"),
    ]
    return Verdict(min(q_size, q_weight, q_overflow, q_covered), tuple(reasons))
