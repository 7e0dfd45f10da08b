"""The Edit tab's progress line for stepped tools ("sd_inpaint: step 7/20"), fed by the session core's `on_progress`.

`ToolProgress` events arrive from inside a tool call (a worker thread) while the turn's generator is blocked in that
call, so a page that only redraws when the generator yields would show nothing until the call ends. `with_progress`
runs each step of the turn's generator in a worker thread and, while it waits, hands on the progress events as they
come: the page redraws the bar between the turn's own events. The turn's generator is still advanced one step at a
time, only when the page asks for the next item (the view it yielded is never changed while the page renders it).
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import html
import queue
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import gradio as gr

from costa.events import Event, ToolProgress

T = TypeVar("T")
#: How often the wait for the turn's next item looks for progress, in seconds.
POLL_SECONDS = 0.05
_END = object()


def progress_text(ev: ToolProgress) -> str:
    """ "sd_inpaint: step 7/20" (`what` names the unit when it is not a plain or diffusion step)."""
    unit = "step" if ev.what in ("step", "diffusion step") else ev.what
    return f"{ev.tool}: {unit} {ev.done}/{ev.total}"


def progress_html(ev: ToolProgress) -> str:
    """The bar and its line for one progress event."""
    total = max(1, int(ev.total))
    done = min(max(0, int(ev.done)), total)
    text = html.escape(progress_text(ev))
    return (
        f'<div class="tool-progress" role="status"><progress value="{done}" max="{total}" aria-label="{text}" '
        f'style="width:min(360px,55%);height:12px;vertical-align:middle"></progress> '
        f'<span class="tool-progress-text">{text}</span></div>'
    )


def bar_update(ev: ToolProgress | None) -> Any:
    """The component update: the bar for `ev`, or hidden when None (the stepped call ended)."""
    if ev is None:
        return gr.update(value="", visible=False)
    return gr.update(value=progress_html(ev), visible=True)


def build_progress() -> gr.HTML:
    """The (hidden) progress component; place it where the bar should appear."""
    return gr.HTML("", visible=False, elem_id="tool-progress")


def with_progress(
    run: Callable[[Callable[[Event], None]], Iterator[T]],
) -> Iterator[tuple[str, Any]]:
    """Items of `run(on_progress)` as ("turn", item), with ("progress", ToolProgress) between them as they happen
    and ("progress", None) once the stepped call is over (the turn moved on, ended or failed).

    Only the latest progress event waiting is handed on (a fast tool's steps are not queued up behind a slow page).
    Closing this iterator closes the turn's generator (at once, or when its step in flight returns).
    """
    events: queue.Queue[ToolProgress] = queue.Queue()

    def on_progress(ev: Event) -> None:
        if isinstance(ev, ToolProgress):
            events.put(ev)

    gen = run(on_progress)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="costa-turn")
    shown = False
    future: concurrent.futures.Future[Any] | None = None
    try:
        while True:
            context = contextvars.copy_context()
            future = pool.submit(context.run, lambda: next(gen, _END))
            while True:
                done = bool(concurrent.futures.wait([future], timeout=POLL_SECONDS).done)
                latest: ToolProgress | None = None
                while not events.empty():
                    latest = events.get_nowait()
                if done:
                    break
                if latest is not None:
                    shown = True
                    yield "progress", latest
            if shown:  # the stepped call is over: the turn moved on, ended or failed
                shown = False
                yield "progress", None
            finished, future = future, None
            item = finished.result()  # raises what the turn raised
            if item is _END:
                return
            yield "turn", item
    finally:
        close = getattr(gen, "close", None)  # a generator: its own finally blocks run (the session lock is freed)
        if close is not None and future is not None and not future.done():
            future.add_done_callback(lambda _: close())
        elif close is not None:
            close()
        pool.shutdown(wait=False)
