"""Named API endpoints for `gradio_client` (and MCP when enabled): new_session, edit, history, undo, redo, branch,
accept, discard, refine, score, export, scores_csv, stop.

They run on hidden components so files travel as files (uploads in, PNG/zip downloads out) and share the page's
workspace: an API client and a browser with the same session id see the same history. Every call names its session
id; ids are unguessable and, when login is on, bound to the signed-in user.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import gradio as gr
import numpy as np

from costa.errors import InputError
from costa.session import Pointing, SessionCore, TurnOptions, TurnView, parse_clicks, read_brush
from costa.session.targets import candidate_overlay, candidate_region, targets_report
from costa.session.view import is_tool_event
from ui import render as R
from ui.state import short_errors


def report(view: TurnView, session_id: str, notes: tuple[str, ...] = ()) -> dict[str, Any]:
    """A turn as JSON-ready data for API clients."""
    plan = view.plan
    done = view.done_subtasks
    return {
        "session_id": session_id,
        "turn_id": view.turn_id,
        "turn_number": view.turn_number,
        "status": view.status,
        "ok": bool(view.outcome and view.outcome.ok),
        "version_id": view.result_version,
        "version_number": view.result_number,
        "region": view.region_note,
        "plan": plan.model_dump(mode="json") if plan is not None else None,
        "subtasks": [
            {
                "id": s.id,
                "kind": s.kind,
                "state": view.subtask_state(s.id),
                "tools": list(done[s.id].tools) if s.id in done else [],
                "quality": done[s.id].quality if s.id in done else None,
                "answer_verified": s.kind not in view.unreferenced,  # False: only the answer's form was checked
                "result": done[s.id].result if s.id in done else "",
                "proposed": view.proposed[s.id].reason if s.id in view.proposed else "",
                "why_not": view.unavailable.get(s.id, ""),
                "needs_pointing": s.id in view.needs_pointing,
                "panels": [
                    {"title": p.title, "body": p.body, "actions": list(p.actions)} for p in view.panels.get(s.id, ())
                ],
            }
            for s in (plan.subtasks if plan else ())
        ],
        "calls": [
            {
                "subtask_id": c.subtask_id,
                "tool": c.tool,
                "attempt": c.attempt,
                "seconds": c.seconds,
                "quality": c.quality,
                "passed": c.passed,
                "stopped": c.stopped,
                "reasons": list(c.reasons),
            }
            for c in view.calls
        ],
        "totals": view.totals(),
        "targets": targets_report(view),
        # status "proposed": passed its checks, but costa cannot vouch for it (`/accept` or `/discard` decides)
        "proposal": proposal_report(view),
        "message": R.final_text(view),
        "log": R.log_lines(view),
        "notes": list(notes),
    }


def proposal_report(view: TurnView) -> dict[str, Any] | None:
    """The turn's pending proposal for API clients (None when the turn proposed nothing)."""
    if not view.proposed:
        return None
    return {
        "id": view.proposal_id,
        "subtasks": [
            {"id": sid, "reason": ev.reason, "context": dict(zip(CONTEXT_FIELDS, ev.context, strict=False))}
            for sid, ev in view.proposed.items()
        ],
    }


def decided_report(core: SessionCore, session_id: str, owner: str | None, decided: Any) -> dict[str, Any]:
    """What `/accept` or `/discard` did, with the session's history."""
    return {
        **core.versions.summary(session_id, owner),
        "decided": {
            "proposal_id": decided.proposal.id,
            "turn_id": decided.proposal.turn_id,
            "verdict": decided.verdicts[0].verdict if decided.verdicts else "",
            "version_id": decided.version.id if decided.version is not None else None,
            "subtasks": [v.subtask_id for v in decided.verdicts],
        },
    }


#: The names of a proposal's `StepContext` fields, in `SubtaskProposed.context`'s order.
CONTEXT_FIELDS = ("kind", "tool", "content", "region", "pointing")


def app_url() -> str:
    """Where this app listens (for the API tab's example)."""
    from costa.config import listen_address

    host, port = listen_address()
    return f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{port}"


