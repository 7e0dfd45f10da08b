"""The page's side of a proposal (issue 18 part 2): a turn whose result costa cannot vouch for on real-photo evidence.

The turn line says "Proposed — have a look" with the reason; the before/after slider shows the current image against
the proposal with the region it changed outlined; Accept (saved as a new version, the person's verdict recorded),
Refine (add a brush, more clicks or a box on the image, then run the instruction again with that pointing: the old
proposal is recorded refined, the new result judged like any turn) and Discard (image and history untouched, the
verdict recorded) are one click each. The pending proposal lives in the
session core (`costa.session.proposals`), so a reload shows it again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import gradio as gr  # at module level: Gradio resolves the handler's `gr.Request` hint in these globals
import numpy as np

from costa.errors import InputError
from costa.session.view import TurnView

PROPOSED = "Proposed — have a look"
ACCEPT = "Accept"
DISCARD = "Discard"
REFINE = "Refine"
#: The outline drawn around a proposal's changed region on the slider's "after" side (RGB).
OUTLINE = (255, 0, 140)


def action_row() -> tuple[Any, Any, Any, Any, Any]:
    """The proposal's row (hidden until a proposal waits): row, its note, Accept, Discard and Refine."""
    import gradio as gr

    with gr.Row(visible=False, elem_id="proposal-actions") as row:
        note = gr.Markdown("", elem_id="proposal-note")
        accept = gr.Button(f"✔ {ACCEPT}", variant="primary", size="sm", scale=0, min_width=110, elem_id="accept")
        refine = gr.Button(f"✎ {REFINE}", size="sm", scale=0, min_width=110, elem_id="refine")
        discard = gr.Button(f"✖ {DISCARD}", size="sm", scale=0, min_width=110, elem_id="discard")
    return row, note, accept, discard, refine


def reasons_text(reasons: dict[str, str]) -> str:
    """Why costa cannot vouch for each proposed subtask, one line each."""
    return "\n".join(f"- {sid}: {why}" for sid, why in reasons.items())


def turn_line(view: TurnView, cost: str) -> str:
    """The closing line of a proposed turn (instead of "Done")."""
    reasons = {sid: ev.reason for sid, ev in view.proposed.items()}
    return (
        f"🔍 **{PROPOSED}** · {cost} · it passed its checks, but costa cannot vouch for it on real photos:\n"
        f"{reasons_text(reasons)}\n\nCompare before and after below, then **{ACCEPT}** (a new version), "
        f"**{REFINE}** (add a brush, more clicks or a box on the image first: it runs again with that pointing) or "
        f"**{DISCARD}** (the image stays as it is). Nothing is saved until you decide."
    )


def note_markdown(proposal: Any) -> str:
    """The row's note for a pending proposal (`costa.store.proposals.Proposal`)."""
    reasons = {s.subtask_id: s.reason for s in proposal.subtasks}
    return f"🔍 **{PROPOSED}** — costa cannot vouch for this result:\n{reasons_text(reasons)}"


def outlined(image: np.ndarray, region: np.ndarray | None, width: int = 2) -> np.ndarray:
    """`image` with the boundary of `region` drawn in `OUTLINE` (a copy; the image itself when no region)."""
    if region is None or region.shape != image.shape[:2] or not region.any():
        return image
    import cv2

    m = region.astype(np.uint8)
    kernel = np.ones((2 * width + 1, 2 * width + 1), np.uint8)
    edge = (cv2.dilate(m, kernel) > 0) & ~(cv2.erode(m, kernel) > 0)
    out = image.copy()
    out[edge] = OUTLINE
    return out


def pending(core: Any, state: Any) -> Any:
    """The session's pending proposal, or None (no session yet: None)."""
    if state is None or not getattr(state, "session_id", None):
        return None
    return core.proposals.pending(state.session_id, state.owner)


def slider_value(core: Any, state: Any, proposal: Any) -> Any:
    """(current image, proposal outlined) while a proposal waits, else the session's last before/after."""
    if proposal is not None and proposal.image is not None:
        _, current = core.head(state.session_id, state.owner)
        after = outlined(proposal.image, proposal.region)
        if current is not None and current.shape == after.shape:
            return current, after
        return after, after
    return core.versions.before_after(state.session_id, state.owner)


def updates(core: Any, state: Any, row: Any, note: Any, slider: Any) -> dict[Any, Any]:
    """The row, its note and the slider for the session's state."""
    import gradio as gr

    p = pending(core, state)
    return {
        row: gr.update(visible=p is not None),
        note: note_markdown(p) if p is not None else "",
        slider: slider_value(core, state, p),
    }


def decided_message(decided: Any, number: int | None) -> dict[str, Any]:
    """The chat's line after Accept or Discard."""
    version = decided.version.id if decided.version is not None else None
    return verdict_message("accepted" if version is not None else "discarded", number or version)


def verdict_message(verdict: str, number: int | None) -> dict[str, Any]:
    """The chat's line for a decided proposal ("accepted", saved as version `number`, or "discarded"): said after
    the click, and again under its turn when the page is reloaded."""
    if verdict == "accepted":
        text = f"✔ **Accepted** — saved as version **v{number}** (undo goes back)."
    else:
        text = "✖ **Discarded** — the image and the history are as they were before that turn."
    return {"role": "assistant", "content": text}


def refine_handler(core: Any, on_send: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """The Refine button's event: check the pointing the person added since the proposal (clicks, the box field, a
    brush) against the proposal turn's own, then run that turn's instruction again as the Edit tab's Send does
    (`on_send`, the page's α, threshold, mode and reflection), marked as a refine so the session core records the old
    proposal refined by the new turn. Refused (no proposal, no new pointing): one warning toast, nothing runs.
    """
    from ui.state import page_errors

    @page_errors
    def on_refine(state: Any, a: float, th: float, box_text: str, m: str, r: bool, request: gr.Request) -> Any:
        if state is None:
            raise InputError("the page is still loading: try again in a moment")
        pointing = (state.clicks, box_text or "", state.brush)
        turn = core.proposals.refining(state.session_id, state.owner, pointing)
        state.action = "refine"
        yield from on_send(state, turn.instruction, a, th, box_text, m, r, request)

    return on_refine
