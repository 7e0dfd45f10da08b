"""Helpers shared by the classical detectors (Haar faces, HOG people): working scale, overlap suppression, boxes.

Detectors run on a copy of the image scaled so its longer side is at most a parameter's pixels (they cost time in
proportion to pixels and find nothing finer than their window anyway), then map their boxes back to full resolution.
"""

from __future__ import annotations

import numpy as np

from costa.types import Box


def working_copy(image: np.ndarray, max_side: int, upscale: float = 1.0) -> tuple[np.ndarray, float]:
    """The image scaled for detection and the factor applied (working pixels per image pixel).

    The factor is `upscale`, reduced so the longer side does not exceed `max_side`.
    """
    import cv2

    h, w = image.shape[:2]
    factor = min(upscale, max_side / float(max(h, w)))
    if abs(factor - 1.0) < 1e-3:
        return image, 1.0
    interp = cv2.INTER_AREA if factor < 1.0 else cv2.INTER_CUBIC
    size = (max(1, round(w * factor)), max(1, round(h * factor)))
    return cv2.resize(image, size, interpolation=interp), factor


def box_iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes (0 when disjoint)."""
    w = min(a.x2, b.x2) - max(a.x, b.x)
    h = min(a.y2, b.y2) - max(a.y, b.y)
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    return inter / float(a.w * a.h + b.w * b.h - inter)


def _contained(inner: Box, outer: Box) -> float:
    w = min(inner.x2, outer.x2) - max(inner.x, outer.x)
    h = min(inner.y2, outer.y2) - max(inner.y, outer.y)
    return 0.0 if w <= 0 or h <= 0 else w * h / float(inner.w * inner.h)


def suppress_overlaps(boxes: list[Box], iou: float = 0.4, containment: float = 0.8) -> tuple[Box, ...]:
    """Keep the most confident of overlapping boxes: drop a box overlapping a kept one by IoU ≥ `iou`, or lying
    mostly (≥ `containment` of its area) inside it, or containing it mostly. Sorted by score, best first."""
    kept: list[Box] = []
    for box in sorted(boxes, key=lambda b: (-b.score, b.y, b.x)):
        if all(
            box_iou(box, k) < iou and _contained(box, k) < containment and _contained(k, box) < containment
            for k in kept
        ):
            kept.append(box)
    return tuple(kept)


def to_image_box(x: float, y: float, w: float, h: float, factor: float, width: int, height: int) -> Box | None:
    """A working-copy box mapped back to image pixels and clipped; None when nothing of it is inside."""
    x1, y1 = max(0, round(x / factor)), max(0, round(y / factor))
    x2, y2 = min(width, round((x + w) / factor)), min(height, round((y + h) / factor))
    if x2 <= x1 or y2 <= y1:
        return None
    return Box(x1, y1, x2 - x1, y2 - y1)
