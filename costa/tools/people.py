"""People by OpenCV's HOG + linear SVM pedestrian detector (`hog_people`): the embedded way to find "the person".

The detector (Dalal & Triggs, trained on upright pedestrians) ships inside OpenCV. It finds standing or walking people
whose height in the working copy is roughly 100 px or more; sitting, cropped or tiny people are often missed. Its
window includes a margin around the person, which suits GrabCut and privacy blur. A box's score is the SVM margin
clipped to [0, 1] (margins of 0.5 and more are confident).

A learned person model ships too: MediaPipe's selfie segmentation (`selfie_people`, `selfie_people_boxes`,
costa.tools.selfie), its .tflite file read from mediapipe's wheel without importing mediapipe.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from costa.errors import GroundingError
from costa.grounding import verified_boxes
from costa.targets import ground_advice, names_people
from costa.tools.base import Tool
from costa.tools.detection import suppress_overlaps, to_image_box, working_copy
from costa.tools.params import float_param, int_param
from costa.types import Box, EditState, Subtask, ToolOutput


def detect_people(
    detector: Any,
    image: np.ndarray,
    hit_threshold: float = 0.0,
    upscale: float = 1.0,
    max_side: int = 640,
    scale_step: float = 1.05,
) -> tuple[Box, ...]:
    """Upright people in an RGB uint8 image, best first; boxes in image pixels, scores in [0, 1].

    Args:
        detector: a `cv2.HOGDescriptor` with the default people SVM.
        hit_threshold: SVM margin a window needs (lower finds more, and more spurious ones).
        upscale: enlarge the image by this factor first (finds smaller people), within `max_side`.
        max_side: longest side, in pixels, of the working copy.
        scale_step: factor between pyramid levels (smaller is slower and finer).
    """
    work, factor = working_copy(image, max_side, upscale)
    rects, weights = detector.detectMultiScale(
        work, hitThreshold=hit_threshold, winStride=(8, 8), padding=(8, 8), scale=scale_step
    )
    h, w = image.shape[:2]
    found = []
    for (x, y, bw, bh), weight in zip(np.asarray(rects).reshape(-1, 4), np.ravel(weights), strict=True):
        box = to_image_box(float(x), float(y), float(bw), float(bh), factor, w, h)
        if box is not None:
            found.append(replace(box, label="person", score=float(np.clip(weight, 0.0, 1.0))))
    return suppress_overlaps(found)


class HogPeopleDetector(Tool):
    """Find upright people with OpenCV's HOG pedestrian detector (`hog_people`).

    Serves targets that name people ("the person", "the women", "pedestrians"), and no target at all (the main
    subject of a background removal); any other noun fails with what would find it.

    Params:
        hit_threshold: SVM margin a detection needs.
        upscale: enlarge the image first to find smaller people (the retry does).
        max_side: longest side, in pixels, of the working copy.
    """

    def load(self) -> None:
        import cv2

        hog = cv2.HOGDescriptor()
        hog.setSVMDetector(np.asarray(cv2.HOGDescriptor.getDefaultPeopleDetector()))  # stubs: a list; it is an array
        self._hog = hog

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        hit_threshold = float_param(params, "hit_threshold")
        upscale = float_param(params, "upscale")
        max_side = int_param(params, "max_side")
        if subtask.target and not names_people(subtask.target):
            raise GroundingError(
                f"the people detector finds people only, not '{subtask.target}'",
                ground_advice(subtask.target),
                deterministic=True,
            )
        people = detect_people(self._hog, state.image, hit_threshold, upscale, max_side)
        if not people:
            raise GroundingError("no person found in the image", ground_advice(subtask.target))
        people = verified_boxes(self.spec.id, "person", people, subtask.target, state)
        return ToolOutput(
            artifacts={"boxes": people},
            notes=f"found {len(people)} person(s), best score {people[0].score:.2f}",
        )
