"""Benchmark cases for the embedded tools: a synthetic scene, the subtask a planner would make for it, and the
ground truth its results are scored against.

One case set per subtask kind, drawn from `costa.synthetic.scenes`: object subtasks each get their own scenes, text
subtasks share the scenes of their family (signs, or contact cards for redaction) with a subtask made for each kind.
Every tool serving a kind sees the same cases, and a given seed gives the same cases on every machine. The case record
and the ground-truth agreement measures are `costa.synthetic.case` (re-exported here).

Example:
    >>> cs = make_cases("text_replacement", 2, seed=0)
    >>> cs[0].subtask.kind, cs[0].subtask.target in cs[0].text.text
    ('text_replacement', True)
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from costa.synthetic.case import USER_BOX_MARGIN, BenchCase, mask_iou, masked_psnr, target_found, word_recall
from costa.synthetic.scenes import (
    NEW_WORDS,
    OBJECT_COLOURS,
    object_scenes,
    scene_seeds,
    text_scenes,
)
from costa.types import Subtask

#: Subtask kinds with synthetic cases, and the scene family each uses.
TEXT_SIGN_KINDS = frozenset(
    {"text_detection", "text_extraction", "text_replacement", "text_removal", "keyword_highlighting", "text_addition"}
)
TEXT_CONTACT_KINDS = frozenset({"text_redaction"})
OBJECT_KINDS = frozenset({"object_segmentation", "object_recoloration", "object_removal"})
#: Kinds whose cases are faces or people (`costa.synthetic.cases_grounding`).
GROUNDING_KINDS = frozenset({"privacy_blur", "object_detection", "background_removal", "background_blur"})
#: Whole-image kinds (`costa.synthetic.cases_image`).
IMAGE_KINDS = frozenset({"image_upscaling", "image_deblurring", "outpainting", "global_adjustment", "image_cropping"})
CASE_KINDS = TEXT_SIGN_KINDS | TEXT_CONTACT_KINDS | OBJECT_KINDS | GROUNDING_KINDS | IMAGE_KINDS

#: Recolouring targets besides the object colours: the achromatic and dark ones a hue swap cannot reach.
EXTRA_RECOLOUR_TARGETS = ("white", "black", "grey", "navy", "gold")


def targeted_adjust_cases(n: int, seed: int = 0) -> list[BenchCase]:
    """`n` global adjustments limited to a named object ("make the red object darker"): the object scenes of the
    recolouring cases, so a grounder's mask is scored against the object's true mask and the region editor's step by
    the adjustment check inside it (a grounder and `region_adjust` serve an adjustment only when it names a target)."""
    from dataclasses import replace

    from costa.synthetic.cases_image import ADJUSTMENTS

    rng = np.random.default_rng(scene_seeds(1, seed, "subtask-targeted-adjust")[0])
    out = []
    for case in make_cases("object_recoloration", n, seed):
        result = ADJUSTMENTS[int(rng.integers(len(ADJUSTMENTS)))]
        sub = case.subtask.model_copy(update={"kind": "global_adjustment", "result": result, "params": {}})
        out.append(replace(case, subtask=sub))
    return out


def make_cases(kind: str, n: int, seed: int = 0, style: str | None = None) -> list[BenchCase]:
    """Build `n` cases for subtask `kind` from `seed`.

    Args:
        style: for text kinds, draw the scenes in this sign style (`costa.synthetic.sign_styles.SIGN_STYLES`); None
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
        from costa.synthetic.cases_grounding import make_grounding_cases

        return make_grounding_cases(kind, n, seed)
    if kind in IMAGE_KINDS:
        from costa.synthetic.cases_image import make_image_cases

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
        from costa.synthetic.sign_styles import styled_text_scenes

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


__all__ = [
    "CASE_KINDS",
    "USER_BOX_MARGIN",
    "BenchCase",
    "make_cases",
    "mask_iou",
    "masked_psnr",
    "target_found",
    "word_recall",
]
