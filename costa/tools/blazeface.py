"""Faces by MediaPipe's BlazeFace (`blazeface_faces`) on ai-edge-litert, next to OpenCV's Haar cascade.

Two models from mediapipe 0.10.21's wheel (Apache-2.0): the full-range one (`face_detection_full_range_sparse.tflite`,
192×192 input, one anchor per 4-pixel cell: 2,304 anchors; faces up to about 5 m from the camera) and the short-range
one (`face_detection_short_range.tflite`, 128×128, anchors on 8- and 16-pixel grids: 896; faces within about 2 m).
The photo (or a tile of it) is letterboxed to a square, scaled to [-1, 1] and run; each anchor's regression is decoded
as MediaPipe's SSD decoder does (offsets and sizes in input pixels, divided by the input side, added to the anchor's
centre), its score is the sigmoid of its logit, and overlapping boxes are merged keeping the most confident. Faces
small in a 192-pixel copy are found by also running on a `tiles` × `tiles` grid of overlapping squares.

Profiles and partly hidden faces are found far more often than by the Haar cascade; a score is the model's own
probability (0.5 and more are confident).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from costa.errors import GroundingError
from costa.grounding import verified_boxes
from costa.targets import ground_advice, names_faces
from costa.tools.detection import suppress_overlaps
from costa.tools.litert import LiteRtTool, TfliteModel
from costa.tools.params import float_param, int_param
from costa.tools.selfie import views
from costa.types import Box, EditState, Subtask, ToolOutput

#: Grid strides and anchors per cell of each model, by its input side (MediaPipe's SSD anchor options).
ANCHOR_LAYOUT: dict[int, tuple[tuple[int, int], ...]] = {192: ((4, 1),), 128: ((8, 2), (16, 6))}


@functools.cache
def anchors(side: int) -> np.ndarray:
    """(N, 2) anchor centres in [0, 1] for a BlazeFace model of input `side` (row-major, anchors of a cell together)."""
    out = []
    for stride, per_cell in ANCHOR_LAYOUT[side]:
        grid = side // stride
        ys, xs = np.mgrid[0:grid, 0:grid]
        centres = np.stack([(xs.ravel() + 0.5) / grid, (ys.ravel() + 0.5) / grid], axis=1)
        out.append(np.repeat(centres, per_cell, axis=0))
    return np.concatenate(out).astype(np.float32)


def detect_in_view(
    model: TfliteModel, image: np.ndarray, view: tuple[int, int, int, int], min_score: float
) -> list[Box]:
    """Faces in one view of the photo, in image pixels, with scores in [0, 1]."""
    import cv2

    x1, y1, x2, y2 = view
    crop = image[y1:y2, x1:x2]
    h, w = crop.shape[:2]
    side = max(h, w)
    square = np.zeros((side, side, 3), np.uint8)
    oy, ox = (side - h) // 2, (side - w) // 2
    square[oy : oy + h, ox : ox + w] = crop
    n = model.input_hw[0]
    batch = cv2.resize(square, (n, n), interpolation=cv2.INTER_AREA).astype(np.float32) / 127.5 - 1.0
    outputs = model(batch[None])
    regress = next(o for o in outputs if o.shape[-1] == 16)[0]
    logits = next(o for o in outputs if o.shape[-1] == 1)[0, :, 0]
    score = 1.0 / (1.0 + np.exp(-np.clip(logits, -80.0, 80.0)))
    anchor = anchors(n)
    found = []
    for i in np.nonzero(score >= min_score)[0]:
        cx, cy = regress[i, 0] / n + anchor[i, 0], regress[i, 1] / n + anchor[i, 1]
        bw, bh = regress[i, 2] / n, regress[i, 3] / n
        bx1 = max(0, round((cx - bw / 2) * side) - ox + x1)
        by1 = max(0, round((cy - bh / 2) * side) - oy + y1)
        bx2 = min(image.shape[1], round((cx + bw / 2) * side) - ox + x1)
        by2 = min(image.shape[0], round((cy + bh / 2) * side) - oy + y1)
        if bx2 > bx1 and by2 > by1:
            found.append(Box(bx1, by1, bx2 - bx1, by2 - by1, "face", float(score[i])))
    return found


def detect_faces(models: list[TfliteModel], image: np.ndarray, min_score: float, tiles: int) -> tuple[Box, ...]:
    """Faces in an RGB uint8 photo by every model on the whole photo and its tiles, overlaps merged, best first."""
    h, w = image.shape[:2]
    found: list[Box] = []
    for model in models:
        for view in views(w, h, tiles):
            found += detect_in_view(model, image, view, min_score)
    return suppress_overlaps(found, iou=0.3)


class BlazeFaceDetector(LiteRtTool):
    """Find faces with MediaPipe's BlazeFace, full- and short-range models (`blazeface_faces`).

    Serves targets that name faces ("the faces", "her face"); any other noun fails with what would find it.

    Params:
        min_score: least face probability kept.
        tiles: also look at a tiles × tiles grid of squares (1 = the whole photo only; more finds smaller faces).
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        min_score = float_param(params, "min_score")
        tiles = int_param(params, "tiles")
        if subtask.target and not names_faces(subtask.target):
            raise GroundingError(
                f"BlazeFace finds faces only, not '{subtask.target}'", ground_advice(subtask.target), deterministic=True
            )
        models = [self.model(i) for i in range(len(self.spec.requirements.weights))]
        faces = detect_faces(models, state.image, min_score, tiles)
        if not faces:
            raise GroundingError("no face found in the image", ground_advice(subtask.target or "the face"))
        faces = verified_boxes(self.spec.id, "face", faces, subtask.target, state)
        return ToolOutput(
            artifacts={"boxes": faces}, notes=f"BlazeFace found {len(faces)} face(s), best score {faces[0].score:.2f}"
        )
