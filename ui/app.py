"""The costa page: chat, live plan and search, cost ledger, version history, pointing, and the evaluator tab.

`build_ui(services)` makes the Blocks; `queue_kwargs` / `launch_kwargs` say how app.py should serve it. Nothing here
runs at import and there is no module-level state: the shared `Services` is passed in, the `Workspace` (store, per
session runtime) is made inside `build_ui`, and each browser tab has its own `UiState` in `gr.State`. The session id
lives in the browser (`gr.BrowserState`), so a page refresh reopens the same history from the store.
"""

from __future__ import annotations

import atexit
import functools
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr
import numpy as np

from costa.errors import CostaError, InputError
from costa.events import LlmCall
from costa.services import Services
from costa.types import Mask
from ui import render as R
from ui import targets_view as TV
from ui.overlays import annotate, gpu_present, llm_line, points_text, status_line, thumbnail
from ui.reflection_panel import build_reflection_panel, cost_note, panel_update, vlm_expert_count
from ui.workspace import ALPHA_GRID, MAX_CLICKS, MODES, PlanResult, Workspace, is_tool_event

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "assets"
EXAMPLE_TEXT = "replace the text 'SALE' with 'OPEN'"
#: One-click demos: (asset file, instruction, box x,y,w,h or "").
EXAMPLES = (
    ("sale_sign.png", "replace the text 'SALE' with 'OPEN'", ""),
    ("red_ball.png", "make the red ball blue", "300,130,160,160"),
    ("cafe_poster.png", "highlight the word 'FREE' and redact the phone number", ""),
)
CSS = """
#status { font-size: 0.95em; }
#tree .mermaid, #toolgraph .mermaid { overflow-x: auto; }
#ledger table { font-size: 0.85em; }
#ledger th { white-space: nowrap; }
#prediction table { font-size: 0.85em; }
"""
#: Most chat messages from earlier turns kept on screen (all stay in the store and the bundle).
MAX_PAST_MESSAGES = 400


@dataclass
class UiState:
    """One browser tab: its session, what the user clicked, planned instructions, and what is on screen."""

    session_id: str = ""
    owner: str | None = None
    known: list[str] = field(default_factory=list)
    clicks: list[tuple[int, int]] = field(default_factory=list)
    plans: dict[str, PlanResult] = field(default_factory=dict)
    past: list[dict[str, Any]] = field(default_factory=list)
    last_view: R.TurnView | None = None
    gallery_ids: list[int] = field(default_factory=list)
    selected: int | None = None
    head: tuple[int, np.ndarray] | None = None
    box: str = ""
    brush: Mask | None = None
    brush_open: bool = False
    brush_version: int | None = None  # the version whose image the brush editor shows

    def clear_pointing(self) -> None:
        """Forget clicks and the brush mask (the image they were made on is no longer current)."""
        self.clicks, self.brush = [], None


def short_errors(fn: Callable[..., Any] | None = None, *, toast: bool = False) -> Any:
    """Turn costa's errors into short messages and anything unexpected into a logged, generic one.

    API endpoints raise them as `gr.Error` (clients get an exception). Page handlers with `toast=True` show a warning
    toast and change nothing instead, so the components they update are not all marked as failed.
    """
    if fn is None:
        return functools.partial(short_errors, toast=toast)

    def message(e: Exception) -> str:
        if isinstance(e, gr.Error):
            return str(e.message)
        if isinstance(e, CostaError):
            msg = str(e)
            return msg[:1].upper() + msg[1:]
        log.exception("unexpected error in %s", fn.__name__)
        return f"costa hit an internal error ({type(e).__name__}); it is logged on the server. Nothing was lost."

    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def gen(*args: Any, **kwargs: Any) -> Any:
            try:
                yield from fn(*args, **kwargs)
            except Exception as e:
                if not toast:
                    raise gr.Error(message(e)) from e
                gr.Warning(message(e))
                yield {}

        return gen

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            if not toast:
                raise gr.Error(message(e)) from e
            gr.Warning(message(e))
            return {}

    return call


def queue_kwargs(services: Services) -> dict[str, Any]:
    """How app.py should queue the page: light events in parallel, tool-running ones limited (see `build_ui`)."""
    return {"default_concurrency_limit": 8, "max_size": services.settings.queue_size}


