"""The progress bar of `campaign run`: items done, failed, elapsed and time left (from this run's pace).

On a terminal it redraws one line in place; into a file or a pipe it writes a line each time an item finishes.

Example:
    >>> import io
    >>> out = io.StringIO()
    >>> bar = ProgressBar(4, 1, out, tty=False, clock=iter([0.0, 10.0, 10.0]).__next__)
    >>> bar.advance()
    >>> out.getvalue().strip()
    '[##########..........] 2/4 items · 0:10 elapsed · ~0:20 left'
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

WIDTH = 20


def clock_text(seconds: float) -> str:
    """Seconds as m:ss, or h:mm:ss past an hour."""
    s = max(0, round(seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


class ProgressBar:
    """Items finished out of `total` (`already` of them before this run)."""

    def __init__(
        self,
        total: int,
        already: int,
        out: TextIO,
        tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total, self.already, self.out, self.clock = total, already, out, clock
        self.tty = out.isatty() if tty is None else tty
        self.done = self.failed = 0
        self.start = clock()

    def line(self) -> str:
        finished = self.already + self.done + self.failed
        filled = round(WIDTH * finished / self.total) if self.total else WIDTH
        elapsed = self.clock() - self.start
        text = f"[{'#' * filled}{'.' * (WIDTH - filled)}] {finished}/{self.total} items"
        if self.failed:
            text += f" ({self.failed} failed)"
        text += f" · {clock_text(elapsed)} elapsed"
        ran = self.done + self.failed
        left = self.total - finished
        if left and ran:
            text += f" · ~{clock_text(elapsed / ran * left)} left"
        elif left:
            text += " · time left: after the first item"
        return text

    def draw(self) -> None:
        if self.tty:
            self.out.write("\r" + self.line().ljust(90))
            self.out.flush()

    def advance(self, failed: bool = False) -> None:
        if failed:
            self.failed += 1
        else:
            self.done += 1
        if self.tty:
            self.draw()
        else:
            print(self.line(), file=self.out, flush=True)

    def note(self, text: str) -> None:
        """A message between bar redraws (a failed item, stopping)."""
        if self.tty:
            self.out.write("\r" + " " * 90 + "\r")
        print(text, file=self.out, flush=True)
        self.draw()

    def finish(self) -> None:
        if self.tty:
            self.out.write("\n")
        self.out.flush()
