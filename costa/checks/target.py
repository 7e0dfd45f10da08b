"""Does the grounded region match what the target phrase says, and is it the whole object?

Judged on the image BEFORE the edit, for the region the step consumed (or the mask a segmenter produced):

- **colour** (`costa.targets.parse_target` colour in the head of the phrase): median CIEDE2000 of the region's pixels
  to the named colour ≤ `COLOUR_FULL` → 1.0, 0 at `COLOUR_ZERO` (shaded objects of that colour sit well inside);
- **position** ("left", "right", "top", "bottom", "centre"): the region's centroid lies on the named side of the image
  (beyond `SIDE_SLACK` of the way past the middle fails) and, when other objects of the region's colour stand in the
  image (`candidates`), it is the most extreme of them in the named direction;
- **size** ("the bigger", "the smallest"): the region is the largest / smallest among those candidates;
- **shape** (a shape noun such as "circle", "stripe"): `costa.tools.colour_ground.shape_score` ≥ `SHAPE_MIN`;
- **coverage** (`partial_object`): the region is not just part of a connected same-coloured object: growing it over
  pixels of its own chromaticity (shading-invariant rgb ratios) and lightness range must not add more than
  `EXTENDS_ZERO` of its area, else it fails asking for better pointing.

Candidates and growth both use shading-invariant chromaticity, so a shaded object is one object. All images RGB uint8
(H, W, 3), masks bool (H, W).
"""

from __future__ import annotations

import numpy as np

from costa.checks.region import POINT_BETTER
from costa.types import Verdict

#: Median ΔE2000 of the region to the named colour: ≤ this → 1.0 …
COLOUR_FULL = 22.0
#: … linear to 0 at this.
COLOUR_ZERO = 35.0
#: A centroid this share of the image's side past the middle, toward the other side, is not "on the named side".
SIDE_SLACK = 0.1
#: A shape noun is verified from this `shape_score`.
SHAPE_MIN = 0.5
#: Another same-coloured component counts as a candidate object from this share of the region's area.
CANDIDATE_SHARE = 0.3
#: Growth over same-coloured pixels adding this share of the region's area or more → 0 (≤ `EXTENDS_FULL` → 1.0).
EXTENDS_FULL, EXTENDS_ZERO = 0.25, 0.5
#: Growth past this multiple of the region's area is a colour that runs on (fur, a wall, foliage in a photo), not an
#: object the region is part of: coverage is then not judged.
EXTENDS_SURFACE = 3.0
#: A same-coloured component covering more than this share of the image is background, not an object.
BACKGROUND_SHARE = 0.5


