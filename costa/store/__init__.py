"""Server-side history: sessions, image versions, turns, scores, memory and FaSTA*'s observations.

One store owner for every table: `Store` (`costa.store.core`) over a database backend (`costa.store.sqlite`, the
embedded default; `costa.store.postgres` for several replicas, COSTA_DATABASE_URL=postgresql://…) and the version files
(`costa.store.files`).
The schema is an append-only list of migrations (`costa.store.migrations`). Layout under `home` (COSTA_HOME):
`costa.db`, `sessions/STORE` (the store's identity, also in the database) and `sessions/<folder>/` per session, where
`<folder>` is a hash of the session id (never the id itself, which is an access key) holding the image files, named by
their pixels' hash, and `journal.jsonl`. Every folder is 0700 and every file 0600: only the user running costa can read
the history.

The store never deletes a file it cannot prove it wrote (`costa.store.check`); `python -m costa store check | repair |
gc` (`costa.store.commands`) verifies, rebuilds and trims it; growth is bounded by per-owner quotas and idle expiry
(`costa.store.retention`).

Sessions are keyed by an unguessable random id (the browser keeps it); a session created by a logged-in user also has
an `owner` and is visible only to that user. Every read and write names the session, so one user's ids never reach
another's data.

Example:
    >>> import tempfile, numpy as np
    >>> from pathlib import Path
    >>> store = Store(Path(tempfile.mkdtemp()))
    >>> s = store.create_session()
    >>> v = store.add_version(s.id, np.zeros((4, 4, 3), np.uint8), kind="upload", label="upload")
    >>> store.session(s.id).head == v.id
    True
"""

from __future__ import annotations

from costa.store.core import NewVersion, Store
from costa.store.files import DIR_MODE, FILE_MODE, SourceFile, image_sha256, private_dir, session_folder_name
from costa.store.memory import load_memory, save_memory
from costa.store.migrations import MIGRATIONS
from costa.store.records import (
    SCORE_LEVELS,
    Score,
    Session,
    TargetStatus,
    Turn,
    TurnStatus,
    Version,
    VersionKind,
    accuracy,
)
from costa.store.retention import Quotas

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "MIGRATIONS",
    "SCORE_LEVELS",
    "NewVersion",
    "Quotas",
    "Score",
    "Session",
    "SourceFile",
    "Store",
    "TargetStatus",
    "Turn",
    "TurnStatus",
    "Version",
    "VersionKind",
    "accuracy",
    "image_sha256",
    "load_memory",
    "private_dir",
    "save_memory",
    "session_folder_name",
]
