"""What the store needs from a database engine: short connections, one dialect-neutral SQL, faults as messages.

A backend (`costa.store.sqlite.SqliteDatabase`, the embedded default; `costa.store.postgres.PostgresDatabase`, shared
by several replicas) opens one short connection per operation (`connect`), runs the schema migrations
(`costa.store.migrations`), and turns the engine's storage faults into `StorageError`s with one sentence (disk full,
read-only, damaged, unreachable), never an "internal error". Every query is written once, with `?` placeholders; a
backend translates them when its driver wants another style. A backend also holds a session's turn lock
(`turn_lock`): in-process only for SQLite (one machine), across every replica for PostgreSQL (`shared`).
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from costa.errors import StorageError

#: A row: read by column name (`r["id"]`), `dict(r)` gives a plain dict; backends return their own mapping type.
Row = Any

#: One sentence per storage fault, for the user (what happened, what was kept, what to do).
DISK_FULL = "the disk holding COSTA_HOME is full: nothing was saved; free space and send again"
READ_ONLY = "COSTA_HOME is read-only: nothing was saved; make it writable and send again (reading still works)"
BUSY = "the store is busy (another process holds its write lock): nothing was saved; send again in a moment"
NO_ACCESS = "costa may not write in COSTA_HOME (permission denied): nothing was saved"


class Connection(Protocol):
    """One open connection (inside a transaction when opened for writing)."""

    dialect: str

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run an INSERT and return the new row's `id`."""
        ...

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row:
        """The first row, or None."""
        ...

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...


class Database(Protocol):
    """A store's database: where it is, how to connect, how to migrate and check it."""

    dialect: str
    url: str  # for messages: never holds a password
    #: Whether processes on other machines use this database too (a turn's lock and Stop must reach them).
    shared: bool

    def connect(self, write: bool = False, durable: bool = True) -> AbstractContextManager[Connection]:
        """A short connection; `write` opens a transaction committed at the end (rolled back on error); `durable`
        False lets the engine skip the flush to disk per commit (observations, not history)."""
        ...

    def migrate(self) -> int:
        """Apply the migrations not yet applied; return the schema version."""
        ...

    def schema_version(self) -> int: ...

    def integrity(self, quick: bool = True) -> list[str]:
        """Problems the engine finds in its own files (empty: none)."""
        ...

    def exists(self) -> bool:
        """Whether the database holds costa's schema already (False: a fresh, empty database)."""
        ...

    def turn_lock(self, session_id: str) -> AbstractContextManager[bool]:
        """Hold the session's turn lock in the database for the block: True when held, False when another process
        holds it (a backend that is not `shared` always holds it: the process's own lock is the one that counts)."""
        ...

    def turn_held(self, session_id: str) -> bool:
        """Whether some process holds the session's turn lock in the database now (False when not `shared`)."""
        ...


def os_fault(e: OSError) -> StorageError | None:
    """The storage fault an OS error on COSTA_HOME is (disk full, read-only, no permission), None for another one."""
    if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return StorageError(DISK_FULL)
    if e.errno == errno.EROFS:
        return StorageError(READ_ONLY)
    if e.errno in (errno.EACCES, errno.EPERM):
        return StorageError(NO_ACCESS)
    return None
