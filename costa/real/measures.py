"""Right or wrong against the truth, for each step of a real-photo case (`costa.real.cases`).

Each measure compares costa's result with the truth the case was built from, never with what costa's checks
compute. Thresholds (`THRESHOLDS`) were set by looking at contact sheets of results (`bench real --save DIR`) and are
listed in the README with the images that fixed them. Colour differences are CIE ΔE2000 on images smoothed with a
Gaussian of `SMOOTH_SIGMA` px, so a fill with the right stuff in a different grain counts as right while a smear,
a pasted object or the wrong colour does not.

Text replacement on real signs (`judge_retext`, kind "retext") is judged against hand-measured word boxes and sign
panels (`tests/data/real/signs.yaml`). A pixel counts as changed above 24 levels (JPEG-free results; the sign's own
grain moves less). The new glyphs may use the old word's box grown by 0.2 of its height, 3–8 px (a soft glyph edge
lies 1–2 px outside a hand box; 8 px keeps the tilted STOP! box off the line below), with at most 3 % of the box's
area changed outside that, 1 % outside the panel and 5 % of any other word's box beyond 2 px of the old one (the
plate's "California" ends one row above KAPOWUI: a right eraser grazes its box; COSTA42 erasing it changed 24 %).
At most 60 % of the old ink may be left as it was (drawn results: a right word left 20–29 %, one written over the
old word without erasing it 93–99 %). Height within 0.6–1.35× the old ink's and stroke width within 1/1.6–1.6×
(drawn results: right 0.76–0.77× in height — bold fitted to the old width — and 0.79–1.09× in stroke; 0.35× too
small measured 0.24–0.29×; DejaVu ExtraLight, the "thinner font" of issue 18, measured 0.32–0.56×). These were set
on the dev signs and drawn results before any held-out result was seen. Legibility is read by RapidOCR on the
allowed region (it read every old target word exactly on the untouched photos): the new word must be read there
and the old one not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from costa.real.cases import Truth

SMOOTH_SIGMA = 2.0
THRESHOLDS: dict[str, float] = {
    # removal: the fill's ΔE to the true background, within the object (dilated 2 px), at most this …
    "removal_fill_de": 10.0,
    # … and at most this share of the object's own ΔE to the background (the object is gone, not faded)
    "removal_fill_share": 0.5,
    # … and its detail (mean gradient) within [1 / ratio, ratio] of the true background's there: Telea's radial
    # smears over grass, gravel and fur matched the smoothed colour (ΔE ≤ 10) and were counted right (honest)
    "removal_detail_ratio": 2.5,
    # removal / recolour: pixels changed by more than 16 levels outside the object (dilated 12 px), at most this
    # share of the object's own area (a box-shaped recolouring, the person next to the cup removed)
    "outside_leak": 0.1,
    # background removal: the kept foreground's IoU with the object's mask, at least
    "background_iou": 0.85,
    # outpainting: the margin's smoothed ΔE to what was really there, at most …
    "outpaint_margin_de": 14.0,
    # … its detail (mean gradient) within [1 / ratio, ratio] of the truth's: no smear, no invented clutter
    "outpaint_detail_ratio": 2.5,
    # … and the input kept: mean |Δ| inside the input's place, at most
    "outpaint_kept": 2.0,
    # recolouring: the object's median hue within this many degrees of the asked colour's (chromatic colours) …
    "recolour_hue_deg": 25.0,
    # … at least this share of the object's pixels within 40° of it
    "recolour_coverage": 0.8,
    # deblurring: PSNR against the sharp photo, at least this many dB above the blurred input's
    "deblur_gain_db": 0.5,
    # global adjustment: the structure kept (SSIM of the z-scored lightness), at least
    "adjust_structure": 0.85,
    # text: share of the hand-transcribed words found in what costa read, at least
    "text_recall": 0.8,
    # background blur: the object's pixels (eroded 2 px) equal to the input's within 10 levels, at least this share …
    "bgblur_subject_kept": 0.9,
    # … the background's detail (mean gradient, more than 12 px from the object) at most this share of the input's …
    "bgblur_detail_ratio": 0.6,
    # … and of its textured 24-px tiles (mean gradient ≥ 6) at least this share blurred (detail ≤ 0.75× the
    # input's): the whole background, not a box around the object or a second object kept sharp. A photo's own
    # soft bokeh has little left to lose (dev-bgblur-van-1: 82 % with the true mask), a sharp pole kept by a wrong
    # mask or a kept box leaves whole rows of tiles
    "bgblur_background_changed": 0.8,
    # retext (see `judge_retext`): a pixel is changed when a channel moved by more than this many levels …
    "retext_level": 24,
    # … the old word's box may grow by this share of its height (at least 3 px, at most 8) for the new glyphs
    "retext_margin": 0.2,
    # … outside that, changed pixels at most this share of the old box's area
    "retext_outside": 0.03,
    # … outside the panel (the sign), at most this share
    "retext_panel": 0.01,
    # … in each other word's box (beyond the old box), at most this share of that box
    "retext_other_word": 0.05,
    # … the old glyphs' ink left as it was, at most this share (a right word of the same colour overlaps ~20-40 %)
    "retext_old_left": 0.6,
    # … the new glyphs' height within [lo, hi] × the old glyphs' (both measured the same way, in the hand boxes):
    # a right word drawn at the old height, fitted to the old width, measured 0.8–1.0×; 0.35× and 1.8× are wrong
    "retext_height_lo": 0.6,
    "retext_height_hi": 1.35,
    # … their stroke width within [1 / ratio, ratio] × the old glyphs': DejaVu Bold over the road sign's capitals
    # measured 1.09×, DejaVu ExtraLight (the "thinner font" of the STOP! sign) 0.56×
    "retext_stroke_ratio": 1.6,
}


@dataclass(frozen=True)
class Judgement:
    """Whether a step's result is right against the truth, why (one line), and the numbers behind it."""

    right: bool
    why: str
    numbers: dict[str, float] = field(default_factory=dict)


