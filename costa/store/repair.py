"""`python -m costa store repair`: rebuild the index of versions from the files and their hashes.

A damaged or missing SQLite database is moved aside (never deleted: `costa.db.damaged-<time>`), a fresh one is made
with the store's identity, every row that still reads is copied from the damaged copy (table by table, skipping the
pages that fail), and every version a session folder's journal records whose file is present with the bytes (or
pixels) it was stored with is indexed again under its old id. A version whose file is gone or changed is dropped
(its children re-parented, a head moved to the newest version left); files nothing accounts for go to the quarantine.
The report says what was rebuilt and what could not be recovered (turns, scores and memory live only in the database).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from costa.errors import StorageError
from costa.store.check import verify_file
from costa.store.database import Connection, Database
from costa.store.files import FileStore, part_target
from costa.store.sqlite import SqliteDatabase

log = logging.getLogger(__name__)

#: Tables copied from a damaged database, parents first (a table added by a later migration is copied after these).
TABLE_ORDER = ("store_meta", "sessions", "versions", "turns", "scores", "memory", "memory_masks", "targets")


@dataclass
class RepairReport:
    salvaged: dict[str, int] = field(default_factory=dict)
    unreadable: dict[str, int] = field(default_factory=dict)
    from_files: dict[str, int] = field(default_factory=dict)
    lost: list[str] = field(default_factory=list)
    rebuilt: bool = False
    moved_aside: Path | None = None
    quarantined: int = 0
    heads_moved: int = 0

    def lines(self) -> Iterator[str]:
        if self.moved_aside is not None:
            yield f"store repair: the damaged database was kept as {self.moved_aside}; a new one was built"
        elif self.rebuilt:
            yield "store repair: there was no database; a new one was built from the files"
        else:
            yield "store repair: the database is sound; the index of versions was checked against the files"
        if self.salvaged:
            yield "  rows copied from the old database: " + ", ".join(f"{k} {v}" for k, v in self.salvaged.items())
        if self.from_files:
            yield "  rebuilt from the files' journals: " + ", ".join(f"{k} {v}" for k, v in self.from_files.items())
        if self.heads_moved:
            yield f"  {self.heads_moved} session(s) now show their newest version that survived"
        if self.quarantined:
            yield f"  {self.quarantined} file(s) nothing accounts for moved to COSTA_HOME/quarantine (not deleted)"
        for item in self.lost:
            yield f"  not recovered: {item}"
        if not self.lost:
            yield "  nothing was lost"


def _readable_rows(old: sqlite3.Connection, table: str) -> tuple[list[sqlite3.Row], int]:
    """Every row of `table` that still reads, and how many did not (rowid ranges step past the damage)."""
    try:
        return old.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall(), 0
    except sqlite3.DatabaseError:
        pass
    try:
        top = int(old.execute(f"SELECT MAX(rowid) FROM {table}").fetchone()[0] or 0)
    except sqlite3.DatabaseError:
        return [], 1
    rows: list[sqlite3.Row] = []
    bad = 0
    for start in range(0, top + 1, 256):
        try:
            rows += old.execute(f"SELECT * FROM {table} WHERE rowid BETWEEN ? AND ?", (start, start + 255)).fetchall()
            continue
        except sqlite3.DatabaseError:
            pass
        for rowid in range(start, start + 256):
            try:
                rows += old.execute(f"SELECT * FROM {table} WHERE rowid = ?", (rowid,)).fetchall()
            except sqlite3.DatabaseError:
                bad += 1
    return rows, bad


def _tables(db: Connection) -> dict[str, list[str]]:
    names = [r["name"] for r in db.all("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {n: [c["name"] for c in db.all(f"PRAGMA table_info({n})")] for n in names if not n.startswith("sqlite_")}


def salvage(old_path: Path, new: Database, report: RepairReport) -> None:
    """Copy every readable row of the damaged SQLite file `old_path` into `new` (same columns, same ids).

    `new` is the SQLite database rebuilt in its place (`repair` moves only an SQLite file aside): the foreign-key
    checks below are SQLite's own. A PostgreSQL store is not salvaged this way (its server keeps its own pages).
    """
    if new.dialect != "sqlite":
        raise StorageError("salvaging rows from a damaged SQLite file is only possible into an SQLite database")
    try:
        old = sqlite3.connect(f"file:{old_path}?immutable=1", uri=True)
        old.row_factory = sqlite3.Row
        names = [r[0] for r in old.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    except sqlite3.DatabaseError as e:
        report.lost.append(f"every row of the old database (its schema does not read: {e})")
        return
    with new.connect(write=True) as db:
        db.execute("PRAGMA defer_foreign_keys=ON")  # children may arrive before parents; checked at commit
        columns = _tables(db)
        order = [t for t in TABLE_ORDER if t in names] + [t for t in names if t not in TABLE_ORDER]
        for table in order:
            if table not in columns or table.startswith("sqlite_"):
                continue
            rows, bad = _readable_rows(old, table)
            if table == "store_meta":
                rows = [r for r in rows if r["key"] != "store_id"]
            if bad:
                report.unreadable[table] = bad
            if not rows:
                continue
            keep = [c for c in rows[0].keys() if c in columns[table]]  # noqa: SIM118 (sqlite3.Row iterates values)
            marks = ", ".join("?" * len(keep))
            sql = f"INSERT INTO {table} ({', '.join(keep)}) VALUES ({marks}) ON CONFLICT DO NOTHING"
            db.executemany(sql, [[r[c] for c in keep] for r in rows])
            report.salvaged[table] = len(rows)
        _drop_dangling(db, report)
    old.close()


def _drop_dangling(db: Connection, report: RepairReport) -> None:
    """Rows whose parent row was lost: a nullable reference is cleared, any other row is dropped (and counted)."""
    for _ in range(8):  # dropping a row may orphan its own children: repeat until clean
        found = db.all("PRAGMA foreign_key_check")
        if not found:
            return
        for r in found:
            table, rowid, parent = r[0], r[1], r[2]
            refs = db.all(f"PRAGMA foreign_key_list({table})")
            cols = [c["from"] for c in refs if c["table"] == parent]
            info = {c["name"]: c["notnull"] for c in db.all(f"PRAGMA table_info({table})")}
            if cols and all(not info.get(c) for c in cols):
                db.execute(f"UPDATE {table} SET {', '.join(f'{c} = NULL' for c in cols)} WHERE rowid = ?", (rowid,))
            else:
                db.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
                report.lost.append(f"a {table} row whose {parent} row was lost")


def _journals(files: FileStore) -> Iterator[tuple[Path, dict[str, Any] | None, list[dict[str, Any]]]]:
    for folder in files.folders():
        journal = files.read_journal(folder)
        header = journal[0] if journal and journal[0].get("op") == "session" else None
        yield folder, header, [r for r in journal if r.get("op") == "version" and isinstance(r.get("id"), int)]


def index_from_files(files: FileStore, db: Database, report: RepairReport) -> None:
    """Add every journalled version (and its session) the database lacks, when its file is intact."""
    added_sessions = added_versions = 0
    with db.connect(write=True) as c:
        have_s = {r["id"] for r in c.all("SELECT id FROM sessions")}
        have_v = {int(r["id"]) for r in c.all("SELECT id FROM versions")}
        for folder, header, versions in _journals(files):
            if header is None or not isinstance(header.get("session_id"), str):
                if versions:
                    report.lost.append(f"{len(versions)} version(s) in {folder.name}: its journal has no header")
                continue
            sid = header["session_id"]
            if sid not in have_s:
                c.execute(
                    "INSERT INTO sessions (id, owner, created, touched) VALUES (?, ?, ?, ?)",
                    (sid, header.get("owner"), header.get("created") or time.time(), time.time()),
                )
                have_s.add(sid)
                added_sessions += 1
            for v in sorted(versions, key=lambda r: r["id"]):
                if v["id"] in have_v:
                    continue
                why = verify_file(files.absolute(v["file"]), v.get("file_sha256"), v["sha256"], deep=False)
                if why is not None:
                    report.lost.append(f"version {v['id']} of a session in {folder.name}: {why}")
                    continue
                parent = v.get("parent_id") if v.get("parent_id") in have_v else None
                cols = ["id", "session_id", "parent_id", "turn_id", "subtask_id", "kind", "label", "file", "sha256",
                        "width", "height", "created", "bytes", "format", "file_sha256"]  # fmt: skip
                vals = [v["id"], sid, parent, *[v.get(k) for k in cols[3:]]]
                c.execute(f"INSERT INTO versions ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", vals)
                have_v.add(v["id"])
                added_versions += 1
    if added_sessions or added_versions:
        report.from_files = {"sessions": added_sessions, "versions": added_versions}


def drop_lost_versions(files: FileStore, db: Database, report: RepairReport) -> None:
    """Drop versions whose file is missing or changed: children re-parented, heads and turns cleared of them."""
    with db.connect() as c:
        rows = c.all("SELECT id, session_id, parent_id, file, sha256, file_sha256 FROM versions ORDER BY id")
    lost = {}
    for r in rows:
        why = verify_file(files.absolute(r["file"]), r["file_sha256"], r["sha256"], deep=False)
        if why is not None:
            lost[int(r["id"])] = (r["parent_id"], why)
    with db.connect(write=True) as c:
        for vid, (parent, why) in lost.items():
            while parent in lost:
                parent = lost[parent][0]
            c.execute("UPDATE versions SET parent_id = ? WHERE parent_id = ?", (parent, vid))
            c.execute("UPDATE turns SET result_version = NULL WHERE result_version = ?", (vid,))
            c.execute("UPDATE turns SET base_version = NULL WHERE base_version = ?", (vid,))
            for col in ("base_version", "result_version"):  # a proposal's version (costa.store.proposals)
                c.execute(f"UPDATE proposals SET {col} = NULL WHERE {col} = ?", (vid,))
            c.execute("UPDATE sessions SET head = NULL WHERE head = ?", (vid,))
            c.execute("DELETE FROM versions WHERE id = ?", (vid,))
            report.lost.append(f"version {vid}: {why}")
        for s in c.all("SELECT id, redo FROM sessions"):
            redo = [v for v in json.loads(s["redo"] or "[]") if v not in lost]
            c.execute("UPDATE sessions SET redo = ? WHERE id = ?", (json.dumps(redo), s["id"]))
        heads = c.all(
            "SELECT s.id, (SELECT MAX(v.id) FROM versions v WHERE v.session_id = s.id) AS newest FROM sessions s"
            " WHERE s.head IS NULL OR NOT EXISTS (SELECT 1 FROM versions v WHERE v.id = s.head)"
        )
        for h in heads:
            if h["newest"] is not None:
                c.execute("UPDATE sessions SET head = ? WHERE id = ?", (h["newest"], h["id"]))
                report.heads_moved += 1


def quarantine_unknown(files: FileStore, db: Database, report: RepairReport) -> None:
    with db.connect() as c:
        known = {files.absolute(r["file"]) for r in c.all("SELECT file FROM versions")}
        for r in c.all("SELECT params FROM turns WHERE params LIKE ?", ('%"mask_file"%',)):
            f = json.loads(r["params"]).get("mask_file")
            if isinstance(f, str):
                known.add(Path(f))
    unknown = []
    for folder in files.folders():
        for p in files.stored_files(folder):
            if p not in known and not (p.name.startswith(".") and part_target(p.name)):
                unknown.append(p)
    files.quarantine(unknown)
    report.quarantined = len(unknown)


def _store_id(files: FileStore) -> str | None:
    marker = files.identity()
    if marker not in (None, "unreadable"):
        return marker
    for _, header, _ in _journals(files):
        if header is not None and isinstance(header.get("store"), str):
            return str(header["store"])
    return None


def repair(home: Path, database: Database | None = None) -> RepairReport:
    """Repair the store under `home` (see the module docstring); safe to run on a sound store (it re-indexes)."""
    home = Path(home)
    files = FileStore(home)
    db = database or SqliteDatabase(home / "costa.db")
    report = RepairReport()
    store_id = _store_id(files)
    if isinstance(db, SqliteDatabase):
        sound = db.path.is_file() and db.path.stat().st_size > 0 and not db.integrity(quick=False)
        report.rebuilt = not sound
        if not sound and db.path.exists():
            report.moved_aside = _move_aside(db.path)
    db.migrate()
    with db.connect(write=True) as c:
        current = c.one("SELECT value FROM store_meta WHERE key = 'store_id'")["value"]
        if store_id is not None and current != store_id:
            c.execute("UPDATE store_meta SET value = ? WHERE key = 'store_id'", (store_id,))
    if report.moved_aside is not None and report.moved_aside.stat().st_size > 0:
        salvage(report.moved_aside, db, report)
    index_from_files(files, db, report)
    drop_lost_versions(files, db, report)
    quarantine_unknown(files, db, report)
    for table, n in report.unreadable.items():
        report.lost.append(f"{n} row(s) of {table} on damaged pages")
    if report.rebuilt and not report.salvaged.get("turns"):
        report.lost.append("the turns, scores and memory of the old database (they live only there)")
    if files.identity() is None:
        with db.connect() as c:
            files.write_identity(c.one("SELECT value FROM store_meta WHERE key = 'store_id'")["value"])
    return report


def _move_aside(path: Path) -> Path:
    """Rename a damaged database (and its WAL and shared-memory files) out of the way; return the new name."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    try:
        os.replace(path, aside)
        for suffix in ("-wal", "-shm"):
            extra = path.with_name(path.name + suffix)
            if extra.exists():
                os.replace(extra, aside.with_name(aside.name + suffix))
    except OSError as e:
        raise StorageError(f"could not move the damaged database aside: {e.strerror}") from e
    return aside
