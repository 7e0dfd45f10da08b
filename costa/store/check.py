"""Opening a store safely, the start-up sweep, and `python -m costa store check`.

Opening (`open_checked`) touches nothing until it knows the database is sound and is the one the files belong to: a
missing or empty database beside stored files (the files would all look like orphans), a damaged one, or one of
another store is a one-line `StorageError` and the app does not start. The sweep after an unclean stop removes only
files a session folder's journal says this store was writing (a kill between the file and its row) and moves every
other unaccounted file to the quarantine. `check` verifies everything without changing anything.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from costa.errors import StorageError
from costa.store.database import DISK_FULL, NO_ACCESS, READ_ONLY, Database
from costa.store.files import IDENTITY_FILE, decode, image_sha256, part_target, private_dir
from costa.store.sqlite import damaged_message

if TYPE_CHECKING:
    from costa.store.core import Store

log = logging.getLogger(__name__)

#: A half-written file another host's process may still be committing is left alone for this long.
IN_FLIGHT_SECONDS = 3600.0


def start_fault(home: Path, e: StorageError) -> StorageError:
    """The message for a storage fault met while a process starts (it cannot run without its home)."""
    text = str(e)
    if text in (READ_ONLY, NO_ACCESS):
        return StorageError(
            f"COSTA_HOME ({home}) cannot be written: costa keeps its database and images there, so it cannot start; "
            "make the folder writable or set COSTA_HOME to another one"
        )
    if text == DISK_FULL:
        return StorageError(f"the disk holding COSTA_HOME ({home}) is full: costa cannot start; free space first")
    return e


def open_checked(store: Store) -> str:
    """Check, migrate and identify `store`'s database; return its store id.

    Raises:
        StorageError: the home cannot be written, the database is damaged, missing beside stored files, or belongs
            to another store (nothing was changed in any of these cases).
    """
    try:
        private_dir(store.home)
        return _open(store)
    except StorageError as e:
        raise start_fault(store.home, e) from e.__cause__


def _open(store: Store) -> str:
    db, files = store.db, store.files
    if not db.exists():
        marker, n = files.identity(), files.count_files()
        if marker is not None or n:
            raise StorageError(
                f"the database {db.url} is missing or empty, but {files.root} holds {n} file(s) of store "
                f"{marker or '(unnamed)'}: costa changed nothing; `python -m costa store repair` rebuilds the index of "
                "versions from them"
            )
    else:
        problems = db.integrity(quick=True)
        if problems and db.dialect != "sqlite":  # a server's own sentence (unreachable, login refused)
            raise StorageError(problems[0])
        if problems:
            raise StorageError(damaged_message(Path(db.url.removeprefix("sqlite:///")), problems[0][:200]))
    db.migrate()
    with db.connect() as c:
        r = c.one("SELECT value FROM store_meta WHERE key = 'store_id'")
    store_id = str(r["value"])
    marker = files.identity()
    if marker is None:
        files.write_identity(store_id)
    elif marker != store_id:
        raise StorageError(
            f"the database {db.url} belongs to store {store_id} but the files in {files.root} to store {marker}: "
            "costa changed nothing; point COSTA_HOME at the right folder, or `python -m costa store repair` rebuilds "
            "the index from the files"
        )
    return store_id


def _alive(pid: Any) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, ValueError, TypeError):
        return False
    except PermissionError:
        return True
    return True


def writer_gone(record: dict[str, Any], now: float) -> bool:
    """Whether the process that journalled a write can no longer commit it (dead here, or long ago elsewhere)."""
    if record.get("host") == socket.gethostname() and record.get("pid") is not None:
        return int(record["pid"]) == os.getpid() or not _alive(record["pid"])
    return now - float(record.get("t", 0)) > IN_FLIGHT_SECONDS


def _mask_files(store: Store) -> set[Path]:
    with store.connect() as db:
        rows = db.all("SELECT params FROM turns WHERE params LIKE ?", ('%"mask_file"%',))
    out = set()
    for r in rows:
        f = json.loads(r["params"]).get("mask_file")
        if isinstance(f, str):
            out.add(Path(f))
    return out


def sweep(store: Store) -> dict[str, int]:
    """See `Store.recover`. Returns {"removed", "quarantined", "missing"}."""
    with store.connect() as db:
        rows = db.all("SELECT id, session_id, file, bytes FROM versions")
    known = {store.files.absolute(r["file"]) for r in rows}
    known |= _mask_files(store)
    missing = sum(1 for p in known if not p.exists())
    removed, unknown, now = 0, [], time.time()
    for folder in store.files.folders():
        journal = store.files.read_journal(folder)
        ours = bool(journal) and journal[0].get("op") == "session" and journal[0].get("store") == store.store_id
        writes = {r["file"]: r for r in journal if ours and r.get("op") == "write" and isinstance(r.get("file"), str)}
        for p in store.files.stored_files(folder):
            if p in known:
                continue
            intent = writes.get(part_target(p.name) or p.name)
            if intent is not None and writer_gone(intent, now):
                p.unlink(missing_ok=True)
                removed += 1
            elif intent is None:
                unknown.append(p)
    if store.files.root.is_dir():
        unknown += [p for p in store.files.root.iterdir() if p.is_file() and p.name != IDENTITY_FILE]
    where = store.files.quarantine(unknown)
    if where is not None:
        log.warning("quarantined %d file(s) costa cannot prove it wrote: %s (nothing was deleted)", len(unknown), where)
    backfill(store, rows)
    if missing:
        log.warning("%d version file(s) are missing from COSTA_HOME: `python -m costa store check` lists them", missing)
    return {"removed": removed, "quarantined": len(unknown), "missing": missing}


def backfill(store: Store, rows: list[Any]) -> None:
    """Give versions stored before the journal existed their size and a journal entry (so repair can rebuild them)."""
    legacy = [r for r in rows if r["bytes"] is None]
    if not legacy:
        return
    sizes = []
    for r in legacy:
        p = store.files.absolute(r["file"])
        if p.is_file():
            sizes.append((p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest(), r["id"]))
    with store.connect(write=True) as db:
        db.executemany("UPDATE versions SET bytes = ?, file_sha256 = ? WHERE id = ?", sizes)
        full = db.all(f"SELECT * FROM versions WHERE id IN ({', '.join('?' * len(legacy))})", [r["id"] for r in legacy])
        sessions = {r["id"]: r for r in db.all("SELECT * FROM sessions")}
    for r in full:
        s = sessions.get(r["session_id"])
        if s is None:
            continue
        header = {"op": "session", "store": store.store_id, "session_id": s["id"], "owner": s["owner"],
                  "created": s["created"]}  # fmt: skip
        folder = store.files.absolute(r["file"]).parent
        store.files.journal(folder, {"op": "version", **dict(r)}, header)


# ------------------------------------------------------------------------------------------------------ check


@dataclass
class CheckReport:
    """What `store check` found: problems (each a sentence) and counts."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> Iterator[str]:
        c = self.counts
        yield (
            f"store check: {c.get('sessions', 0)} sessions, {c.get('versions', 0)} versions "
            f"({c.get('bytes', 0) / 1048576:.1f} MB), {c.get('turns', 0)} turns checked in {self.seconds:.1f} s"
        )
        for p in self.problems:
            yield f"  PROBLEM {p}"
        for n in self.notes:
            yield f"  note    {n}"
        yield "  ok: nothing lost or damaged" if self.ok else f"  {len(self.problems)} problem(s): see above"


