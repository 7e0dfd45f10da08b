"""The History tab: versions gallery, compare a version with its parent, branch, the version tree, sessions.

Undo and redo (buttons on the Edit tab) are wired here too: they are history actions. The version tree is a Mermaid
diagram, which cannot be drawn while its tab is hidden, so it is (re)drawn when the tab is selected.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr

from costa.errors import InputError
from ui import render as R
from ui.render import _CLASSES, esc
from ui.state import Page, UiState, page_errors

PRIVATE: dict[str, Any] = {"api_visibility": "private"}


@dataclass
class HistoryTab:
    """The History tab's components (see `build_history`)."""

    tab: gr.Tab
    gallery: gr.Gallery
    compare: gr.ImageSlider
    selected_md: gr.Markdown
    branch: gr.Button
    new_session: gr.Button
    sessions: gr.Dropdown
    versions_md: gr.Markdown

    @property
    def outputs(self) -> list[Any]:
        return [self.gallery, self.compare, self.selected_md, self.sessions, self.versions_md]


def build_history() -> HistoryTab:
    """Lay out the History tab (inside the page's Tabs)."""
    with gr.Tab("History", id="history") as tab:
        gallery = gr.Gallery(
            label="Versions — click one to compare it with its parent or to branch from it",
            columns=8, height=240, fit_columns=False, object_fit="contain", allow_preview=False, elem_id="gallery",
        )  # fmt: skip
        with gr.Row(equal_height=False):
            with gr.Column(scale=5):
                compare = gr.ImageSlider(
                    label="◀ Parent (left) · Selected version (right) ▶", type="numpy", format="png"
                )
                selected_md = gr.Markdown("_Select a version above._")
                with gr.Row():
                    branch = gr.Button("⎇ Branch from selected version", elem_id="branch")
                    new_session = gr.Button("New session", elem_id="new-session")
                sessions = gr.Dropdown(label="Your sessions", choices=[], interactive=True, elem_id="sessions")
            with gr.Column(scale=6):
                versions_md = gr.Markdown(versions_markdown([], None), elem_id="versions")
    return HistoryTab(tab, gallery, compare, selected_md, branch, new_session, sessions, versions_md)


def wire_history(
    tab: HistoryTab, page: Page, browser: Any, undo: gr.Button, redo: gr.Button, everything: list[Any]
) -> None:
    """Connect the History tab's events and the Edit tab's Undo / Redo."""
    core, ui = page.core, page.ui
    redraws = itertools.count()

    def tree(state: UiState) -> str:
        hist_head = core.session(state.session_id, state.owner).head
        rows = core.versions.version_rows(state.session_id)
        return versions_markdown(rows, hist_head, state.selected, next(redraws))

    def refresh(state: UiState) -> dict[Any, Any]:
        rows = core.versions.version_rows(state.session_id)[-60:]
        head = core.session(state.session_id, state.owner).head
        state.gallery_ids = [r.version.id for r in rows]
        thumbs = [
            (
                core.thumbnail(r.version),
                f"v{r.number}{' ◀ current' if r.version.id == head else ''} · {r.version.label}",
            )
            for r in rows
        ]
        out: dict[Any, Any] = {
            tab.gallery: thumbs,
            tab.sessions: gr.update(
                choices=core.choices(state.owner, state.known, state.session_id), value=state.session_id
            ),
        }  # the version tree is drawn when its tab is opened (Mermaid cannot draw into a hidden tab)
        if state.selected is None:
            out[tab.compare], out[tab.selected_md] = None, "_Select a version above._"
        return out

    page.add(tab.outputs, refresh)

    @page_errors
    def on_select_version(state: UiState, evt: gr.SelectData) -> dict[Any, Any]:
        idx = evt.index if isinstance(evt.index, int) else evt.index[0]
        if not 0 <= idx < len(state.gallery_ids):
            raise InputError("that version is no longer listed: refresh the page")
        state.selected = state.gallery_ids[idx]
        row, images = core.versions.compare(state.session_id, state.owner, state.selected)
        v = row.version
        return {
            tab.compare: images,
            tab.selected_md: f"**v{row.number}** · {v.kind} · {v.label} · {v.width}×{v.height} · "
            f"sha256 `{v.sha256[:16]}…`",
            tab.versions_md: tree(state),
        }

    def switch(state: UiState, session_id: str) -> dict[Any, Any]:
        fresh = state.fresh(session_id)
        views = core.versions.turn_views(session_id, state.owner)
        fresh.past = [m for v in views for m in R.chat_messages(v)]
        fresh.last_view = views[-1] if views else None
        return {ui: fresh, **page.snapshot(fresh)}

    @page_errors
    def on_new_session(state: UiState) -> dict[Any, Any]:
        return switch(state, core.new_session(state.owner).id)

    @page_errors
    def on_switch_session(state: UiState, sid: str) -> dict[Any, Any]:
        if not sid or sid == state.session_id:
            return {}
        return switch(state, core.session(sid, state.owner).id)

    @page_errors
    def on_tab_selected(state: UiState) -> dict[Any, Any]:
        return {tab.versions_md: tree(state)} if state is not None else {}

    undo.click(_version_action("undo", page, tab, tree), [ui], everything, **PRIVATE)
    redo.click(_version_action("redo", page, tab, tree), [ui], everything, **PRIVATE)
    tab.branch.click(_version_action("branch", page, tab, tree), [ui], everything, **PRIVATE)
    tab.gallery.select(on_select_version, [ui], everything, **PRIVATE)
    tab.new_session.click(on_new_session, [ui], everything, **PRIVATE)
    tab.sessions.input(on_switch_session, [ui, tab.sessions], everything, **PRIVATE)
    tab.tab.select(on_tab_selected, [ui], [tab.versions_md], show_progress="hidden", **PRIVATE)


