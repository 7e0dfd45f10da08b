"""The shared backend: PostgreSQL through psycopg 3, for several replicas over one store (COSTA_DATABASE_URL).

Short connections come from a small pool of autocommit connections; a write is one transaction. The store's SQL is
written once with `?` placeholders (`pg_sql` turns them into psycopg's `%s`), rows read by column name, by position
and as `dict(r)` (`PgRow`), and NUMERIC results (PostgreSQL's SUM of integers) come back as int or float, as SQLite's
do. The schema version lives in the table `costa_schema`; migrations run under an advisory lock so two replicas
starting together apply them once. A session's turn lock is a session-level advisory lock held on a connection of
its own for the turn (`turn_lock`), so two replicas never run a turn of one session at once.

Faults become one-sentence `StorageError`s naming COSTA_DATABASE_URL without its password (server unreachable,
authentication refused, disk full, read-only). psycopg is imported only here, when a store is opened on such a URL.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from costa.errors import StorageError
from costa.store import migrations

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)

#: Idle connections the pool keeps (more may be open at once; the extra ones are closed when returned).
POOL_SIZE = 4
#: Seconds to wait for the server when connecting.
CONNECT_TIMEOUT_S = 5
#: A pooled connection idle for longer than this is checked (one round trip) before it is used again, so a server
#: restart or an idle timeout costs a reconnect, not a failed request.
PROBE_AFTER_S = 2.0
#: SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html) and what each means for the user.
_DISK_FULL = ("53100", "53200")  # disk_full, out_of_memory
_READ_ONLY = ("25006",)  # read_only_sql_transaction (a standby, or default_transaction_read_only)
_AUTH = ("28000", "28P01")  # invalid_authorization_specification, invalid_password
_NO_ACCESS = ("42501",)  # insufficient_privilege
_BUSY = ("40001", "40P01", "55P03", "53300")  # serialization, deadlock, lock not available, too many connections
_GONE = ("57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004")  # shutdown, connection failures
_NO_DATABASE = ("3D000",)


class PgRow(dict[str, Any]):
    """A result row: `r["name"]`, `r[0]` (by position, as `sqlite3.Row` allows) and `dict(r)`."""

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, int):
            return list(self.values())[key]
        return super().__getitem__(key)


def _row_factory(cursor: Any) -> Any:
    names = [c.name for c in cursor.description or ()]

    def make(values: Sequence[Any]) -> PgRow:
        return PgRow(zip(names, values, strict=True))

    return make


@functools.lru_cache(maxsize=1024)
def pg_sql(sql: str) -> str:
    """`sql` with `?` placeholders as psycopg's `%s` (and a literal `%` doubled); quoted text is left as it is.

    >>> pg_sql("SELECT '?' AS q, x FROM t WHERE a = ? AND b LIKE 'a%' AND c = ?")
    "SELECT '?' AS q, x FROM t WHERE a = %s AND b LIKE 'a%%' AND c = %s"
    """
    out: list[str] = []
    quote = ""
    for ch in sql:
        if ch == "%":
            out.append("%%")  # psycopg reads every % of a query with parameters, quoted or not
        elif quote:
            out.append(ch)
            if ch == quote:
                quote = ""  # a doubled quote ('') closes and reopens: the same text
        elif ch in "'\"":
            quote = ch
            out.append(ch)
        else:
            out.append("%s" if ch == "?" else ch)
    return "".join(out)


def _params(params: Sequence[Any]) -> tuple[Any, ...]:
    # the schema has no BOOLEAN column (SQLite's 0 / 1): a Python bool is stored as the integer SQLite would keep
    return tuple(int(p) if isinstance(p, bool) else p for p in params)


def redact_url(url: str) -> str:
    """`url` without its password (in the user part or the query), for messages and logs.

    >>> redact_url("postgresql://costa:s3cret@db.example:5432/costa?sslmode=require&password=x")
    'postgresql://costa@db.example:5432/costa?sslmode=require'
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        netloc = (f"{parts.username}@" if parts.username else "") + (f"[{host}]" if ":" in host else host)
        if parts.port is not None:
            netloc += f":{parts.port}"
    except ValueError:
        return "postgresql://(unreadable URL)"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k.lower() != "password"])
    return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")


def lock_key(name: str) -> int:
    """The advisory lock key (a signed 64-bit integer) of `name` (a session id, or costa's migration lock)."""
    return int.from_bytes(hashlib.sha256(f"costa:{name}".encode()).digest()[:8], "big", signed=True)


