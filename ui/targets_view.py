"""The page's side of an unverified target: the row of three actions ("Edit this region" / "Let me point" /
"Do the rest"), the candidate region highlighted on the shown image, and what each action does to the tab's state
before the instruction is sent again. The Gradio-free parts are in `costa.session.targets` (re-exported here).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from costa.session.targets import (
    DO_THE_REST,
    EDIT_THIS_REGION,
    HIGHLIGHT,
    HIGHLIGHT_ALPHA,
    LET_ME_POINT,
    accept_region,
    candidate_overlay,
    candidate_region,
    plan_without,
    pointing_first,
    record_targets,
    targets_report,
    unverified_text,
)
from costa.session.view import TurnView

__all__ = [
    "DO_THE_REST",
    "EDIT_THIS_REGION",
    "HIGHLIGHT",
    "HIGHLIGHT_ALPHA",
    "LET_ME_POINT",
    "accept_region",
    "action_row",
    "candidate_overlay",
    "candidate_region",
    "on_do_the_rest",
    "on_edit_this_region",
    "on_let_me_point",
    "pending",
    "plan_without",
    "pointing_first",
    "record_targets",
    "row_update",
    "shown_image",
    "targets_report",
    "unverified_text",
]


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


def shown_image(state: Any, image: np.ndarray) -> np.ndarray:
    """The image to show: with the candidate region highlighted while an unverified target waits for the user."""
    view = pending(state)
    if view is None:
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
    from costa.session.turns import PlanResult

    view = pending(state)
    if view is None or view.plan is None:
        return ""
    rest = plan_without(view.plan, set(view.unverified) | set(view.needs_pointing))
    state.plans = {view.instruction: PlanResult(rest if rest.subtasks else None, ())}
    return view.instruction