def _version_action(
    name: str, page: Page, tab: HistoryTab, tree: Callable[[UiState], str]
) -> Callable[..., dict[Any, Any]]:
    """The handler of Undo, Redo or Branch (`name`): move the session's head, say so in the chat, redraw."""
    core = page.core

    @page_errors
    def handler(state: UiState) -> dict[Any, Any]:
        if name == "undo":
            v = core.versions.undo(state.session_id, state.owner)
            note = "↩️ Undone — back to **v{n}** ({label}). Redo returns."
        elif name == "redo":
            v = core.versions.redo(state.session_id, state.owner)
            note = "↪️ Redone — now at **v{n}** ({label})."
        else:
            if state.selected is None:
                raise InputError("select a version in the gallery first")
            v = core.versions.branch(state.session_id, state.owner, state.selected)
            note = (
                "⎇ Now at **v{n}** ({label}). The next edit starts a new branch from here; "
                "the other future is kept in History."
            )
        n = core.versions.version_number(state.session_id, v.id)
        state.past = [*state.past, {"role": "assistant", "content": note.format(n=n, label=v.label)}]
        state.clear_pointing()
        out = page.snapshot(state)
        if name == "branch":  # pressed on the History tab, which is open
            out[tab.versions_md] = tree(state)
        return out

    handler.__name__ = f"on_{name}"
    return handler


def versions_markdown(rows: Sequence[Any], head: int | None, selected: int | None = None, nonce: int = 0) -> str:
    """The session's version tree as a Mermaid flowchart (branches kept), the current version marked.

    `rows` are `costa.session.history.VersionRow`s: versions with their number within the session (what the user
    sees). Top-down, so a long history grows downwards at a readable size; `nonce` changes the text (not the
    drawing) so the page redraws a tree that was rendered while its tab was hidden.
    """
    if not rows:
        return "_No versions yet: upload an image._"
    shown = list(rows)[-40:]
    ids = {r.version.id for r in shown}
    lines = ["```mermaid", "flowchart TD", f"  %% {nonce}"]
    for r in shown:
        v = r.version
        cls = "chosen" if v.id == head else ("predicted" if v.id == selected else "executed")
        if v.kind == "subtask":
            cls = "idle" if v.id not in (head, selected) else cls
        mark = " ◀ current" if v.id == head else ""
        lines.append(f'  v{v.id}["v{r.number} · {esc(v.label, 36)}{mark}"]:::{cls}')
    for r in shown:
        v = r.version
        if v.parent_id in ids:
            lines.append(f"  v{v.parent_id} --> v{v.id}")
    lines += _CLASSES.splitlines()
    lines.append("```")
    return "\n".join(lines)