def postgres_fault(e: Exception, url: str) -> StorageError | None:
    """The storage fault a psycopg error is (a sentence naming COSTA_DATABASE_URL as `url`, no password), or None
    when it is a bug in costa (bad SQL, a constraint)."""
    import psycopg

    if not isinstance(e, psycopg.Error):
        return None
    state = e.sqlstate or ""
    text = " ".join(str(e).split())
    where = f"the PostgreSQL server of COSTA_DATABASE_URL ({url})"
    if state in _DISK_FULL or "No space left" in text:
        return StorageError(f"the disk of {where} is full: nothing was saved; free space there and send again")
    if state in _READ_ONLY:
        return StorageError(
            f"{where} accepts only reads (a standby, or a read-only database): nothing was saved; point "
            "COSTA_DATABASE_URL at the primary (reading still works)"
        )
    if state in _AUTH or "password authentication failed" in text or "no pg_hba.conf entry" in text:
        return StorageError(
            f"{where} refused costa's login ({_short(text)}): nothing was saved; fix the user and password in "
            "COSTA_DATABASE_URL"
        )
    if state in _NO_ACCESS:
        return StorageError(f"{where} does not let costa's user do this ({_short(text)}): nothing was saved")
    if state in _NO_DATABASE or ("database" in text and "does not exist" in text):
        return StorageError(
            f"the database of COSTA_DATABASE_URL ({url}) does not exist on its server: nothing was saved; create it "
            "(createdb) or fix the URL"
        )
    if state in _BUSY:
        return StorageError(f"{where} is busy ({_short(text)}): nothing was saved; send again in a moment")
    if state in _GONE or isinstance(e, psycopg.OperationalError):
        return StorageError(
            f"{where} cannot be reached ({_short(text)}): nothing was saved; start the server or fix "
            "COSTA_DATABASE_URL, then send again"
        )
    return None


def _short(text: str) -> str:
    """A driver message cut to its first sentence-like part (no URL or password ever appears in libpq's text)."""
    text = text.split(" DETAIL:")[0].split(" HINT:")[0]
    return text[:160].rstrip(" .")


