"""Benchmark cases for the embedded tools: a synthetic scene, the subtask a planner would make for it, and the
ground truth its results are scored against.

One case set per subtask kind, drawn from `costa.testing.scenes`: object subtasks each get their own scenes, text
subtasks share the scenes of their family (signs, or contact cards for redaction) with a subtask made for each kind.
Every tool serving a kind sees the same cases, and a given seed gives the same cases on every machine. Ground-truth
agreement measures (`target_found`, `mask_iou`, `masked_psnr`) live here too, next to the truth they read.

Example:
    >>> cs = make_cases("text_replacement", 2, seed=0)
    >>> cs[0].subtask.kind, cs[0].subtask.target in cs[0].text.text
    ('text_replacement', True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from costa.testing.scenes import (
    NEW_WORDS,
    OBJECT_COLOURS,
    ObjectScene,
    TextScene,
    object_scenes,
    scene_seeds,
    text_scenes,
)
from costa.textmatch import find_matches
from costa.types import Box, Mask, Subtask, TextRegion

#: Subtask kinds with synthetic cases, and the scene family each uses.
TEXT_SIGN_KINDS = frozenset(
    {"text_detection", "text_extraction", "text_replacement", "text_removal", "keyword_highlighting", "text_addition"}
)
TEXT_CONTACT_KINDS = frozenset({"text_redaction"})
OBJECT_KINDS = frozenset({"object_segmentation", "object_recoloration", "object_removal"})
#: Kinds whose cases are faces or people (`costa.testing.cases_grounding`).
GROUNDING_KINDS = frozenset({"privacy_blur", "object_detection", "background_removal"})
#: Whole-image kinds (`costa.testing.cases_image`).
IMAGE_KINDS = frozenset({"image_upscaling", "image_deblurring", "outpainting", "global_adjustment", "image_cropping"})
CASE_KINDS = TEXT_SIGN_KINDS | TEXT_CONTACT_KINDS | OBJECT_KINDS | GROUNDING_KINDS | IMAGE_KINDS

#: Recolouring targets besides the object colours: the achromatic and dark ones a hue swap cannot reach.
EXTRA_RECOLOUR_TARGETS = ("white", "black", "grey", "navy", "gold")
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


def make_cases(kind: str, n: int, seed: int = 0, style: str | None = None) -> list[BenchCase]:
    """Build `n` cases for subtask `kind` from `seed`.

    Args:
        style: for text kinds, draw the scenes in this sign style (`costa.testing.sign_styles.SIGN_STYLES`); None
            keeps the default scenes.

    Raises:
        ValueError: no synthetic cases exist for `kind` (see `CASE_KINDS`), or a style is given for a kind without
            text.
    """
    if style is not None and kind not in TEXT_SIGN_KINDS | TEXT_CONTACT_KINDS:
        raise ValueError(f"sign styles apply to text subtasks only, not {kind!r}")
    if kind not in CASE_KINDS:
        raise ValueError(f"no synthetic cases for subtask {kind!r}; known: {sorted(CASE_KINDS)}")
    if kind in GROUNDING_KINDS:
        from costa.testing.cases_grounding import make_grounding_cases

        return make_grounding_cases(kind, n, seed)
    if kind in IMAGE_KINDS:
        from costa.testing.cases_image import make_image_cases

        return list(make_image_cases(kind, n, seed))
    rng = np.random.default_rng(scene_seeds(1, seed, f"subtask-{kind}")[0])
    cases: list[BenchCase] = []
    if kind in OBJECT_KINDS:
        for scene in object_scenes(n, seed, stream=kind):
            result = None
            if kind == "object_recoloration":
                names = [name for name, _ in OBJECT_COLOURS] + list(EXTRA_RECOLOUR_TARGETS)
                others = [name for name in names if name != scene.colour_name]
                result = others[int(rng.integers(len(others)))]
            # The target names the object's colour, as a user would ("the red object"), so colour grounding can run.
            target = f"{scene.colour_name} object"
            cases.append(BenchCase(Subtask(id="s1", kind=kind, target=target, result=result), obj=scene))
        return cases
    family: Literal["sign", "contact"] = "contact" if kind in TEXT_CONTACT_KINDS else "sign"
    # Text subtasks of one family share their scenes, so a detector's result on a scene serves all of them.
    if style is None:
        scenes = text_scenes(n, seed, kind=family, stream=f"text-{family}")
    else:
        from costa.testing.sign_styles import styled_text_scenes

        scenes = styled_text_scenes(n, seed, style, kind=family, stream=f"text-{family}")
    for i, text in enumerate(scenes):
        if kind in ("text_detection", "text_extraction"):
            subtask = Subtask(id="s1", kind=kind)
        elif kind == "text_redaction":
            spans = text.sensitive
            subtask = Subtask(id="s1", kind=kind, target=spans[i % len(spans)].kind)
        elif kind == "text_addition":
            subtask = Subtask(id="s1", kind=kind, result=NEW_WORDS[int(rng.integers(len(NEW_WORDS)))])
        else:
            result = None
            if kind == "text_replacement":
                choices = [w for w in NEW_WORDS if w != text.target.text]
                result = choices[int(rng.integers(len(choices)))]
            subtask = Subtask(id="s1", kind=kind, target=text.target.text, result=result)
        cases.append(BenchCase(subtask, text=text))
    return cases


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
