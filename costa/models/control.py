"""What a running turn lets a long tool call see: a Stop flag and a sink for per-step progress events.

The agent sets the control around each tool call (`using_control`), inside one synchronous call, so a context
variable is safe even when the turn's generator is resumed on different threads between events. A diffusion tool calls
`step(...)` after every denoising step: it reports progress and raises `ToolStoppedError` when Stop was pressed, so
Stop interrupts between diffusion steps rather than after the whole call.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from costa.errors import ToolError
from costa.events import Event, ToolProgress


class ToolStoppedError(ToolError):
    """The user pressed Stop while a tool was running; the call ended between two of its steps."""


@dataclass
class TurnControl:
    """A turn's Stop flag and progress sink.

    stop: set by the app's Stop button (the session's flag) or a test.
    on_event: receives `ToolProgress` events as they happen (the CLI writes them to its event file; the app's turn
        view can draw a progress bar from them). Progress events are also kept in `events` for the turn's record.
    """

    stop: threading.Event = field(default_factory=threading.Event)
    on_event: Callable[[Event], None] | None = None
    events: list[Event] = field(default_factory=list)

    def stopped(self) -> bool:
        return self.stop.is_set()


_CONTROL: contextvars.ContextVar[TurnControl | None] = contextvars.ContextVar("costa_turn_control", default=None)
_CURRENT: contextvars.ContextVar[tuple[str, str, int] | None] = contextvars.ContextVar("costa_tool_call", default=None)


@contextlib.contextmanager
def using_control(control: TurnControl | None, subtask_id: str, tool: str, attempt: int) -> Iterator[None]:
    """Make `control` visible to the tool call made inside this block (subtask, tool and attempt label progress)."""
    t1 = _CONTROL.set(control)
    t2 = _CURRENT.set((subtask_id, tool, attempt))
    try:
        yield
    finally:
        _CURRENT.reset(t2)
        _CONTROL.reset(t1)


def current_control() -> TurnControl | None:
    return _CONTROL.get()


def check_stop() -> None:
    """Raise `ToolStoppedError` when the running turn's Stop was pressed."""
    control = _CONTROL.get()
    if control is not None and control.stopped():
        raise ToolStoppedError("stopped by the user between two steps")


def step(done: int, total: int, what: str = "diffusion step") -> None:
    """Report that `done` of `total` steps are finished, then honour Stop (raises `ToolStoppedError`)."""
    control = _CONTROL.get()
    if control is not None:
        subtask_id, tool, attempt = _CURRENT.get() or ("", "", 0)
        ev = ToolProgress(subtask_id, tool, attempt, done, total, what)
        control.events.append(ev)
        if control.on_event is not None:
            control.on_event(ev)
    check_stop()
