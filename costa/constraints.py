"""What every tool output must respect: what the user pointed at, and the photo's own pixels.

`constrain_output` runs after every tool call (`costa.tools.base.Tool.__call__`), so it holds for every grounder,
built-in or added later, in every search mode:

- **Pointing is a constraint.** When the user clicked, boxed or brushed (the `pointed` artifact), a box, mask or text
  region an analysis tool returns is kept only when it agrees (`pointing_problem`): it contains the click (one
  click; with several, one of them, or it lies within the box they span), lies within the typed box, lies on the
  brush, and holds no negative click. A detector's hit elsewhere is never used: HOG's other person, sitting far
  behind the one clicked on, was once removed instead ("done", 1.00). When nothing agrees the tool fails, so the
  search tries another path.
- **One click with no confident mask is not a guess.** A mask whose extent rests on a single click alone (no
  detector vouches for its class, no box or brush bounds it) is verified only when an independent segmentation of
  the same click (the click's shading-following flood fill) agrees with it (IoU ≥ `CLICK_AGREEMENT`); otherwise its
  `Verification` misses the extent and the target is reported unverified with the candidate shown (the person is
  asked for a box or a brush, or accepts the candidate).
- **Analysis runs on real pixels.** Results lying mostly in pixels costa invented this turn are dropped
  (`costa.invented`), unless the subtask asks about the new content.
- A step that produces an image updates the `invented` artifact when its kind invents pixels.
- **What the instruction keeps stays as it was.** "… and keep the trees unchanged" plans a segmentation of the trees
  with `params["role"] = "keep"` (`costa.planner.keeps`); its masks become the turn's `kept` artifact, and every
  later tool output that is an image gets those pixels put back from the image it started from
  (`restore_kept`), whatever the tool did; the edit's check then verifies they did not change
  (`costa.checks.check_step`).

Units: pixels; shares in [0, 1].
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from costa.errors import GroundingError
from costa.invented import (
    INVENTED,
    MOSTLY_INVENTED,
    asks_for_invented,
    invented_after,
    invented_mask,
    invented_share,
    item_region,
)
from costa.types import Box, EditState, Mask, Point, Subtask, ToolOutput

#: Artifact types whose items say where something is, and so must agree with the pointing and lie on real pixels.
LOCATING = ("boxes", "masks", "text_regions")
#: Share of a region that must lie within the user's box (grown by `_slack_px`) or brush.
WITHIN_SHARE = 0.9
#: Share of a user's brush that a mask must cover to agree with it (a brush is the region itself).
BRUSH_COVER = 0.5
#: Share of a typed box's width and of its height a mask inside it must span: a box is drawn around its target, so a
#: speck in it is not the target. A box around the astronaut once kept a 2 % piece of the picture, "done" at 0.95.
BOX_SPAN = 0.5
#: IoU between a one-click mask and the click's own flood fill from which the mask's extent counts as confirmed.
CLICK_AGREEMENT = 0.75
#: Labels `costa.pointing` gives to what it derives from clicks and brushes (not constraints typed by the user).
CLICK_LABEL, CLICKS_LABEL, BRUSH_LABEL = "user click", "user clicks", "user brush"


def _slack_px(box: Box) -> int:
    """Pixels a region may reach beyond a user's box: 5 % of its longer side, at least 4 (a box drawn tight)."""
    return max(4, round(0.05 * max(box.w, box.h)))


def _click_slack_px(shape: tuple[int, int]) -> int:
    """How near a mask's edge a click may fall and still be on it: 1 % of the shorter side, at least 3 px."""
    return max(3, round(0.01 * min(shape)))


def grown_box(box: Box, shape: tuple[int, int]) -> np.ndarray:
    """Bool (H, W): `box` grown by the slack a region may reach beyond a user's box (`_slack_px`)."""
    h, w = shape
    s = _slack_px(box)
    out = np.zeros(shape, bool)
    out[max(0, box.y - s) : min(h, box.y2 + s), max(0, box.x - s) : min(w, box.x2 + s)] = True
    return out


def _span(region: np.ndarray, box: Box) -> float:
    """The smaller of the shares of `box`'s width and height that `region`'s pixels inside the box span."""
    crop = region[max(0, box.y) : box.y2, max(0, box.x) : box.x2]
    cols, rows = np.flatnonzero(crop.any(axis=0)), np.flatnonzero(crop.any(axis=1))
    if cols.size == 0:
        return 0.0
    return min((cols[-1] - cols[0] + 1) / max(1, box.w), (rows[-1] - rows[0] + 1) / max(1, box.h))


def _covers_point(region: np.ndarray, p: Point, is_box: bool) -> bool:
    h, w = region.shape
    if is_box:
        return bool(region[min(max(p.y, 0), h - 1), min(max(p.x, 0), w - 1)])
    r = _click_slack_px(region.shape)
    return bool(region[max(0, p.y - r) : p.y + r + 1, max(0, p.x - r) : p.x + r + 1].any())


