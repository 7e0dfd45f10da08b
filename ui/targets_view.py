"""The app's side of an unverified target: the candidate region highlighted on the image, the chat text with the two
ways on ("Edit this region" / "Let me point") and "Do the rest", and the store records of each target.

Kept apart from the page layout so the session core can call it from wherever turns run: `record_targets` after a
turn, `candidate_overlay` for the image, `accept_region` / `plan_without` for the three actions (each keeps the
instruction: the turn is run again with the candidate as the user's mask, or without the unverified subtasks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from costa.events import Event, PointingNeeded, TargetUnverified, TurnDone
from costa.types import Mask, Plan

if TYPE_CHECKING:
    from collections.abc import Iterator

    from costa.agent import UserRegion
    from costa.services import Services
    from costa.store import Store
    from ui.turnview import TurnView

#: Highlight colour (RGB) and opacity of the candidate region.
HIGHLIGHT = (255, 215, 0)
HIGHLIGHT_ALPHA = 0.45
#: Labels of the actions offered on an unverified target.
EDIT_THIS_REGION = "Edit this region"
LET_ME_POINT = "Let me point"
DO_THE_REST = "Do the rest"


def pointing_first(services: Services, plan: Plan, region: UserRegion) -> Iterator[Event] | None:
    """When a target no ready tool can find by itself has not been pointed at, the turn's events that ask for
    pointing before anything runs (the user then points, or chooses "Do the rest"); None when nothing needs asking."""
    from costa.agent import pointing_needed

    if region.artifacts():
        return None
    needed = pointing_needed(services, plan, region)
    if not needed:
        return None
    asks = {sid: ev.reason for ev in needed for sid in ev.subtask_ids}

    def events() -> Iterator[Event]:
        yield from needed
        yield TurnDone(0.0, 0.0, 0, 0.0, None, ok=False, skipped=asks, unverified=asks)

    return events()


def unverified_text(view: TurnView) -> str:
    """The closing chat line of a turn whose target was found but not verified, or must be pointed at first."""
    if not view.unverified and view.plan is not None:
        targets = sorted({view.plan.by_id(sid).target or "" for sid in view.needs_pointing})
        named = ", ".join(f"'{t}'" for t in targets) or "the target"
        return (
            f"🎯 **Point first** · no ready tool can find {named} by itself, so nothing has run yet. "
            f"**{LET_ME_POINT}**, then Send; or **{DO_THE_REST}**: run the subtasks that do not need it."
        )
    parts = []
    for sid, u in view.unverified.items():
        missing = "; ".join(u.missing) or "its identity"
        parts.append(f"{sid} '{u.target}': not verified — {missing}")
    return (
        "🎯 **Target not verified** · " + " · ".join(parts) + ". The candidate region is highlighted on the image: "
        f"**{EDIT_THIS_REGION}** edits it anyway, **{LET_ME_POINT}** lets you click, box or brush the object; "
        f"**{DO_THE_REST}** runs the other subtasks. Nothing was saved."
    )


def candidate_overlay(image: np.ndarray, region: np.ndarray | None) -> np.ndarray:
    """`image` (RGB uint8) with `region` (bool (H, W)) tinted in `HIGHLIGHT` and outlined; unchanged without one."""
    if region is None or region.shape != image.shape[:2] or not region.any():
        return image
    from costa.masks import dilate_mask

    out = image.astype(np.float32)
    tint = np.array(HIGHLIGHT, np.float32)
    out[region] = (1 - HIGHLIGHT_ALPHA) * out[region] + HIGHLIGHT_ALPHA * tint
    edge = dilate_mask(region, 2) & ~region
    out[edge] = tint
    return np.clip(out, 0, 255).astype(np.uint8)


def candidate_region(view: TurnView) -> np.ndarray | None:
    """The union of the candidate regions of the view's unverified targets (None when there are none)."""
    regions = [u.region for u in view.unverified.values() if u.region is not None]
    if not regions:
        return None
    out = np.zeros_like(regions[0], dtype=bool)
    for r in regions:
        if r.shape == out.shape:
            out |= r
    return out


def accept_region(view: TurnView) -> Mask | None:
    """ "Edit this region": the candidate as the user's brush mask, for rerunning the same instruction."""
    region = candidate_region(view)
    return Mask(region, label="accepted candidate") if region is not None else None


def plan_without(plan: Plan, subtask_ids: set[str]) -> Plan:
    """ "Do the rest": the plan without `subtask_ids` and every subtask that depends on them."""
    drop = set(subtask_ids)
    for s in plan.subtasks:  # parents are listed first, so one pass finds every dependant
        if any(p in drop for p in s.parents):
            drop.add(s.id)
    kept = tuple(s for s in plan.subtasks if s.id not in drop)
    return plan.model_copy(update={"subtasks": kept})


