"""Bounded growth: per-owner quotas (sessions, versions, bytes), idle-session expiry and garbage collection.

Owners are the signed-in users; without login every session belongs to the same anonymous owner (None), so the
limits bound the whole store. A new session past the session quota first makes room by dropping the owner's oldest
*empty* sessions (a session that holds no image and no turn loses nothing); past the version or byte quota a write
is refused with the limit and its setting named. Expiry deletes sessions idle for longer than the retention period
(`COSTA_RETENTION_DAYS`: off for a single user, 30 days when `COSTA_AUTH` is set) with every row and every file the
store wrote for them; it runs at most once per period across every process sharing the store (a lease in
`store_meta`), and on demand with `python -m costa store gc`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from costa.errors import QuotaError
from costa.store.database import Connection
from costa.store.files import JOURNAL_FILE, part_target

if TYPE_CHECKING:
    from costa.store.core import Store

GB = 1024**3
#: Empty sessions (no version, no turn) older than this are dropped by `gc` whatever the retention (they hold nothing).
EMPTY_SESSION_SECONDS = 86400.0
#: Least time between two automatic expiry runs of one store, whichever process runs them.
GC_PERIOD_SECONDS = 3600.0


@dataclass(frozen=True)
class Quotas:
    """Most sessions, versions and stored bytes one owner may hold (0: no limit)."""

    sessions: int = 500
    versions: int = 10_000
    bytes: int = 10 * GB


@dataclass(frozen=True)
class Usage:
    sessions: int
    versions: int
    bytes: int


@dataclass
class GcReport:
    """What one `gc` did (or, with `dry_run`, would do)."""

    expired: list[str] = field(default_factory=list)  # session ids (never printed: access keys)
    empty: int = 0
    versions: int = 0
    files: int = 0
    bytes: int = 0
    quarantined: list[str] = field(default_factory=list)
    skipped: str = ""

    def line(self) -> str:
        if self.skipped:
            return f"gc skipped: {self.skipped}"
        q = f"; {len(self.quarantined)} unknown file(s) quarantined" if self.quarantined else ""
        return (
            f"gc: {len(self.expired)} idle session(s) expired, {self.empty} empty session(s) dropped, "
            f"{self.versions} version(s) and {self.files} file(s) deleted, {self.bytes / 1048576:.1f} MB freed{q}"
        )


def owner_clause(owner: str | None) -> tuple[str, tuple[Any, ...]]:
    """SQL condition on `s.owner` matching `owner` (None: the anonymous owner)."""
    return ("s.owner IS NULL", ()) if owner is None else ("s.owner = ?", (owner,))


def usage(db: Connection, owner: str | None) -> Usage:
    where, args = owner_clause(owner)
    n = db.one(f"SELECT COUNT(*) AS n FROM sessions s WHERE {where}", args)
    v = db.one(
        f"SELECT COUNT(*) AS n, COALESCE(SUM(v.bytes), 0) AS b FROM versions v JOIN sessions s ON s.id = v.session_id"
        f" WHERE {where}",
        args,
    )
    return Usage(int(n["n"]), int(v["n"]), int(v["b"]))


def _owner_words(owner: str | None) -> str:
    return "this app's users together (no login)" if owner is None else f"user {owner!r}"


def check_version_quota(db: Connection, quotas: Quotas, owner: str | None, new_bytes: int) -> None:
    """Refuse one more version of `new_bytes` for `owner` past the version or byte quota."""
    if not (quotas.versions or quotas.bytes):
        return
    u = usage(db, owner)
    if quotas.versions and u.versions + 1 > quotas.versions:
        raise QuotaError(
            f"{_owner_words(owner)} already keep {u.versions:,} image versions, the most allowed "
            f"(COSTA_QUOTA_VERSIONS={quotas.versions}): nothing was saved; idle sessions expire after "
            "COSTA_RETENTION_DAYS, or `python -m costa store gc` frees room"
        )
    if quotas.bytes and u.bytes + new_bytes > quotas.bytes:
        raise QuotaError(
            f"{_owner_words(owner)} keep {u.bytes / GB:.2f} GB of images; this one would pass the limit of "
            f"{quotas.bytes / GB:g} GB (COSTA_QUOTA_GB): nothing was saved; idle sessions expire after "
            "COSTA_RETENTION_DAYS, or `python -m costa store gc` frees room"
        )


def _empty_sessions(db: Connection, owner: str | None, before: float, limit: int) -> list[str]:
    where, args = owner_clause(owner)
    rows = db.all(
        f"SELECT s.id FROM sessions s WHERE {where} AND s.head IS NULL AND COALESCE(s.touched, s.created) < ?"
        " AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.session_id = s.id)"
        " AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id)"
        " ORDER BY COALESCE(s.touched, s.created) LIMIT ?",
        (*args, before, limit),
    )
    return [r["id"] for r in rows]


def make_room_for_session(db: Connection, quotas: Quotas, owner: str | None) -> None:
    """Before a new session: drop the owner's oldest empty sessions past the quota, or refuse when none is empty."""
    if not quotas.sessions:
        return
    u = usage(db, owner)
    excess = u.sessions + 1 - quotas.sessions
    if excess <= 0:
        return
    empty = _empty_sessions(db, owner, time.time() + 1, excess)
    delete_rows(db, empty)
    if len(empty) < excess:
        raise QuotaError(
            f"{_owner_words(owner)} already have {u.sessions:,} sessions, the most allowed "
            f"(COSTA_QUOTA_SESSIONS={quotas.sessions}): no new one was made; idle sessions expire after "
            "COSTA_RETENTION_DAYS, or `python -m costa store gc` frees room"
        )