class PostgresConnection:
    """`costa.store.database.Connection` over one psycopg connection."""

    dialect = "postgres"

    def __init__(self, db: psycopg.Connection[Any]) -> None:
        self.db = db

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        return self.db.execute(pg_sql(sql), _params(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if not rows:
            return
        with self.db.cursor() as cur:
            cur.executemany(pg_sql(sql), [_params(r) for r in rows])

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        row = self.db.execute(pg_sql(sql) + " RETURNING id", _params(params)).fetchone()
        assert row is not None  # an INSERT … RETURNING that did not raise returned its row
        return int(row["id"])

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.db.execute(pg_sql(sql), _params(params)).fetchone()

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return self.db.execute(pg_sql(sql), _params(params)).fetchall()


class PostgresDatabase:
    """`costa.store.database.Database` on the PostgreSQL database `url` names (postgresql://USER:PASS@HOST/DB)."""

    dialect = "postgres"
    #: Other processes, on other machines, use this database too (turns lock across them; Stop reaches them).
    shared = True

    def __init__(self, url: str, pool_size: int = POOL_SIZE) -> None:
        self._dsn = url
        self.url = redact_url(url)
        self.pool_size = pool_size
        self._idle: list[tuple[psycopg.Connection[Any], float]] = []  # (connection, monotonic time it came back)
        self._lock = threading.Lock()
        weakref.finalize(self, _close_idle, self._idle)  # a dropped database closes its pool (no lingering sessions)

    # ------------------------------------------------------------------------------------------ connections

    def _open(self) -> psycopg.Connection[Any]:
        """A new autocommit connection; a fault is a `StorageError`."""
        import psycopg

        try:
            db = psycopg.connect(
                self._dsn,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name="costa",
                row_factory=_row_factory,
            )
        except psycopg.Error as e:
            raise (postgres_fault(e, self.url) or e) from e
        db.adapters.register_loader("numeric", _numeric_loader())
        return db

    def _checkout(self) -> psycopg.Connection[Any]:
        import psycopg

        while True:
            with self._lock:
                if not self._idle:
                    break
                db, since = self._idle.pop()
            if db.closed or db.broken:
                db.close()
                continue
            if time.monotonic() - since < PROBE_AFTER_S:
                return db
            try:
                db.execute("SELECT 1")
                return db
            except psycopg.Error:  # the server restarted or dropped it: open a new one
                db.close()
        return self._open()

    def _checkin(self, db: psycopg.Connection[Any]) -> None:
        from psycopg.pq import TransactionStatus

        if not db.closed and not db.broken and db.info.transaction_status == TransactionStatus.IDLE:
            with self._lock:
                if len(self._idle) < self.pool_size:
                    self._idle.append((db, time.monotonic()))
                    return
        db.close()

    def close(self) -> None:
        """Close the pooled connections (a later `connect` opens new ones)."""
        with self._lock:
            _close_idle(self._idle)

    @contextmanager
    def connect(self, write: bool = False, durable: bool = True) -> Iterator[PostgresConnection]:
        import psycopg

        db = self._checkout()
        try:
            if write:
                with db.transaction():
                    if not durable:  # observations: the commit does not wait for the server's WAL flush
                        db.execute("SET LOCAL synchronous_commit TO OFF")
                    yield PostgresConnection(db)
            else:
                yield PostgresConnection(db)
        except psycopg.Error as e:
            fault = postgres_fault(e, self.url)
            if fault is None:
                raise
            raise fault from e
        finally:
            self._checkin(db)

    # ------------------------------------------------------------------------------------------ schema

    def exists(self) -> bool:
        return self.schema_version() > 0

    def schema_version(self) -> int:
        with self.connect() as db:
            if db.one("SELECT to_regclass('costa_schema') AS t")["t"] is None:
                return 0
            r = db.one("SELECT version FROM costa_schema")
        return 0 if r is None else int(r["version"])

    def migrate(self) -> int:
        """Run the migrations not yet applied, in one transaction (replicas starting together wait for each other);
        return the schema version."""
        with self.connect(write=True) as db:
            db.execute("SELECT pg_advisory_xact_lock(?)", (lock_key("migrate"),))
            db.execute("CREATE TABLE IF NOT EXISTS costa_schema (version BIGINT NOT NULL)")
            r = db.one("SELECT version FROM costa_schema")
            if r is None:
                db.execute("INSERT INTO costa_schema (version) VALUES (0)")
            done = 0 if r is None else int(r["version"])
            for i, migration in enumerate(migrations.MIGRATIONS[done:], start=done + 1):
                migration(db)
                db.execute("UPDATE costa_schema SET version = ?", (i,))
        return len(migrations.MIGRATIONS)

    def integrity(self, quick: bool = True) -> list[str]:
        """Problems with the database (empty: none). PostgreSQL checks its own pages; this says whether costa can
        reach it and read its schema."""
        try:
            self.schema_version()
        except StorageError as e:
            return [str(e)]
        return []

    # ------------------------------------------------------------------------------------------ turn locks

    @contextmanager
    def turn_lock(self, session_id: str) -> Iterator[bool]:
        """Hold session `session_id`'s turn lock for the block (yields True), or yield False when another process
        holds it (see `named_lock`)."""
        with self.named_lock(f"turn:{session_id}") as got:
            yield got

    @contextmanager
    def named_lock(self, name: str) -> Iterator[bool]:
        """Hold the advisory lock `name` for the block (yields True), or yield False when another process — on any
        machine using this database — holds it. The lock lives on a connection of its own, closed at the end (a
        killed holder's lock goes with its connection)."""
        import psycopg

        db = self._open()
        try:
            key = lock_key(name)
            try:
                got = bool(PostgresConnection(db).one("SELECT pg_try_advisory_lock(?) AS got", (key,))["got"])
            except psycopg.Error as e:
                raise (postgres_fault(e, self.url) or e) from e
            if not got:
                yield False
                return
            try:
                yield True
            finally:
                try:
                    db.execute("SELECT pg_advisory_unlock(%s)", (key,))
                except psycopg.Error as e:  # the connection is gone: so is the lock
                    log.warning("could not release lock %s (the connection went away: released with it): %s", name, e)
        finally:
            db.close()

    def turn_held(self, session_id: str) -> bool:
        """Whether any process holds session `session_id`'s turn lock now (a turn of it runs somewhere)."""
        key = lock_key(f"turn:{session_id}") & 0xFFFFFFFFFFFFFFFF
        with self.connect() as db:
            r = db.one(
                "SELECT COUNT(*) AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.locktype ="
                " 'advisory' AND l.granted AND d.datname = current_database() AND l.classid::bigint = ?"
                " AND l.objid::bigint = ? AND l.objsubid = 1",
                (key >> 32, key & 0xFFFFFFFF),
            )
        return int(r["n"]) > 0


def _close_idle(idle: list[tuple[Any, float]]) -> None:
    for db, _ in idle:
        db.close()
    idle.clear()


def _numeric_loader() -> type:
    """A loader of NUMERIC as int (a whole number: SUM and COUNT of integers) or float, as SQLite returns them."""
    from psycopg.adapt import Loader

    class NumericLoader(Loader):
        def load(self, data: Any) -> int | float:
            d = Decimal(bytes(data).decode())
            return int(d) if d == d.to_integral_value() else float(d)

    return NumericLoader
