"""Unverified targets in a session's turns, for every interface: asking for pointing before anything runs
(`pointing_first`), the store records of each target (`record_targets`), the report and chat text, the candidate
region highlighted on the image, and the three follow-ups ("Edit this region" / "Let me point" / "Do the rest": each
keeps the instruction; the turn is run again with the candidate as the user's mask, or without the unverified
subtasks). The page's buttons are wired in `ui.targets_view`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from costa.events import Event, PointingNeeded, TargetUnverified, TurnDone
from costa.session.view import SubtaskPanel
from costa.types import Mask, Plan

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from costa.services import Services
    from costa.session.view import TurnView
    from costa.store import Store
    from costa.turn.records import UserRegion

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
    from costa.turn.graphs import pointing_needed

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


def record_targets(store: Store, turn_id: int, events: Sequence[object]) -> None:
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


def target_panels(view: TurnView) -> None:
    """Add a panel with the follow-up actions under each subtask whose target is unverified or must be pointed at."""
    for sid, u in view.unverified.items():
        body = f"'{u.target}' was found but not verified — {'; '.join(u.missing) or 'its identity'}."
        actions = (EDIT_THIS_REGION, LET_ME_POINT, DO_THE_REST)
        view.add_panel(sid, SubtaskPanel("🎯 Target not verified", body, actions))
    if view.plan is not None and view.status == "unverified":  # asked before anything ran
        for sid in sorted(view.needs_pointing - set(view.unverified) - set(view.done_subtasks)):
            target = view.plan.by_id(sid).target or "the target"
            body = f"No ready tool can find '{target}' by itself: point at it."
            view.add_panel(sid, SubtaskPanel("🎯 Point first", body, (LET_ME_POINT, DO_THE_REST)))
