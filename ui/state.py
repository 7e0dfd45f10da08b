"""What every tab shares: one browser tab's `UiState`, the `Page` context (core, per-tab refreshers) and how
mistakes become toasts.

User mistakes (`CostaError`) reach the page as an error toast with a short message and log one line; anything
unexpected is logged with its traceback and the user gets a generic message. Nothing here holds module-level state.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr
import numpy as np

from costa.errors import CostaError
from costa.session import PlanResult, SessionCore, TurnView, Upload
from costa.types import Mask

log = logging.getLogger("costa.ui")

ASSETS = Path(__file__).resolve().parents[1] / "assets"
EXAMPLE_TEXT = "replace the text 'SALE' with 'OPEN'"
#: One-click demos: (asset file, instruction, box x,y,w,h or "").
EXAMPLES = (
    ("sale_sign.png", "replace the text 'SALE' with 'OPEN'", ""),
    ("red_ball.png", "make the red ball blue", "300,130,160,160"),
    ("cafe_poster.png", "highlight the word 'FREE' and redact the phone number", ""),
)
#: Most chat messages from earlier turns kept on screen (all stay in the store and the bundle).
MAX_PAST_MESSAGES = 400
#: `UiState.head`'s version id while the image on screen is an upload no turn has kept yet.
PENDING_UPLOAD = -1


@dataclass
class UiState:
    """One browser tab: its session, what the user pointed at, planned instructions, and what is on screen."""

    session_id: str = ""
    owner: str | None = None
    known: list[str] = field(default_factory=list)
    clicks: list[tuple[int, int]] = field(default_factory=list)
    plans: dict[str, PlanResult] = field(default_factory=dict)
    past: list[dict[str, Any]] = field(default_factory=list)
    last_view: TurnView | None = None
    gallery_ids: list[int] = field(default_factory=list)
    selected: int | None = None
    head: tuple[int, np.ndarray] | None = None
    box: str = ""
    brush: Mask | None = None
    brush_open: bool = False
    brush_version: int | None = None  # the version whose image the brush editor shows
    exported: bool = False  # download links are on screen (cleared when the session changes)
    drawn: dict[str, str] = field(default_factory=dict)  # element id -> the diagram Markdown last sent to it
    action: str = ""  # the follow-up on an unverified target that the next Send runs ("edit_region", "rest")
    prefs: dict[str, Any] = field(default_factory=dict)  # the edit settings kept in the browser (ui.restore)
    #: the photo chosen (or example clicked) that no turn has kept yet: shown, pointed at and predicted on, sent
    #: with the next turn and stored only if that turn keeps a version or needs the image next (issue 21)
    upload: Upload | None = None

    def hold_upload(self, upload: Upload) -> None:
        """Show `upload` as the image to edit (not stored); pointing made on the previous image is forgotten."""
        self.upload, self.head = upload, None
        self.brush_version = None  # the open brush editor shows the new photo
        self.clear_pointing()
        self.selected = None

    def clear_pointing(self) -> None:
        """Forget clicks and the brush mask (the image they were made on is no longer current)."""
        self.clicks, self.brush = [], None

    def fresh(self, session_id: str) -> UiState:
        """A state for another session in the same tab (pointing, plans, chat and links are not carried over; the
        edit settings are)."""
        new = UiState(session_id=session_id, owner=self.owner, known=[session_id, *self.known][:10])
        new.known = list(dict.fromkeys(new.known))
        new.brush_open, new.prefs = self.brush_open, dict(self.prefs)
        return new


def message(e: Exception, where: str) -> str:
    """The short text the user sees for `e` (and one log line for a mistake, a traceback for a bug)."""
    if isinstance(e, gr.Error):
        return str(e.message)
    if isinstance(e, CostaError):
        msg = str(e)
        log.warning("refused in %s: %s", where, msg)
        return msg[:1].upper() + msg[1:]
    log.exception("unexpected error in %s", where)
    return f"costa hit an internal error ({type(e).__name__}); it is logged on the server. Nothing was lost."


def short_errors(fn: Callable[..., Any]) -> Any:
    """Raise costa's errors as `gr.Error` toasts with short messages, printing no traceback for mistakes."""

    def refuse(e: Exception) -> gr.Error:
        return gr.Error(message(e, fn.__name__), print_exception=False)

    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def gen(*args: Any, **kwargs: Any) -> Any:
            try:
                yield from fn(*args, **kwargs)
            except Exception as e:
                raise refuse(e) from None

        return gen

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            raise refuse(e) from None

    return call


def page_errors(fn: Callable[..., Any]) -> Any:
    """For the page's own events: a mistake is one warning toast and nothing on the page changes.

    `gr.Error` marks every output component of the event with an error badge that stays until a reload (a refused
    upload left about 14 of them over the image, the chat and the instruction box); a warning toast and a skipped
    update say the same without breaking the page. The API keeps `short_errors` (its callers get an exception).
    """

    def warn(e: Exception) -> Any:
        gr.Warning(message(e, fn.__name__))
        return gr.skip()

    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def gen(*args: Any, **kwargs: Any) -> Any:
            try:
                yield from fn(*args, **kwargs)
            except Exception as e:
                yield warn(e)

        return gen

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            return warn(e)

    return call


@dataclass
class Page:
    """What the tabs share: the core, the per-tab state, who is signed in, and each tab's refresher."""

    core: SessionCore
    ui: gr.State
    owner_of: Callable[[Any], str | None]
    refreshers: list[Callable[[UiState], dict[Any, Any]]] = field(default_factory=list)
    outputs: list[Any] = field(default_factory=list)

    def add(self, outputs: list[Any], refresh: Callable[[UiState], dict[Any, Any]]) -> None:
        """Register a tab's output components and how it redraws from the session's stored state."""
        self.outputs.extend(outputs)
        self.refreshers.append(refresh)

    def snapshot(self, state: UiState) -> dict[Any, Any]:
        """Everything that shows the session's stored state, from every tab."""
        out: dict[Any, Any] = {}
        for refresh in self.refreshers:
            out.update(refresh(state))
        return out

    def head_image(self, state: UiState) -> np.ndarray | None:
        """The image the next turn edits: the upload no turn has kept yet, else the session's current version (cached
        in `state` with its version id, `PENDING_UPLOAD` for the upload)."""
        if state.head is not None:
            return state.head[1]
        if state.upload is not None:
            state.head = (PENDING_UPLOAD, state.upload.image)
            return state.upload.image
        v, img = self.core.head(state.session_id, state.owner)
        state.head = (v.id, img) if v is not None and img is not None else None
        return img

    def carrying_upload(self, state: UiState, turn: Iterator[Any]) -> Iterator[Any]:
        """Run `turn` (prepared with `state.upload`) as the upload's carrier: while it runs the tab holds no upload of
        its own (a Send right after it ends edits what the turn kept), and when the turn kept nothing (it planned
        nothing, was stopped or refused) the upload is back on the tab to edit next."""
        upload, state.upload = state.upload, None
        try:
            yield from turn
        finally:
            if upload is not None and self.core.head(state.session_id, state.owner)[0] is None:
                state.upload, state.head = upload, None

    def reload_head(self, state: UiState) -> np.ndarray | None:
        state.head = None
        return self.head_image(state)
