"""Checks for subtasks that read the image and answer without editing it: depth, captions, caption consistency.

They check what can be checked without ground truth: that the answer has the form the tables define (a depth map of
the image's size in [0, 1] that orders something; one caption sentence of words; one of the two verdict labels).
Whether the depth order or the caption is right is not checked (no reference); the reasons say so.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from costa.checks.context import CheckContext, CheckFn
from costa.types import EditState, Subtask, ToolOutput, Verdict

#: A caption longer than this many words is not one sentence describing the image.
MAX_CAPTION_WORDS = 60
#: Least share of distinct words among a caption's words (a decoder stuck on one word repeats it).
MIN_DISTINCT_SHARE = 0.3
VERDICT_LABELS = ("consistent", "inconsistent")
_WORD = re.compile(r"[^\W\d_]+")


def _produced(name: str, after: EditState, output: ToolOutput) -> Any:
    value = output.artifacts.get(name)
    return after.artifacts.get(name) if value is None else value


def check_depth(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """A float map of the image's (H, W), finite, in [0, 1], not constant → 1.0; anything else → 0.0."""
    depth = _produced("depth", after, output)
    if depth is None:
        return Verdict(0.0, ("no depth map was produced",))
    d = np.asarray(depth)
    want = (before.height, before.width)
    if d.shape != want:
        return Verdict(0.0, (f"depth map is {d.shape}, the image is {want}",))
    if not np.issubdtype(d.dtype, np.floating) or not np.isfinite(d).all():
        return Verdict(0.0, (f"depth map must be finite floats, got {d.dtype}",))
    lo, hi = float(d.min()), float(d.max())
    if lo < 0.0 or hi > 1.0:
        return Verdict(0.0, (f"depth values span [{lo:.3g}, {hi:.3g}], not within [0, 1]",))
    if hi - lo <= 0.0:
        return Verdict(0.0, ("depth map is constant: it orders nothing",))
    return Verdict(
        1.0, (f"depth map {want[1]}×{want[0]} in [{lo:.2f}, {hi:.2f}] (its order is not checked: no reference)",)
    )


def check_caption(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """One caption of 1–`MAX_CAPTION_WORDS` words, at least `MIN_DISTINCT_SHARE` of them distinct → 1.0; else 0.0."""
    caption = _produced("caption", after, output)
    if not isinstance(caption, str) or not caption.strip():
        return Verdict(0.0, ("no caption was produced",))
    words = [w.lower() for w in _WORD.findall(caption)]
    if not words:
        return Verdict(0.0, (f"the caption {caption!r} has no words",))
    if len(words) > MAX_CAPTION_WORDS:
        return Verdict(0.0, (f"the caption has {len(words)} words (> {MAX_CAPTION_WORDS}): not one sentence",))
    distinct = len(set(words)) / len(words)
    if len(words) >= 4 and distinct < MIN_DISTINCT_SHARE:
        return Verdict(0.0, (f"the caption repeats itself ({distinct:.0%} distinct words < {MIN_DISTINCT_SHARE:.0%})",))
    return Verdict(1.0, (f"a caption of {len(words)} words (whether it is right is not checked: no reference)",))


def check_consistency_label(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """The label is "consistent" or "inconsistent" → 1.0; anything else → 0.0."""
    label = _produced("label", after, output)
    if label not in VERDICT_LABELS:
        return Verdict(0.0, (f"the answer {label!r} is not one of {', '.join(VERDICT_LABELS)}",))
    return Verdict(1.0, (f"answered {label!r} (whether it is right is not checked: no reference)",))


READOUT_CHECKS: dict[str, CheckFn] = {
    "depth_estimation": check_depth,
    "image_captioning": check_caption,
    "caption_consistency_check": check_consistency_label,
}