def launch_kwargs(services: Services) -> dict[str, Any]:
    """How app.py should launch: auth, upload limit, allowed asset folder, CSS, MCP when asked and available."""
    s = services.settings
    kwargs: dict[str, Any] = {
        "max_file_size": int(s.max_upload_mb * 1024 * 1024),
        "allowed_paths": [str(ASSETS)],
        "css": CSS,
        "show_error": False,
        "ssr_mode": False,
    }
    if s.auth:
        kwargs["auth"] = list(s.auth)
        kwargs["auth_message"] = "costa: sign in to edit and evaluate."
    if s.mcp:
        import importlib.util

        if importlib.util.find_spec("mcp") is not None:
            kwargs["mcp_server"] = True
        else:
            log.warning("COSTA_MCP=1 but the `mcp` package is not installed (pip install 'gradio[mcp]'); MCP is off")
    return kwargs


def build_ui(services: Services) -> gr.Blocks:
    """Build the page around one shared `Services` (no state at module level)."""
    ws = Workspace(services)
    atexit.register(ws.close)
    settings = services.settings
    readiness = services.readiness()
    ready_count = sum(1 for why in readiness.values() if why is None)
    configured = ws.uses_llm()
    llm = llm_line(settings.openai_base_url, settings.llm_model, configured)
    on_gpu = gpu_present()

    ui_errors = short_errors(toast=True)

    def owner_of(request: gr.Request | None) -> str | None:
        return getattr(request, "username", None) if settings.auth and request is not None else None

    with gr.Blocks(title="costa", analytics_enabled=False, delete_cache=(900, 3600)) as demo:
        browser = gr.BrowserState({}, storage_key="costa-session", secret=_browser_secret(settings.home))
        ui = gr.State(None)
        gr.Markdown(
            "# costa · cost-aware image editing\nPlan → cheapest *good* tool path (A\\*) → every step checked. "
            "Watch the plan, the search and the costs live; undo, branch and download anything."
        )
        status = gr.Markdown(elem_id="status")
        with gr.Tabs():
            with gr.Tab("Edit", id="edit"):
                with gr.Row(equal_height=False):
                    with gr.Column(scale=5, min_width=340):
                        image = gr.Image(
                            label="Current image — upload one, then click on it to point at a target",
                            type="numpy",
                            image_mode="RGB",
                            sources=["upload", "clipboard"],
                            format="png",
                            height=360,
                            elem_id="current-image",
                        )
                        with gr.Row():
                            points = gr.Markdown(points_text([]), elem_id="points")
                            clear_points = gr.Button("Clear points", size="sm", scale=0, min_width=110)
                        box = gr.Textbox(
                            label="Target box x,y,w,h (optional)", placeholder="e.g. 40,60,200,120", max_lines=1
                        )
                        with gr.Accordion(
                            "🖌 Brush a mask — paint exactly what to edit", open=False, elem_id="brush-panel"
                        ) as brush_panel:
                            brush_editor = gr.ImageEditor(
                                label="Paint over the target, then press Use brush mask",
                                type="numpy",
                                image_mode="RGBA",
                                sources=[],
                                transforms=[],
                                layers=False,
                                brush=gr.Brush(colors=["#ff008c"], color_mode="fixed"),
                                eraser=gr.Eraser(),
                                format="png",
                                height=360,
                                elem_id="brush-editor",
                            )
                            with gr.Row():
                                use_brush = gr.Button("Use brush mask", size="sm", elem_id="use-brush")
                                clear_brush = gr.Button("Clear brush", size="sm", elem_id="clear-brush")
                        examples = gr.Dataset(
                            label="Examples — one click loads image and instruction",
                            components=["image", "textbox", "textbox"],
                            headers=["image", "instruction", "box"],
                            samples=[[str(ASSETS / f), text, b] for f, text, b in EXAMPLES if (ASSETS / f).exists()],
                            type="index",
                            elem_id="examples",
                        )
                    with gr.Column(scale=6, min_width=420):
                        chat = gr.Chatbot(
                            label="Chat",
                            height=470,
                            elem_id="chat",
                            buttons=["copy_all"],
                            feedback_options=None,
                            placeholder="Upload an image (or pick an example), type an instruction, press Enter.",
                        )
                        with gr.Row():
                            instruction = gr.Textbox(
                                show_label=False,
                                placeholder=f"What should change? e.g. {EXAMPLE_TEXT} — Enter sends",
                                max_lines=3,
                                scale=6,
                                elem_id="instruction",
                            )
                            send = gr.Button("Send", variant="primary", scale=1, min_width=80, elem_id="send")
                            stop = gr.Button("Stop", variant="stop", scale=1, min_width=80, elem_id="stop")
                        target_row, edit_region, let_me_point, do_rest = TV.action_row()  # unverified targets
                        with gr.Row():
                            alpha = gr.Slider(
                                0.0, 2.0, value=settings.alpha, step=0.1, label="α: 0 = best quality … 2 = fastest"
                            )
                            threshold = gr.Slider(
                                0.0, 1.0, value=settings.threshold, step=0.05, label="Quality threshold per step"
                            )
                        mode = gr.Radio(
                            [(label, key) for key, label in MODES.items()],
                            value="lazy",
                            label="Search mode",
                            info="FaSTA* fast–slow runs a learned subroutine first; the chat says which rule served "
                            "each subtask, or why the local A* did.",
                        )
                        reflection = build_reflection_panel(settings.reflect)
                        prediction = gr.Markdown(R.prediction_markdown(settings.alpha, []), elem_id="prediction")
                gr.Markdown("### Live view: plan and tool search")
                with gr.Row(equal_height=False):
                    with gr.Column(scale=4):
                        tree = gr.Markdown(R.tree_markdown(None), elem_id="tree", label="Subtask tree")
                    with gr.Column(scale=7):
                        graph = gr.Markdown(R.graph_markdown(None), elem_id="toolgraph", label="Tool subgraph")
                with gr.Row(equal_height=False):
                    with gr.Column(scale=5):
                        slider = gr.ImageSlider(label="Before / after", type="numpy", format="png", elem_id="slider")
                        with gr.Row():
                            undo = gr.Button("↩ Undo", elem_id="undo")
                            redo = gr.Button("↪ Redo", elem_id="redo")
                            export = gr.Button("⬇ Download image + bundle", elem_id="export")
                        downloads = gr.File(label="Downloads", file_count="multiple", interactive=False, visible=False)
                    with gr.Column(scale=6):
                        gr.Markdown("### Cost ledger")
                        ledger = gr.Markdown(R.ledger_markdown(None), elem_id="ledger")
            with gr.Tab("History", id="history"):
                gallery = gr.Gallery(
                    label="Versions — click one to compare it with its parent or to branch from it",
                    columns=8,
                    height=240,
                    fit_columns=False,
                    object_fit="contain",
                    allow_preview=False,
                    elem_id="gallery",
                )
                with gr.Row(equal_height=False):
                    with gr.Column(scale=5):
                        compare = gr.ImageSlider(label="Selected version vs its parent", type="numpy", format="png")
                        selected_md = gr.Markdown("_Select a version above._")
                        with gr.Row():
                            branch = gr.Button("⎇ Branch from selected version", elem_id="branch")
                            new_session = gr.Button("New session")
                        sessions = gr.Dropdown(label="Your sessions", choices=[], interactive=True)
                    with gr.Column(scale=6):
                        versions_md = gr.Markdown(R.versions_markdown([], None), elem_id="versions")
            from ui.evaluator import build_evaluator

            evaluation = build_evaluator(ws, ui, owner_of, ui_errors)
            with gr.Tab("API", id="api"):
                gr.Markdown(API_HELP)

        from ui.api import add_api

        add_api(ws, owner_of, short_errors)

        # ------------------------------------------------------------------------------------------ helpers

        def region_of(state: UiState, img: np.ndarray | None, box_text: str = "") -> tuple[Any, str]:
            from costa.pointing import region_from_pointing

            if img is None or not (state.clicks or (box_text or "").strip() or state.brush is not None):
                return None, ""
            try:
                return region_from_pointing(img, state.clicks, box_text or "", state.brush), ""
            except InputError as e:
                return None, str(e)

        def head_image(state: UiState) -> np.ndarray | None:
            v, img = ws.head(state.session_id, state.owner)
            state.head = (v.id, img) if v is not None and img is not None else None
            return img

        def snapshot(state: UiState) -> dict[Any, Any]:
            """Everything that shows the session's stored state."""
            sid, owner = state.session_id, state.owner
            img = head_image(state)
            region, note = region_of(state, img, state.box)
            hist = ws.history(sid, owner)
            versions = ws.store.versions(sid)[-60:]
            state.gallery_ids = [v.id for v in versions]
            thumbs = [
                (_thumb(ws, v.id, v.file), f"v{v.id}{' ◀ current' if v.id == hist['head'] else ''} · {v.label}")
                for v in versions
            ]
            totals = R.session_totals(ws.session_totals(sid))
            return {
                **brush_sync(state),
                image: annotate(TV.shown_image(state, img), region) if img is not None else None,
                target_row: TV.row_update(state),
                points: points_text(state.clicks, note, brush_px(state)),
                slider: ws.before_after(sid, owner),
                chat: state.past[-MAX_PAST_MESSAGES:],
                tree: R.tree_markdown(state.last_view),
                graph: R.graph_markdown(state.last_view),
                ledger: R.ledger_markdown(state.last_view, totals),
                gallery: thumbs,
                versions_md: R.versions_markdown(versions, hist["head"], state.selected),
                status: status_line(on_gpu, llm, ready_count, len(readiness), sid, owner),
                undo: gr.update(interactive=hist["can_undo"]),
                redo: gr.update(interactive=hist["can_redo"]),
                sessions: gr.update(choices=_session_choices(ws, state), value=sid),
                **evaluation.refresh(state),
            }

        def brush_px(state: UiState) -> int:
            return state.brush.area if state.brush is not None else 0

        def editor_value(img: np.ndarray | None) -> dict[str, Any] | None:
            return {"background": img, "layers": [], "composite": img} if img is not None else None

        def brush_sync(state: UiState) -> dict[Any, Any]:
            """Show the current image in the open brush editor when it changed (strokes on the old one are dropped)."""
            shown = state.head[0] if state.head else None
            if not state.brush_open or shown == state.brush_version:
                return {}
            state.brush_version = shown
            return {brush_editor: editor_value(state.head[1] if state.head else None)}

        def predict(state: UiState, text: str, a: float, box_text: str, show_graph: bool = True) -> dict[Any, Any]:
            """The α readout (and, when idle, the plan tree and predicted path) for what is typed now."""
            text = (text or "").strip()
            if state is None or not text:
                return {prediction: R.prediction_markdown(a, [])}
            img = state.head[1] if state.head else head_image(state)
            if img is None:
                return {prediction: "_Upload an image to see the predicted cost and quality._"}
            planned = state.plans.get(text)
            if planned is None:
                gen = ws.plan(text, img, [])
                while True:
                    try:
                        next(gen)
                    except StopIteration as stop_:
                        planned = stop_.value
                        break
                state.plans = {**dict(list(state.plans.items())[-15:]), text: planned}
            if planned.plan is None:
                why = [getattr(e, "message", "") or getattr(e, "question", "") for e in planned.events]
                msg = "; ".join(w for w in why if w) or "no edit recognised"
                return {prediction: f"_Nothing to run for this instruction: {msg}_"}
            region, note = region_of(state, img, box_text)
            if note:
                return {prediction: f"_{note}_"}
            from costa.agent import UserRegion

            region = region or UserRegion()
            alphas = sorted({*ALPHA_GRID, round(float(a), 2)})
            preds = ws.predict(planned.plan, region, alphas)
            layout, pointing, unavailable = ws.layout(planned.plan, region)
            view = R.TurnView(text, ws.names, reads=ws.reads, layout=layout, status="preview")
            view.plan, view.needs_pointing, view.unavailable = planned.plan, pointing, unavailable
            view.llm = [e for e in planned.events if isinstance(e, LlmCall)]
            note_md = ""
            if pointing:
                note_md = "\n\n📍 " + R.pointing_hint(view, sorted(pointing)[0])
            current = [p for p in preds if abs(p[0] - round(float(a), 2)) < 1e-9]
            view.predicted = R.path_keys(current[0][1]) if current else []
            n_vlm = vlm_expert_count(settings) if settings.reflect else 0
            reflect_md = cost_note(preds, round(float(a), 2), n_vlm, settings.reflect)
            out: dict[Any, Any] = {prediction: R.prediction_markdown(round(float(a), 2), preds) + reflect_md + note_md}
            if show_graph and not ws.busy(state.session_id):
                out[tree] = R.tree_markdown(view)
                out[graph] = R.graph_markdown(view)
            return out

        # ----------------------------------------------------------------------------------------- handlers

        @ui_errors
        def on_load(stored: dict[str, Any] | None, request: gr.Request) -> dict[Any, Any]:
            owner = owner_of(request)
            stored = stored if isinstance(stored, dict) else {}
            session = ws.open_session(stored.get("current"), owner)
            state = UiState(session_id=session.id, owner=owner)
            state.known = [session.id, *[k for k in stored.get("known", []) if isinstance(k, str) and k != session.id]]
            state.known = state.known[:10]
            views = ws.turn_views(session.id, owner)
            state.past = [m for v in views for m in R.chat_messages(v)]
            state.last_view = views[-1] if views else None
            ws.bind(getattr(request, "session_hash", None), session.id)
            return {browser: {"current": session.id, "known": state.known}, ui: state, **snapshot(state)}

        def on_unload(request: gr.Request) -> None:
            ws.unbind(getattr(request, "session_hash", None))

        @ui_errors
        def on_upload(state: UiState, payload: Any, text: str, a: float, box_text: str) -> dict[Any, Any]:
            path = payload.get("path") if isinstance(payload, dict) else getattr(payload, "path", None)
            if not path:
                return snapshot(state)
            name = (payload.get("orig_name") if isinstance(payload, dict) else None) or Path(path).name
            try:
                _, notes = ws.upload(state.session_id, state.owner, path, name)
            except InputError as e:
                gr.Warning(f"Upload refused: {e}. Your previous image is kept.")
                return snapshot(state)
            for note in notes:
                gr.Info(note)
            state.clear_pointing()
            state.selected = None
            return snapshot(state)  # the prediction follows (.then) with the instruction as it is by then

        @ui_errors
        def on_example(state: UiState, index: int, a: float) -> dict[Any, Any]:
            available = [e for e in EXAMPLES if (ASSETS / e[0]).exists()]
            if not isinstance(index, int) or not 0 <= index < len(available):
                raise InputError("that example is not available")
            file, text, box_text = available[index]
            ws.upload(state.session_id, state.owner, ASSETS / file, file)
            state.clear_pointing()
            state.selected, state.box = None, box_text
            return {**snapshot(state), instruction: text, box: box_text, **predict(state, text, a, box_text)}

        @ui_errors
        def on_click(state: UiState, text: str, a: float, box_text: str, evt: gr.SelectData) -> dict[Any, Any]:
            img = state.head[1] if state.head else head_image(state)
            if img is None:
                raise InputError("upload an image first, then click on it")
            x, y = (round(v) for v in evt.index[:2])
            state.clicks = [*state.clicks, (x, y)][-MAX_CLICKS:]
            state.box = box_text or ""
            region, note = region_of(state, img, state.box)
            if note:
                state.clicks = state.clicks[:-1]
                region, _ = region_of(state, img, state.box)
            shown = annotate(img, region) if region is not None else img
            return {
                image: shown,
                points: points_text(state.clicks, note, brush_px(state)),
                **predict(state, text, a, box_text),
            }

        @ui_errors
        def on_clear_points(state: UiState, text: str, a: float, box_text: str) -> dict[Any, Any]:
            state.clicks, state.box = [], box_text or ""
            img = state.head[1] if state.head else head_image(state)
            region, note = region_of(state, img, state.box)
            shown = annotate(img, region) if img is not None and region is not None else img
            return {image: shown, points: points_text([], note, brush_px(state)), **predict(state, text, a, box_text)}

        @ui_errors
        def on_predict(state: UiState, text: str, a: float, box_text: str) -> dict[Any, Any]:
            return predict(state, text, a, box_text)

        @ui_errors
        def on_box(state: UiState, text: str, a: float, box_text: str) -> dict[Any, Any]:
            state.box = box_text or ""
            img = state.head[1] if state.head else head_image(state)
            region, note = region_of(state, img, state.box)
            shown = annotate(img, region) if img is not None and region is not None else img
            return {
                image: shown,
                points: points_text(state.clicks, note, brush_px(state)),
                **predict(state, text, a, box_text),
            }

        @ui_errors
        def on_brush_open(state: UiState) -> dict[Any, Any]:
            state.brush_open = True
            if state.head is None:
                head_image(state)
            state.brush_version = None  # load the current image even if an older one is still shown
            return brush_sync(state)

        def on_brush_close(state: UiState) -> None:
            if state is not None:
                state.brush_open = False

        @ui_errors
        def on_use_brush(state: UiState, value: Any, text: str, a: float, box_text: str) -> dict[Any, Any]:
            from costa.pointing import brush_mask

            img = state.head[1] if state.head else head_image(state)
            if img is None:
                raise InputError("upload an image first, then paint on it")
            layers = value.get("layers") if isinstance(value, dict) else None
            if not layers:
                raise InputError("nothing painted yet: paint over the target, then press Use brush mask")
            state.brush = brush_mask(list(layers), img.shape[1], img.shape[0])
            state.box = box_text or ""
            region, note = region_of(state, img, state.box)
            gr.Info(f"Brush mask set: {state.brush.area:,} px. The next edit uses it.")
            shown = annotate(img, region) if region is not None else img
            return {
                image: shown,
                points: points_text(state.clicks, note, brush_px(state)),
                **predict(state, text, a, box_text),
            }

        @ui_errors
        def on_clear_brush(state: UiState, text: str, a: float, box_text: str) -> dict[Any, Any]:
            state.brush, state.box = None, box_text or ""
            img = state.head[1] if state.head else head_image(state)
            region, note = region_of(state, img, state.box)
            shown = annotate(img, region) if img is not None and region is not None else img
            out = {
                image: shown,
                points: points_text(state.clicks, note),
                **predict(state, text, a, box_text),
            }
            if state.brush_open:
                out[brush_editor] = editor_value(img)
            return out

        def guard(state: UiState, text: str) -> None:
            if state is None:
                raise gr.Error("The page is still loading: try again in a moment.")
            if ws.busy(state.session_id):
                raise gr.Error(
                    "A turn is still running: wait for it to finish or press Stop. Your instruction is kept."
                )
            if not (text or "").strip():
                raise gr.Error(f"Type what to change, e.g. {EXAMPLE_TEXT}")
            if state.head is None and head_image(state) is None:
                raise gr.Error("Upload an image first (or click an example).")

        @ui_errors
        def on_send(state: UiState, text: str, a: float, th: float, box_text: str, m: str, r: bool = True) -> Any:
            text = (text or "").strip()
            totals = R.session_totals(ws.session_totals(state.session_id))
            run = ws.run(
                state.session_id,
                state.owner,
                text,
                a,
                th,
                state.clicks,
                box_text,
                m,
                state.plans.get(text),
                brush=state.brush,
                reflect=bool(r),
            )
            first = True
            view = None
            seen: list[Any] = []
            for view, ev in run:
                seen.append(ev)
                if ev is not None and ev.kind == "reflection_kept":
                    yield {reflection.markdown: panel_update(seen, bool(r))}
                if not first and not is_tool_event(ev):
                    continue
                if ev is None and view.status not in ("planning", "searching"):
                    continue  # the turn's end is shown once, together with the new version (below)
                upd = {
                    chat: [*state.past[-MAX_PAST_MESSAGES:], *R.chat_messages(view)],
                    tree: R.tree_markdown(view),
                    graph: R.graph_markdown(view),
                    ledger: R.ledger_markdown(view, totals),
                }
                if first:
                    upd[instruction] = ""
                    first = False
                yield upd
            if view is None:
                return
            state.past = [*state.past, *R.chat_messages(view)][-MAX_PAST_MESSAGES:]
            state.last_view = view
            if view.status in ("done", "partial"):
                state.clear_pointing()
                state.box = ""
            state.plans = {}
            done = snapshot(state)  # the prediction follows (.then) for whatever is typed by now
            done[reflection.markdown] = panel_update(seen, bool(r))
            if not state.box:
                done[box] = ""
            yield done

        def on_stop(state: UiState) -> None:
            try:
                stopping = state is not None and ws.stop(state.session_id, state.owner)
            except InputError as e:
                raise gr.Error(str(e)) from e
            gr.Info("Stopping after the current tool call…" if stopping else "Nothing is running.")

        def history_action(action: str) -> Callable[..., dict[Any, Any]]:
            @ui_errors
            def handler(state: UiState) -> dict[Any, Any]:
                if action == "undo":
                    v = ws.undo(state.session_id, state.owner)
                    note = f"↩️ Undone — back to **v{v.id}** ({v.label}). Redo returns."
                elif action == "redo":
                    v = ws.redo(state.session_id, state.owner)
                    note = f"↪️ Redone — now at **v{v.id}** ({v.label})."
                else:
                    if state.selected is None:
                        raise InputError("select a version in the gallery first")
                    v = ws.branch(state.session_id, state.owner, state.selected)
                    note = (
                        f"⎇ Now at **v{v.id}** ({v.label}). The next edit starts a new branch from here; "
                        "the other future is kept in History."
                    )
                state.past = [*state.past, {"role": "assistant", "content": note}]
                state.clear_pointing()
                return snapshot(state)

            handler.__name__ = f"on_{action}"
            return handler

        @ui_errors
        def on_select_version(state: UiState, evt: gr.SelectData) -> dict[Any, Any]:
            idx = evt.index if isinstance(evt.index, int) else evt.index[0]
            if not 0 <= idx < len(state.gallery_ids):
                raise InputError("that version is no longer listed: refresh the page")
            vid = state.gallery_ids[idx]
            state.selected = vid
            v = ws.store.version(state.session_id, vid)
            img = ws.store.load_image(v)
            before = ws.store.load_image(ws.store.version(state.session_id, v.parent_id)) if v.parent_id else img
            if before.shape != img.shape:
                before = img
            hist = ws.history(state.session_id, state.owner)
            return {
                compare: (before, img),
                selected_md: f"**v{v.id}** · {v.kind} · {v.label} · {v.width}×{v.height} · sha256 `{v.sha256[:16]}…`",
                versions_md: R.versions_markdown(ws.store.versions(state.session_id)[-60:], hist["head"], vid),
            }

        @ui_errors
        def on_export(state: UiState) -> dict[Any, Any]:
            image_path, bundle = ws.export(state.session_id, state.owner)
            files = [str(p) for p in (image_path, bundle) if p is not None]
            return {downloads: gr.update(value=files, visible=True)}

        @ui_errors
        def on_new_session(state: UiState) -> dict[Any, Any]:
            session = ws.store.create_session(state.owner)
            fresh = UiState(session_id=session.id, owner=state.owner, known=[session.id, *state.known][:10])
            fresh.brush_open = state.brush_open
            return {browser: {"current": session.id, "known": fresh.known}, ui: fresh, **snapshot(fresh)}

        @ui_errors
        def on_switch_session(state: UiState, sid: str) -> dict[Any, Any]:
            if not sid or sid == state.session_id:
                return {}
            session = ws.store.session(sid, state.owner)
            fresh = UiState(session_id=session.id, owner=state.owner, known=state.known)
            fresh.brush_open = state.brush_open
            views = ws.turn_views(session.id, state.owner)
            fresh.past = [m for v in views for m in R.chat_messages(v)]
            fresh.last_view = views[-1] if views else None
            return {browser: {"current": session.id, "known": fresh.known}, ui: fresh, **snapshot(fresh)}

        # ------------------------------------------------------------------------------------------- wiring

        everything = [
            reflection.markdown,
            browser,
            ui,
            image,
            target_row,
            points,
            slider,
            chat,
            tree,
            graph,
            ledger,
            gallery,
            versions_md,
            status,
            undo,
            redo,
            sessions,
            instruction,
            box,
            prediction,
            compare,
            selected_md,
            downloads,
            brush_editor,
            *evaluation.outputs,
        ]
        private: dict[str, Any] = {"api_visibility": "private"}
        demo.load(on_load, [browser], everything, **private)
        demo.unload(on_unload)
        image.upload(on_upload, [ui, image, instruction, alpha, box], everything, preprocess=False, **private).then(
            on_predict, [ui, instruction, alpha, box], everything, show_progress="hidden", **private
        )
        image.select(on_click, [ui, instruction, alpha, box], everything, show_progress="hidden", **private)
        clear_points.click(on_clear_points, [ui, instruction, alpha, box], everything, **private)
        brush_panel.expand(on_brush_open, [ui], everything, **private)
        brush_panel.collapse(on_brush_close, [ui], None, queue=False, **private)
        use_brush.click(on_use_brush, [ui, brush_editor, instruction, alpha, box], everything, **private)
        clear_brush.click(on_clear_brush, [ui, instruction, alpha, box], everything, **private)
        examples.click(on_example, [ui, examples, alpha], everything, **private)
        # the rule planner is instant, so predictions follow every keystroke; an LLM planner is asked once the user
        # leaves the box (its plan is cached per instruction, so moving α never asks it again)
        typed = instruction.blur if configured else instruction.change
        for trigger in (typed, alpha.change):
            trigger(
                on_predict,
                [ui, instruction, alpha, box],
                everything,
                trigger_mode="always_last",
                show_progress="hidden",
                **private,
            )
        box.blur(on_box, [ui, instruction, alpha, box], everything, show_progress="hidden", **private)
        send_inputs = [ui, instruction, alpha, threshold, box, mode, reflection.switch]
        for trigger in (send.click, instruction.submit):
            trigger(guard, [ui, instruction], None, queue=False, trigger_mode="multiple", **private).success(
                on_send,
                send_inputs,
                everything,
                concurrency_id="gpu_tools",
                concurrency_limit=settings.concurrency,
                show_progress="hidden",
                **private,
            ).then(on_predict, [ui, instruction, alpha, box], everything, show_progress="hidden", **private)
        stop.click(on_stop, [ui], None, queue=False, **private)
        for button, prepare in ((edit_region, TV.on_edit_this_region), (do_rest, TV.on_do_the_rest)):
            button.click(prepare, [ui], [instruction], **private).then(  # the instruction is kept and run again
                on_send, send_inputs, everything, concurrency_id="gpu_tools", show_progress="hidden", **private
            )
        let_me_point.click(TV.on_let_me_point, [ui], [instruction], **private).then(
            snapshot, [ui], everything, **private
        )
        undo.click(history_action("undo"), [ui], everything, **private)
        redo.click(history_action("redo"), [ui], everything, **private)
        branch.click(history_action("branch"), [ui], everything, **private)
        gallery.select(on_select_version, [ui], everything, **private)
        export.click(on_export, [ui], everything, **private)
        new_session.click(on_new_session, [ui], everything, **private)
        sessions.input(on_switch_session, [ui, sessions], everything, **private)
        evaluation.wire(everything)
    return demo


