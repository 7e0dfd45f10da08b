"""The embedded backend: SQLite in WAL mode, one short connection per operation, `foreign_keys=ON` on every one.

This is the only place in costa that opens an SQLite connection (the observations, memory and history tables all
come through it). Faults become one-sentence `StorageError`s: a full disk, a read-only home, a busy lock, a damaged
file. When the home cannot be written, reads fall back to a read-only connection, so history keeps being served.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from costa.errors import StorageError
from costa.store import migrations
from costa.store.database import BUSY, DISK_FULL, READ_ONLY, Row
from costa.store.files import FILE_MODE

#: SQLite result codes (primary, the low byte of the extended code) and what each means for the user.
_FULL, _READONLY, _BUSY, _LOCKED, _CANTOPEN, _CORRUPT, _NOTADB, _IOERR = 13, 8, 5, 6, 14, 11, 26, 10


def damaged_message(path: Path, detail: str) -> str:
    """One line saying the database is damaged, what costa did (nothing) and what to run."""
    detail = " ".join(detail.replace("*** in database main ***", "").split())[:160]
    return (
        f"the database {path} is damaged ({detail}): costa changed nothing; `python -m costa store check` says what "
        "is affected and `python -m costa store repair` rebuilds it from the files (the damaged copy is kept)"
    )


def _disk_full(path: Path) -> bool:
    try:
        st = os.statvfs(path.parent)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 64 * 1024


def sqlite_fault(e: sqlite3.Error, path: Path) -> StorageError | None:
    """The storage fault an SQLite error is, or None when it is a bug (bad SQL, a constraint)."""
    code = (getattr(e, "sqlite_errorcode", 0) or 0) & 0xFF
    text = str(e)
    if code == _FULL or "disk is full" in text:
        return StorageError(DISK_FULL)
    if code == _READONLY or "readonly" in text:
        return StorageError(READ_ONLY)
    if code in (_BUSY, _LOCKED) or "database is locked" in text:
        return StorageError(BUSY)
    if code in (_CORRUPT, _NOTADB) or "malformed" in text or "not a database" in text:
        return StorageError(damaged_message(path, text))
    if code == _CANTOPEN or "unable to open" in text:
        return StorageError(f"the database {path} cannot be opened ({text}): nothing was saved")
    if code == _IOERR or "disk I/O error" in text:
        if _disk_full(path):  # SQLite reports a WAL that cannot grow as an I/O error
            return StorageError(DISK_FULL)
        return StorageError(f"the disk holding COSTA_HOME failed ({text}): nothing was saved; send again")
    return None


class SqliteConnection:
    """`costa.store.database.Connection` over one sqlite3 connection."""

    dialect = "sqlite"

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self.db.execute(sql, tuple(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.db.executemany(sql, [tuple(r) for r in rows])

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        return int(self.db.execute(sql + " RETURNING id", tuple(params)).fetchall()[0][0])

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row:
        return self.db.execute(sql, tuple(params)).fetchone()

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self.db.execute(sql, tuple(params)).fetchall()


class SqliteDatabase:
    """`costa.store.database.Database` on the file `path`."""

    dialect = "sqlite"
    shared = False  # one machine: the session's in-process lock (`costa.session.runtime`) is the turn's lock

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.url = f"sqlite:///{self.path}"
        self._migrate_lock = threading.Lock()

    def _open(self, write: bool) -> sqlite3.Connection:
        db: sqlite3.Connection | None = None
        try:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA foreign_keys=ON")
            if not write:
                db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # opens the WAL index now
            return db
        except sqlite3.OperationalError:
            if db is not None:
                db.close()  # a connection left open on a full disk kept it from being remounted, and leaked
            if write or not self.path.exists():
                raise
            # a read-only home: the WAL index cannot be made, so read the file as it is (nothing can write it)
            db = sqlite3.connect(f"file:{self.path}?immutable=1", uri=True, timeout=30, isolation_level=None)
            db.row_factory = sqlite3.Row
            return db

    @contextmanager
    def connect(self, write: bool = False, durable: bool = True) -> Iterator[SqliteConnection]:
        try:
            db = self._open(write)
        except sqlite3.Error as e:
            raise (sqlite_fault(e, self.path) or e) from e
        try:
            if not durable:
                db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints, no flush per commit
            if write:
                db.execute("BEGIN IMMEDIATE")
                try:
                    yield SqliteConnection(db)
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
            else:
                yield SqliteConnection(db)
        except sqlite3.Error as e:
            fault = sqlite_fault(e, self.path)
            if fault is None:
                raise
            raise fault from e
        finally:
            db.close()

    def exists(self) -> bool:
        if not self.path.is_file() or self.path.stat().st_size == 0:
            return False
        return self.schema_version() > 0

    def schema_version(self) -> int:
        with self.connect() as db:
            return int(db.execute("PRAGMA user_version").fetchone()[0])

    def migrate(self) -> int:
        """Run the migrations not yet applied, in one transaction; return the schema version."""
        with self._migrate_lock, self.connect() as db:
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode=WAL")
            db.execute("BEGIN IMMEDIATE")
            try:
                done = db.execute("PRAGMA user_version").fetchone()[0]
                for i, migration in enumerate(migrations.MIGRATIONS[done:], start=done + 1):
                    migration(db)
                    db.execute(f"PRAGMA user_version={i}")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        for p in self.path.parent.glob(self.path.name + "*"):  # the database and its WAL / shared-memory files
            try:
                if p.stat().st_mode & 0o777 != FILE_MODE:
                    p.chmod(FILE_MODE)
            except FileNotFoundError:  # another process closed the last connection and SQLite removed its -wal/-shm
                continue
        return len(migrations.MIGRATIONS)

    def integrity(self, quick: bool = True) -> list[str]:
        """SQLite's own check of the file (`quick_check` reads every page; `integrity_check` also the indexes)."""
        try:
            with self.connect() as db:
                found = [str(r[0]) for r in db.execute("PRAGMA quick_check" if quick else "PRAGMA integrity_check")]
        except StorageError as e:
            return [str(e.__cause__ or e)]
        except sqlite3.DatabaseError as e:
            return [str(e)]
        return [] if found == ["ok"] else found

    def turn_lock(self, session_id: str) -> AbstractContextManager[bool]:
        return nullcontext(True)

    def turn_held(self, session_id: str) -> bool:
        return False