def build_api_tab() -> None:
    """The API tab: how to call the named endpoints, with this app's own address."""
    with gr.Tab("API", id="api"):
        gr.Markdown(API_HELP.replace("http://127.0.0.1:7860", app_url()))


def add_api(core: SessionCore, owner_of: Callable[[Any], str | None]) -> None:
    """Create the hidden inputs/outputs and the named endpoints (call inside the page's Blocks)."""
    settings = core.settings
    with gr.Column(visible=False):
        session_id_in = gr.Textbox(label="session_id")
        image_in = gr.File(label="image", type="filepath")
        instruction_in = gr.Textbox(label="instruction")
        alpha_in = gr.Number(label="alpha", value=settings.alpha)
        threshold_in = gr.Number(label="threshold", value=settings.threshold)
        box_in = gr.Textbox(label="box")
        clicks_in = gr.Textbox(label="clicks")
        brush_in = gr.File(label="brush", type="filepath")
        mode_in = gr.Textbox(label="mode", value="lazy")
        # /refine's optional overrides: empty by default (the proposal turn's own values), not the settings' defaults
        alpha_or_turns = gr.Number(label="alpha", value=None)
        threshold_or_turns = gr.Number(label="threshold", value=None)
        mode_or_turns = gr.Textbox(label="mode", value="")
        version_id_in = gr.Number(label="version_id", precision=0)
        turn_id_in = gr.Number(label="turn_id", precision=0)
        subtask_id_in = gr.Textbox(label="subtask_id")
        score_in = gr.Number(label="score")
        comment_in = gr.Textbox(label="comment")
        evaluator_in = gr.Textbox(label="evaluator")
        out_session = gr.Textbox(label="session_id")
        out_image = gr.Image(label="image", type="numpy", format="png")
        out_report = gr.JSON(label="report")
        out_file = gr.File(label="image_file")
        out_bundle = gr.File(label="bundle")
        trigger = gr.Button("api")

    new_session, score, export, scores_csv, stop = _session_endpoints(core, owner_of)
    edit, refine = _turn_endpoints(core, owner_of)
    history, undo, redo, branch, accept, discard = _version_endpoints(core, owner_of)

    gpu = {"concurrency_id": "gpu_tools", "concurrency_limit": settings.concurrency}
    endpoints: list[tuple[Callable[..., Any], list[Any], list[Any], str, dict[str, Any]]] = [
        (new_session, [], [out_session], "new_session", {}),
        (
            edit,
            [session_id_in, image_in, instruction_in, alpha_in, threshold_in, box_in, clicks_in, brush_in, mode_in],
            [out_image, out_report],
            "edit",
            gpu,
        ),
        (history, [session_id_in], [out_report], "history", {}),
        (undo, [session_id_in], [out_image, out_report], "undo", {}),
        (redo, [session_id_in], [out_image, out_report], "redo", {}),
        (branch, [session_id_in, version_id_in], [out_image, out_report], "branch", {}),
        (accept, [session_id_in], [out_image, out_report], "accept", {}),
        (discard, [session_id_in], [out_image, out_report], "discard", {}),
        (
            refine,
            [session_id_in, box_in, clicks_in, brush_in, alpha_or_turns, threshold_or_turns, mode_or_turns],
            [out_image, out_report],
            "refine",
            gpu,
        ),
        (
            score,
            [session_id_in, turn_id_in, subtask_id_in, score_in, comment_in, evaluator_in],
            [out_report],
            "score",
            {},
        ),
        (export, [session_id_in], [out_file, out_bundle], "export", {}),
        (scores_csv, [session_id_in], [out_file], "scores_csv", {}),
        (stop, [session_id_in], [out_report], "stop", {"queue": False}),
    ]
    for fn, inputs, outputs, name, extra in endpoints:
        trigger.click(fn, inputs, outputs, api_name=name, api_description=(fn.__doc__ or "").strip(), **extra)


def _current(core: SessionCore, sid: str, owner: str | None) -> np.ndarray | None:
    """The session's current image (None before an upload)."""
    return core.head(sid, owner)[1]


