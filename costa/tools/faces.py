"""Faces by OpenCV's Haar cascade (`haar_faces`): the embedded backend's way to find "the faces".

The cascade ships inside opencv-python-headless (< 5; 5.0 dropped `cv2.data`). It finds frontal faces of at least
24 px; profiles, tiny faces and heavily occluded ones are missed, and a face-like pattern is sometimes found where there
is none. Each box's score is the cascade's final-stage weight mapped to [0, 1] (a weight of 6 or more → 1.0; clear
frontal faces score 4–9, spurious hits mostly under 3).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from costa.errors import GroundingError, ToolUnavailableError
from costa.grounding import verified_boxes
from costa.targets import ground_advice, names_faces
from costa.tools.base import Tool
from costa.tools.detection import suppress_overlaps, to_image_box, working_copy
from costa.tools.params import float_param, int_param
from costa.types import Box, EditState, Subtask, ToolOutput

CASCADE_FILE = "haarcascade_frontalface_default.xml"
#: Cascade weight that maps to score 1.0.
FULL_SCORE_WEIGHT = 6.0
#: Smallest face searched for, in working-copy pixels (the cascade's own window is 24).
MIN_FACE_PX = 24


@functools.cache
def load_face_cascade() -> Any:
    """The frontal-face cascade, loaded once per process.

    Raises:
        ToolUnavailableError: the installed OpenCV ships no cascades (opencv ≥ 5, or a build without `cv2.data`).
    """
    import cv2

    folder = getattr(getattr(cv2, "data", None), "haarcascades", None)
    if folder is None:
        raise ToolUnavailableError(
            "this OpenCV build ships no Haar cascades (cv2.data is missing): install opencv-python-headless<5"
        )
    cascade = cv2.CascadeClassifier(folder + CASCADE_FILE)
    if cascade.empty():
        raise ToolUnavailableError(f"cannot load {folder + CASCADE_FILE}: install opencv-python-headless<5")
    return cascade


def detect_faces(
    image: np.ndarray, min_neighbors: int = 5, max_side: int = 800, min_weight: float = 1.0
) -> tuple[Box, ...]:
    """Frontal faces in an RGB uint8 image, best first; boxes in image pixels with scores in [0, 1].

    Args:
        min_neighbors: overlapping raw detections a face needs (lower finds more, and more spurious ones).
        max_side: the image is scaled down so its longer side is at most this many pixels before searching.
        min_weight: detections whose cascade weight is below this are dropped.
    """
    import cv2

    cascade = load_face_cascade()
    work, factor = working_copy(image, max_side)
    grey = cv2.cvtColor(work, cv2.COLOR_RGB2GRAY)
    rects, _, weights = cascade.detectMultiScale3(
        grey, scaleFactor=1.1, minNeighbors=min_neighbors, minSize=(MIN_FACE_PX, MIN_FACE_PX), outputRejectLevels=True
    )
    h, w = image.shape[:2]
    found = []
    for (x, y, bw, bh), weight in zip(np.asarray(rects).reshape(-1, 4), np.ravel(weights), strict=True):
        if weight < min_weight:
            continue
        box = to_image_box(float(x), float(y), float(bw), float(bh), factor, w, h)
        if box is not None:
            score = float(np.clip(weight / FULL_SCORE_WEIGHT, 0.0, 1.0))
            found.append(replace(box, label="face", score=score))
    return suppress_overlaps(found)


def _cascade_shipped() -> bool:
    """Whether OpenCV's package folder holds the cascade file, found without importing cv2 (keeps `doctor` light)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("cv2")
    folders = spec.submodule_search_locations if spec is not None else None
    return any((Path(f) / "data" / CASCADE_FILE).is_file() for f in folders or ())


class HaarFaceDetector(Tool):
    """Find faces with OpenCV's frontal-face Haar cascade (`haar_faces`).

    Serves targets that name faces ("the faces", "his face"); any other noun fails with what would find it.

    Params:
        min_neighbors: raw detections a face needs (the retry lowers it to find fainter faces).
        max_side: longest side, in pixels, the image is scaled to before searching (the retry searches larger).
        min_weight: least cascade weight kept.
    """

    def missing(self) -> str | None:
        reason = super().missing()
        if reason is None and not _cascade_shipped():
            return f"this OpenCV build ships no Haar cascades ({CASCADE_FILE}): install opencv-python-headless<5"
        return reason

    def load(self) -> None:
        load_face_cascade()

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        min_neighbors = int_param(params, "min_neighbors")
        max_side = int_param(params, "max_side")
        min_weight = float_param(params, "min_weight")
        if subtask.target and not names_faces(subtask.target):
            raise GroundingError(
                f"the face detector finds faces only, not '{subtask.target}'",
                ground_advice(subtask.target),
                deterministic=True,
            )
        faces = detect_faces(state.image, min_neighbors, max_side, min_weight)
        if not faces:
            raise GroundingError("no face found in the image", ground_advice(subtask.target or "the face"))
        faces = verified_boxes(self.spec.id, "face", faces, subtask.target, state)
        return ToolOutput(
            artifacts={"boxes": faces},
            notes=f"found {len(faces)} face(s), best score {faces[0].score:.2f}",
        )
