"""The Edit tab's events: image and pointing, chat, instruction, α preview, live plan and search, before/after,
ledger (its layout: `ui.edit_layout`).

Every action goes through the session core (`costa.session`); this module only keeps the tab's `UiState` and renders
what the core returns. Pointing (clicks, clear, typed box, brush, clear brush) is one helper, `point`, with one small
event per control; the handlers are built by theme (`_edit_views`, `_pointing`, `_image_handlers`, `_send_handler`,
`_tab_handlers`) and `wire_edit` connects them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from costa.errors import InputError
from costa.pointing import brush_mask
from costa.session import MAX_CLICKS, Pointing, TurnOptions
from costa.session.preview import plan_cache_put
from costa.session.turns import region_warnings
from costa.session.view import is_tool_event
from costa.turn.records import UserRegion
from ui import progress as P
from ui import proposal_view as PV
from ui import render as R
from ui import targets_view as TV
from ui.edit_layout import EditTab
from ui.overlays import annotate, editor_value, pointed_region, points_text
from ui.reflection_panel import cost_note, panel_update, vlm_expert_count
from ui.state import ASSETS, EXAMPLES, MAX_PAST_MESSAGES, Page, UiState, page_errors

PRIVATE: dict[str, Any] = {"api_visibility": "private"}


@dataclass(frozen=True)
class EditViews:
    """What the Edit tab's handlers redraw with (see `_edit_views`)."""

    brush_sync: Callable[[UiState], dict[Any, Any]]
    diagrams: Callable[[UiState, Any], dict[Any, Any]]
    predict: Callable[[UiState, str, float, str], dict[Any, Any]]


def _edit_views(tab: EditTab, page: Page) -> EditViews:
    """The tab's redraws: the brush editor's image, the diagrams, the page refresh (registered), the α readout."""
    core, settings = page.core, page.core.settings

    def brush_sync(state: UiState) -> dict[Any, Any]:
        """Show the current image in the open brush editor when it changed (strokes on the old one are dropped)."""
        shown = state.head[0] if state.head else None
        if not state.brush_open or shown == state.brush_version:
            return {}
        state.brush_version = shown
        return {tab.brush_editor: editor_value(state.head[1] if state.head else None)}

    def diagrams(state: UiState, view: Any) -> dict[Any, Any]:
        """The subtask tree and tool subgraph, only where they changed: redrawing an unchanged Mermaid diagram races
        the drawing already under way in the browser."""
        out: dict[Any, Any] = {}
        for comp, text in ((tab.tree, R.tree_markdown(view)), (tab.graph, R.graph_markdown(view))):
            if state.drawn.get(comp.elem_id or "") != text:
                state.drawn[comp.elem_id or ""] = text
                out[comp] = text
        return out

    def refresh(state: UiState) -> dict[Any, Any]:
        sid, owner = state.session_id, state.owner
        img = page.reload_head(state)
        region, note = pointed_region(state, img, state.box)
        hist = core.versions.summary(sid, owner)
        totals = R.session_totals(core.versions.session_totals(sid))
        brush_px = state.brush.area if state.brush is not None else 0
        return {
            **brush_sync(state),
            tab.image: annotate(TV.shown_image(state, img), region) if img is not None else None,
            tab.target_row: TV.row_update(state),
            tab.points: points_text(state.clicks, note, brush_px),
            **PV.updates(core, state, tab.proposal_row, tab.proposal_note, tab.slider),  # and the slider
            **({tab.slider: (img, img)} if state.upload is not None and img is not None else {}),  # not yet kept
            tab.chat: state.past[-MAX_PAST_MESSAGES:],
            **diagrams(state, state.last_view),
            tab.ledger: R.ledger_markdown(state.last_view, totals),
            tab.undo: gr.update(interactive=hist["can_undo"]),
            tab.redo: gr.update(interactive=hist["can_redo"]),
            tab.downloads: gr.update(value=None, visible=False) if not state.exported else gr.skip(),
        }

    page.add(tab.outputs, refresh)

    def predict(state: UiState, text: str, a: float, box_text: str) -> dict[Any, Any]:
        """The α readout (and, when idle, the plan tree and predicted path) for what is typed now."""
        text = (text or "").strip()
        if state is None or not text:
            return {tab.prediction: R.prediction_markdown(a, [])}
        img = page.head_image(state)
        if img is None:
            return {tab.prediction: "_Upload an image to see the predicted cost and quality._"}
        planned = state.plans.get(text)
        if planned is None:
            planned, _ = core.previews.plan_only(state.session_id, text, img)
            state.plans = plan_cache_put(state.plans, text, planned)
        region, note = pointed_region(state, img, box_text)
        if note:
            return {tab.prediction: f"_{note}_"}
        pv = core.previews.preview(planned, text, a, region or UserRegion())
        if pv.view is None:
            return {tab.prediction: f"_Nothing to run for this instruction: {pv.nothing}_"}
        hint = "\n\n📍 " + R.pointing_hint(pv.view, pv.pointing[0]) if pv.pointing else ""
        n_vlm = vlm_expert_count(settings) if settings.reflect else 0
        reflect_md = cost_note(pv.predictions, pv.alpha, n_vlm, settings.reflect)
        out: dict[Any, Any] = {tab.prediction: R.prediction_markdown(pv.alpha, pv.predictions) + reflect_md + hint}
        if not core.busy(state.session_id):
            out.update(diagrams(state, pv.view))
        return out

    return EditViews(brush_sync, diagrams, predict)


