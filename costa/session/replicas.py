"""A turn across replicas: the session's turn lock in the database, and Stop pressed on another replica.

`SessionCore.run` takes the session's in-process lock first (one turn per session in this process), then
`replica_turn`: the database's turn lock for the turn's duration (PostgreSQL: an advisory lock on a connection of its
own), so a replica sharing the store refuses a second turn of the session as this process does. On a shared database
a watcher polls the session's stop request (`costa.store.stops`) every `STOP_POLL_SECONDS` and sets the turn's own
Stop flag, where every step, tool call and diffusion step already looks; `stop_elsewhere` writes that request when
Stop reaches a replica that is not running the turn. A turn a killed replica left `running` is marked `interrupted`
by the next replica to take the session's lock (no replica runs it then). With SQLite (one machine) nothing changes:
the lock always holds and no watcher runs.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from costa.errors import InputError, StorageError
from costa.store.stops import clear_stop, request_stop, stop_requested

if TYPE_CHECKING:
    from costa.session.runtime import SessionRuntime
    from costa.store import Store

log = logging.getLogger(__name__)

#: How often a turn on a shared database looks for a Stop pressed on another replica, in seconds.
STOP_POLL_SECONDS = 0.25


@contextmanager
def replica_turn(store: Store, rt: SessionRuntime, session_id: str, busy: str) -> Iterator[None]:
    """Hold the session's turn lock in the database while the block runs; on a shared database, turn a stop request
    from another replica into `rt.stop`.

    Raises:
        InputError: `busy`, when another process holds the session's turn lock (its turn is running).
    """
    with store.db.turn_lock(session_id) as held:
        if not held:
            raise InputError(busy)
        if not store.db.shared:
            yield
            return
        clear_stop(store, session_id)  # a request left by a turn that ended before it was seen
        if store.mark_session_interrupted(session_id):  # a replica killed while it ran one; this one serves it now
            log.warning("session %s…: a turn left running by a stopped replica is marked interrupted", session_id[:6])
        done = threading.Event()
        watcher = threading.Thread(
            target=_watch_stop, args=(store, rt, session_id, done), name="costa-stop-watch", daemon=True
        )
        watcher.start()
        try:
            yield
        finally:
            done.set()
            watcher.join(timeout=5 * STOP_POLL_SECONDS)
            try:
                clear_stop(store, session_id)
            except StorageError as e:  # the next turn clears it first anyway
                log.warning("could not clear the session's stop request: %s", e)


def _watch_stop(store: Store, rt: SessionRuntime, session_id: str, done: threading.Event) -> None:
    warned = False
    while not done.wait(STOP_POLL_SECONDS):
        try:
            reason = stop_requested(store, session_id)
        except StorageError as e:  # the database is away for a moment: the turn goes on, Stop here still works
            if not warned:
                log.warning("cannot look for Stop from other replicas: %s", e)
                warned = True
            continue
        if reason is not None and not rt.stop.is_set():
            rt.stop_reason = rt.stop_reason or reason
            rt.stop.set()
            log.info("Stop pressed on another replica: stopping this turn")


def stop_elsewhere(store: Store, session_id: str, reason: str) -> bool:
    """Ask the replica running the session's turn to stop it; False when no process runs one (or the database is
    not shared: then Stop is this process's own flag)."""
    if not store.db.shared or not store.db.turn_held(session_id):
        return False
    request_stop(store, session_id, reason)
    return True