def _lab(image: np.ndarray) -> np.ndarray:
    import cv2
    from skimage.color import rgb2lab

    smooth = cv2.GaussianBlur(image, (0, 0), SMOOTH_SIGMA) if SMOOTH_SIGMA > 0 else image
    return np.asarray(rgb2lab(smooth), np.float64)


def _de(a: np.ndarray, b: np.ndarray, mask: np.ndarray) -> float:
    from skimage.color import deltaE_ciede2000

    if not mask.any():
        return 0.0
    return float(deltaE_ciede2000(_lab(a)[mask], _lab(b)[mask]).mean())


def _grow(mask: np.ndarray, px: int) -> np.ndarray:
    import cv2

    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * px + 1, 2 * px + 1))
    return cv2.dilate(mask.astype(np.uint8), k) > 0


def _outside_leak(before: np.ndarray, after: np.ndarray, mask: np.ndarray, px: int = 12) -> float:
    """Pixels changed by more than 16 levels outside `mask` grown by `px`, as a share of the mask's area."""
    out = ~_grow(mask, px)
    changed = np.abs(after.astype(np.int16) - before.astype(np.int16)).max(axis=2) > 16
    return float((changed & out).sum()) / max(1, int(mask.sum()))


def judge_removal(truth: Truth, before: np.ndarray, after: np.ndarray) -> Judgement:
    """The object is gone and its place looks like the true background; nothing else changed."""
    assert truth.mask is not None and truth.background is not None
    if after.shape != before.shape:
        return Judgement(False, f"the result is {after.shape[:2]}, the input {before.shape[:2]}")
    region = _grow(truth.mask, 2)
    fill = _de(after, truth.background, region)
    obj = _de(before, truth.background, region)
    leak = _outside_leak(before, after, truth.mask)
    n = {"fill_de": fill, "object_de": obj, "leak": leak}
    t = THRESHOLDS
    if leak > t["outside_leak"]:
        return Judgement(False, f"changed outside the object ({leak:.0%} of its area)", n)
    if fill > t["removal_fill_de"] or fill > t["removal_fill_share"] * obj:
        return Judgement(False, f"fill ΔE {fill:.1f} to the true background (object {obj:.1f})", n)
    ratio = (_detail(after, region) + 1.0) / (_detail(truth.background, region) + 1.0)
    n["detail_ratio"] = ratio
    if not 1 / t["removal_detail_ratio"] <= ratio <= t["removal_detail_ratio"]:
        return Judgement(False, f"fill detail {ratio:.2f}× the true background's (smear or clutter)", n)
    return Judgement(True, f"fill ΔE {fill:.1f} (object {obj:.1f}), detail {ratio:.2f}×", n)


