"""One synthetic benchmark case (`BenchCase`: a scene, the subtask a planner would make for it, its ground truth)
and the measures of agreement with that truth (`target_found`, `word_recall`, `mask_iou`, `masked_psnr`).

The case sets are drawn in `costa.synthetic.cases` (text and object kinds), `cases_grounding` and `cases_image`; they
all build this record.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from costa.synthetic.scenes import ObjectScene, TextScene
from costa.textmatch import find_matches
from costa.types import Box, Mask, Subtask, TextRegion

#: A user's box around an object is this much larger than the object on every side (share of the object's size).
USER_BOX_MARGIN = 0.08


@dataclass(frozen=True, eq=False)
class BenchCase:
    """One synthetic case: the image, the subtask to run on it, and its scene (text or object) as ground truth."""

    subtask: Subtask
    text: TextScene | None = None
    obj: ObjectScene | None = None

    @property
    def image(self) -> np.ndarray:
        scene = self.text if self.text is not None else self.obj
        assert scene is not None  # every case is built with one scene
        return scene.image

    @property
    def background(self) -> np.ndarray:
        """The scene without the text or the object (what a perfect removal would give)."""
        scene = self.text if self.text is not None else self.obj
        assert scene is not None
        return scene.background

    def target_box(self) -> Box | None:
        """Ground-truth box of the text the subtask targets (None for whole-image text subtasks and objects)."""
        if self.text is None or self.subtask.target is None:
            return None
        if self.subtask.kind == "text_redaction":
            return next(w.box for w in self.text.sensitive if w.kind == self.subtask.target)
        return self.text.target.box

    def gt_regions(self) -> tuple[TextRegion, ...]:
        """Ground-truth text regions (one per drawn line, exact text, confidence 1.0)."""
        if self.text is None:
            raise ValueError("an object case has no text regions")
        return self.text.regions()

    def user_box(self) -> Box:
        """The object's box grown by `USER_BOX_MARGIN` on every side, as a user would draw it."""
        if self.obj is None:
            raise ValueError("a text case has no object box")
        b = self.obj.box
        height, width = self.obj.mask.shape
        px, py = max(2, round(USER_BOX_MARGIN * b.w)), max(2, round(USER_BOX_MARGIN * b.h))
        return Box(b.x - px, b.y - py, b.w + 2 * px, b.h + 2 * py, label="object").clip(width, height)

    def gt_mask(self) -> Mask:
        if self.obj is None:
            raise ValueError("a text case has no object mask")
        return Mask(self.obj.mask, label="object")

    def removed_region(self) -> np.ndarray:
        """Bool (H, W): the pixels a removal must restore: the object's mask, or the ink of the targeted text (all
        the text when the subtask names none)."""
        if self.obj is not None:
            return self.obj.mask
        assert self.text is not None
        box = self.target_box()
        if box is None:
            return self.text.ink
        height, width = self.text.ink.shape
        pad = max(2, box.h // 8)  # the true box is the rotated ink's bounding box; a little more catches soft edges
        return self.text.ink & Box(box.x - pad, box.y - pad, box.w + 2 * pad, box.h + 2 * pad).to_mask(height, width)


# ------------------------------------------------------------------------------------------ agreement with truth


def _overlap_share(a: Box, b: Box) -> float:
    """Share of `b`'s area that `a` covers, in [0, 1]."""
    w = min(a.x2, b.x2) - max(a.x, b.x)
    h = min(a.y2, b.y2) - max(a.y, b.y)
    return 0.0 if w <= 0 or h <= 0 else w * h / float(b.w * b.h)


def target_found(case: BenchCase, regions: Sequence[TextRegion]) -> bool:
    """Did a detector find the case's target: a region matching the target text (or kind) that covers at least half
    of the ground-truth target box? Whole-image subtasks (no target) need every drawn word inside some region."""
    if case.text is None:
        raise ValueError("target_found needs a text case")
    gt = case.target_box()
    if gt is None:
        return word_recall(case, regions) == 1.0
    return any(_overlap_share(m.region.box, gt) >= 0.5 for m in find_matches(regions, case.subtask.target))


def word_recall(case: BenchCase, regions: Sequence[TextRegion]) -> float:
    """Share of the drawn words whose text some region contains (fuzzy, as the tools match) and whose region covers
    at least half of the word's ground-truth box."""
    if case.text is None:
        raise ValueError("word_recall needs a text case")
    words = case.text.words
    found = sum(any(_overlap_share(m.region.box, w.box) >= 0.5 for m in find_matches(regions, w.text)) for w in words)
    return found / len(words)


def mask_iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two bool masks (0 when both are empty)."""
    union = int(np.logical_or(a, b).sum())
    return 0.0 if union == 0 else int(np.logical_and(a, b).sum()) / union


def masked_psnr(result: np.ndarray, truth: np.ndarray, region: np.ndarray) -> float:
    """PSNR in dB of `result` against `truth` over the bool `region` (RGB, peak 255); inf when identical there."""
    if not region.any():
        raise ValueError("masked_psnr needs a non-empty region")
    diff = result[region].astype(np.float64) - truth[region].astype(np.float64)
    mse = float(np.mean(diff**2))
    return math.inf if mse == 0 else 10.0 * math.log10(255.0**2 / mse)