def _pointing(tab: EditTab, page: Page, predict: Callable[..., dict[Any, Any]]) -> Callable[[str], Any]:
    """`point(kind)`: the handler of one pointing control (click, clear, box, brush, clear_brush)."""

    def point(kind: str) -> Any:
        """One handler per pointing control, all through this helper: update what is marked, redraw, re-predict."""

        @page_errors
        def handler(state: UiState, value: Any, text: str, a: float, box_text: str, evt: Any = None) -> Any:
            img = page.head_image(state)
            state.box = box_text or ""
            if kind == "click":
                if img is None:
                    raise InputError("upload an image first, then click on it")
                x, y = (round(v) for v in evt.index[:2])
                state.clicks = [*state.clicks, (x, y)][-MAX_CLICKS:]
            elif kind == "clear":
                state.clicks = []
            elif kind == "brush":
                layers = value.get("layers") if isinstance(value, dict) else None
                if img is None:
                    raise InputError("upload an image first, then paint on it")
                if not layers:
                    raise InputError("nothing painted yet: paint over the target, then press Use brush mask")
                state.brush = brush_mask(list(layers), img.shape[1], img.shape[0])
                gr.Info(f"Brush mask set: {state.brush.area:,} px. The next edit uses it.")
            elif kind == "clear_brush":
                state.brush = None
            region, note = pointed_region(state, img, state.box)
            if note and kind == "click":  # a refused click is dropped; the message says why
                state.clicks = state.clicks[:-1]
                region, _ = pointed_region(state, img, state.box)
            for warning in region_warnings(region) if region is not None else ():
                gr.Warning(warning)
            out = {
                tab.image: annotate(img, region) if img is not None and region is not None else img,
                tab.points: points_text(state.clicks, note, state.brush.area if state.brush is not None else 0),
                **predict(state, text, a, box_text),
            }
            if kind == "clear_brush" and state.brush_open:
                out[tab.brush_editor] = editor_value(img)
            return out

        handler.__name__ = f"on_{kind}"
        return handler

    return point


def _image_handlers(tab: EditTab, page: Page, predict: Callable[..., dict[Any, Any]]) -> tuple[Any, Any]:
    """The handlers of an upload and of an example: a new image (a new session when the current one has history)."""
    core, ui = page.core, page.ui

    def start_new_session_if_used(state: UiState) -> tuple[UiState, dict[Any, Any]]:
        """A new photo starts a new session when the current one already has history (and says so)."""
        if not core.used(state.session_id, state.owner):
            return state, {}
        fresh = state.fresh(core.new_session(state.owner).id)
        gr.Info("New photo, new session: the previous one stays under History → Your sessions.")
        return fresh, {ui: fresh}

    @page_errors
    def on_upload(state: UiState, payload: Any) -> dict[Any, Any]:
        path = payload.get("path") if isinstance(payload, dict) else getattr(payload, "path", None)
        if not path:
            return page.snapshot(state)
        name = (payload.get("orig_name") if isinstance(payload, dict) else None) or Path(path).name
        try:
            up = core.read_upload(path, name)
        except InputError as e:
            raise InputError(f"upload refused: {e}. Your previous image is kept") from e
        state, extra = start_new_session_if_used(state)
        state.hold_upload(up)  # stored only when a turn keeps it
        for note in up.notes:
            gr.Info(note)
        return {**page.snapshot(state), **extra}

    @page_errors
    def on_example(state: UiState, index: int, a: float) -> dict[Any, Any]:
        available = [e for e in EXAMPLES if (ASSETS / e[0]).exists()]
        if not isinstance(index, int) or not 0 <= index < len(available):
            raise InputError("that example is not available")
        file, text, box_text = available[index]
        up = core.read_upload(ASSETS / file, file)
        state, extra = start_new_session_if_used(state)
        state.hold_upload(up)
        state.box = box_text
        snap = page.snapshot(state)
        return {**snap, **extra, tab.instruction: text, tab.box: box_text, **predict(state, text, a, box_text)}

    return on_upload, on_example