def _chroma(image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shading-invariant chromaticity (r, g) / (r + g + b), shape (H, W, 2), and brightness r + g + b (H, W)."""
    x = image.astype(np.float32)
    total = x.sum(axis=2) + 3.0
    return x[..., :2] / total[..., None], total


def similar_pixels(image: np.ndarray, region: np.ndarray) -> np.ndarray:
    """Bool (H, W): pixels of the region's chromaticity, within a shading range of its brightness (where its colour
    continues)."""
    chroma, total = _chroma(image)
    inside = chroma[region]
    centre = np.median(inside, axis=0)
    spread = np.linalg.norm(inside - centre, axis=1)
    tolerance = max(0.025, 1.5 * float(np.quantile(spread, 0.9)))
    lo, hi = (float(v) for v in np.quantile(total[region], (0.02, 0.98)))
    near = np.linalg.norm(chroma - centre, axis=2) <= tolerance
    # Shading scales all channels alike: the object's other side may be up to half as bright, or 1.6× brighter.
    return near & (total >= min(lo - 30.0, 0.55 * lo)) & (total <= max(hi + 30.0, 1.6 * hi))


def _components(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    import cv2

    n, labels, stats, centroids = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    return n, labels, stats, centroids


def candidates(image: np.ndarray, region: np.ndarray) -> list[tuple[float, float, int]]:
    """Other objects of the region's colour: (centroid x, centroid y, area px) of each same-coloured connected
    component that does not touch the region, at least `CANDIDATE_SHARE` of its area and not background-sized."""
    from costa.masks import dilate_mask, erode_mask

    similar = erode_mask(similar_pixels(image, region), 1)
    similar &= ~dilate_mask(region, 3)
    area = float(region.sum())
    n, _, stats, cents = _components(similar)
    out = []
    for i in range(1, n):
        a = int(stats[i, 4])
        if a >= CANDIDATE_SHARE * area and a <= BACKGROUND_SHARE * region.size:
            out.append((float(cents[i, 0]), float(cents[i, 1]), a))
    return out


def partial_object(image: np.ndarray, region: np.ndarray, what: str = "the grounded region") -> Verdict:
    """Fail a region that is only part of a connected object of its colour (the object extends well beyond it)."""
    from costa.masks import dilate_mask

    similar = similar_pixels(image, region) | region
    _, labels, _, _ = _components(similar)
    touching = np.unique(labels[region])
    touching = touching[touching > 0]
    grown = np.isin(labels, touching)
    if float(grown.mean()) > BACKGROUND_SHARE:
        return Verdict(1.0, (f"{what}'s colour continues over most of the image; coverage not judged",))
    beyond = grown & ~dilate_mask(region, 3)
    share = float(beyond.sum()) / max(1.0, float(region.sum()))
    if share > EXTENDS_SURFACE:
        return Verdict(
            1.0,
            (
                f"{what}'s colour continues over {share:.0%} of its area around it, a surface rather than one object "
                "bounded near it; coverage not judged",
            ),
        )
    quality = float(np.clip((EXTENDS_ZERO - share) / (EXTENDS_ZERO - EXTENDS_FULL), 0.0, 1.0))
    reason = (
        f"the same-coloured object extends {share:.0%} of {what}'s area beyond it "
        f"(≤{EXTENDS_FULL:.0%} → 1.0, 0 at {EXTENDS_ZERO:.0%})"
    )
    if quality < 1.0:
        reason += f": {what} covers only part of the object; {POINT_BETTER}"
    return Verdict(quality, (reason,))


#: A region filling at least this share of its bounding box is a rectangle (a box used as the mask).
RECTANGLE_FILL = 0.97
#: Corner patches of a rectangle, as a share of its width and height, compared with the ring just outside them.
CORNER_SHARE = 0.15
#: Depth (px) of the ring just outside a region whose colours are "the surroundings".
SURROUNDINGS_PX = 6
#: A corner within this CIELAB ΔE (means) of the surroundings beside it is background; the centre must differ by more.
CORNER_LIKE_DE, CENTRE_UNLIKE_DE = 10.0, 15.0


def background_inside(image: np.ndarray, region: np.ndarray, what: str = "the grounded region") -> Verdict:
    """Fail a rectangular region whose corners are the background around it while its centre is not: a box taken
    for the object's mask.

    Why: a box used as the object's mask (`box_mask`, a user's box read as the object) recolours the wall in its
    corners too, and every check that trusts the region reported 1.0. Only rectangles are judged: an object's own
    outline is not, so a red ball on a red woven wall (camouflage) is not mistaken for background.
    """
    import cv2

    from costa.masks import dilate_mask

    ys, xs = np.nonzero(region)
    if ys.size == 0:
        return Verdict(1.0, (f"{what} is empty",))
    y0, y1, x0, x1 = int(ys.min()), int(ys.max()) + 1, int(xs.min()), int(xs.max()) + 1
    fill = ys.size / float((y1 - y0) * (x1 - x0))
    if fill < RECTANGLE_FILL:
        return Verdict(1.0, (f"{what} follows an outline, not a box ({fill:.0%} of its bounding box)",))
    lab = cv2.cvtColor(image.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    ring = dilate_mask(region, SURROUNDINGS_PX) & ~dilate_mask(region, 1)
    if not ring.any():
        return Verdict(1.0, (f"{what} fills the image; nothing around it to compare",))
    ch, cw = max(2, int((y1 - y0) * CORNER_SHARE)), max(2, int((x1 - x0) * CORNER_SHARE))
    pad = SURROUNDINGS_PX + 1
    background_corners = 0
    for cy, cx in ((y0, x0), (y0, x1 - cw), (y1 - ch, x0), (y1 - ch, x1 - cw)):
        corner = lab[cy : cy + ch, cx : cx + cw].reshape(-1, 3).mean(axis=0)
        near = ring[max(0, cy - pad) : cy + ch + pad, max(0, cx - pad) : cx + cw + pad]
        beside = lab[max(0, cy - pad) : cy + ch + pad, max(0, cx - pad) : cx + cw + pad][near]
        if beside.size and float(np.linalg.norm(corner - beside.mean(axis=0))) <= CORNER_LIKE_DE:
            background_corners += 1
    cy0, cy1 = y0 + (y1 - y0) // 3, y1 - (y1 - y0) // 3
    cx0, cx1 = x0 + (x1 - x0) // 3, x1 - (x1 - x0) // 3
    centre = lab[cy0:cy1, cx0:cx1].reshape(-1, 3).mean(axis=0)
    centre_de = float(np.linalg.norm(centre - lab[ring].mean(axis=0)))
    boxed = background_corners >= 3 and centre_de > CENTRE_UNLIKE_DE
    reason = (
        f"{what} is a rectangle; {background_corners} of its 4 corners look like the surroundings beside them, "
        f"its centre differs by ΔE {centre_de:.0f}"
    )
    if boxed:
        return Verdict(
            0.0, (reason + f": it holds background around the object (a box, not its outline); {POINT_BETTER}",)
        )
    return Verdict(1.0, (reason,))


def target_consistency(image: np.ndarray, region: np.ndarray, target: str | None) -> Verdict:
    """Score how well `region` of `image` (before the edit) matches the target phrase; quality is the worst aspect.
    A phrase naming nothing checkable gives a neutral 1.0 verdict."""
    from costa.targets import parse_target

    phrase = parse_target(target)
    if phrase.parts or not region.any():  # several things named: a union of regions, judged by the grounder
        return Verdict(1.0, ("target names several things; consistency judged per grounded part",))
    reasons: list[str] = []
    qualities: list[float] = [1.0]
    h, w = region.shape
    if phrase.rgb is not None:
        from costa.checks.common import ciede2000_values

        de = float(np.median(ciede2000_values(image, region, phrase.rgb)))
        q = float(np.clip((COLOUR_ZERO - de) / (COLOUR_ZERO - COLOUR_FULL), 0.0, 1.0))
        reason = f"region's median ΔE2000 to {phrase.colour!r}: {de:.1f} (≤{COLOUR_FULL:g} → 1.0, 0 at {COLOUR_ZERO:g})"
        if q < 1.0:
            reason += f": the region is not {phrase.colour}"
        qualities.append(q)
        reasons.append(reason)
    ys, xs = np.nonzero(region)
    cx, cy = float(xs.mean()), float(ys.mean())
    others = candidates(image, region) if (phrase.position or phrase.size) else []
    if phrase.position:
        q, reason = _position(phrase.position, cx / w, cy / h, cx, cy, others)
        qualities.append(q)
        reasons.append(reason)
    if phrase.size and others:
        area = int(region.sum())
        bigger = sum(a > 1.15 * area for _, _, a in others)
        smaller = sum(a * 1.15 < area for _, _, a in others)
        wrong = bigger if phrase.size == "largest" else smaller
        word = "larger" if phrase.size == "largest" else "smaller"
        qualities.append(0.0 if wrong else 1.0)
        reasons.append(
            f"{wrong} other same-coloured object(s) {word} than the region ({area} px)"
            + (f": the region is not the {phrase.size} one" if wrong else "")
        )
    if phrase.shape:
        from costa.tools.colour_ground import shape_score

        score = shape_score(region, phrase.shape)
        ok = score >= SHAPE_MIN
        qualities.append(1.0 if ok else 0.0)
        reasons.append(
            f"shape score for {phrase.shape!r} {score:.2f} (≥{SHAPE_MIN:g} passes)"
            + ("" if ok else f": the region is not a {phrase.noun}")
        )
    if not reasons:
        return Verdict(1.0, ("target names no colour, position, size or shape to verify the region against",))
    return Verdict(min(qualities), tuple(reasons))


def _position(
    side: str, fx: float, fy: float, cx: float, cy: float, others: list[tuple[float, float, int]]
) -> tuple[float, str]:
    """Quality and reason for a named position: image-relative (fx, fy in 0–1) and against same-coloured candidates."""
    where = f"region centroid at ({fx:.0%}, {fy:.0%}) of the image"
    if side == "centre":
        off = max(abs(fx - 0.5), abs(fy - 0.5))
        if off > 0.25 + SIDE_SLACK:
            return 0.0, f"{where}: not in the centre as the target says"
        return 1.0, f"{where}: in the centre as the target says"
    value, sign = {"left": (fx, -1), "right": (fx, 1), "top": (fy, -1), "bottom": (fy, 1)}[side]
    if sign * (value - 0.5) < -SIDE_SLACK:
        return 0.0, f"{where}: not on the {side} as the target says"
    coord = cx if side in ("left", "right") else cy
    beyond = [o for o in others if sign * ((o[0] if side in ("left", "right") else o[1]) - coord) > 0]
    if beyond:
        return 0.0, (
            f"{where}, but {len(beyond)} other object(s) of its colour lie further {side}: "
            f"the target is the one on the {side}, not this one"
        )
    return 1.0, f"{where}: the {side}most of {len(others) + 1} object(s) of its colour, as the target says"