def record_targets(store: Store, turn_id: int, events: list[object]) -> None:
    """Store one target record per `TargetUnverified` and `PointingNeeded` event of a turn."""
    for ev in events:
        if isinstance(ev, TargetUnverified):
            store.record_target(
                turn_id, ev.subtask_id, ev.target, "unverified", ev.method, ev.verified, ev.missing, ev.summary
            )
        elif isinstance(ev, PointingNeeded):
            for sid in ev.subtask_ids:
                store.record_target(turn_id, sid, ev.target, "pointing_needed", summary=ev.reason)


def targets_report(view: TurnView) -> dict[str, dict[str, object]]:
    """Per unverified or unfindable subtask: its target, status, what was and was not verified, the candidate size."""
    out: dict[str, dict[str, object]] = {}
    for sid, u in view.unverified.items():
        out[sid] = {
            "target": u.target,
            "status": "unverified",
            "method": u.method,
            "verified": list(u.verified),
            "missing": list(u.missing),
            "candidate_px": int(u.region.sum()) if u.region is not None else 0,
            "actions": [EDIT_THIS_REGION, LET_ME_POINT, DO_THE_REST],
        }
    if view.plan is not None:
        for sid in sorted(view.needs_pointing - set(out)):
            if sid in view.done_subtasks:
                continue
            out[sid] = {
                "target": view.plan.by_id(sid).target or "",
                "status": "pointing_needed",
                "why": view.unavailable.get(sid, ""),
                "actions": [LET_ME_POINT, DO_THE_REST],
            }
    return out


# ----------------------------------------------------------------------------------------------- app wiring


def action_row() -> tuple[Any, Any, Any, Any]:
    """The row of the three actions on an unverified target (hidden until a turn leaves one): row and buttons."""
    import gradio as gr

    with gr.Row(visible=False, elem_id="target-actions") as row:
        edit_region = gr.Button(f"🎯 {EDIT_THIS_REGION}", size="sm", elem_id="edit-this-region")
        let_me_point = gr.Button(f"👆 {LET_ME_POINT}", size="sm", elem_id="let-me-point")
        do_rest = gr.Button(f"⏭ {DO_THE_REST}", size="sm", elem_id="do-the-rest")
    return row, edit_region, let_me_point, do_rest


def pending(state: Any) -> TurnView | None:
    """The tab's last turn when it left an unverified target and the user has not pointed since."""
    view = getattr(state, "last_view", None)
    if view is None or view.status != "unverified":
        return None
    if getattr(state, "clicks", None) or getattr(state, "brush", None) is not None or getattr(state, "box", ""):
        return None
    return view


def shown_image(state: Any, image: np.ndarray | None) -> np.ndarray | None:
    """The image to show: with the candidate region highlighted while an unverified target waits for the user."""
    view = pending(state)
    if image is None or view is None:
        return image
    return candidate_overlay(image, candidate_region(view))


def row_update(state: Any) -> Any:
    import gradio as gr

    return gr.update(visible=pending(state) is not None)


def on_edit_this_region(state: Any) -> str:
    """ "Edit this region": the candidate becomes the user's brush mask; returns the instruction to run again."""
    view = pending(state)
    if view is None:
        return ""
    region = accept_region(view)
    if region is None:  # nothing was found to accept: the user has to point
        return on_let_me_point(state)
    state.brush = region
    state.clicks = []
    return view.instruction


def on_let_me_point(state: Any) -> str:
    """ "Let me point": the highlight goes, the instruction is put back for Send once the user clicked or boxed."""
    view = pending(state)
    if view is None:
        return ""
    state.last_view = None
    state.past = [
        *state.past,
        {
            "role": "assistant",
            "content": f"👆 Click on {_named(view)} (one click: the region "
            "around it; more clicks: a box), type a box x,y,w,h or paint a brush mask, then press Send.",
        },
    ]
    return view.instruction


def _named(view: TurnView) -> str:
    targets = [u.target for u in view.unverified.values()]
    if not targets and view.plan is not None:
        targets = sorted({view.plan.by_id(sid).target or "" for sid in view.needs_pointing})
    return ", ".join(f"'{t}'" for t in targets) or "the object"


def on_do_the_rest(state: Any) -> str:
    """ "Do the rest": plans the same instruction without the unverified subtasks and those that depend on them."""
    from ui.workspace import PlanResult

    view = pending(state)
    if view is None or view.plan is None:
        return ""
    rest = plan_without(view.plan, set(view.unverified) | set(view.needs_pointing))
    state.plans = {view.instruction: PlanResult(rest if rest.subtasks else None, ())}
    return view.instruction
