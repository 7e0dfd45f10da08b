"""What a page reload (or an example click) brings back: the edit settings, and the chat as the session's store has it.

**Edit settings** (α, the quality threshold, the search mode, the reflection switch) are the person's preferences at
this browser, not a property of one session: an example click or a new photo starts a new session and must keep
them, and two sessions in one tab share them. So they live in the page's `gr.BrowserState` next to the sealed
session token (`ui.app`), kept in the tab's `UiState.prefs` and written back whenever one changes. They are not
secret and are not trusted: `checked_prefs` validates each stored value as a turn would (`TurnOptions.validate`)
and leaves out any it refuses, so a bad stored value is ignored and the page's default shows, never a crash.

**The chat** is rebuilt from the store (`past_chat`): every turn as it was drawn live, a decided proposal's verdict
under its turn, a turn stopped because the page that ran it went away said as such (`costa.session.run`). A turn
still running when the page loads (another tab's, or one a reload is stopping: `SessionCore.left`) is shown as
running, and a `gr.Timer` redraws the page from the store once it has ended, so no turn is left looking 'running'.
"""

from __future__ import annotations

import logging
from typing import Any

import gradio as gr

from costa.errors import InputError
from costa.session import TurnOptions
from costa.session.view import TurnView
from ui import proposal_view as PV
from ui.render import chat_messages
from ui.state import MAX_PAST_MESSAGES, Page, UiState, page_errors

log = logging.getLogger(__name__)

#: The edit settings kept in the browser, and the `TurnOptions.validate` argument each is checked as.
PREFS = ("alpha", "threshold", "mode", "reflect")
#: Seconds between looks at a turn that was running when the page loaded.
POLL_SECONDS = 2.0


def checked_prefs(settings: Any, stored: Any) -> dict[str, Any]:
    """The stored edit settings that a turn would accept, each on its own; anything else is left out.

    >>> from pathlib import Path
    >>> from costa.config import Settings
    >>> settings = Settings(home=Path("unused"))
    >>> checked_prefs(settings, {"alpha": 0.3, "mode": "fast-slow", "threshold": 7, "reflect": "yes"})
    {'alpha': 0.3, 'mode': 'fast-slow'}
    >>> checked_prefs(settings, "not a dict")
    {}
    """
    if not isinstance(stored, dict):
        return {}
    out: dict[str, Any] = {}
    for key in PREFS:
        value = stored.get(key)
        if value is None:
            continue
        if key == "reflect":
            if isinstance(value, bool):
                out[key] = value
            continue
        if key == "mode" and not isinstance(value, str):
            continue
        if key != "mode" and (isinstance(value, bool) or not isinstance(value, int | float)):
            continue
        try:
            opts = TurnOptions.validate(settings, **{key: value})
        except InputError:
            log.info("a stored edit setting was refused and ignored: %s", key)
            continue
        out[key] = getattr(opts, key)
    return out


def prefs_of(settings: Any, alpha: Any, threshold: Any, mode: Any, reflect: Any) -> dict[str, Any]:
    """The page's current edit settings, checked like stored ones (a value the page would refuse is not kept)."""
    return checked_prefs(settings, {"alpha": alpha, "threshold": threshold, "mode": mode, "reflect": reflect})


def past_chat(core: Any, state: UiState) -> tuple[list[dict[str, Any]], TurnView | None]:
    """The session's turns as chat messages (each decided proposal's verdict under its turn) and the last view."""
    views = core.versions.turn_views(state.session_id, state.owner)
    decided = core.proposals.decided(state.session_id, state.owner)
    messages: list[dict[str, Any]] = []
    for view in views:
        messages.extend(chat_messages(view))
        p = decided.get(view.turn_id) if view.turn_id is not None else None
        if p is not None:
            number = core.versions.version_number(state.session_id, p.result_version)
            messages.append(PV.verdict_message(p.status, number or p.result_version))
    return messages[-MAX_PAST_MESSAGES:], (views[-1] if views else None)


def restore(core: Any, state: UiState, stored: Any, tab: Any, timer: Any) -> dict[Any, Any]:
    """Fill a freshly loaded tab's state from the store and the browser; the settings' and the timer's updates."""
    state.prefs = checked_prefs(core.settings, stored)
    state.past, state.last_view = past_chat(core, state)
    defaults = {"alpha": core.settings.alpha, "threshold": core.settings.threshold, "mode": "lazy"}
    defaults["reflect"] = core.settings.reflect
    shown = {**defaults, **state.prefs}
    return {
        tab.alpha: shown["alpha"],
        tab.threshold: shown["threshold"],
        tab.mode: shown["mode"],
        tab.reflect: shown["reflect"],
        timer: gr.Timer(active=core.busy(state.session_id)),
    }


def wire_restore(tab: Any, page: Page, browser: Any, stored: Any, timer: Any, everything: list[Any]) -> None:
    """Keep the edit settings in the browser as they change; redraw once a turn running at load has ended."""
    core, ui = page.core, page.ui
    private: dict[str, Any] = {"api_visibility": "private", "show_progress": "hidden"}

    def on_prefs(state: UiState | None, a: Any, th: Any, m: Any, r: Any) -> Any:
        if state is None:  # the page is still loading: `restore` writes them
            return gr.skip()
        state.prefs = prefs_of(core.settings, a, th, m, r)
        return stored(state)

    settings_in = [ui, tab.alpha, tab.threshold, tab.mode, tab.reflect]
    for component in (tab.alpha, tab.threshold, tab.mode, tab.reflect):
        component.change(on_prefs, settings_in, [browser], trigger_mode="always_last", **private)

    @page_errors
    def on_tick(state: UiState | None) -> dict[Any, Any]:
        if state is None or core.busy(state.session_id):
            return {}
        state.past, state.last_view = past_chat(core, state)
        state.head = None
        return {**page.snapshot(state), timer: gr.Timer(active=False)}

    timer.tick(on_tick, [ui], [*everything, timer], **private)
