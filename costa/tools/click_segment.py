"""Segment what the user clicked (`points_grabcut`): GrabCut seeded from positive and negative clicks.

A positive click says "this is the object", a negative one "this is background". Around each positive click the
connected region of similar colour (CIELAB, lightness at half weight so shading does not split it) estimates the
object's extent; the rectangle around those regions, with a margin, is where GrabCut looks. Inside it the
similar-colour regions start as probable object and the rest as probable background; a disc under every positive click
is fixed as object and under every negative click as background. The pieces of the cut that hold a positive click
form the mask.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from costa.errors import ToolError
from costa.grounding import pointed
from costa.masks import dilate_mask
from costa.tools.base import Tool
from costa.tools.colour_ground import fill_holes
from costa.tools.params import float_param, int_param
from costa.types import EditState, Mask, Point, Subtask, ToolOutput

#: A click's similar-colour region covering more than this share of the image is background, not an object: the
#: click then gets a square of `radius_share` of the image's shorter side instead.
MAX_EXTENT_SHARE = 0.5
#: A similar-colour region larger than this share of the image is looked for again with a tolerance `STRICTER` times
#: the parameter's, in case the colour leaked into a similar background.
LARGE_EXTENT_SHARE = 0.2
STRICTER = 0.6
#: A click's similar-colour region smaller than this share of that square is likely a piece of the object.
SMALL_EXTENT_SHARE = 0.25
#: When the similar-colour regions fill at least this share of the search rectangle they seed GrabCut (probable
#: object, the rest probable background); otherwise the whole rectangle starts as probable object.
SEEDED_SHARE = 0.3
#: Context around the rectangle given to GrabCut for its background model, as a share of the rectangle's longer side.
_CONTEXT_SHARE = 0.5


def _points(state: EditState) -> tuple[list[Point], list[Point]]:
    points = state.artifacts.get("points")
    if not points:
        raise ToolError("cannot segment by clicks: no clicks in the state (click on the object first)")
    for p in points:
        if not (0 <= p.x < state.width and 0 <= p.y < state.height):
            raise ToolError(f"click {p.x},{p.y} is outside the {state.width}x{state.height} image")
    positive = [p for p in points if p.positive]
    if not positive:
        raise ToolError("cannot segment by clicks: every click marks background; click on the object too")
    return positive, [p for p in points if not p.positive]


def click_extent(lab: np.ndarray, point: Point, tolerance: float) -> np.ndarray | None:
    """The connected similar-colour region around a click (bool (H, W)), or None when it is most of the image.

    Similar means within `tolerance` of the median colour of the 5×5 pixels under the click, in CIELAB with
    lightness at half weight.
    """
    import cv2

    h, w = lab.shape[:2]
    y1, y2, x1, x2 = max(0, point.y - 2), min(h, point.y + 3), max(0, point.x - 2), min(w, point.x + 3)
    seed = np.median(lab[y1:y2, x1:x2].reshape(-1, 3), axis=0)
    diff = lab - seed
    diff[..., 0] *= 0.5
    similar = (np.linalg.norm(diff, axis=2) <= tolerance).astype(np.uint8)
    similar = cv2.morphologyEx(similar, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
    similar[point.y, point.x] = 1
    _, labels = cv2.connectedComponents(similar, connectivity=8)
    region = labels == labels[point.y, point.x]
    if region.sum() > MAX_EXTENT_SHARE * region.size:
        return None
    return region


class PointGrabCutSegmenter(Tool):
    """Cut out the object under the user's clicks with GrabCut (`points_grabcut`).

    Params:
        tolerance: CIELAB distance (lightness at half weight) a pixel may be from the clicked colour to count as the
            same surface when estimating the object's extent.
        radius_share: half-side of the square searched around a click whose colour spreads over the whole image,
            as a share of the image's shorter side.
        iterations: GrabCut rounds.
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        tolerance = float_param(params, "tolerance")
        radius_share = float_param(params, "radius_share")
        iterations = int_param(params, "iterations")
        positive, negative = _points(state)

        import cv2

        h, w = state.height, state.width
        lab = cv2.cvtColor(state.image.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
        likely = np.zeros((h, w), dtype=bool)
        spans = []
        r = max(8, round(radius_share * min(h, w)))
        for p in positive:
            region = click_extent(lab, p, tolerance)
            if region is None or region.sum() > LARGE_EXTENT_SHARE * region.size:
                # The clicked colour spreads far (skin into a beige wall): look again, stricter.
                stricter = click_extent(lab, p, STRICTER * tolerance)
                region = stricter if stricter is not None else region
            if region is not None:
                likely |= region
                ys, xs = np.nonzero(region)
                spans.append((int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1))
            if region is None or region.sum() < SMALL_EXTENT_SHARE * (2 * r + 1) ** 2:
                # The click's colour is everywhere, or only a small piece of the object (a nose, a shirt button):
                # search a square around the click too.
                spans.append((p.x - r, p.y - r, p.x + r + 1, p.y + r + 1))
        x1, y1 = min(s[0] for s in spans), min(s[1] for s in spans)
        x2, y2 = max(s[2] for s in spans), max(s[3] for s in spans)
        grow = max(4, round(0.1 * max(x2 - x1, y2 - y1)))
        x1, y1, x2, y2 = max(0, x1 - grow), max(0, y1 - grow), min(w, x2 + grow), min(h, y2 + grow)
        pad = max(16, round(_CONTEXT_SHARE * max(x2 - x1, y2 - y1)))
        cx1, cy1, cx2, cy2 = max(0, x1 - pad), max(0, y1 - pad), min(w, x2 + pad), min(h, y2 + pad)

        seeds = np.full((cy2 - cy1, cx2 - cx1), cv2.GC_BGD, np.uint8)
        inner = seeds[y1 - cy1 : y2 - cy1, x1 - cx1 : x2 - cx1]
        local_likely = likely[y1:y2, x1:x2]
        seeded = local_likely.sum() >= SEEDED_SHARE * local_likely.size
        if seeded:
            inner[:] = cv2.GC_PR_BGD
            inner[dilate_mask(local_likely, 2)] = cv2.GC_PR_FGD
        else:
            inner[:] = cv2.GC_PR_FGD
        disc = max(3, round(0.02 * min(h, w)))
        for p, label in [(p, cv2.GC_FGD) for p in positive] + [(p, cv2.GC_BGD) for p in negative]:
            if cx1 <= p.x < cx2 and cy1 <= p.y < cy2:
                cv2.circle(seeds, (p.x - cx1, p.y - cy1), disc, int(label), thickness=-1)
        if not np.isin(seeds, (cv2.GC_BGD, cv2.GC_PR_BGD)).any():
            raise ToolError("cannot segment by clicks: the clicked region covers the whole image")
        crop = np.ascontiguousarray(state.image[cy1:cy2, cx1:cx2])
        bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
        cv2.setRNGSeed(0)  # GrabCut's k-means draws from OpenCV's global RNG: seed it for repeatability
        try:
            # OpenCV ignores the rect with GC_INIT_WITH_MASK; its stubs require one.
            cv2.grabCut(crop, seeds, None, bgd, fgd, iterations, cv2.GC_INIT_WITH_MASK)  # type: ignore[call-overload]
        except cv2.error as e:
            raise ToolError(f"GrabCut failed on the clicked region: {e}") from e
        cut = (seeds == cv2.GC_FGD) | (seeds == cv2.GC_PR_FGD)
        _, labels = cv2.connectedComponents(cut.astype(np.uint8), connectivity=8)
        picked = {int(labels[p.y - cy1, p.x - cx1]) for p in positive if cx1 <= p.x < cx2 and cy1 <= p.y < cy2} - {0}
        if not picked:
            raise ToolError("GrabCut lost the clicked object: click nearer its middle, or draw a box around it")
        local = fill_holes(np.isin(labels, sorted(picked)))
        mask = np.zeros((h, w), dtype=bool)
        mask[cy1:cy2, cx1:cx2] = local
        share = mask.mean()
        return ToolOutput(
            artifacts={
                "masks": (
                    Mask(
                        mask,
                        label=subtask.target or "clicked object",
                        verification=pointed(self.spec.id, subtask.target),
                    ),
                )
            },
            notes=f"GrabCut from {len(positive)} positive and {len(negative)} negative click(s): "
            f"{int(mask.sum())} px ({share:.1%} of the image), searched in {x2 - x1}x{y2 - y1} px "
            f"around the clicks ({'seeded by the clicked colour' if seeded else 'whole rectangle as probable object'})",
        )
