"""The costa page: one module per tab (`ui.edit`, `ui.history`, `ui.evaluator`, `ui.campaign`, the API tab in
`ui.api`) around one `costa.session.SessionCore`.

`build_ui(services)` makes the Blocks; `queue_kwargs` / `launch_kwargs` say how app.py should serve it. Nothing here
runs at import and there is no module-level state: the shared `Services` is passed in, the core is made inside
`build_ui`, and each browser tab has its own `UiState` in `gr.State`. The browser keeps a sealed token of its session
ids and the edit settings (`gr.BrowserState`), so a page refresh reopens the same history from the store with the
same α, threshold, search mode and reflection switch (`ui.restore`).
"""

from __future__ import annotations

import atexit
import logging
from typing import Any

import gradio as gr

from costa.services import Services
from costa.session import SessionCore
from costa.session.seal import Sealer
from ui.api import add_api, build_api_tab
from ui.campaign import HEAD as CAMPAIGN_HEAD
from ui.campaign import build_campaign, wire_campaign
from ui.diagrams import page_js
from ui.edit import wire_edit
from ui.edit_layout import build_edit
from ui.evaluator import build_evaluator
from ui.history import build_history, wire_history
from ui.models_panel import build_models
from ui.overlays import gpu_present, llm_line, status_line
from ui.restore import POLL_SECONDS, restore, wire_restore
from ui.state import ASSETS, Page, UiState, page_errors

log = logging.getLogger(__name__)

CSS = """
#status { font-size: 0.95em; }
#tree .mermaid, #toolgraph .mermaid { overflow-x: auto; }
#versions .mermaid { overflow: auto; max-height: 720px; }
#versions svg { min-width: 420px; font-size: 15px; }
#ledger table { font-size: 0.9em; }
#ledger th, #scores-table th { white-space: nowrap; }
#prediction table { font-size: 0.9em; }
"""
#: Stored in the browser in the open; what it protects is sealed with a server-side key (`costa.session.seal`).
BROWSER_STATE_KEY = "costa-browser-state-is-sealed-server-side"


def queue_kwargs(services: Services) -> dict[str, Any]:
    """How app.py should queue the page: light events in parallel, tool-running ones limited (see `build_ui`)."""
    return {"default_concurrency_limit": 8, "max_size": services.settings.queue_size}


def launch_kwargs(services: Services, core: SessionCore | None = None) -> dict[str, Any]:
    """How app.py should launch: auth, upload limit, allowed folders (assets, exports), CSS, MCP when asked and
    available, and (given the core) the guard that keeps exported files their owner's."""
    s = services.settings
    kwargs: dict[str, Any] = {
        "max_file_size": int(s.max_upload_mb * 1024 * 1024),
        "allowed_paths": [str(ASSETS)] + ([str(core.runtimes.root)] if core is not None else []),
        "css": CSS,
        "js": page_js(),  # Mermaid diagrams drawn without console errors (ui/diagrams.py)
        "head": CAMPAIGN_HEAD,  # the Campaign tab's score keys (ui/campaign.py)
        "show_error": False,
        "ssr_mode": False,
    }
    if core is not None:
        from starlette.middleware import Middleware

        from ui.guard import ExportGuard
        from ui.limits import RateGuard, StorageGuard

        guards = [
            Middleware(ExportGuard, core=core),
            Middleware(RateGuard, per_minute=s.rate_limit),
            Middleware(StorageGuard, home=s.home),
        ]
        kwargs["app_kwargs"] = {"middleware": guards}
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


def build_ui(services: Services, core: SessionCore | None = None) -> gr.Blocks:
    """Build the page around one shared `Services` (no state at module level)."""
    core = core or SessionCore(services)
    atexit.register(core.close)
    settings = services.settings
    readiness = services.readiness()
    ready_count = sum(1 for why in readiness.values() if why is None)
    llm = llm_line(settings.openai_base_url, settings.llm_model, core.uses_llm())
    on_gpu = gpu_present()
    sealer = Sealer.for_home(settings.home)

    def owner_of(request: gr.Request | None) -> str | None:
        return getattr(request, "username", None) if settings.auth and request is not None else None

    # Gradio's copies of uploads and downloads are deleted by age (not idleness: an upload may wait in the queue), at
    # most 15 minutes after they were made, or the session idle time when that is longer
    age = int(max(900, settings.tmp_idle_seconds))
    with gr.Blocks(title="costa", analytics_enabled=False, delete_cache=(min(300, age // 3), age)) as demo:
        browser = gr.BrowserState({}, storage_key="costa-session", secret=BROWSER_STATE_KEY)
        ui = gr.State(None)
        timer = gr.Timer(POLL_SECONDS, active=False)  # redraws once a turn running when the page loaded has ended
        page = Page(core, ui, owner_of)
        gr.Markdown(
            "# costa · cost-aware image editing\nPlan → cheapest *good* tool path (A\\*) → every step checked. "
            "Watch the plan, the search and the costs live; undo, branch and download anything."
        )
        status = gr.Markdown(elem_id="status")
        with gr.Tabs():
            edit = build_edit(settings)
            history = build_history()
            evaluation = build_evaluator()
            campaign = build_campaign()
            build_models(services)  # each neural model: present or missing, size, how to get it
            build_api_tab()
        add_api(core, owner_of)

        def stored(state: UiState) -> dict[str, Any]:
            return {"token": sealer.seal([state.session_id, *state.known]), "prefs": dict(state.prefs)}

        def refresh_status(state: UiState) -> dict[Any, Any]:
            return {
                status: status_line(on_gpu, llm, ready_count, len(readiness), state.session_id, state.owner),
                browser: stored(state),
            }

        page.add([status], refresh_status)
        wire_campaign(campaign, page)  # registers its refresher (campaign list, signed-in evaluator) first
        everything = [browser, ui, *page.outputs, *edit.outputs, *history.outputs, *evaluation.outputs]
        everything = list(dict.fromkeys(everything))

        @page_errors
        def on_load(value: dict[str, Any] | None, request: gr.Request) -> dict[Any, Any]:
            owner = owner_of(request)
            ids = sealer.unseal(value.get("token") if isinstance(value, dict) else None)
            session = core.open_session(ids[0] if ids else None, owner)
            state = UiState(session_id=session.id, owner=owner)
            state.known = list(dict.fromkeys([session.id, *ids]))[:10]
            settings_shown = restore(core, state, value.get("prefs") if isinstance(value, dict) else None, edit, timer)
            core.runtimes.bind(getattr(request, "session_hash", None), session.id)
            return {ui: state, **page.snapshot(state), **settings_shown}

        def on_unload(request: gr.Request) -> None:
            core.left(getattr(request, "session_hash", None))  # a turn this tab started is stopped, and says so

        wire_edit(edit, page, browser, everything)
        wire_history(history, page, browser, edit.undo, edit.redo, everything)
        evaluation.wire(page, everything)
        wire_restore(edit, page, browser, stored, timer, everything)
        restored = [edit.alpha, edit.threshold, edit.mode, edit.reflect, timer]
        demo.load(on_load, [browser], [*everything, *restored], api_visibility="private")
        demo.unload(on_unload)
    return demo
