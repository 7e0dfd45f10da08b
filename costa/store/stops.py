"""Stop across replicas: a row in `stop_requests` asks the process running a session's turn to stop it.

On one machine Stop is the session's in-process flag (`costa.session.runtime.SessionRuntime.stop`). When several
replicas share a PostgreSQL store, Stop may reach a replica that does not run the turn: it writes the request here,
and the replica that holds the session's turn lock polls it and sets its own flag (`costa.session.replicas`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from costa.store.core import Store


def request_stop(store: Store, session_id: str, reason: str) -> None:
    """Ask whoever runs the session's turn to stop it (`reason`: `STOPPED_BY_STOP` or `STOPPED_BY_LEFT`)."""
    with store.connect(write=True) as db:
        db.execute(
            "INSERT INTO stop_requests (session_id, reason, created) VALUES (?, ?, ?) ON CONFLICT (session_id)"
            " DO UPDATE SET reason = excluded.reason, created = excluded.created",
            (session_id, reason, time.time()),
        )


def stop_requested(store: Store, session_id: str) -> str | None:
    """The reason of a pending stop request for the session's turn, or None."""
    with store.connect() as db:
        r = db.one("SELECT reason FROM stop_requests WHERE session_id = ?", (session_id,))
    return None if r is None else str(r["reason"])


def clear_stop(store: Store, session_id: str) -> None:
    """Forget the session's stop request (a turn starts, or ended)."""
    with store.connect(write=True) as db:
        db.execute("DELETE FROM stop_requests WHERE session_id = ?", (session_id,))