def delete_rows(db: Connection, session_ids: Sequence[str]) -> int:
    """Delete every row of these sessions (children first, for the foreign keys); return the versions deleted."""
    versions = 0
    for sid in session_ids:
        turns = "SELECT id FROM turns WHERE session_id = ?"
        db.execute(f"DELETE FROM targets WHERE turn_id IN ({turns})", (sid,))
        # not verdicts: people's labelled cases
        for table in ("memory_masks", "memory", "scores", "proposals", "stop_requests"):
            db.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))
        db.execute("UPDATE sessions SET head = NULL WHERE id = ?", (sid,))
        db.execute("UPDATE versions SET parent_id = NULL WHERE session_id = ?", (sid,))
        versions += int(db.one("SELECT COUNT(*) AS n FROM versions WHERE session_id = ?", (sid,))["n"])
        db.execute("DELETE FROM versions WHERE session_id = ?", (sid,))
        db.execute("DELETE FROM turns WHERE session_id = ?", (sid,))
        db.execute("DELETE FROM sessions WHERE id = ?", (sid,))
    return versions


def _take_lease(store: Store, now: float, period: float) -> bool:
    """Whether this process may run the periodic gc now (one run per `period` across every process).

    One conditional upsert takes the lease, and the process whose time it then reads back owns it: on PostgreSQL two
    replicas reading the old time and both writing theirs (read committed) both ran gc; the row lock makes the second
    one's condition see the first one's time."""
    mine = repr(now)
    with store.connect(write=True) as db:
        db.execute(
            "INSERT INTO store_meta (key, value) VALUES ('gc_at', ?) ON CONFLICT (key) DO UPDATE SET value ="
            " excluded.value WHERE CAST(store_meta.value AS DOUBLE PRECISION) <= ?",
            (mine, now - period),
        )
        r = db.one("SELECT value FROM store_meta WHERE key = 'gc_at'")
    return r is not None and r["value"] == mine


def gc(
    store: Store, retention_days: float | None, dry_run: bool = False, periodic: bool = False, now: float | None = None
) -> GcReport:
    """Expire sessions idle for longer than `retention_days` (None: keep them) and drop empty ones a day old, with
    every file the store wrote for them; `periodic` runs only when no process ran it in the last hour."""
    now = time.time() if now is None else now
    report = GcReport()
    if periodic and not dry_run and not _take_lease(store, now, GC_PERIOD_SECONDS):
        report.skipped = "another process ran it less than an hour ago"
        return report
    with store.connect() as db:
        expired: list[str] = []
        if retention_days is not None:
            cutoff = now - retention_days * 86400
            expired = [
                r["id"]
                for r in db.all(
                    "SELECT id FROM sessions WHERE COALESCE(touched, created) < ? AND id NOT IN"
                    " (SELECT session_id FROM turns WHERE status = 'running')",
                    (cutoff,),
                )
            ]
        empty = [sid for sid in _all_empty(db, now - EMPTY_SESSION_SECONDS) if sid not in expired]
        files = {sid: [r["file"] for r in db.all("SELECT file FROM versions WHERE session_id = ?", (sid,))]
                 for sid in expired}  # fmt: skip
        masks = {sid: [r["params"] for r in db.all("SELECT params FROM turns WHERE session_id = ?", (sid,))]
                 for sid in expired}  # fmt: skip
    report.expired, report.empty = expired, len(empty)
    report.versions = sum(len(f) for f in files.values())
    if dry_run:
        report.bytes = sum(_size(store.files.absolute(f)) for fs in files.values() for f in fs)
        return report
    with store.connect(write=True) as db:
        delete_rows(db, [*expired, *empty])
    for sid in expired:
        n, b, unknown = remove_session_files(store, sid, files[sid], masks[sid])
        report.files += n
        report.bytes += b
        report.quarantined += unknown
    return report


def _all_empty(db: Connection, before: float) -> list[str]:
    rows = db.all(
        "SELECT s.id FROM sessions s WHERE s.head IS NULL AND COALESCE(s.touched, s.created) < ?"
        " AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.session_id = s.id)"
        " AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id)",
        (before,),
    )
    return [r["id"] for r in rows]


def _size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0


def remove_session_files(
    store: Store, session_id: str, files: Sequence[str], turn_params: Sequence[str]
) -> tuple[int, int, list[str]]:
    """Delete the files the store wrote for a deleted session (its versions, brush masks, journal); quarantine any
    other file in its folder. Returns (files deleted, bytes freed, quarantined names)."""
    folder = store.files.folder(session_id)
    if not folder.is_dir():
        return 0, 0, []
    ours = {store.files.absolute(f).name for f in files}
    for raw in turn_params:
        mask = json.loads(raw).get("mask_file") if raw else None
        if isinstance(mask, str):
            ours.add(Path(mask).name)
    ours |= {r["file"] for r in store.files.read_journal(folder) if r.get("op") == "write" and "file" in r}
    deleted, freed, unknown = 0, 0, []
    for p in store.files.stored_files(folder):
        if p.name in ours or part_target(p.name) in ours:
            freed += _size(p)
            p.unlink(missing_ok=True)
            deleted += 1
        else:
            unknown.append(p)
    store.files.quarantine(unknown)
    (folder / JOURNAL_FILE).unlink(missing_ok=True)
    if not any(folder.iterdir()):  # anything that appeared meanwhile waits for the next start's sweep
        folder.rmdir()
    return deleted, freed, [p.name for p in unknown]
