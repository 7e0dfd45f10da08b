"""People from MediaPipe's selfie segmentation (`selfie_people` masks, `selfie_people_boxes` boxes) on ai-edge-litert.

The model (`selfie_segmentation.tflite`, inside mediapipe 0.10.21's wheel, Apache-2.0) was trained to segment the
prominent people of a phone photo: it sees a 256×256 RGB copy in [0, 1] and returns each pixel's probability of being
a person. Its map is brought to full resolution with the edge re-decided on the photo's own grey levels (the same
guided filter as U²-Net's, costa.tools.matting). People far from the camera are small in a 256-pixel copy, so with
`tiles` > 1 the model also looks at overlapping squares of the photo (a `tiles` × `tiles` grid), and a pixel's
probability is the highest any view gave it.

Each connected piece of at least `min_share` of the image is one person candidate (people touching each other are one
piece). The model also answers for other prominent figures (a dog, a statue) now and then: the person class is what
the model was trained on, not a guarantee, and the steps' checks still judge the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from costa.errors import GroundingError
from costa.grounding import choose, detector_verification
from costa.targets import ground_advice, names_people, parse_target
from costa.tools.litert import LiteRtTool
from costa.tools.matting import full_resolution_alpha
from costa.tools.params import float_param, int_param
from costa.types import Box, EditState, Mask, Subtask, ToolOutput

#: (x1, y1, x2, y2) of a view of the photo, in image pixels.
View = tuple[int, int, int, int]
#: Overlap of neighbouring tiles, as a share of a tile's side (a person on a tile's edge is whole in its neighbour).
TILE_OVERLAP = 0.25


def views(width: int, height: int, tiles: int) -> list[View]:
    """The whole photo, then a `tiles` × `tiles` grid of overlapping squares over it (none when `tiles` ≤ 1)."""
    out: list[View] = [(0, 0, width, height)]
    if tiles <= 1:
        return out
    side = min(min(width, height), round(max(width, height) / (tiles - (tiles - 1) * TILE_OVERLAP)))
    for row in range(tiles):
        for col in range(tiles):
            x = round(col * (width - side) / (tiles - 1))
            y = round(row * (height - side) / (tiles - 1))
            out.append((x, y, x + side, y + side))
    return sorted(set(out), key=out.index)


def person_probability(model: Any, image: np.ndarray, tiles: int) -> np.ndarray:
    """Each pixel's person probability, float32 (H, W), the highest over the whole photo and its tiles."""
    import cv2

    h, w = image.shape[:2]
    side_h, side_w = model.input_hw
    prob = np.zeros((h, w), np.float32)
    for x1, y1, x2, y2 in views(w, h, tiles):
        crop = np.ascontiguousarray(image[y1:y2, x1:x2])
        small = cv2.resize(crop, (side_w, side_h), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
        out = np.asarray(model(small[None])[0], np.float32).reshape(side_h, side_w)
        full = full_resolution_alpha(image, (x1, y1, x2, y2), np.clip(out, 0.0, 1.0))
        np.maximum(prob[y1:y2, x1:x2], full, out=prob[y1:y2, x1:x2])
    return prob


def person_pieces(prob: np.ndarray, threshold: float, min_share: float) -> list[tuple[np.ndarray, float]]:
    """(mask, mean probability) of every connected piece of `prob ≥ threshold` of at least `min_share` of the image,
    largest first (areas and means from one labelling pass; masks built only for the pieces kept)."""
    import cv2

    n, labels, stats, _ = cv2.connectedComponentsWithStats((prob >= threshold).astype(np.uint8), connectivity=8)
    areas = stats[:, cv2.CC_STAT_AREA]
    sums = np.bincount(labels.ravel(), weights=prob.ravel(), minlength=n)
    kept = [k for k in range(1, n) if areas[k] >= min_share * prob.size]
    return [(labels == k, float(sums[k] / areas[k])) for k in sorted(kept, key=lambda k: -int(areas[k]))]


class SelfiePeopleSegmenter(LiteRtTool):
    """Mask the people in the photo with MediaPipe's selfie segmentation (`selfie_people`).

    Serves targets that name people ("the person", "the woman on the left") and no target (the subject of a
    background removal); size, position and ordinal words choose among the people found.

    Params:
        threshold: person probability at and above which a pixel is a person.
        min_share: least share of the image one person must cover.
        tiles: the model also looks at a tiles × tiles grid of squares (1 = the whole photo only; more finds
            smaller people, at one model call per tile).
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        pieces = self._people(state, subtask, params)
        masks, _ = self._chosen(state, subtask, pieces)
        return ToolOutput(
            artifacts={"masks": masks},
            notes=f"selfie segmentation found {len(pieces)} person piece(s); kept {len(masks)} "
            f"({sum(m.area for m in masks) / (state.width * state.height):.1%} of the image)",
        )

    def _people(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> list[tuple[np.ndarray, float]]:
        if subtask.target and not names_people(subtask.target):
            raise GroundingError(
                f"selfie segmentation finds people only, not '{subtask.target}'",
                ground_advice(subtask.target),
                deterministic=True,
            )
        prob = person_probability(self.model(), state.image, int_param(params, "tiles"))
        pieces = person_pieces(prob, float_param(params, "threshold"), float_param(params, "min_share"))
        if not pieces:
            raise GroundingError("no person found in the image", ground_advice(subtask.target))
        return pieces

    def _chosen(
        self, state: EditState, subtask: Subtask, pieces: list[tuple[np.ndarray, float]]
    ) -> tuple[tuple[Mask, ...], tuple[Box, ...]]:
        """The pieces the target's words pick, as masks and their boxes, each with the detector's record. Where the
        user pointed, only the pieces that agree with it are candidates (`_pointed_pieces`)."""
        pieces, by_pointing = _pointed_pieces(state, pieces)
        found = [(Mask(piece, "person", score), score) for piece, score in pieces]
        boxes = [m.bbox() for m, _ in found]
        cands = [(b.x, b.y, b.w, b.h, m.area) for (m, _), b in zip(found, boxes, strict=True) if b is not None]
        phrase = parse_target(subtask.target)
        picked, chosen = choose(cands, phrase, keep_share=0.0, image_size=(state.width, state.height))
        record = detector_verification(self.spec.id, phrase, "person", len(found), chosen, pointed=by_pointing)
        masks = tuple(replace(found[i][0], verification=record) for i in sorted(picked))
        chosen_boxes = tuple(replace(b, label="person", verification=record) for m in masks if (b := m.bbox()))
        return masks, chosen_boxes


def _pointed_pieces(
    state: EditState, pieces: list[tuple[np.ndarray, float]]
) -> tuple[list[tuple[np.ndarray, float]], bool]:
    """The person pieces that agree with what the user pointed at, and whether the user pointed.

    A typed box bounds the person: each piece is clipped to the box (grown by the constraints' slack), so a person
    reaching a little past a tight box is kept rather than refused whole (a box around the astronaut once kept a
    2 % speck instead). Then the pieces `costa.constraints.pointing_problem` accepts (the click on it, the box
    spanned, the brush agreed with). None left: `GroundingError`, so the search tries another grounder."""
    from costa.constraints import BRUSH_LABEL, CLICK_LABEL, CLICKS_LABEL, grown_box, pointing_problem

    pointed = state.artifacts.get("pointed")
    if pointed is None or not (pointed.points or pointed.boxes or pointed.masks):
        return pieces, False
    typed = [b for b in pointed.boxes if b.label not in (CLICK_LABEL, CLICKS_LABEL, BRUSH_LABEL)]
    if typed:
        inside = np.zeros(state.image.shape[:2], bool)
        for b in typed:
            inside |= grown_box(b, (state.height, state.width))
        pieces = [(piece & inside, score) for piece, score in pieces if (piece & inside).any()]
    agree = [(piece, score) for piece, score in pieces if pointing_problem(piece, pointed) is None]
    if not agree:
        raise GroundingError(
            f"none of the {len(pieces)} person piece(s) MediaPipe found is where you pointed",
            "point at the person again (a click on them, or a box around them), or brush them",
        )
    return agree, True


class SelfiePeopleDetector(SelfiePeopleSegmenter):
    """Find people as boxes around MediaPipe selfie-segmentation pieces (`selfie_people_boxes`).

    The box of each person piece, for detection ("find the people") and for tools that start from boxes (GrabCut,
    U²-Net-p in a box). Params as `selfie_people`.
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        pieces = self._people(state, subtask, params)
        _, boxes = self._chosen(state, subtask, pieces)
        return ToolOutput(
            artifacts={"boxes": boxes},
            notes=f"selfie segmentation found {len(pieces)} person piece(s); kept {len(boxes)} box(es)",
        )