def kept_mask(before: np.ndarray, after: np.ndarray, tolerance: int = 10) -> np.ndarray:
    """Pixels a background removal kept: the result equals the input there (within `tolerance` levels)."""
    return np.abs(after.astype(np.int16) - before.astype(np.int16)).max(axis=2) <= tolerance


def judge_background(
    truth: Truth, before: np.ndarray, after: np.ndarray, region: np.ndarray | None = None
) -> Judgement:
    """The kept pixels (or, for a segmentation, the `region` it proposes) are the object: IoU with its mask."""
    assert truth.mask is not None
    if region is not None:
        kept = region.astype(bool)
    elif after.shape != before.shape:
        return Judgement(False, f"the result is {after.shape[:2]}, the input {before.shape[:2]}")
    else:
        kept = kept_mask(before, after)
    inter = float((kept & truth.mask).sum())
    union = float((kept | truth.mask).sum())
    iou = inter / union if union else 0.0
    n = {"iou": iou, "kept_share": float(kept.mean())}
    if iou < THRESHOLDS["background_iou"]:
        return Judgement(False, f"kept region IoU {iou:.2f} with the object", n)
    return Judgement(True, f"kept region IoU {iou:.2f}", n)


def _detail(image: np.ndarray, mask: np.ndarray) -> float:
    import cv2

    y = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY).astype(np.float32)
    g = np.abs(cv2.Sobel(y, cv2.CV_32F, 1, 0)) + np.abs(cv2.Sobel(y, cv2.CV_32F, 0, 1))
    return float(g[mask].mean()) if mask.any() else 0.0


def judge_outpaint(truth: Truth, before: np.ndarray, after: np.ndarray) -> Judgement:
    """The canvas has the asked size, the input is kept in place, and the margin resembles what was cut away."""
    assert truth.canvas is not None
    canvas = truth.canvas
    if after.shape != canvas.shape:
        return Judgement(False, f"the result is {after.shape[1]}x{after.shape[0]}, asked {canvas.shape[1]}x"
                                f"{canvas.shape[0]}")  # fmt: skip
    x, y = truth.offset
    h, w = before.shape[:2]
    kept = float(np.abs(after[y : y + h, x : x + w].astype(np.int16) - before.astype(np.int16)).mean())
    margin = np.ones(canvas.shape[:2], bool)
    margin[y : y + h, x : x + w] = False
    de = _de(after, canvas, margin)
    d_res, d_truth = _detail(after, margin), _detail(canvas, margin)
    ratio = (d_res + 1.0) / (d_truth + 1.0)
    n = {"margin_de": de, "detail_ratio": ratio, "kept": kept}
    t = THRESHOLDS
    if kept > t["outpaint_kept"]:
        return Judgement(False, f"the input was changed (mean |Δ| {kept:.1f})", n)
    if de > t["outpaint_margin_de"]:
        return Judgement(False, f"margin ΔE {de:.1f} to what was cut away", n)
    if not 1 / t["outpaint_detail_ratio"] <= ratio <= t["outpaint_detail_ratio"]:
        return Judgement(False, f"margin detail {ratio:.2f}× the truth's (smear or clutter)", n)
    return Judgement(True, f"margin ΔE {de:.1f}, detail {ratio:.2f}×", n)


def judge_recolour(truth: Truth, before: np.ndarray, after: np.ndarray) -> Judgement:
    """The object took the asked hue over most of its pixels; nothing outside it changed."""
    from skimage.color import rgb2lab

    assert truth.mask is not None and truth.rgb is not None
    if after.shape != before.shape:
        return Judgement(False, f"the result is {after.shape[:2]}, the input {before.shape[:2]}")
    lab = np.asarray(rgb2lab(after), np.float64)[truth.mask]
    target = np.asarray(rgb2lab(np.array([[truth.rgb]], np.uint8)), np.float64)[0, 0]
    hue = np.degrees(np.arctan2(lab[:, 2], lab[:, 1]))
    want = float(np.degrees(np.arctan2(target[2], target[1])))
    diff = np.abs((hue - want + 180) % 360 - 180)
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    median = float(np.median(diff))
    coverage = float(((diff <= 40) & (chroma >= 8)).mean())
    leak = _outside_leak(before, after, truth.mask, 6)
    n = {"hue_diff": median, "coverage": coverage, "leak": leak}
    t = THRESHOLDS
    if leak > t["outside_leak"]:
        return Judgement(False, f"changed outside the object ({leak:.0%} of its area)", n)
    if median > t["recolour_hue_deg"] or coverage < t["recolour_coverage"]:
        return Judgement(False, f"hue {median:.0f}° off the asked colour, {coverage:.0%} of the object in it", n)
    return Judgement(True, f"hue {median:.0f}° off, {coverage:.0%} covered", n)


