"""Ground a target by the colour it names ("the red car", "the yellow wall"): CIELAB colour segmentation, refined
with GrabCut, keeping the largest coherent region(s).

Colour membership is decided in CIELAB because shading there mostly moves lightness: a chromatic target matches the
hue sector closer to it than to any other basic colour (red, orange, yellow, green, teal, blue, purple, pink), with at
least a share of its chroma and a lightness within reach of its own; an achromatic target (white, grey, black) matches
low-chroma pixels near its lightness. The matching pixels are cleaned, split into connected regions, and the largest
(with any of at least half its size) are refined by a GrabCut seeded from them, which adds the shadowed and
anti-aliased rim that the colour rule misses.

When the user also pointed (boxes or clicks in the state), the search is confined to the boxes and to regions under a
positive click: "the red car" plus a click picks that red car.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from costa.colours import RGB, load_colour_table, rgb_to_lab
from costa.errors import GroundingError, InputError, ToolError
from costa.grounding import choose, count_evidence
from costa.masks import dilate_mask, erode_mask
from costa.targets import Evidence, TargetPhrase, Verification, find_colour, ground_advice, parse_target
from costa.tools.base import Tool
from costa.tools.params import float_param, int_param
from costa.types import Box, EditState, Mask, Point, Subtask, ToolOutput

#: Basic colour names whose CIELAB hues split the hue circle into sectors (hot pink stands for pink: the table's
#: "pink" is a pale tint).
BASIC_HUE_NAMES = ("red", "orange", "yellow", "green", "teal", "blue", "purple", "hot pink")
#: Below this CIELAB chroma a target colour counts as achromatic (white, greys, black).
ACHROMATIC_CHROMA = 12.0
#: Widest half-sector on either side of the target hue, in degrees.
_MAX_HALF_SECTOR_DEG = 45.0
#: Lightness (L*) a matching pixel may differ from the target's: wide, since shading moves it.
_L_REACH = 45.0
_ACHROMATIC_L_REACH = 22.0
#: Matches covering more than this share of the image may be two shades (object and wall): try splitting them.
LARGE_MATCH_SHARE = 0.25
#: Two shades this far apart (CIELAB, lightness at half weight) are different surfaces.
SHADE_SEPARATION = 18.0
#: Regions smaller than this share of the image are specks, not objects.
MIN_REGION_SHARE = 0.0005


@functools.cache
def _basic_hues() -> tuple[float, ...]:
    table = load_colour_table()
    return tuple(_hue_deg(rgb_to_lab(table[name])) for name in BASIC_HUE_NAMES)


def _hue_deg(lab: tuple[float, float, float]) -> float:
    return math.degrees(math.atan2(lab[2], lab[1])) % 360.0


def hue_sector(rgb: RGB, slack_deg: float = 0.0) -> tuple[float, float]:
    """The hue interval (degrees; `lo` > `hi` when it wraps past 0) a chromatic target colour matches.

    The target belongs to the family of its nearest basic hue; the sector is that family's share of the hue circle
    (halfway to each neighbouring basic hue, at most 45° from the family's hue), widened to include the target's own
    hue, plus `slack_deg` on each side.
    """
    h = _hue_deg(rgb_to_lab(rgb))
    hues = sorted(_basic_hues())
    family = min(hues, key=lambda b: _circular(b, h))
    k = hues.index(family)
    prev_gap = (family - hues[k - 1]) % 360.0
    next_gap = (hues[(k + 1) % len(hues)] - family) % 360.0
    below = min(prev_gap / 2.0, _MAX_HALF_SECTOR_DEG)
    above = min(next_gap / 2.0, _MAX_HALF_SECTOR_DEG)
    offset = ((h - family + 180.0) % 360.0) - 180.0  # the target's signed distance from its family's hue
    below, above = max(below, -offset), max(above, offset)
    return (family - below - slack_deg) % 360.0, (family + above + slack_deg) % 360.0


def _circular(a: float, b: float) -> float:
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


def colour_membership(image: np.ndarray, rgb: RGB, chroma_share: float = 0.4, slack_deg: float = 0.0) -> np.ndarray:
    """Bool (H, W): pixels of `image` (RGB uint8) whose colour a person would call `rgb`'s name.

    Args:
        chroma_share: least chroma a matching pixel needs, as a share of the target's (shadows lower chroma).
        slack_deg: degrees added to each side of the hue sector.
    """
    import cv2

    lab = cv2.cvtColor(image.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    lightness, a, b = lab[..., 0], lab[..., 1], lab[..., 2]
    chroma = np.hypot(a, b)
    t_l, t_a, t_b = rgb_to_lab(rgb)
    t_chroma = math.hypot(t_a, t_b)
    if t_chroma < ACHROMATIC_CHROMA:
        return (chroma <= 10.0 + 0.5 * t_chroma) & (np.abs(lightness - t_l) <= _ACHROMATIC_L_REACH)
    hue = np.degrees(np.arctan2(b, a)) % 360.0
    lo, hi = hue_sector(rgb, slack_deg)
    in_sector = (hue >= lo) & (hue <= hi) if lo <= hi else (hue >= lo) | (hue <= hi)
    return in_sector & (chroma >= max(8.0, chroma_share * t_chroma)) & (np.abs(lightness - t_l) <= _L_REACH)


def fill_holes(mask: np.ndarray) -> np.ndarray:
    """`mask` with every enclosed hole filled (background not connected to the image border becomes mask)."""
    import cv2

    h, w = mask.shape
    padded = np.zeros((h + 2, w + 2), np.uint8)
    padded[1:-1, 1:-1] = mask
    flood = padded.copy()
    cv2.floodFill(flood, np.zeros((h + 4, w + 4), np.uint8), (0, 0), 1)
    return mask | (flood[1:-1, 1:-1] == 0)


def _regions(candidates: np.ndarray, keep_share: float, points: tuple[Point, ...]) -> list[np.ndarray]:
    """Connected regions of `candidates` to keep: under a positive click when there are clicks, else the largest and
    any at least `keep_share` of its size; specks under `MIN_REGION_SHARE` of the image are dropped."""
    import cv2

    n, labels, stats, _ = cv2.connectedComponentsWithStats(candidates.astype(np.uint8), connectivity=8)
    min_area = MIN_REGION_SHARE * candidates.size
    areas = {i: int(stats[i, cv2.CC_STAT_AREA]) for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= min_area}
    if not areas:
        return []
    positive = [p for p in points if p.positive]
    if positive:
        picked = {int(labels[p.y, p.x]) for p in positive} & set(areas)
        return [labels == i for i in sorted(picked)]
    largest = max(areas.values())
    keep = sorted((i for i, a in areas.items() if a >= keep_share * largest), key=lambda i: -areas[i])
    return [labels == i for i in keep]


def _refine(image: np.ndarray, region: np.ndarray, iterations: int) -> np.ndarray:
    """GrabCut seeded from a colour region: its core is object, the region probable object, a ring around it
    probable background, the rest background. Falls back to the colour region when the cut leaks or vanishes."""
    import cv2

    from costa.masks import bounding_slice

    area = int(region.sum())
    side = math.sqrt(area)
    ring = max(4, round(0.2 * side))
    ys, xs = bounding_slice(region, pad_px=2 * ring)
    crop = np.ascontiguousarray(image[ys, xs])
    local = region[ys, xs]
    seeds = np.full(local.shape, cv2.GC_BGD, np.uint8)
    seeds[dilate_mask(local, ring)] = cv2.GC_PR_BGD
    seeds[local] = cv2.GC_PR_FGD
    core = erode_mask(local, max(1, round(0.08 * side)))
    seeds[core] = cv2.GC_FGD
    if not (seeds == cv2.GC_BGD).any() and not (seeds == cv2.GC_PR_BGD).any():
        return region
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    cv2.setRNGSeed(0)  # GrabCut's k-means draws from OpenCV's global RNG: seed it for repeatability
    try:
        # OpenCV ignores the rect with GC_INIT_WITH_MASK; its stubs require one.
        cv2.grabCut(crop, seeds, None, bgd, fgd, iterations, cv2.GC_INIT_WITH_MASK)  # type: ignore[call-overload]
    except cv2.error:
        return region  # degenerate colour models (e.g. a flat crop): the colour region stands
    cut = (seeds == cv2.GC_FGD) | (seeds == cv2.GC_PR_FGD)
    _, labels = cv2.connectedComponents(cut.astype(np.uint8), connectivity=8)
    touching = set(np.unique(labels[core | local])) - {0}
    cut = np.isin(labels, sorted(touching)) if touching else cut
    cut = fill_holes(cut)
    if not 0.6 * area <= cut.sum() <= 1.6 * area:
        return region
    out = np.zeros_like(region)
    out[ys, xs] = cut
    return out


class ColourGrounder(Tool):
    """Find the object(s) a colour word names (`colour_grounder`): "the red car" → the red region's mask.

    It works on a copy of at most `WORK_PIXELS` pixels (colour segmentation, shape tests and GrabCut) and refines the
    mask's edge at full resolution, so a 12-megapixel photo costs about what a small one does. A shape noun ("the red
    circle") keeps only regions of that shape; size, position and ordinal words choose among the regions. Each mask
    carries a `Verification`: colour (and shape) verified; for a noun that is not a colour blob ("the red car") the
    class is missing, so the target is unverified unless the user pointed at it.

    Params:
        chroma_share: least chroma of a matching pixel as a share of the target colour's (lower finds darker shades).
        hue_slack: degrees added to each side of the target's hue sector.
        keep_share: besides the largest region, keep any at least this share of its size (several red cars).
        iterations: GrabCut refinement rounds (0 = colour regions only).
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        chroma_share = float_param(params, "chroma_share")
        slack = float_param(params, "hue_slack")
        keep_share = float_param(params, "keep_share")
        iterations = int_param(params, "iterations")
        phrase = parse_target(subtask.target)
        if find_colour(subtask.target) is None:
            reason = (
                f"'{subtask.target}' names no colour, and the colour grounder finds objects only by a colour word"
                if subtask.target
                else "the subtask names no target to find"
            )
            raise GroundingError(reason, ground_advice(subtask.target), deterministic=True)
        scale = min(1.0, math.sqrt(WORK_PIXELS / float(state.height * state.width)))
        small = _resize(state.image, scale)
        boxes: tuple[Box, ...] = tuple(state.artifacts.get("boxes") or ())
        points = tuple(
            p for p in state.artifacts.get("points") or () if 0 <= p.x < state.width and 0 <= p.y < state.height
        )
        pointed_by_user = bool(boxes or any(p.positive for p in points))
        masks: list[Mask] = []
        notes: list[str] = []
        for thing in phrase.things:
            assert thing.colour is not None and thing.rgb is not None  # find_colour checked every thing
            found = self._ground(state, small, scale, thing, boxes, points, (chroma_share, slack, keep_share))
            record = _verification(self.spec.id, thing, found, pointed_by_user)
            for region in found.regions:
                refined = _refine(small, fill_holes(region), iterations) if iterations else fill_holes(region)
                full = _to_full(state.image, refined, scale, thing.rgb, chroma_share, slack)
                masks.append(Mask(full, label=thing.text or thing.colour, verification=record))
            notes.append(f"{len(found.regions)} {thing.colour} region(s) of {found.total} candidate(s)")
        share = sum(m.area for m in masks) / float(state.height * state.width)
        return ToolOutput(
            artifacts={"masks": tuple(masks)},
            notes=f"found {'; '.join(notes)} covering {share:.1%} of the image (worked at {scale:.2f}x)",
        )

    def _ground(
        self,
        state: EditState,
        small: np.ndarray,
        scale: float,
        thing: TargetPhrase,
        boxes: tuple[Box, ...],
        points: tuple[Point, ...],
        knobs: tuple[float, float, float],
    ) -> _Found:
        chroma_share, slack, keep_share = knobs
        assert thing.rgb is not None
        candidates = _clean(colour_membership(small, thing.rgb, chroma_share, slack))
        candidates = _split_shades(small, candidates, thing.rgb)
        if boxes:
            inside = np.zeros_like(candidates)
            for box in boxes:
                try:
                    box.clip(state.width, state.height)
                except InputError as e:  # a box outside the image: the user's mistake, reported
                    raise ToolError(f"cannot use box {box.x},{box.y},{box.w},{box.h}: {e}") from e
                inside |= _scaled_box(box, scale).to_mask(*candidates.shape)
            candidates &= inside
        small_points = tuple(
            Point(min(small.shape[1] - 1, int(p.x * scale)), min(small.shape[0] - 1, int(p.y * scale)), p.positive)
            for p in points
        )
        regions = _regions(candidates, 0.0, small_points)
        where = " under the click" if any(p.positive for p in points) else " in the box" if boxes else ""
        if not regions:
            raise GroundingError(f"no {thing.colour} region found{where} in the image", ground_advice(thing.text))
        shape_scores: list[float] = []
        if thing.shape is not None:
            scored = [(r, shape_score(r, thing.shape)) for r in regions]
            kept = [(r, q) for r, q in scored if q >= SHAPE_PASS]
            if not kept:
                best = max(q for _, q in scored)
                raise GroundingError(
                    f"none of the {len(regions)} {thing.colour} region(s){where} is a {thing.shape} "
                    f"(best shape score {best:.2f}, needs {SHAPE_PASS:g})",
                    ground_advice(thing.text),
                )
            regions = [r for r, _ in kept]
            shape_scores = [q for _, q in kept]
        cands = []
        for r in regions:
            ys, xs = np.nonzero(r)
            cands.append((int(xs.min()), int(ys.min()), int(np.ptp(xs)) + 1, int(np.ptp(ys)) + 1, int(r.sum())))
        picked, chosen = choose(cands, thing, keep_share, (small.shape[1], small.shape[0]))
        if not picked:
            raise GroundingError(
                f"the {thing.colour} regions{where} do not include {thing.text!r}: "
                + "; ".join(e.describe() for e in chosen),
                ground_advice(thing.text),
            )
        return _Found(
            [regions[i] for i in picked],
            len(regions),
            chosen,
            [shape_scores[i] for i in picked] if shape_scores else [],
        )


@dataclass
class _Found:
    regions: list[np.ndarray]  # chosen regions at working scale
    total: int  # candidate regions (after the shape test) they were chosen from
    chosen: list[Evidence]  # how size/position/ordinal words chose
    shape_scores: list[float]


#: Working scale of the colour grounder: at most this many pixels (about 730 × 550).
WORK_PIXELS = 400_000
#: A region scoring at least this on `shape_score` is the shape named.
SHAPE_PASS = 0.7


def _verification(tool: str, thing: TargetPhrase, found: _Found, pointed_by_user: bool) -> Verification:
    verified = [Evidence("colour", thing.colour or "", "CIELAB hue sector, chroma and lightness")]
    missing: list[Evidence] = []
    if thing.shape is not None:
        verified.append(
            Evidence("shape", thing.shape, "geometry score " + ", ".join(f"{q:.2f}" for q in found.shape_scores))
        )
    verified += found.chosen
    v_count, m_count = count_evidence(thing, len(found.regions) if thing.count is None else found.total)
    verified += v_count
    missing += m_count
    if pointed_by_user:
        verified.append(Evidence("pointed", "user region", "the colour region under the user's click or box"))
    elif not thing.colour_is_enough:
        missing.append(
            Evidence(
                "class",
                thing.noun,
                f"the colour grounder sees colour only: nothing checked that it is a {thing.noun}",
                retryable=False,  # no parameter makes a colour into a car
            )
        )
    unchecked = (Evidence("qualifier", thing.qualifier),) if thing.qualifier else ()
    return Verification(tool, thing.text, tuple(verified), tuple(missing), unchecked)


def shape_score(region: np.ndarray, shape: str) -> float:
    """How well a bool region's geometry matches a shape noun's ("circle", "ring", "square", "rectangle",
    "triangle", "line"), in [0, 1]; 0.7 passes.

    Circle: the smaller of circularity 4πA/P² and the area's share of the enclosing circle. Ring: the filled outline
    is a circle and the hole holds at least 15 % of it. Square/rectangle: the area's share of its rotated bounding
    rectangle (squares also need sides within 1.3× of each other). Triangle: the area's share of the enclosing
    triangle. Line: elongation (long side ≥ 4× the short one) and rectangle fill.
    """
    import cv2

    m = region.astype(np.uint8)
    contours, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return 0.0
    c = max(contours, key=cv2.contourArea)
    filled_area = max(1.0, float(cv2.contourArea(c)))
    area = float(region.sum()) if shape == "ring" else filled_area
    perimeter = max(1.0, float(cv2.arcLength(c, True)))
    (_, _), radius = cv2.minEnclosingCircle(c)
    (_, _), (rw, rh), _ = cv2.minAreaRect(c)
    long_side, short_side = max(rw, rh, 1.0), max(min(rw, rh), 1.0)
    rect_fill = filled_area / (long_side * short_side)
    circularity = min(1.0, 4.0 * math.pi * filled_area / perimeter**2)
    circle_fill = filled_area / max(1.0, math.pi * radius**2)

    def ramp(value: float, full: float, zero: float) -> float:
        return float(np.clip((value - zero) / (full - zero), 0.0, 1.0))

    if shape == "circle":
        return min(ramp(circularity, 0.85, 0.55), ramp(circle_fill, 0.8, 0.45))
    if shape == "ring":
        hole_share = 1.0 - area / filled_area
        return min(ramp(circularity, 0.85, 0.55), ramp(circle_fill, 0.8, 0.45), ramp(hole_share, 0.15, 0.03))
    if shape in ("square", "rectangle"):
        q = ramp(rect_fill, 0.9, 0.7)
        return min(q, ramp(long_side / short_side, 1.3, 1.8)) if shape == "square" else q
    if shape == "triangle":
        tri_area, _ = cv2.minEnclosingTriangle(c)
        return ramp(filled_area / max(1.0, float(tri_area)), 0.85, 0.6)
    if shape == "line":
        return min(ramp(long_side / short_side, 4.0, 2.0), ramp(rect_fill, 0.6, 0.3))
    return 0.0


def _resize(image: np.ndarray, scale: float) -> np.ndarray:
    if scale >= 1.0:
        return image
    import cv2

    h, w = image.shape[:2]
    return cv2.resize(image, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)


def _scaled_box(box: Box, scale: float) -> Box:
    from dataclasses import replace

    return replace(
        box,
        x=int(box.x * scale),
        y=int(box.y * scale),
        w=max(1, math.ceil(box.w * scale)),
        h=max(1, math.ceil(box.h * scale)),
    )


def _to_full(
    image: np.ndarray, region: np.ndarray, scale: float, rgb: RGB, chroma_share: float, slack: float
) -> np.ndarray:
    """A working-scale mask at full resolution: upsampled, then the band of pixels within two working pixels of its
    edge re-decided by the colour rule at full resolution (a little looser, for the anti-aliased rim)."""
    if scale >= 1.0:
        return region
    import cv2

    from costa.masks import bounding_slice

    h, w = image.shape[:2]
    up = cv2.resize(region.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR) >= 0.5
    band_px = max(2, math.ceil(2.0 / scale))
    ys, xs = bounding_slice(up, pad_px=band_px + 1)
    local = up[ys, xs]
    band = dilate_mask(local, band_px) & ~erode_mask(local, band_px)
    colour = colour_membership(np.ascontiguousarray(image[ys, xs]), rgb, 0.6 * chroma_share, slack + 10.0)
    decided = (local & ~band) | (band & colour & dilate_mask(local, 1))
    out = np.zeros((h, w), dtype=bool)
    out[ys, xs] = fill_holes(decided)
    return out


def _split_shades(image: np.ndarray, candidates: np.ndarray, rgb: RGB) -> np.ndarray:
    """Separate two shades of the target's colour when the matches sprawl over the image (a teal blob on a turquoise
    wall): 2-means in CIELAB (lightness at half weight, since shading moves it) and keep the shade nearer the target,
    if the shades are far apart. A large region of one shade (the yellow wall) is returned as it is."""
    import cv2

    if candidates.sum() < LARGE_MATCH_SHARE * candidates.size:
        return candidates
    lab = cv2.cvtColor(image.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    pixels = lab[candidates] * np.array([0.5, 1.0, 1.0], np.float32)
    step = max(1, len(pixels) // 20000)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    cv2.setRNGSeed(0)
    # OpenCV allocates the labels when given None; its stubs require an array.
    _, _, centres = cv2.kmeans(  # type: ignore[call-overload]
        np.ascontiguousarray(pixels[::step]), 2, None, criteria, 3, cv2.KMEANS_PP_CENTERS
    )
    if float(np.linalg.norm(centres[0] - centres[1])) < SHADE_SEPARATION:
        return candidates
    target = np.array(rgb_to_lab(rgb), np.float32) * np.array([0.5, 1.0, 1.0], np.float32)
    nearest = int(np.argmin(np.linalg.norm(centres - target, axis=1)))
    dist = np.linalg.norm(pixels[:, None, :] - centres[None, :, :], axis=2)
    out = np.zeros_like(candidates)
    out[candidates] = np.argmin(dist, axis=1) == nearest
    return _clean(out)


def _clean(candidates: np.ndarray) -> np.ndarray:
    """Drop isolated matching pixels and close small gaps (radius 1 opening, radius 2 closing)."""
    import cv2

    m: np.ndarray = candidates.astype(np.uint8)
    m = cv2.morphologyEx(m, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3)))
    m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
    return m.astype(bool)
