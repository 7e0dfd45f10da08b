"""Which database a store uses: SQLite in COSTA_HOME (the embedded default) or the one COSTA_DATABASE_URL names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from costa.errors import InputError
from costa.store.database import Database
from costa.store.sqlite import SqliteDatabase

if TYPE_CHECKING:
    from costa.config import Settings


def database_for(settings: Settings) -> Database:
    """The backend `settings.database_url` names (None: SQLite at COSTA_HOME/costa.db).

    A postgresql:// URL needs psycopg 3 (in requirements.txt); it is imported only here, when such a URL is given.

    Raises:
        InputError: a URL of an engine costa does not support, or PostgreSQL without psycopg installed.
    """
    url = settings.database_url
    if not url:
        return SqliteDatabase(settings.home / "costa.db")
    if url.startswith(("postgresql://", "postgres://")):
        import importlib.util

        from costa.store.postgres import PostgresDatabase, redact_url

        if importlib.util.find_spec("psycopg") is None:
            raise InputError(
                f"COSTA_DATABASE_URL names PostgreSQL ({redact_url(url)}) but psycopg is not installed: "
                "pip install -r requirements.txt (psycopg[binary]), or unset it for SQLite in COSTA_HOME"
            )
        return PostgresDatabase(url)
    if url.startswith("sqlite:///"):
        from pathlib import Path

        return SqliteDatabase(Path(url.removeprefix("sqlite:///")))
    raise InputError(f"COSTA_DATABASE_URL must start with postgresql:// or sqlite:///, got {url.split(':')[0]!r}")