def judge_deblur(truth: Truth, before: np.ndarray, after: np.ndarray) -> Judgement:
    """Closer to the sharp photo than the blurred input was."""
    from costa.imagestats import psnr

    assert truth.sharp is not None
    if after.shape != truth.sharp.shape:
        return Judgement(False, f"the result is {after.shape[:2]}, the photo {truth.sharp.shape[:2]}")
    gain = psnr(after, truth.sharp) - psnr(before, truth.sharp)
    n = {"gain_db": gain}
    if gain < THRESHOLDS["deblur_gain_db"]:
        return Judgement(False, f"PSNR gain {gain:+.2f} dB against the sharp photo", n)
    return Judgement(True, f"PSNR gain {gain:+.2f} dB", n)


#: Adjustment → (statistic, direction, least change): L* mean, L* spread, chroma mean, b* mean.
_ADJUST_RULES: dict[str, tuple[str, float, float]] = {
    "brighter": ("L", 1, 3.0),
    "darker": ("L", -1, 3.0),
    "more contrast": ("spread", 1, 1.06),
    "less contrast": ("spread", -1, 1.06),
    "more saturated": ("chroma", 1, 1.08),
    "warmer": ("b", 1, 1.5),
    "cooler": ("b", -1, 1.5),
    "grayscale": ("grey", 0, 3.0),
}


def judge_adjust(truth: Truth, before: np.ndarray, after: np.ndarray) -> Judgement:
    """The asked statistic moved the asked way by a visible amount, and the photo's structure is kept."""
    from skimage.color import rgb2lab

    if after.shape != before.shape:
        return Judgement(False, f"the result is {after.shape[:2]}, the input {before.shape[:2]}")
    a, b = np.asarray(rgb2lab(before), np.float64), np.asarray(rgb2lab(after), np.float64)
    stat, sign, least = _ADJUST_RULES[truth.adjust]
    la, lb = a[..., 0].ravel(), b[..., 0].ravel()
    # a flat result has no structure left (correlation undefined: counted as 0, never as kept)
    structure = float(np.corrcoef(la, lb)[0, 1]) if la.std() > 0.5 and lb.std() > 0.5 else 0.0
    ca, cb = np.hypot(a[..., 1], a[..., 2]).mean(), np.hypot(b[..., 1], b[..., 2]).mean()
    if stat == "L":
        moved = float(b[..., 0].mean() - a[..., 0].mean())
        ok = moved * sign >= least
    elif stat == "spread":
        moved = float(b[..., 0].std() / (a[..., 0].std() + 1e-6))
        ok = moved >= least if sign > 0 else moved <= 1 / least
    elif stat == "chroma":
        moved = float(cb / (ca + 1e-6))
        ok = moved >= least
    elif stat == "b":
        moved = float(b[..., 2].mean() - a[..., 2].mean())
        ok = moved * sign >= least
    else:
        moved = float(cb)
        ok = moved <= least
    n = {"moved": moved, "structure": structure}
    if structure < THRESHOLDS["adjust_structure"]:
        return Judgement(False, f"structure lost (correlation {structure:.2f})", n)
    if not ok:
        return Judgement(False, f"{truth.adjust}: {stat} moved {moved:.2f}, not enough or the wrong way", n)
    return Judgement(True, f"{truth.adjust}: {stat} {moved:.2f}", n)


