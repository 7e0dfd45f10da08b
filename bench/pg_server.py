"""A throwaway PostgreSQL server for the tests and `bench scale`: Debian's binaries, a temp data directory, 127.0.0.1, a
free port (a real server, not a fake, so it lives beside the benches rather than in `costa/testing`).

`pg_server()` runs `initdb` and `pg_ctl start` (as the `postgres` user when the tests run as root: PostgreSQL refuses
to run as root), yields the server's URL (user `costa` with the password `PASSWORD` over TCP, database `postgres`)
and stops it and removes the directory at the end. `fresh_database(url)` makes an empty database on it for one
test. Without the binaries (`apt-get install postgresql`), `postgres_binaries()` is None and the tests that need a
server skip.

Example (not run as a doctest: it starts a server):
    with pg_server() as url:
        store = Store(home, PostgresDatabase(fresh_database(url)))
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: Where Debian's postgresql package puts the server's programs (COSTA_PG_BIN: another folder).
DEBIAN_BIN = Path("/usr/lib/postgresql/15/bin")
#: The superuser `initdb` makes and its password (a login over TCP asks for it, so a wrong one can be tested).
USER, PASSWORD = "costa", "costa-test"


def postgres_binaries() -> Path | None:
    """The folder holding `initdb`, `pg_ctl` and `postgres`, or None when PostgreSQL's server is not installed."""
    folder = Path(os.environ.get("COSTA_PG_BIN") or DEBIAN_BIN)
    if all((folder / name).is_file() for name in ("initdb", "pg_ctl", "postgres")):
        return folder
    return None


def missing_reason() -> str | None:
    """Why the PostgreSQL tests must skip (for pytest's report), or None when they can run."""
    import importlib.util

    if postgres_binaries() is None:
        folder = os.environ.get("COSTA_PG_BIN") or DEBIAN_BIN
        return f"no PostgreSQL server binaries in {folder} (apt-get install -y postgresql, or set COSTA_PG_BIN)"
    if importlib.util.find_spec("psycopg") is None:
        return "psycopg is not installed (pip install -r requirements.txt)"
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server_user(argv: list[str]) -> list[str]:
    """`argv` run as the `postgres` user when we are root (initdb and postgres refuse root), else as it is."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *argv]
    return argv


def _give_to_server_user(path: Path) -> None:
    if os.geteuid() == 0:
        shutil.chown(path, user="postgres", group="postgres")


def _run(argv: list[str], what: str) -> None:
    r = subprocess.run(_as_server_user(argv), capture_output=True, text=True, timeout=120, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {r.returncode}): {(r.stderr or r.stdout).strip()[-1500:]}")


@dataclass
class PgServer:
    """A throwaway server's folder, port and URL; `start` and `stop` it (a test of an outage stops it meanwhile)."""

    binaries: Path
    root: Path
    port: int

    @property
    def url(self) -> str:
        return f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        data, log = self.root / "data", self.root / "server.log"
        # durability off: a test server's data is thrown away; the socket folder is ours, not /var/run/postgresql
        options = (f"-h 127.0.0.1 -p {self.port} -k {self.root} -c fsync=off -c synchronous_commit=off "
                   "-c full_page_writes=off -c max_connections=200 -c shared_buffers=16MB")  # fmt: skip
        try:
            _run([str(self.binaries / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60", "-o", options,
                  "start"], "starting PostgreSQL")  # fmt: skip
        except RuntimeError as e:
            tail = log.read_text(errors="replace")[-1500:] if log.is_file() else ""
            raise RuntimeError(f"{e}; server log: {tail}") from e

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: "fast" keeps what was committed (WAL flushed); "immediate" is a crash (the end of a run:
        with fsync and synchronous commit off, recent commits may be lost)."""
        _run([str(self.binaries / "pg_ctl"), "-D", str(self.root / "data"), "-m", mode, "-w", "stop"],
             "stopping PostgreSQL")  # fmt: skip


@contextmanager
def pg_server_process() -> Iterator[PgServer]:
    """Make a PostgreSQL cluster in a temp directory and start it; stop it and delete the directory after.

    Raises:
        RuntimeError: the binaries are missing, or initdb / the server failed (the message holds its log's end).
    """
    binaries = postgres_binaries()
    if binaries is None:
        raise RuntimeError(missing_reason() or "no PostgreSQL server binaries")
    root = Path(tempfile.mkdtemp(prefix="costa-pg-"))
    _give_to_server_user(root)
    server = PgServer(binaries, root, free_port())
    try:
        pwfile = root / "password"
        pwfile.write_text(PASSWORD + "\n")
        _give_to_server_user(pwfile)
        _run([str(binaries / "initdb"), "-D", str(root / "data"), "-U", USER, f"--pwfile={pwfile}",
              "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync"],
             "initdb")  # fmt: skip
        server.start()
        try:
            yield server
        finally:
            if (root / "data" / "postmaster.pid").exists():
                server.stop("immediate")
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def pg_server() -> Iterator[str]:
    """`pg_server_process`, yielding the server's URL."""
    with pg_server_process() as server:
        yield server.url


def fresh_database(url: str) -> str:
    """Create an empty database on the server at `url` (a test's own) and return its URL."""
    import psycopg

    name = f"costa_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")
    return url.rsplit("/", 1)[0] + "/" + name
