"""May costa call a passed subtask *done*? Its `StepContext` and the real-photo calibration's answer.

A subtask that passed its checks is verified only where the calibration table (`costa.calibration`, the setting
COSTA_CALIBRATION_TABLE) has enough real-photo evidence, right often enough, for exactly its context: the subtask
kind, its final tool, whether the image it edited is a photo or a flat graphic, the size of the region its final
step consumed, and how the user pointed for it. Everywhere else the shared ending (`costa.turn.ending`) reports it
as a proposal (`SubtaskProposed`) with the calibration's one-sentence reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from costa.calibration import StepContext, Vouch, content_class, region_class
from costa.turn.records import SubtaskResult, UserRegion
from costa.types import EditState, ToolSpec


@dataclass(frozen=True, eq=False)
class Judged:
    """A passed subtask's context, the region its final step consumed (bool (H, W) or None) and the vouch."""

    context: StepContext
    region: np.ndarray | None
    vouch: Vouch


def consumed_region(spec: ToolSpec, before: EditState) -> np.ndarray | None:
    """The pixels the final tool was given to work on: the union of the masks it consumes, else of its boxes (or
    text regions' boxes); None when it works on the whole image (nothing of those among its inputs or the state)."""
    h, w = before.height, before.width
    arts = before.artifacts
    out = np.zeros((h, w), bool)
    if "masks" in spec.inputs and arts.get("masks"):
        for m in arts["masks"]:
            if m.data.shape == (h, w):
                out |= m.data
    else:
        boxes = list(arts.get("boxes") or ()) if "boxes" in spec.inputs else []
        if "text_regions" in spec.inputs:
            boxes += [r.box for r in arts.get("text_regions") or ()]
        for b in boxes:
            out[max(0, b.y) : max(0, b.y + b.h), max(0, b.x) : max(0, b.x + b.w)] = True
    return out if out.any() else None


def produced_masks(after: EditState) -> np.ndarray | None:
    """The union of the masks a segmentation step produced (its result), None when it produced none."""
    masks = [m.data for m in after.artifacts.get("masks") or () if m.data.shape == (after.height, after.width)]
    return np.logical_or.reduce(masks) if masks else None


def acted_region(result: SubtaskResult) -> np.ndarray | None:
    """The part of the image the final step changed when that is not the whole image (bool (H, W)), else None: how
    an image-wide tool (an adjustment, a deblur) that acted only inside the user's box or brush shows its region,
    since it consumes no mask itself (`costa.tools.region`)."""
    edited = result.final.output.edited_region
    if edited is None:
        return None
    edited = np.asarray(edited, bool)
    return edited if edited.any() and not edited.all() else None


def step_context(
    result: SubtaskResult, tools: dict[str, ToolSpec], targeted: bool, region: UserRegion, produces: str = ""
) -> tuple[StepContext, np.ndarray | None]:
    """The calibration context of a passed subtask and its region: the one its final step consumed, or for a kind
    that produces masks (segmentation) the mask it produced — its result, what the user looks at and what the
    real-photo suite judges (bench real reads a proposal's region).

    `targeted`: the subtask kind acts on a target (its spec's `target` is not "none"); a whole-image subtask's
    pointing is "none" even when the user pointed for another subtask of the turn (`StepContext`)."""
    final = result.final
    tool = result.tools[-1] if result.tools else final.tools[-1]
    mask = produced_masks(final.after) if produces == "masks" else None
    if mask is None:
        mask = consumed_region(tools[tool], final.before) if tool in tools else None
    if mask is None and targeted:
        mask = acted_region(result)
    before = final.before.image
    pointing = region.pointing() if targeted else "none"
    ctx = StepContext(result.kind, tool, content_class(before), region_class(mask, before.shape[:2]), pointing)
    return ctx, mask


def judge(services: Any, result: SubtaskResult, region: UserRegion, target: str = "") -> Judged:
    """Ask the services' calibration (`Services.calibration`) whether it vouches for this passed subtask.

    `target`: the subtask's own target ("flag" in "make the flag darker"). A kind whose spec has no target (an
    adjustment, a deblur) still acted on a pointed or grounded region when it has one, so its context is that
    region and that pointing, never the whole-image context whose evidence says nothing about edits inside a box."""
    tables = services.tables
    spec = tables.subtasks.get(result.kind)
    targeted = (spec is not None and spec.target != "none") or bool(target)
    ctx, mask = step_context(result, dict(tables.tools), targeted, region, spec.produces if spec else "")
    return Judged(ctx, mask, services.calibration.vouch(ctx))