def judge_text(truth: Truth, result: str) -> Judgement:
    """What costa read names most of the sign's words (case-insensitive, as whole words)."""
    import re

    found = set(re.findall(r"[a-z0-9]+", result.lower()))
    hits = [w for w in truth.words if w.lower() in found]
    recall = len(hits) / max(1, len(truth.words))
    n = {"recall": recall}
    if recall < THRESHOLDS["text_recall"]:
        return Judgement(False, f"read {len(hits)} of {len(truth.words)} words", n)
    return Judgement(True, f"read {len(hits)} of {len(truth.words)} words", n)


def judge_bgblur(truth: Truth, before: np.ndarray, after: np.ndarray) -> Judgement:
    """The object kept as it was, the rest of the photo blurred: all of it, not a box around the object."""
    import cv2

    assert truth.mask is not None
    t = THRESHOLDS
    if after.shape != before.shape:
        return Judgement(False, f"the result is {after.shape[:2]}, the input {before.shape[:2]}")
    inner = cv2.erode(truth.mask.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    inner = inner if inner.any() else truth.mask
    same = kept_mask(before, after)
    kept = float(same[inner].mean())
    far = ~_grow(truth.mask, 12)
    ratio = (_detail(after, far) + 1.0) / (_detail(before, far) + 1.0)
    changed = _tiles_blurred(before, after, far)
    n = {"subject_kept": kept, "detail_ratio": ratio, "background_changed": changed}
    if kept < t["bgblur_subject_kept"]:
        return Judgement(False, f"only {kept:.0%} of the object kept as it was", n)
    if ratio > t["bgblur_detail_ratio"]:
        return Judgement(False, f"background detail {ratio:.2f}× the input's: still sharp", n)
    if changed < t["bgblur_background_changed"]:
        return Judgement(False, f"{1 - changed:.0%} of the textured background's tiles left sharp", n)
    return Judgement(True, f"object {kept:.0%} kept, background detail {ratio:.2f}×, {changed:.0%} tiles blurred", n)


def _tiles_blurred(before: np.ndarray, after: np.ndarray, region: np.ndarray, tile: int = 24) -> float:
    """Share of the textured tiles wholly inside `region` (mean gradient ≥ 6 grey levels in the input) whose detail
    fell to ≤ 0.75× the input's; 1.0 when no tile is textured (nothing there to blur)."""
    h, w = region.shape
    textured = blurred = 0
    for y in range(0, h - tile + 1, tile):
        for x in range(0, w - tile + 1, tile):
            inside = region[y : y + tile, x : x + tile]
            if not inside.all():
                continue
            was = _detail(before[y : y + tile, x : x + tile], inside)
            if was < 6.0:
                continue
            textured += 1
            blurred += int(_detail(after[y : y + tile, x : x + tile], inside) <= 0.75 * was)
    return blurred / textured if textured else 1.0


def judge_retext(truth: Truth, before: np.ndarray, after: np.ndarray) -> Judgement:
    """The new word stands where the old one stood, at its size and weight, legible, and nothing else changed.

    Geometry from the hand truth (`costa.real.signs`): the allowed region is the old word's box grown by
    `retext_margin` of its height (3–8 px), less the other words' boxes (beyond 2 px of the old box). Wrong when
    nothing changed in the old box; when more than `retext_panel` (of the old box's area) changed outside the
    panel, more than `retext_other_word` of another word's box changed, or more than `retext_outside` outside the
    allowed region; when more than `retext_old_left` of the old ink is left as it was; when the new ink's height
    (0.5–99.5th percentile of its rows) is outside [`retext_height_lo`, `retext_height_hi`] × the old ink's in its
    box, or its stroke width more than `retext_stroke_ratio` × off the old ink's; and when RapidOCR (costa's own
    reader, one part of the judge) does not read the new word in the allowed region or still reads the old one
    there. Ink is what lies farther from the panel's colour (median of a ring around the old box) than Otsu's
    threshold in the old box; the new word's ink is the ink of the allowed region that changed or lies on the old
    ink.
    """
    from costa.real import signs as sg

    assert truth.sign is not None
    t, shape = THRESHOLDS, before.shape[:2]
    if after.shape != before.shape:
        return Judgement(False, f"the result is {after.shape[:2]}, the input {before.shape[:2]}")
    old = truth.sign.word(truth.old).box
    margin = int(min(8, max(3, round(t["retext_margin"] * old[3]))))
    grown = sg.grow_box(old, margin, shape)
    old_m, grown_m = sg.box_mask(old, shape), sg.box_mask(grown, shape)
    # another word's box counts beyond 2 px around the old one: the eraser's margin may graze an adjacent box
    # (the plate's "California" ends one row above KAPOWUI) without touching its letters
    near = sg.box_mask(sg.grow_box(old, 2, shape), shape)
    others = [(w.text, sg.box_mask(w.box, shape) & ~near) for w in truth.sign.words if w.text != truth.old]
    other_m = np.zeros(shape, bool)
    for _, m in others:
        other_m |= m
    allowed = grown_m & ~other_m
    moved = sg.changed(before, after, int(t["retext_level"]))
    area = float(old[2] * old[3])
    n = {"in_box": float(moved[old_m].mean())}
    if n["in_box"] < 0.02:
        return Judgement(False, "nothing changed in the old word's box", n)
    n["outside_panel"] = float((moved & ~sg.panel_mask(truth.sign, shape)).sum()) / area
    if n["outside_panel"] > t["retext_panel"]:
        return Judgement(False, f"changed outside the sign ({n['outside_panel']:.0%} of the word's box)", n)
    for text, m in others:
        share = float(moved[m].mean()) if m.any() else 0.0
        n["other_word"] = max(n.get("other_word", 0.0), share)
        if share > t["retext_other_word"]:
            return Judgement(False, f"covers the word {text!r} ({share:.0%} of its box changed)", n)
    n["outside"] = float((moved & ~allowed).sum()) / area
    if n["outside"] > t["retext_outside"]:
        return Judgement(False, f"changed outside the old word's box ({n['outside']:.0%} of its area)", n)
    ring = grown_m & ~old_m & ~other_m
    background, level = sg.ink_threshold(before, old_m & ~other_m, ring if ring.any() else grown_m)
    old_ink = sg.ink(before, old_m & ~other_m, background, level)
    # the new glyphs: ink that was drawn (changed) or stayed where old ink was — not the sign's own dirt or bolts
    new_ink = sg.ink(after, allowed, background, level) & (moved | old_ink)
    n["old_left"] = float((~moved[old_ink]).mean()) if old_ink.any() else 0.0
    if n["old_left"] > t["retext_old_left"]:
        return Judgement(False, f"the old word is left ({n['old_left']:.0%} of its ink as it was)", n)
    n["height"] = sg.ink_height(new_ink) / max(1.0, sg.ink_height(old_ink))
    if not t["retext_height_lo"] <= n["height"] <= t["retext_height_hi"]:
        return Judgement(False, f"new glyphs {n['height']:.2f}× the old word's height", n)
    was = sg.stroke_width(old_ink)
    n["stroke"] = (sg.stroke_width(new_ink) + 0.5) / (was + 0.5)
    if not 1 / t["retext_stroke_ratio"] <= n["stroke"] <= t["retext_stroke_ratio"]:
        return Judgement(False, f"new strokes {n['stroke']:.2f}× the old word's width", n)
    pad = max(3, round(0.6 * old[3]))
    lines = sg.read_words(after, sg.grow_box(grown, pad, shape))
    if not sg.reads_as(lines, truth.new):
        return Judgement(False, f"does not read as {truth.new!r} (read {' | '.join(lines)[:40]!r})", n)
    if sg.normalise(truth.old) not in sg.normalise(truth.new) and sg.reads_as(lines, truth.old):
        return Judgement(False, f"still reads {truth.old!r}", n)
    return Judgement(True, f"reads {truth.new!r}, height {n['height']:.2f}×, stroke {n['stroke']:.2f}×", n)


def judge_step(kind: str, truth: Truth, before: np.ndarray, after: np.ndarray | None, result: str = "") -> Judgement:
    """Judge one step of suite kind `kind` (see `costa.real.cases.KINDS`); `after` None means no image came back."""
    if kind == "text":
        return judge_text(truth, result)
    if after is None:
        return Judgement(False, "no result image")
    judges = {
        "removal": judge_removal,
        "background": judge_background,
        "outpaint": judge_outpaint,
        "recolour": judge_recolour,
        "deblur": judge_deblur,
        "adjust": judge_adjust,
        "bgblur": judge_bgblur,
        "retext": judge_retext,
    }
    return judges[kind](truth, before, after)