def verify_file(path: Path, file_sha256: str | None, pixels_sha256: str, deep: bool) -> str | None:
    """Why a version's file is not the one stored (None: it is): missing, changed bytes, other pixels."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return "file missing"
    except OSError as e:
        return f"file unreadable ({e.strerror})"
    if file_sha256 is not None and hashlib.sha256(data).hexdigest() != file_sha256:
        return "file changed since it was stored"
    if file_sha256 is None or deep:
        try:
            if image_sha256(decode(data)) != pixels_sha256:
                return "pixels differ from those stored"
        except (OSError, ValueError):
            return "file does not decode"
    return None


def check(store: Store, deep: bool = False) -> CheckReport:
    """Verify the database (the engine's full check), the identity, every version's file (bytes; `deep`: pixels),
    every session folder's journal, and count files nothing accounts for. Changes nothing."""
    t0 = time.perf_counter()
    report = CheckReport()
    report.problems += [f"database: {p}" for p in store.db.integrity(quick=False)[:20]]
    with store.connect() as db:
        versions = db.all("SELECT id, session_id, file, sha256, file_sha256, bytes FROM versions ORDER BY id")
        for table in ("sessions", "turns"):
            report.counts[table] = int(db.one(f"SELECT COUNT(*) AS n FROM {table}")["n"])
        dangling = db.all(
            "SELECT t.id FROM turns t WHERE t.result_version IS NOT NULL AND NOT EXISTS"
            " (SELECT 1 FROM versions v WHERE v.id = t.result_version)"
        )
    report.counts["versions"] = len(versions)
    report.counts["bytes"] = sum(int(r["bytes"] or 0) for r in versions)
    if store.files.identity() != store.store_id:
        report.problems.append(f"the files' identity {store.files.identity()} is not the database's {store.store_id}")
    bad: dict[str, list[int]] = {}
    for r in versions:
        why = verify_file(store.files.absolute(r["file"]), r["file_sha256"], r["sha256"], deep)
        if why is not None:
            bad.setdefault(why, []).append(int(r["id"]))
    for why, ids in sorted(bad.items()):
        report.problems.append(f"{len(ids)} version(s) lost: {why} (ids {_ids(ids)})")
    if dangling:
        report.problems.append(f"{len(dangling)} turn(s) name a result version that does not exist")
    _check_files(store, versions, report)
    return _finish(report, t0)


def check_unopened(home: Path, db: Database, error: StorageError) -> CheckReport:
    """`check` for a store that does not open (a damaged or missing database): the engine's findings, and every
    version the session folders' journals record, verified against its file."""
    from costa.store.files import FileStore

    t0 = time.perf_counter()
    report = CheckReport(problems=[str(error)])
    try:
        present = db.exists()
    except StorageError:
        present = True  # there, but damaged
    report.problems += [f"database: {p}" for p in (db.integrity(quick=False) if present else [])[:20]]
    files = FileStore(home)
    bad: dict[str, list[int]] = {}
    n = 0
    for folder in files.folders():
        for r in files.read_journal(folder):
            if r.get("op") == "version" and isinstance(r.get("id"), int):
                n += 1
                why = verify_file(files.absolute(r["file"]), r.get("file_sha256"), r["sha256"], deep=False)
                if why is not None:
                    bad.setdefault(why, []).append(r["id"])
    report.counts["versions"] = n
    report.notes.append(f"{n} version(s) recorded in the session folders' journals (what `store repair` rebuilds)")
    for why, ids in sorted(bad.items()):
        report.problems.append(f"{len(ids)} journalled version(s) not recoverable: {why} (ids {_ids(ids)})")
    return _finish(report, t0)


def _check_files(store: Store, versions: list[Any], report: CheckReport) -> None:
    known = {store.files.absolute(r["file"]) for r in versions} | _mask_files(store)
    journalled: set[str] = set()
    unknown = 0
    for folder in store.files.folders():
        journal = store.files.read_journal(folder)
        if journal and journal[0].get("store") not in (None, store.store_id):
            report.problems.append(f"session folder {folder.name} belongs to another store ({journal[0]['store']})")
        journalled |= {f"{folder.name}/{Path(r['file']).name}" for r in journal if r.get("op") == "version"}
        unknown += sum(1 for p in store.files.stored_files(folder) if p not in known)
    not_journalled = [r for r in versions if "/".join(Path(r["file"]).parts[-2:]) not in journalled]
    if not_journalled:
        report.notes.append(
            f"{len(not_journalled)} version(s) have no journal entry (stored before journals; the next app start "
            "writes them): `store repair` could not rebuild them from the files alone"
        )
    if unknown:
        report.notes.append(f"{unknown} file(s) no version or journal accounts for (the next start quarantines them)")
    q = store.files.quarantined()
    if q:
        report.notes.append(f"{len(q)} file(s) in {store.files.home / 'quarantine'} (never deleted by costa)")


def _finish(report: CheckReport, t0: float) -> CheckReport:
    report.seconds = time.perf_counter() - t0
    return report


def _ids(ids: list[int]) -> str:
    shown = ", ".join(str(i) for i in ids[:10])
    return shown + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