def pointing_problem(region: np.ndarray, pointed: Any, is_box: bool = False) -> str | None:
    """Why `region` (bool (H, W)) disagrees with what the user pointed at (`pointed`: a `costa.agent.UserRegion`),
    or None when it agrees. `is_box`: the region is a detector's box (it may hold a negative click: boxes hold
    background)."""
    shape = region.shape
    area = int(region.sum())
    if area == 0:
        return "it is empty"
    for b in getattr(pointed, "boxes", ()):
        if b.label in (CLICK_LABEL, CLICKS_LABEL):
            continue  # derived from clicks: the clicks themselves are the constraint
        inside = float((region & grown_box(b, shape)).sum()) / area
        if inside < WITHIN_SHARE:
            what = "the brush's extent" if b.label == BRUSH_LABEL else f"your box {b.x},{b.y},{b.w},{b.h}"
            return f"only {inside:.0%} of it lies within {what}"
        if b.label != BRUSH_LABEL and not is_box:
            span = _span(region, b)
            if span < BOX_SPAN:
                return (
                    f"it spans only {span:.0%} of your box {b.x},{b.y},{b.w},{b.h} (at least {BOX_SPAN:.0%} of its "
                    "width and height: a box is drawn around its target)"
                )
    for m in getattr(pointed, "masks", ()):
        if m.label != BRUSH_LABEL or m.data.shape != shape or is_box:
            continue
        from costa.masks import dilate_mask

        brush = m.data
        slack = _slack_px(m.bbox() or Box(0, 0, 1, 1))
        inside = float((region & dilate_mask(brush, slack)).sum()) / area
        covered = float((region & brush).sum()) / max(1, int(brush.sum()))
        if inside < WITHIN_SHARE or covered < BRUSH_COVER:
            return (
                f"it does not agree with your brush ({inside:.0%} of it on the brush, {covered:.0%} of the brush in it)"
            )
    points = tuple(getattr(pointed, "points", ()))
    positive = [p for p in points if p.positive]
    if positive and not any(_covers_point(region, p, is_box) for p in positive):
        clicks_box = next((b for b in getattr(pointed, "boxes", ()) if b.label == CLICKS_LABEL), None)
        within = clicks_box is not None and float((region & grown_box(clicks_box, shape)).sum()) / area >= WITHIN_SHARE
        if not within:
            where = "; ".join(f"{p.x},{p.y}" for p in positive)
            return f"it holds none of your clicks ({where})" if len(positive) > 1 else f"it misses your click {where}"
    if not is_box:
        hit = [p for p in points if not p.positive and region[p.y, p.x]]
        if hit:
            return f"it holds your background click at {hit[0].x},{hit[0].y}"
    return None


def _one_click(pointed: Any) -> Point | None:
    """The click when the user's only pointing is one positive click (and perhaps background clicks)."""
    points = [p for p in getattr(pointed, "points", ()) if p.positive]
    if len(points) != 1:
        return None
    if any(b.label != CLICK_LABEL for b in getattr(pointed, "boxes", ())):
        return None
    if any(m.label != CLICK_LABEL for m in getattr(pointed, "masks", ())):
        return None
    return points[0]


def _click_outline(image: np.ndarray, click: Point) -> np.ndarray | None:
    from costa.clicks import click_outline

    mask = click_outline(image, click.x, click.y)
    return None if mask is None else mask.data


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    union = int((a | b).sum())
    return float((a & b).sum()) / union if union else 0.0


def _extent_checked(item: Mask, flood: np.ndarray | None, tool_id: str, target: str | None) -> Mask:
    """`item` with a `Verification` saying whether its extent is confirmed (see the module docstring)."""
    from costa.grounding import pointed
    from costa.targets import Evidence, Verification

    record = item.verification
    if record is not None and any(e.aspect != "pointed" for e in record.verified):
        return item  # a detector or a colour grounder vouches for what it is; its extent is its own
    agreement = _iou(item.data, flood) if flood is not None and flood.shape == item.data.shape else None
    base = record or pointed(tool_id, target)
    if agreement is not None and agreement >= CLICK_AGREEMENT:
        extent = Evidence("extent", "one click", f"agrees with the click's own outline (IoU {agreement:.2f})")
        return replace(item, verification=replace(base, verified=(*base.verified, extent)))
    why = (
        f"its outline and the click's own outline disagree (IoU {agreement:.2f} < {CLICK_AGREEMENT})"
        if agreement is not None
        else "one click gives no outline to confirm it"
    )
    missing = Evidence(
        "extent",
        "one click",
        f"{why}: draw a box or brush over the object, or accept this region",
        agreement is not None,
    )
    return replace(item, verification=Verification(base.method, base.target, base.verified, (*base.missing, missing)))


