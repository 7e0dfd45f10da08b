"""In-process state of sessions and the lifecycle of their temporary files.

Each session that is in use has a `SessionRuntime`: the turn's lock (one turn at a time), a history lock (a short
write to the session's history — undo, redo, branch, an upload — waits for another, never for a turn), a stop flag
and a temporary folder for exports. Temporary files live under `<home>/tmp/run-<pid>-<random>/`
(0700), so a process can tell its own folders from those a killed process left behind: `Runtimes.start` removes
folders of processes that no longer run, `Runtimes.close` removes its own, and a session idle for longer than
`idle_seconds` loses its temporary files (its history stays in the store).
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from costa.errors import CostaError
from costa.store import private_dir, session_folder_name

log = logging.getLogger(__name__)

#: Prefix of a process's temporary folder under `<home>/tmp`.
RUN_PREFIX = "run-"
#: Why a turn ended "stopped" (the turn's summary `stopped_by`): Stop was pressed (page, API, CLI), or the page or
#: client that ran it went away (reloaded or closed) before it ended.
STOPPED_BY_STOP = "stop"
STOPPED_BY_LEFT = "left"


@dataclass
class SessionRuntime:
    """One session in this process: its lock, stop flag, temporary folder and when it was last used (monotonic s)."""

    lock: threading.Lock = field(default_factory=threading.Lock)  # the turn's: held while a turn runs
    history: threading.Lock = field(default_factory=threading.Lock)  # short history writes (undo, redo, upload)
    stop: threading.Event = field(default_factory=threading.Event)
    tmp: Path | None = None
    used: float = field(default_factory=time.monotonic)
    running: bool = False  # a turn holds the lock (other writers hold it only briefly)
    tab: str | None = None  # the browser connection that started the running (or last) turn, when a page did
    stop_reason: str = ""  # why `stop` was set (`STOPPED_BY_STOP`, `STOPPED_BY_LEFT`); cleared when a turn starts


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_runs(tmp_root: Path) -> int:
    """Delete temporary folders of costa processes that are no longer running; return how many were removed."""
    removed = 0
    if not tmp_root.is_dir():
        return 0
    for p in tmp_root.glob(f"{RUN_PREFIX}*"):
        try:
            pid = int(p.name.split("-")[1])
        except (IndexError, ValueError):
            continue
        if pid != os.getpid() and not _pid_alive(pid):
            shutil.rmtree(p, ignore_errors=True)
            removed += 1
    return removed


def folder_bytes(path: Path) -> int:
    """Total size of the files under `path`, in bytes (0 when it does not exist)."""
    if not path.exists():
        return 0
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


class Runtimes:
    """Per-session runtimes of one process, and its temporary folder under `<home>/tmp`."""

    def __init__(self, home: Path, idle_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.tmp_parent = private_dir(Path(home) / "tmp")
        remove_stale_runs(self.tmp_parent)
        self.root = private_dir(self.tmp_parent / f"{RUN_PREFIX}{os.getpid()}-{secrets.token_hex(4)}")
        self.idle_seconds = idle_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._runtimes: dict[str, SessionRuntime] = {}
        self._tabs: dict[str, str] = {}  # browser connection (Gradio session hash) -> session id
        self._closed = False

    def get(self, session_id: str) -> SessionRuntime:
        """The session's runtime (made on first use); marks it used now."""
        with self._lock:
            rt = self._runtimes.get(session_id)
            if rt is None:
                rt = self._runtimes[session_id] = SessionRuntime(used=self._clock())
            rt.used = self._clock()
            return rt

    def busy(self, session_id: str) -> bool:
        """Whether a turn is running in the session."""
        with self._lock:
            rt = self._runtimes.get(session_id)
        return rt is not None and rt.running

    def tmp_dir(self, session_id: str) -> Path:
        """The session's temporary folder (0700), made on first use; expired sessions' folders are removed first."""
        self.expire()
        rt = self.get(session_id)
        if rt.tmp is None or not rt.tmp.exists():
            rt.tmp = private_dir(self.root / session_folder_name(session_id)[:16])
        return rt.tmp

    def release(self, session_id: str) -> None:
        """Delete the session's temporary files unless a turn is running in it (its history stays in the store)."""
        with self._lock:
            rt = self._runtimes.get(session_id)
            if rt is None or rt.running:
                return
            tmp, rt.tmp = rt.tmp, None
            del self._runtimes[session_id]
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)

    def expire(self) -> list[str]:
        """Release every session idle for longer than `idle_seconds`; return their ids."""
        now = self._clock()
        with self._lock:
            idle = [sid for sid, rt in self._runtimes.items() if not rt.running and now - rt.used > self.idle_seconds]
        for sid in idle:
            self.release(sid)
        return idle

    def bind(self, connection: str | None, session_id: str) -> None:
        """Remember which session a browser connection shows, so closing the tab can clean up after it."""
        if connection:
            with self._lock:
                self._tabs[connection] = session_id

    def started_by(self, connection: str) -> list[str]:
        """The sessions whose running turn browser connection `connection` started."""
        with self._lock:
            return [sid for sid, rt in self._runtimes.items() if rt.running and rt.tab == connection]

    def unbind(self, connection: str | None) -> None:
        """The tab closed: delete its session's temporary files unless another tab still shows that session."""
        if not connection:
            return
        with self._lock:
            sid = self._tabs.pop(connection, None)
            still_open = sid in self._tabs.values()
        if sid is not None and not still_open:
            self.release(sid)

    def tmp_bytes(self) -> int:
        """Bytes in this process's temporary folder."""
        return folder_bytes(self.root)

    def close(self) -> None:
        """Delete this process's temporary folder (at shutdown)."""
        if not self._closed:
            self._closed = True
            shutil.rmtree(self.root, ignore_errors=True)

    def start_reaper(
        self, every_seconds: float | None = None, hourly: Callable[[], object] | None = None
    ) -> threading.Thread:
        """Expire idle sessions' temporary files in a daemon thread every `every_seconds` (default: a quarter of the
        idle time), and call `hourly` (the store's retention) about once an hour."""
        period = every_seconds or max(1.0, min(60.0, self.idle_seconds / 4))

        def loop() -> None:
            last = time.monotonic()
            while not self._closed:
                time.sleep(period)
                try:
                    self.expire()
                    if hourly is not None and time.monotonic() - last >= 3600:
                        last = time.monotonic()
                        hourly()
                except (OSError, CostaError) as e:  # a folder removed under us, a full disk: the next round retries
                    log.warning("expiry failed: %s", e)

        t = threading.Thread(target=loop, name="costa-tmp-reaper", daemon=True)
        t.start()
        return t
