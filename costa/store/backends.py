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

    Raises:
        InputError: a URL of an engine costa does not support (PostgreSQL is not built yet).
    """
    url = settings.database_url
    if not url:
        return SqliteDatabase(settings.home / "costa.db")
    if url.startswith(("postgresql://", "postgres://")):
        raise InputError(
            "COSTA_DATABASE_URL names PostgreSQL, which this version cannot use yet (the shared store for several "
            "replicas is not built): unset it for SQLite in COSTA_HOME, or give sqlite:///PATH"
        )
    if url.startswith("sqlite:///"):
        from pathlib import Path

        return SqliteDatabase(Path(url.removeprefix("sqlite:///")))
    raise InputError(f"COSTA_DATABASE_URL must start with postgresql:// or sqlite:///, got {url.split(':')[0]!r}")