def _filtered(
    tool_id: str, state: EditState, subtask: Subtask, output: ToolOutput, pointed: Any, invented: np.ndarray | None
) -> ToolOutput:
    shape = (state.height, state.width)
    artifacts = dict(output.artifacts)
    notes: list[str] = []
    click = _one_click(pointed) if pointed is not None else None
    outline: list[np.ndarray | None] = []  # the click's own outline, computed once when a mask needs it
    for kind in LOCATING:
        items = tuple(artifacts.get(kind) or ())
        if not items:
            continue
        kept: list[Any] = []
        refusals: list[str] = []
        for item in items:
            region = item_region(item, shape)
            if region is None:
                kept.append(item)
                continue
            share = invented_share(region, invented)
            if share > MOSTLY_INVENTED:
                refusals.append(f"{share:.0%} of it lies in pixels costa invented this turn")
                continue
            problem = None if pointed is None else pointing_problem(region, pointed, is_box=not isinstance(item, Mask))
            if problem is not None:
                refusals.append(problem)
                continue
            if click is not None and isinstance(item, Mask):
                if not outline:
                    outline.append(_click_outline(state.image, click))
                item = _extent_checked(item, outline[0], tool_id, subtask.target)
            kept.append(item)
        if not kept:
            raise GroundingError(
                f"none of the {len(items)} {kind.replace('_', ' ')} it found can be used: {refusals[0]}",
                "A detector's hit away from what you pointed at, or in content costa made up, is never used: point "
                "at the object itself (click on it, or draw a box or brush over it)",
            )
        if len(kept) < len(items):
            notes.append(f"dropped {len(items) - len(kept)} of {len(items)} {kind.replace('_', ' ')}: {refusals[0]}")
        artifacts[kind] = tuple(kept) if not isinstance(items, list) else kept
    note = "; ".join(notes)
    return replace(output, artifacts=artifacts, notes=(output.notes + ("; " if output.notes and note else "") + note))


#: The artifact holding what the instruction keeps unchanged (bool (H, W)).
KEPT = "kept"


def kept_mask(state: EditState) -> np.ndarray | None:
    """What this turn keeps unchanged, as a bool (H, W) mask of the state's size, or None."""
    kept = state.artifacts.get(KEPT)
    if isinstance(kept, np.ndarray) and kept.shape == (state.height, state.width) and kept.any():
        return kept
    return None


def restore_kept(state: EditState, output: ToolOutput) -> ToolOutput:
    """`output` with the kept pixels put back as they were in `state` (an output of another size is left alone: the
    planner refuses to keep anything through a resize)."""
    kept = kept_mask(state)
    if kept is None or output.image is None or output.image.shape != state.image.shape:
        return output
    moved = int((np.abs(output.image.astype(np.int16) - state.image.astype(np.int16)).max(axis=2) > 0)[kept].sum())
    if moved == 0:
        return output
    image = output.image.copy()
    image[kept] = state.image[kept]
    note = f"put back {moved} px of what the instruction keeps unchanged"
    return replace(output, image=image, notes=(output.notes + "; " if output.notes else "") + note)


def _with_kept(state: EditState, subtask: Subtask, output: ToolOutput) -> ToolOutput:
    """A keep segmentation's masks added to the turn's `kept` region."""
    masks = [m.data for m in output.artifacts.get("masks") or () if m.data.shape == (state.height, state.width)]
    if subtask.params.get("role") != "keep" or not masks:
        return output
    kept = np.logical_or.reduce(masks)
    before = kept_mask(state)
    if before is not None:
        kept = kept | before
    return replace(output, artifacts={**output.artifacts, KEPT: kept})


def constrain_output(tool_id: str, state: EditState, subtask: Subtask, output: ToolOutput, invents: bool) -> ToolOutput:
    """`output` made to respect the user's pointing and the photo's own pixels (see the module docstring).

    Args:
        tool_id: the tool that produced it (named in verification records).
        state: the state the tool ran on (its `pointed` and `invented` artifacts).
        invents: the subtask's kind paints new pixels (`invents` in subtasks.yaml).

    Raises:
        GroundingError: an analysis tool found nothing that agrees with the pointing or lies on real pixels.
    """
    if output.image is not None:
        output = restore_kept(state, output)
        mask = invented_after(state, subtask, output, invents)
        if mask is None or output.artifacts.get(INVENTED) is not None:
            return output
        return replace(output, artifacts={**output.artifacts, INVENTED: mask})
    pointed = state.artifacts.get("pointed")
    invented = None if asks_for_invented(subtask) else invented_mask(state)
    if pointed is None and (invented is None or not invented.any()):
        return _with_kept(state, subtask, output)
    if not any(output.artifacts.get(k) for k in LOCATING):
        return output
    return _with_kept(state, subtask, _filtered(tool_id, state, subtask, output, pointed, invented))


def carried(state: EditState, region: Any = None) -> dict[str, Any]:
    """The artifacts a new subtask starts with besides the user's own boxes, masks and clicks: what the user pointed
    at (`pointed`, seen by every step and check), the pixels invented so far this turn (`invented`) and what the
    instruction keeps unchanged (`kept`)."""
    out: dict[str, Any] = {}
    kept = kept_mask(state)
    if kept is not None:
        out[KEPT] = kept
    if region is not None and region.artifacts():
        out["pointed"] = region
    mask = invented_mask(state)
    if mask is not None:
        out[INVENTED] = mask
    return out