def _session_endpoints(core: SessionCore, owner_of: Callable[[Any], str | None]) -> tuple[Callable[..., Any], ...]:
    """/new_session, /score, /export, /scores_csv and /stop, in that order."""

    @short_errors
    def new_session(request: gr.Request) -> str:
        """Start a session; returns its id, which every other endpoint needs."""
        return core.new_session(owner_of(request)).id

    @short_errors
    def score(
        session_id: str,
        turn_id: float,
        subtask_id: str,
        score: float,
        comment: str,
        evaluator: str,
        request: gr.Request,
    ) -> dict[str, Any]:
        """Score one subtask of a finished turn: 0 fail, 0.1 … 0.9 partial, 1 full; returns the accuracies.

        Args:
            session_id: from new_session.
            turn_id: the turn's id (see history).
            subtask_id: e.g. "s1" (see the turn's plan).
            score: 0 (fail), 0.1 … 0.9 (partial credit) or 1 (full).
            comment: free text.
            evaluator: your name (ignored when login is on: the signed-in user scores).
        """
        if turn_id is None:
            raise InputError("give the turn_id to score (see /history)")
        if score is None:
            raise InputError("give a score: 0, 0.1 … 0.9 or 1")
        owner = owner_of(request)
        return core.versions.score(session_id, owner, turn_id, subtask_id or "", score, comment or "", evaluator or "")

    @short_errors
    def export(session_id: str, request: gr.Request) -> tuple[str | None, str]:
        """The current image (PNG) and the session's reproducibility bundle (zip)."""
        image_path, bundle = core.versions.export(session_id, owner_of(request))
        return (str(image_path) if image_path else None), str(bundle)

    @short_errors
    def scores_csv(session_id: str, request: gr.Request) -> str:
        """The session's evaluator scores as CSV."""
        return str(core.versions.scores_csv(session_id, owner_of(request)))

    @short_errors
    def stop(session_id: str, request: gr.Request) -> dict[str, Any]:
        """Stop the session's running turn now (a tool call in flight is not waited for; its result is dropped)."""
        return {"stopping": core.stop(session_id, owner_of(request))}

    return new_session, score, export, scores_csv, stop