def _send_handler(tab: EditTab, page: Page, views: EditViews) -> Callable[..., Any]:
    """The handler of Send: run the turn, streaming the chat, diagrams, ledger and progress, then the new state."""
    core, settings = page.core, page.core.settings
    brush_sync, diagrams = views.brush_sync, views.diagrams

    @page_errors
    def on_send(
        state: UiState, text: str, a: float, th: float, box_text: str, m: str, r: bool, request: gr.Request
    ) -> Any:
        if state is None:
            raise InputError("the page is still loading: try again in a moment")
        action, state.action = state.action, ""
        opts = TurnOptions.validate(settings, a, th, m, bool(r), action)
        req = core.prepare(
            state.session_id, state.owner, text, opts, Pointing(state.clicks, box_text or "", state.brush),
            upload=state.upload, cached=state.plans.get((text or "").strip()),
        )  # fmt: skip
        totals = R.session_totals(core.versions.session_totals(state.session_id))
        first, view = True, None
        seen: list[Any] = []
        tab_id = getattr(request, "session_hash", None)  # this tab: closing or reloading it stops the turn
        for what, item in page.carrying_upload(state, P.with_progress(lambda on_p: core.run(req, on_p, tab_id))):
            if what == "progress":  # a stepped tool's progress, while its call runs
                yield {tab.progress: P.bar_update(item)}
                continue
            view, ev = item
            seen.append(ev)
            if ev is not None and ev.kind == "reflection_kept":
                yield {tab.reflection: panel_update(seen, bool(r))}
            if not first and not is_tool_event(ev):
                continue
            if ev is None and view.status not in ("planning", "searching", "stopped"):
                continue  # the turn's end is shown once, together with the new version (below); Stop at once
            upd = {
                tab.chat: [*state.past[-MAX_PAST_MESSAGES:], *R.chat_messages(view)],
                **diagrams(state, view),
                tab.ledger: R.ledger_markdown(view, totals),
            }
            if first:
                upd[tab.instruction], first = "", False
            yield upd
        if view is None:
            return
        state.past = [*state.past, *R.chat_messages(view)][-MAX_PAST_MESSAGES:]
        state.last_view, state.plans = view, {}
        asked = R.points_hint(view)  # reflection asks the user to point: open the pointing tools
        done = page.snapshot(state)
        if view.status in ("done", "partial"):
            state.clear_pointing()
            state.box = ""
            done = {**page.snapshot(state), tab.box: ""}
        if asked is not None:
            state.brush_open, state.brush_version = True, None
            done.update(brush_sync(state))  # the opened editor shows the current image
            done[tab.brush_panel] = gr.update(open=True)
            done[tab.points] = asked
        if view.needs_pointing or view.status in ("failed", "stopped", "unverified"):
            done[tab.instruction] = req.instruction  # kept, so pointing and pressing Send again is enough
        done[tab.reflection] = panel_update(seen, bool(r))
        yield done

    return on_send


def _tab_handlers(tab: EditTab, page: Page, brush_sync: Callable[[UiState], dict[Any, Any]]) -> tuple[Any, ...]:
    """The handlers of Stop, Export, the brush panel opening and closing, and `decide(accept)` for a proposal."""
    core = page.core

    @page_errors
    def on_stop(state: UiState) -> None:
        stopping = state is not None and core.stop(state.session_id, state.owner)
        gr.Info("Stopping…" if stopping else "Nothing is running.")

    @page_errors
    def on_export(state: UiState) -> dict[Any, Any]:
        image_path, bundle = core.versions.export(state.session_id, state.owner)
        state.exported = True
        files = [str(p) for p in (image_path, bundle) if p is not None]
        return {tab.downloads: gr.update(value=files, visible=True)}

    @page_errors
    def on_brush_open(state: UiState) -> dict[Any, Any]:
        state.brush_open = True
        page.head_image(state)
        state.brush_version = None  # load the current image even if an older one is still shown
        return brush_sync(state)

    def on_brush_close(state: UiState) -> None:
        if state is not None:
            state.brush_open = False

    def decide(accept: bool) -> Any:
        @page_errors
        def on_decide(state: UiState) -> dict[Any, Any]:
            if accept:
                decided = core.proposals.accept(state.session_id, state.owner)
            else:
                decided = core.proposals.discard(state.session_id, state.owner)
            number = core.versions.version_number(state.session_id, decided.version.id if decided.version else None)
            state.past = [*state.past, PV.decided_message(decided, number)][-MAX_PAST_MESSAGES:]
            state.last_view, state.head = None, None
            if not accept:
                return page.snapshot(state)  # the pointing stays: the user may try again on it
            # Accepted: like a done turn, the pointing it used is spent (the memory knows the region now); a box left
            # in the field made every follow-up an edit of the box ("a bit more" recoloured the box again)
            state.clear_pointing()
            state.box = ""
            return {**page.snapshot(state), tab.box: ""}

        return on_decide

    return on_stop, on_export, on_brush_open, on_brush_close, decide


