"""What a running turn lets a long tool call see: a Stop flag and a sink for per-step progress events.

The agent sets the control around each tool call (`using_control`), inside one synchronous call, so a context
variable is safe even when the turn's generator is resumed on different threads between events. A diffusion tool calls
`step(...)` after every denoising step: it reports progress and raises `ToolStoppedError` when Stop was pressed, so
Stop interrupts between diffusion steps rather than after the whole call.

`run_stoppable` makes Stop effective at once for every tool, not only the ones with steps: the agent runs each tool
call in a worker thread and waits on it and on the turn's Stop flag. When Stop is pressed the wait ends within
`POLL_SECONDS` with `ToolStoppedError`, so the turn ends as stopped while the call is still running. Python cannot
kill a thread: the call's CPU work finishes in the background and its result is dropped. The abandoned call sees its
own Stop flag (set, never cleared, so the next turn clearing the session's flag does not revive it): a tool with steps
(diffusion) ends at its next step. A later call of the same tool waits for an abandoned one to finish first, so an
abandoned call never runs alongside a new call of the same tool (one model, one pipeline) and repeated Edit + Stop
cannot pile up background work.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

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


def report(*events: Event) -> None:
    """Hand events from inside a tool call (progress, the tool's own endpoint requests) to the running turn: kept in
    its `events` and passed to its sink as they happen. Without a running turn they are dropped."""
    control = _CONTROL.get()
    if control is None:
        return
    for ev in events:
        control.events.append(ev)
        if control.on_event is not None:
            control.on_event(ev)


def step(done: int, total: int, what: str = "diffusion step") -> None:
    """Report that `done` of `total` steps are finished, then honour Stop (raises `ToolStoppedError`)."""
    subtask_id, tool, attempt = _CURRENT.get() or ("", "", 0)
    report(ToolProgress(subtask_id, tool, attempt, done, total, what))
    check_stop()


@dataclass
class _CallControl(TurnControl):
    """One tool call's control: stopped when its turn is, or once the call was abandoned (`stop`, never cleared)."""

    turn: TurnControl | None = None

    def stopped(self) -> bool:
        return self.stop.is_set() or (self.turn is not None and self.turn.stopped())


T = TypeVar("T")
#: How often a waiting turn looks at its Stop flag while a tool call runs, in seconds.
POLL_SECONDS = 0.02
_ABANDONED_LOCK = threading.Lock()
#: Tool id → "finished" flags of calls abandoned by Stop that are still running in the background.
_ABANDONED: dict[str, set[threading.Event]] = {}


def abandoned_calls(key: str | None = None) -> int:
    """How many tool calls abandoned by Stop are still running (of tool `key`, or of every tool)."""
    with _ABANDONED_LOCK:
        return sum(len(v) for k, v in _ABANDONED.items() if key is None or k == key)


def run_stoppable(
    fn: Callable[[], T],
    control: TurnControl | None,
    subtask_id: str,
    tool: str,
    attempt: int,
    exclusive: bool = True,
) -> T:
    """`fn()` (one tool call) with `control` visible to it; Stop ends the wait at once (see the module docstring).

    Without a control the call runs here, in the calling thread. With one, it runs in a daemon worker thread (the
    caller's context variables copied) under its own `TurnControl`: its progress events reach `control` until the
    call is abandoned, and its Stop flag is set when the turn's is. `exclusive=False` is for calls that share no
    model with a later call (an LLM request over HTTP): they neither wait for an abandoned call labelled `tool` nor
    make a later one wait (a hung endpoint must not hold up the next turn's planning until its timeout).

    Raises:
        ToolStoppedError: the turn's Stop was set before or while the call ran; the call's result, when it comes,
            is dropped.
        Exception: whatever `fn` raised.
    """
    if control is None:
        with using_control(None, subtask_id, tool, attempt):
            return fn()
    if control.stopped():
        raise ToolStoppedError("not run: the turn was stopped")
    own_stop = threading.Event()
    finished = threading.Event()

    def progress(ev: Event) -> None:
        if not own_stop.is_set() and control.on_event is not None:
            control.on_event(ev)

    own = _CallControl(stop=own_stop, on_event=progress, events=control.events, turn=control)
    with _ABANDONED_LOCK:
        earlier = list(_ABANDONED.get(tool, ())) if exclusive else []
    result: list[T] = []
    error: list[BaseException] = []

    def work() -> None:
        try:
            for flag in earlier:  # an abandoned call of this tool still running: it finishes first
                while not flag.wait(POLL_SECONDS):
                    if own_stop.is_set():
                        return
            if own_stop.is_set():
                return
            with using_control(own, subtask_id, tool, attempt):
                result.append(fn())
        except BaseException as e:  # handed to the waiting turn (or dropped with the call)
            error.append(e)
        finally:
            with _ABANDONED_LOCK:
                finished.set()
                flags = _ABANDONED.get(tool)
                if flags is not None:
                    flags.discard(finished)
                    if not flags:
                        del _ABANDONED[tool]

    context = contextvars.copy_context()
    worker = threading.Thread(target=context.run, args=(work,), name=f"costa-tool-{tool}", daemon=True)
    worker.start()
    while not finished.wait(POLL_SECONDS):
        if control.stopped():
            own_stop.set()
            with _ABANDONED_LOCK:
                if not finished.is_set():
                    if exclusive:
                        _ABANDONED.setdefault(tool, set()).add(finished)
                    raise ToolStoppedError(
                        "stopped by the user while the tool ran; its work finishes in the background and is dropped"
                    )
            break  # it finished just now: its result counts
    if error:
        raise error[0]
    if not result:  # stopped while it waited for an earlier abandoned call: it never ran
        raise ToolStoppedError("not run: the turn was stopped")
    return result[0]