def _turn_endpoints(core: SessionCore, owner_of: Callable[[Any], str | None]) -> tuple[Callable[..., Any], ...]:
    """/edit and /refine, in that order: they run a turn and stream its report, then its image."""
    settings, head = core.settings, partial(_current, core)

    @short_errors
    def edit(
        session_id: str,
        image: str | None,
        instruction: str,
        alpha: float | None,
        threshold: float | None,
        box: str | None,
        clicks: str | None,
        request: gr.Request,
        brush: str | None = None,  # last and defaulted: gradio_client calls from before it existed keep working
        mode: str | None = None,
    ) -> Iterator[tuple[Any, dict[str, Any]]]:
        """Edit the session's current image by an instruction; streams the turn report, then the result image.

        Args:
            session_id: from new_session.
            image: an image file to upload first and edit; empty to edit the current version.
            instruction: what to change, e.g. "replace the text 'SALE' with 'OPEN'".
            alpha: cost/quality trade-off in [0, 2]: 0 best quality, 2 fastest (default 1).
            threshold: quality each checked step must reach, in [0, 1] (default 0.8).
            box: target region "x,y,w,h" in pixels, for objects costa cannot find by itself; may be empty.
            clicks: target clicks "x,y;x,y" in pixels (one click: a region, two or more: a box); may be empty.
            brush: a brush mask image (PNG) of the image's size, white = the region to edit; may be empty.
            mode: "lazy" (default), "eager" or "fast-slow" (FaSTA*: learned subroutines first, local A* on failure).
        """
        owner = owner_of(request)
        core.session(session_id, owner)
        opts = TurnOptions.validate(settings, alpha, threshold, mode or "lazy")
        points = parse_clicks(clicks)
        upload = core.read_upload(image) if image else None
        mask = None
        if brush:
            if upload is not None:
                h, w = upload.image.shape[:2]
            else:
                current = head(session_id, owner)
                if current is None:
                    raise InputError("upload an image first, then send a brush mask of its size")
                h, w = current.shape[:2]
            mask = read_brush(brush, w, h)
        req = core.prepare(session_id, owner, instruction, opts, Pointing(points, box or "", mask), upload)
        yield from stream(req, session_id, owner)

    def stream(req: Any, session_id: str, owner: str | None) -> Iterator[tuple[Any, dict[str, Any]]]:
        """Run a prepared turn: its report as it goes, then the result image (the proposal, the candidate…)."""
        view = None
        for view, ev in core.run(req):
            if is_tool_event(ev):
                yield gr.skip(), report(view, session_id, req.notes)
        if view is not None:
            result = head(session_id, owner) if view.result_version is not None else None
            if view.status == "proposed" and view.outcome is not None:  # the proposal itself, to look at
                result = view.outcome.image
            if view.status == "unverified":  # show the candidate region highlighted on the current image
                current = head(session_id, owner)
                result = candidate_overlay(current, candidate_region(view)) if current is not None else None
            yield result, report(view, session_id, req.notes)

    @short_errors
    def refine(
        session_id: str,
        box: str | None,
        clicks: str | None,
        request: gr.Request,
        brush: str | None = None,
        alpha: float | None = None,  # these three last and defaulted: calls from before they existed keep working
        threshold: float | None = None,
        mode: str | None = None,
    ) -> Iterator[tuple[Any, dict[str, Any]]]:
        """Refine the session's pending proposal: run its instruction again on the current image with new pointing
        (its turn's α, threshold and mode unless given); the old proposal is recorded as refined, the new result
        judged like any turn; streams as /edit. No proposal waiting, no new pointing, a bad value: an error, no change.

        Args:
            session_id: from new_session.
            box: target region "x,y,w,h" in pixels; may be empty.
            clicks: target clicks "x,y;x,y" in pixels; may be empty.
            brush: a brush mask image (PNG) of the image's size, white = the region to edit; may be empty.
            alpha: cost/quality trade-off in [0, 2]; empty: the proposal turn's.
            threshold: quality each checked step must reach, in [0, 1]; empty: the proposal turn's.
            mode: "lazy", "eager" or "fast-slow"; empty: the proposal turn's.
        """
        owner = owner_of(request)
        current = head(session_id, owner)
        points = parse_clicks(clicks)
        mask = read_brush(brush, current.shape[1], current.shape[0]) if brush and current is not None else None
        turn = core.proposals.refining(session_id, owner, (points, box or "", mask))
        p = turn.params
        a, th = (p.get(k) if v is None else v for k, v in (("alpha", alpha), ("threshold", threshold)))
        opts = TurnOptions.validate(settings, a, th, mode or p.get("mode"), p.get("reflect"), "refine")
        req = core.prepare(session_id, owner, turn.instruction, opts, Pointing(points, box or "", mask))
        yield from stream(req, session_id, owner)

    return edit, refine


def _version_endpoints(core: SessionCore, owner_of: Callable[[Any], str | None]) -> tuple[Callable[..., Any], ...]:
    """/history, /undo, /redo, /branch, /accept and /discard, in that order: the session's versions."""
    head = partial(_current, core)

    @short_errors
    def history(session_id: str, request: gr.Request) -> dict[str, Any]:
        """The session's versions (with SHA-256 of their pixels) and turns."""
        return core.versions.summary(session_id, owner_of(request))

    @short_errors
    def undo(session_id: str, request: gr.Request) -> tuple[np.ndarray | None, dict[str, Any]]:
        """Go back one turn; returns the current image and the history."""
        owner = owner_of(request)
        core.versions.undo(session_id, owner)
        return head(session_id, owner), core.versions.summary(session_id, owner)

    @short_errors
    def redo(session_id: str, request: gr.Request) -> tuple[np.ndarray | None, dict[str, Any]]:
        """Return to the version undo left; returns the current image and the history."""
        owner = owner_of(request)
        core.versions.redo(session_id, owner)
        return head(session_id, owner), core.versions.summary(session_id, owner)

    @short_errors
    def branch(session_id: str, version_id: float, request: gr.Request) -> tuple[np.ndarray | None, dict[str, Any]]:
        """Make any version current (see history for ids); the next edit starts a new branch and keeps the old one."""
        owner = owner_of(request)
        if version_id is None:
            raise InputError("give the version_id to branch from (see /history)")
        core.versions.branch(session_id, owner, version_id)
        return head(session_id, owner), core.versions.summary(session_id, owner)

    @short_errors
    def accept(session_id: str, request: gr.Request) -> tuple[np.ndarray | None, dict[str, Any]]:
        """Accept the session's pending proposal (a turn with status "proposed"): it is saved as a new version, the
        current image, and your verdict is recorded; returns the current image and the history. No proposal
        waiting: an error, nothing changes."""
        owner = owner_of(request)
        decided = core.proposals.accept(session_id, owner)
        return head(session_id, owner), decided_report(core, session_id, owner, decided)

    @short_errors
    def discard(session_id: str, request: gr.Request) -> tuple[np.ndarray | None, dict[str, Any]]:
        """Discard the session's pending proposal: the image and history stay as they are, your verdict is
        recorded; returns the current image and the history. No proposal waiting: an error, nothing changes."""
        owner = owner_of(request)
        decided = core.proposals.discard(session_id, owner)
        return head(session_id, owner), decided_report(core, session_id, owner, decided)

    return history, undo, redo, branch, accept, discard