def _browser_secret(home: Path) -> str:
    """A secret kept in COSTA_HOME so the browser's stored session id stays readable across app restarts."""
    import secrets

    home.mkdir(parents=True, exist_ok=True)
    p = home / "browser_secret"
    if not p.exists():
        p.write_text(secrets.token_urlsafe(24), encoding="utf-8")
        p.chmod(0o600)
    return p.read_text(encoding="utf-8").strip()


def _thumb(ws: Workspace, vid: int, file: str) -> np.ndarray:
    return ws.thumbnail(vid, lambda: thumbnail(file))


def _session_choices(ws: Workspace, state: UiState) -> list[tuple[str, str]]:
    ids = list(state.known)
    if state.owner:
        ids += [s.id for s in ws.store.sessions(state.owner)]
    out: list[tuple[str, str]] = []
    for sid in dict.fromkeys(ids):
        try:
            s = ws.store.session(sid, state.owner)
        except InputError:
            continue
        n = len(ws.store.turns(s.id))
        out.append((f"{s.id[:8]} · {n} turn(s){' (this one)' if s.id == state.session_id else ''}", s.id))
    return out


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
c.predict(sid, report["turn_id"], "s1", 1.0, "looks right", "alice", api_name="/score")
image_file, bundle_zip = c.predict(sid, api_name="/export")
```

`box` is "x,y,w,h" and `clicks` "x,y;x,y" in pixels; `brush` is a mask image of the image's size (white, or opaque
on a transparent layer, = region); `/edit` streams its report (plan, tool calls, costs, log).

| endpoint | inputs | returns |
|---|---|---|
| `/new_session` | — | a session id (keep it: it is the key to your history) |
| `/edit` | session_id, image (None: current), instruction, alpha, threshold, box, clicks, brush | image, turn report |
| `/history` | session_id | versions (with SHA-256) and turns |
| `/undo`, `/redo` | session_id | current image, history |
| `/branch` | session_id, version_id | current image, history |
| `/score` | session_id, turn_id, subtask_id, score (0, 0.1 … 0.9, 1), comment, evaluator | accuracies |
| `/export` | session_id | current image (PNG), reproducibility bundle (zip) |
| `/scores_csv` | session_id | evaluator scores (CSV) |
| `/stop` | session_id | whether a running turn was asked to stop |
"""