def wire_edit(tab: EditTab, page: Page, browser: Any, everything: list[Any]) -> None:
    """Connect the Edit tab's events (call inside the page's Blocks, after every tab is built)."""
    core, ui, settings = page.core, page.ui, page.core.settings
    views = _edit_views(tab, page)
    predict = views.predict
    point = _pointing(tab, page, predict)
    on_upload, on_example = _image_handlers(tab, page, predict)
    on_send = _send_handler(tab, page, views)
    on_stop, on_export, on_brush_open, on_brush_close, decide = _tab_handlers(tab, page, views.brush_sync)

    @page_errors
    def on_predict(state: UiState, text: str, a: float, box_text: str) -> dict[Any, Any]:
        return predict(state, text, a, box_text)

    predict_in = [ui, tab.instruction, tab.alpha, tab.box]
    quiet = {"show_progress": "hidden", **PRIVATE}
    tab.image.upload(on_upload, [ui, tab.image], everything, preprocess=False, **PRIVATE).then(
        on_predict, predict_in, everything, **quiet
    )
    none = gr.State(None)
    click = point("click")

    def on_click(state: UiState, text: str, a: float, box_text: str, evt: gr.SelectData) -> Any:
        return click(state, None, text, a, box_text, evt)

    tab.image.select(on_click, predict_in, everything, **quiet)
    tab.clear_points.click(point("clear"), [ui, none, *predict_in[1:]], everything, **PRIVATE)
    tab.box.blur(point("box"), [ui, none, *predict_in[1:]], everything, **quiet)
    tab.use_brush.click(point("brush"), [ui, tab.brush_editor, *predict_in[1:]], everything, **PRIVATE)
    tab.clear_brush.click(point("clear_brush"), [ui, none, *predict_in[1:]], everything, **PRIVATE)
    tab.brush_panel.expand(on_brush_open, [ui], everything, **PRIVATE)
    tab.brush_panel.collapse(on_brush_close, [ui], None, queue=False, **PRIVATE)
    tab.examples.click(on_example, [ui, tab.examples, tab.alpha], everything, **PRIVATE)
    # the rule planner is instant, so predictions follow every keystroke; an LLM planner is asked once the user
    # leaves the box (its plan is cached per instruction, so moving α never asks it again)
    typed = tab.instruction.blur if core.uses_llm() else tab.instruction.change
    for trigger in (typed, tab.alpha.change):
        trigger(on_predict, predict_in, everything, trigger_mode="always_last", **quiet)
    send_in = [ui, tab.instruction, tab.alpha, tab.threshold, tab.box, tab.mode, tab.reflect]
    gpu: dict[str, Any] = {"concurrency_id": "gpu_tools", "concurrency_limit": settings.concurrency}
    for trigger in (tab.send.click, tab.instruction.submit):
        trigger(on_send, send_in, everything, trigger_mode="multiple", **gpu, **quiet).then(
            on_predict, predict_in, everything, **quiet
        )
    actions = (
        (tab.edit_region, TV.on_edit_this_region, "edit_region"),
        (tab.do_rest, TV.on_do_the_rest, "rest"),
    )
    for button, prepare, name in actions:

        def on_action(state: UiState, prepare: Any = prepare, name: str = name) -> str:
            text = prepare(state)
            state.action = name if text else ""
            return text

        button.click(on_action, [ui], [tab.instruction], **PRIVATE).then(  # the instruction is kept and run again
            on_send, send_in, everything, **gpu, **quiet
        ).then(on_predict, predict_in, everything, **quiet)
    tab.let_me_point.click(TV.on_let_me_point, [ui], [tab.instruction], **PRIVATE).then(
        page.snapshot, [ui], everything, **PRIVATE
    )
    tab.stop.click(on_stop, [ui], None, concurrency_limit=None, **PRIVATE)  # queued (toasts), never waits
    tab.export.click(on_export, [ui], everything, **PRIVATE)

    tab.accept.click(decide(True), [ui], everything, **PRIVATE)
    tab.discard.click(decide(False), [ui], everything, **PRIVATE)

    refine_in = [ui, tab.alpha, tab.threshold, tab.box, tab.mode, tab.reflect]
    # "always_last": a click while the last Refine is still finishing (a refused one ends some 0.1–0.7 s after its
    # toast) runs once that ends, with the pointing shown then; the default "once" dropped it without a word
    tab.refine.click(
        PV.refine_handler(core, on_send), refine_in, everything, trigger_mode="always_last", **gpu, **quiet
    ).then(on_predict, predict_in, everything, **quiet)