API_HELP = """
### Use costa from Python (`gradio_client`)

```python
from gradio_client import Client, handle_file
c = Client("http://127.0.0.1:7860")
sid = c.predict(api_name="/new_session")
image, report = c.predict(sid, handle_file("sign.png"), "replace the text 'SALE' with 'OPEN'", 1.0, 0.8, "", "",
                          api_name="/edit")
# a brush mask: a PNG of the image's size, white = the region to edit (the last input, optional)
image, report = c.predict(sid, None, "make it pink", 1.0, 0.8, "", "", handle_file("mask.png"), api_name="/edit")
c.predict(sid, api_name="/history"); c.predict(sid, api_name="/undo")
c.predict(sid, 2, api_name="/branch")                 # make version 2 current; later edits start a new branch
if report["status"] == "proposed":                    # costa cannot vouch for it: look at `image`, then decide
    image, history = c.predict(sid, api_name="/accept")  # or "/discard", or point again and run it once more:
    # image, report = c.predict(sid, "40,30,120,90", "", None, api_name="/refine")   # box, clicks, brush
    # ... then, optionally, alpha, threshold and mode (None / "": the proposal turn's): ..., None, 0.5, 0.9, "eager"
c.predict(sid, report["turn_id"], "s1", 1.0, "looks right", "alice", api_name="/score")
image_file, bundle_zip = c.predict(sid, api_name="/export")
```

`box` is "x,y,w,h" and `clicks` "x,y;x,y" in pixels; `brush` is a mask image of the image's size (white, or opaque
on a transparent layer, = region); `/edit` streams its report (plan, tool calls, costs, log). A report with status
`proposed` means the result passed its checks but costa cannot vouch for it on real-photo evidence (`proposal` says
why): the image returned is the proposal, not yet a version — `/accept` saves it, `/discard` drops it.

| endpoint | inputs | returns |
|---|---|---|
| `/new_session` | — | a session id (keep it: it is the key to your history) |
| `/edit` | session_id, image (None: current), instruction, alpha, threshold, box, clicks, brush | image, turn report |
| `/history` | session_id | versions (with SHA-256) and turns |
| `/undo`, `/redo` | session_id | current image, history |
| `/branch` | session_id, version_id | current image, history |
| `/accept`, `/discard` | session_id | current image, history and what was decided; an error when no proposal waits |
| `/refine` | session_id, box, clicks, brush (+ alpha, threshold, mode) | run again with this pointing: image, report |
| `/score` | session_id, turn_id, subtask_id, score (0, 0.1 … 0.9, 1), comment, evaluator | accuracies |
| `/export` | session_id | current image (PNG), reproducibility bundle (zip) |
| `/scores_csv` | session_id | evaluator scores (CSV) |
| `/stop` | session_id | whether a running turn was stopped (it ends at once, image unchanged) |
"""
