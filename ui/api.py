"""Named API endpoints for `gradio_client` (and MCP when enabled): new_session, edit, history, undo, redo, branch,
score, export, scores_csv, stop.

They run on hidden components so files travel as files (uploads in, PNG/zip downloads out) and share the page's
workspace: an API client and a browser with the same session id see the same history. Every call names its session
id; ids are unguessable and, when login is on, bound to the signed-in user.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import gradio as gr
import numpy as np

from costa.errors import InputError
from costa.pointing import brush_mask
from costa.types import Mask
from ui.targets_view import candidate_overlay, candidate_region
from ui.workspace import Workspace, is_tool_event, report


def parse_clicks(text: str | None) -> list[tuple[int, int]]:
    """ "x,y;x,y" → [(x, y), …] in image pixels.

    >>> parse_clicks("10,20; 30,40")
    [(10, 20), (30, 40)]
    """
    if not text or not text.strip():
        return []
    out = []
    for part in text.split(";"):
        if not part.strip():
            continue
        try:
            x, y = (round(float(v)) for v in part.split(","))
        except ValueError as e:
            raise InputError(f'clicks must look like "x,y;x,y" in pixels, got {text!r}') from e
        out.append((x, y))
    return out


def read_brush(path: str, width: int, height: int) -> Mask:
    """A brush mask from an image file of the current image's size: white (or, with transparency, opaque) = region.

    The size is checked from the file's header before its pixels are decoded.

    Raises:
        InputError: not a readable image, another size than the width x height image, or nothing marked.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as img:
            if img.size != (width, height):
                raise InputError(
                    f"the brush mask is {img.width}x{img.height} but the current image is {width}x{height}: "
                    "send a mask of the same size (white = region)"
                )
            transparent = img.mode in ("RGBA", "LA", "PA") or "transparency" in img.info
            data = np.asarray(img.convert("RGBA" if transparent else "RGB"))
    except InputError:
        raise
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as e:
        raise InputError("the brush mask is not an image costa can read: send a PNG, white = region") from e
    return brush_mask(data, width, height)


def add_api(ws: Workspace, owner_of: Callable[[Any], str | None], short_errors: Callable[..., Any]) -> None:
    """Create the hidden inputs/outputs and the named endpoints (call inside the page's Blocks)."""
    settings = ws.settings
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

    def head(sid: str, owner: str | None) -> np.ndarray | None:
        return ws.head(sid, owner)[1]

    @short_errors
    def new_session(request: gr.Request) -> str:
        """Start a session; returns its id, which every other endpoint needs."""
        return ws.store.create_session(owner_of(request)).id

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
        sid, file, text, a, th, box_text, click_text = session_id, image, instruction, alpha, threshold, box, clicks
        owner = owner_of(request)
        ws.session(sid, owner)
        if ws.busy(sid):
            raise InputError("a turn is already running in this session: wait for it to finish or call /stop")
        if not isinstance(text, str) or not text.strip():
            raise InputError("type what to change, e.g. \"replace the text 'SALE' with 'OPEN'\"")
        points = parse_clicks(click_text)
        notes: list[str] = []
        if file:
            _, notes = ws.upload(sid, owner, file)
        mask = None
        if brush:
            current = head(sid, owner)
            if current is None:
                raise InputError("upload an image first, then send a brush mask of its size")
            mask = read_brush(brush, current.shape[1], current.shape[0])
        view = None
        for view, ev in ws.run(sid, owner, text, a, th, points, box_text or "", mode=mode or "lazy", brush=mask):
            if is_tool_event(ev):
                yield gr.skip(), {**report(view, sid), "notes": notes}
        if view is not None:
            image = head(sid, owner) if view.result_version is not None else None
            if view.status == "unverified":  # show the candidate region highlighted on the current image
                image = candidate_overlay(head(sid, owner), candidate_region(view))
            yield image, {**report(view, sid), "notes": notes}

    @short_errors
    def history(session_id: str, request: gr.Request) -> dict[str, Any]:
        """The session's versions (with SHA-256 of their pixels) and turns."""
        return ws.history(session_id, owner_of(request))

    @short_errors
    def undo(session_id: str, request: gr.Request) -> tuple[np.ndarray | None, dict[str, Any]]:
        """Go back one turn; returns the current image and the history."""
        owner = owner_of(request)
        ws.undo(session_id, owner)
        return head(session_id, owner), ws.history(session_id, owner)

    @short_errors
    def redo(session_id: str, request: gr.Request) -> tuple[np.ndarray | None, dict[str, Any]]:
        """Return to the version undo left; returns the current image and the history."""
        owner = owner_of(request)
        ws.redo(session_id, owner)
        return head(session_id, owner), ws.history(session_id, owner)

    @short_errors
    def branch(session_id: str, version_id: float, request: gr.Request) -> tuple[np.ndarray | None, dict[str, Any]]:
        """Make any version current (see history for ids); the next edit starts a new branch and keeps the old one."""
        owner = owner_of(request)
        if version_id is None:
            raise InputError("give the version_id to branch from (see /history)")
        ws.branch(session_id, owner, int(version_id))
        return head(session_id, owner), ws.history(session_id, owner)

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
        return ws.score(session_id, owner, int(turn_id), subtask_id or "", score, comment or "", evaluator or "")

    @short_errors
    def export(session_id: str, request: gr.Request) -> tuple[str | None, str]:
        """The current image (PNG) and the session's reproducibility bundle (zip)."""
        image_path, bundle = ws.export(session_id, owner_of(request))
        return (str(image_path) if image_path else None), str(bundle)

    @short_errors
    def scores_csv(session_id: str, request: gr.Request) -> str:
        """The session's evaluator scores as CSV."""
        return str(ws.scores_csv(session_id, owner_of(request)))

    @short_errors
    def stop(session_id: str, request: gr.Request) -> dict[str, Any]:
        """Ask the session's running turn to stop after its current tool call."""
        return {"stopping": ws.stop(session_id, owner_of(request))}

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
