"""`Store`: sessions, versions, turns, targets and scores over one database backend and the version files.

Every read and write names the session, so one user's ids never reach another's data. Every value is validated
(`costa.store.validate`) before anything is written; every storage fault is a one-sentence `StorageError`.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from costa.errors import InputError, StorageError
from costa.store.database import Connection, Database
from costa.store.files import FileStore, SourceFile, decode, encode, image_sha256
from costa.store.records import (
    SCORE_LEVELS,
    Score,
    Session,
    TargetStatus,
    Turn,
    TurnStatus,
    Version,
    VersionKind,
    row_score,
    row_session,
    row_turn,
    row_version,
)
from costa.store.retention import Quotas, check_version_quota, make_room_for_session, owner_clause
from costa.store.sqlite import SqliteDatabase
from costa.store.validate import check_session_id, check_text, parse_id

if TYPE_CHECKING:
    from costa.config import Settings

KINDS = ("upload", "subtask", "turn")
_VERSION_COLUMNS = (
    "session_id, parent_id, turn_id, subtask_id, kind, label, file, sha256, width, height, created, bytes, format,"
    " file_sha256"
)


@dataclass(frozen=True, eq=False)
class NewVersion:
    """A version to add: its image and place in the history (`source`: the upload's own file, kept when exact)."""

    session_id: str
    image: np.ndarray
    kind: VersionKind
    label: str
    parent_id: int | None = None
    turn_id: int | None = None
    subtask_id: str | None = None
    make_head: bool = True
    source: SourceFile | None = None


class Store:
    """The history under `home`; safe to share between threads and processes (one short connection per operation).

    Opening checks the database (a damaged or missing one with files beside it: `StorageError`, nothing touched),
    runs the migrations and matches the store's identity in the database with the one beside the files.
    """

    def __init__(self, home: Path, database: Database | None = None, quotas: Quotas | None = None) -> None:
        from costa.store.check import open_checked

        self.home = Path(home)
        self.files = FileStore(self.home)
        self.path = self.home / "costa.db"  # the SQLite file (the default backend)
        self.db: Database = database or SqliteDatabase(self.path)
        self.quotas = quotas or Quotas()
        self.store_id = open_checked(self)

    @classmethod
    def from_settings(cls, settings: Settings) -> Store:
        """The store `settings` describe (COSTA_HOME, COSTA_DATABASE_URL, quotas)."""
        from costa.store.backends import database_for

        return cls(settings.home, database_for(settings), quotas_of(settings))

    def connect(self, write: bool = False, durable: bool = True) -> AbstractContextManager[Connection]:
        """A short connection to the store's database (see `costa.store.database.Database.connect`)."""
        return self.db.connect(write=write, durable=durable)

    def migrate(self) -> int:
        return self.db.migrate()

    # ------------------------------------------------------------------------------------------------ sessions

    def create_session(self, owner: str | None = None) -> Session:
        """A new session (dropping the owner's oldest empty sessions past the session quota).

        Raises:
            QuotaError: the owner holds the most sessions allowed and none of them is empty.
        """
        if owner is not None:
            check_text(owner, "user name", 200)
        sid = secrets.token_urlsafe(18)
        now = time.time()
        with self.connect(write=True) as db:
            make_room_for_session(db, self.quotas, owner)
            db.execute("INSERT INTO sessions (id, owner, created, touched) VALUES (?, ?, ?, ?)", (sid, owner, now, now))
        return Session(sid, owner, now, None)

    def session(self, session_id: str, owner: str | None = None) -> Session:
        """The session, if it exists and `owner` may see it (a session with an owner is visible only to them).

        Raises:
            InputError: unknown session, or one that belongs to another user (the message does not say which).
        """
        check_session_id(session_id)
        with self.connect() as db:
            r = db.one("SELECT * FROM sessions WHERE id = ?", (session_id,))
        # exact match: with login on, a session made before login was enabled (no owner) is no one's to open
        if r is None or r["owner"] != owner:
            raise InputError(f"unknown session {session_id[:6]}…: start a new one")
        return row_session(r)

    def sessions(self, owner: str | None) -> list[Session]:
        """Sessions owned by `owner` (None: the sessions made without login), newest first."""
        where, args = owner_clause(owner)
        with self.connect() as db:
            rows = db.all(f"SELECT * FROM sessions s WHERE {where} ORDER BY created DESC", args)
        return [row_session(r) for r in rows]

    def set_head(self, session_id: str, version_id: int | None, redo: Sequence[int] = ()) -> None:
        head = None if version_id is None else parse_id(version_id, "version id")
        stack = [parse_id(v, "version id") for v in redo]
        with self.connect(write=True) as db:
            db.execute(
                "UPDATE sessions SET head = ?, redo = ?, touched = ? WHERE id = ?",
                (head, json.dumps(stack), time.time(), session_id),
            )

    # ------------------------------------------------------------------------------------------------ versions

    def add_version(
        self,
        session_id: str,
        image: np.ndarray,
        kind: VersionKind,
        label: str,
        parent_id: int | None = None,
        turn_id: int | None = None,
        subtask_id: str | None = None,
        make_head: bool = True,
    ) -> Version:
        """Save `image` as a new version (file + row); by default it becomes the head and clears redo."""
        return self.add(NewVersion(session_id, image, kind, label, parent_id, turn_id, subtask_id, make_head))

    def add_upload(
        self, session_id: str, image: np.ndarray, label: str, source: SourceFile | None, parent_id: int | None
    ) -> Version:
        """Save an upload as the new head, in its own file format when those bytes decode to exactly `image`."""
        return self.add(NewVersion(session_id, image, "upload", label, parent_id, source=source))

    def add(self, new: NewVersion) -> Version:
        """Save a new version.

        The file is complete (and journalled) before its row commits: a kill between the two leaves a file the
        journal proves is costa's (removed at the next start), never a row without its image.

        Raises:
            InputError: not an RGB uint8 image, an unknown kind, a label that is not text.
            QuotaError: the owner's version or byte quota would be passed.
            StorageError: the disk is full or read-only (nothing was saved).
        """
        image = new.image
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise InputError(f"a version must be an RGB uint8 image, got shape {image.shape} dtype {image.dtype}")
        if new.kind not in KINDS:
            raise InputError(f"a version's kind must be one of {KINDS}, got {new.kind!r}")
        label = check_text(new.label, "version label", 500)
        parent, turn = (None if x is None else parse_id(x, "id") for x in (new.parent_id, new.turn_id))
        sub = None if new.subtask_id is None else check_text(new.subtask_id, "subtask id", 100)
        session = self._session_row(new.session_id)
        enc = encode(image, new.source)
        digest = image_sha256(image)
        with self.connect() as db:
            check_version_quota(db, self.quotas, session.owner, len(enc.data))
        folder = self.files.folder(session.id)
        path = self.files.write_file(folder, f"{digest}.{enc.ext}", enc.data, self._header(session))
        now = time.time()
        h, w = image.shape[:2]
        values = (session.id, parent, turn, sub, new.kind, label, self.files.relative(path), digest, w, h, now,
                  len(enc.data), enc.format, enc.sha256)  # fmt: skip
        with self.connect(write=True) as db:
            check_version_quota(db, self.quotas, session.owner, len(enc.data))
            marks = ", ".join("?" * len(values))
            vid = db.insert(f"INSERT INTO versions ({_VERSION_COLUMNS}) VALUES ({marks})", values)
            if new.make_head:
                db.execute(
                    "UPDATE sessions SET head = ?, redo = '[]', touched = ? WHERE id = ?", (vid, now, session.id)
                )
            else:
                db.execute("UPDATE sessions SET touched = ? WHERE id = ?", (now, session.id))
        record = dict(zip(_VERSION_COLUMNS.replace(" ", "").split(","), values, strict=True))
        self.files.journal(folder, {"op": "version", "id": vid, **record})
        return Version(vid, session.id, parent, turn, sub, new.kind, label, str(path), digest, w, h, now)

    def version(self, session_id: str, version_id: Any) -> Version:
        vid = parse_id(version_id, "version id")
        with self.connect() as db:
            r = db.one("SELECT * FROM versions WHERE id = ? AND session_id = ?", (vid, session_id))
        if r is None:
            raise InputError(f"version {vid} does not exist in this session")
        return self._version(r)

    def versions(self, session_id: str) -> list[Version]:
        with self.connect() as db:
            rows = db.all("SELECT * FROM versions WHERE session_id = ? ORDER BY id", (session_id,))
        return [self._version(r) for r in rows]

    def load_image(self, version: Version) -> np.ndarray:
        """The version's pixels.

        Raises:
            StorageError: its file is missing or unreadable (removed or damaged outside costa).
        """
        try:
            data = Path(version.file).read_bytes()
            return decode(data)
        except FileNotFoundError:
            raise StorageError(
                f"the image file of version {version.id} is missing from COSTA_HOME (removed outside costa): nothing "
                "was changed; `python -m costa store check` lists what is lost"
            ) from None
        except (OSError, ValueError) as e:
            raise StorageError(
                f"the image file of version {version.id} cannot be read ({type(e).__name__}): nothing was changed; "
                "`python -m costa store check` lists what is damaged"
            ) from e

    # --------------------------------------------------------------------------------------------------- turns

    def start_turn(
        self,
        session_id: str,
        base_version: int | None,
        instruction: str,
        plan: dict[str, Any] | None,
        params: dict[str, Any],
    ) -> int:
        text = check_text(instruction, "the instruction", 100_000)
        base = None if base_version is None else parse_id(base_version, "version id")
        now = time.time()
        with self.connect(write=True) as db:
            tid = db.insert(
                "INSERT INTO turns (session_id, base_version, instruction, plan, params, status, created)"
                " VALUES (?, ?, ?, ?, ?, 'running', ?)",
                (session_id, base, text, _json(plan), json.dumps(params, default=str), now),
            )
            db.execute("UPDATE sessions SET touched = ? WHERE id = ?", (now, session_id))
            return tid

    def finish_turn(
        self,
        turn_id: int,
        status: TurnStatus,
        events: list[dict[str, Any]],
        summary: dict[str, Any],
        result_version: int | None,
        plan: dict[str, Any] | None = None,
    ) -> None:
        """Record how a turn ended: status, its events, costs, the version it made, and its plan (when planned)."""
        with self.connect(write=True) as db:
            db.execute(
                "UPDATE turns SET status = ?, events = ?, summary = ?, result_version = ?, finished = ?,"
                " plan = COALESCE(?, plan) WHERE id = ?",
                (status, json.dumps(events, default=str), json.dumps(summary, default=str), result_version,
                 time.time(), _json(plan), turn_id),
            )  # fmt: skip

    def set_turn_base(self, turn_id: int, base_version: int) -> None:
        """Point a running turn at the version it edits (an upload stored only once the turn keeps a result)."""
        with self.connect(write=True) as db:
            db.execute("UPDATE turns SET base_version = ? WHERE id = ?", (parse_id(base_version, "id"), turn_id))

    def mark_interrupted(self) -> int:
        """Mark turns left `running` by a killed process as `interrupted` (call once at app start); return how many.

        On a shared database a turn whose session's turn lock some replica holds is running there, and is left alone.
        """
        if not self.db.shared:
            with self.connect(write=True) as db:
                cur = db.execute(
                    "UPDATE turns SET status = 'interrupted', finished = ? WHERE status = 'running'", (time.time(),)
                )
                return int(cur.rowcount or 0)
        with self.connect() as db:
            running = db.all("SELECT id, session_id FROM turns WHERE status = 'running'")
        # a live turn holds its lock from before its row is written until after it is finished: an unheld one is dead
        dead = [int(r["id"]) for r in running if not self.db.turn_held(r["session_id"])]
        if not dead:
            return 0
        with self.connect(write=True) as db:
            cur = db.execute(
                f"UPDATE turns SET status = 'interrupted', finished = ? WHERE status = 'running' AND id IN"
                f" ({', '.join('?' * len(dead))})",
                (time.time(), *dead),
            )
            return int(cur.rowcount or 0)

    def mark_session_interrupted(self, session_id: str) -> int:
        """Mark the session's turns left `running` as `interrupted`; return how many. Call only while holding the
        session's turn lock (`replica_turn`): then no replica runs any of them (one killed with the turn running
        leaves its row so, and the replica that next runs a turn of the session is the one to see it)."""
        with self.connect(write=True) as db:
            cur = db.execute(
                "UPDATE turns SET status = 'interrupted', finished = ? WHERE status = 'running' AND session_id = ?",
                (time.time(), session_id),
            )
            return int(cur.rowcount or 0)

    def turn(self, session_id: str, turn_id: Any) -> Turn:
        tid = parse_id(turn_id, "turn id")
        with self.connect() as db:
            r = db.one("SELECT * FROM turns WHERE id = ? AND session_id = ?", (tid, session_id))
        if r is None:
            raise InputError(f"turn {tid} does not exist in this session")
        return row_turn(r)

    def turns(self, session_id: str) -> list[Turn]:
        with self.connect() as db:
            rows = db.all("SELECT * FROM turns WHERE session_id = ? ORDER BY id", (session_id,))
        return [row_turn(r) for r in rows]

    def save_mask(self, session_id: str, data: np.ndarray) -> str:
        """Store a turn's brush mask (bool H×W) as a PNG in the session's folder; return its path for the turn's
        params (`mask_file`)."""
        import io

        from PIL import Image

        session = self._session_row(session_id)
        buf = io.BytesIO()
        Image.fromarray(np.asarray(data, bool).astype(np.uint8) * 255).save(buf, format="PNG")
        folder = self.files.folder(session_id)
        path = self.files.write_file(folder, f"mask-{secrets.token_hex(8)}.png", buf.getvalue(), self._header(session))
        return str(path)

    def turn_mask(self, turn: Turn) -> Path | None:
        """The brush mask file a turn was given, if any and still present."""
        f = turn.params.get("mask_file")
        p = Path(f) if isinstance(f, str) else None
        return p if p is not None and p.parent.parent == self.files.root and p.is_file() else None

    def record_target(
        self,
        turn_id: int,
        subtask_id: str,
        target: str,
        status: TargetStatus,
        method: str = "",
        verified: Sequence[str] = (),
        missing: Sequence[str] = (),
        summary: str = "",
    ) -> None:
        """Record what became of one subtask's target in a turn (see `TargetStatus`)."""
        texts = [check_text(v, "target record", 10_000) for v in (subtask_id, target, status, method, summary)]
        with self.connect(write=True) as db:
            db.execute(
                "INSERT INTO targets (turn_id, subtask_id, target, status, method, verified, missing, summary, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (turn_id, *texts[:4], json.dumps(list(verified)), json.dumps(list(missing)), texts[4], time.time()),
            )

    def targets(self, turn_id: int) -> list[dict[str, Any]]:
        """The target records of a turn, in the order they were recorded."""
        with self.connect() as db:
            rows = db.all("SELECT * FROM targets WHERE turn_id = ? ORDER BY id", (parse_id(turn_id, "turn id"),))
        return [{**dict(r), "verified": json.loads(r["verified"]), "missing": json.loads(r["missing"])} for r in rows]

    # -------------------------------------------------------------------------------------------------- scores

    def save_score(
        self, session_id: str, turn_id: Any, subtask_id: str, score: Any, comment: str, evaluator: str
    ) -> Score:
        """Record (or replace) `evaluator`'s score of one subtask of a finished turn.

        Raises:
            InputError: unknown turn or subtask, a turn still running, a score that is not 0, 0.1 … 0.9 or 1, or a
                comment / name that is not valid text.
        """
        turn = self.turn(session_id, turn_id)
        comment = check_text(comment or "", "comment", 10_000)
        evaluator = check_text(evaluator or "", "evaluator name", 200).strip() or "anonymous"
        if turn.status == "running":
            raise InputError(f"turn {turn.id} is still running: score it when it has finished")
        ids = [s["id"] for s in (turn.plan or {}).get("subtasks", [])]
        if subtask_id not in ids:
            shown = str(subtask_id)[:40]
            raise InputError(f"turn {turn.id} has no subtask {shown!r}; its subtasks are {ids or 'none'}")
        try:
            value = round(float(score), 3)
        except (TypeError, ValueError, OverflowError) as e:
            raise InputError(f"score must be a number, got {str(score)[:40]!r}") from e
        if value not in SCORE_LEVELS:
            raise InputError(f"score must be 0 (fail), 0.1 … 0.9 (partial) or 1 (full), got {score!r}")
        with self.connect(write=True) as db:
            db.execute(
                "INSERT INTO scores (session_id, turn_id, subtask_id, score, comment, evaluator, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (turn_id, subtask_id, evaluator)"
                " DO UPDATE SET score = excluded.score, comment = excluded.comment, created = excluded.created",
                (session_id, turn.id, subtask_id, value, comment, evaluator, time.time()),
            )
            r = db.one(
                "SELECT * FROM scores WHERE turn_id = ? AND subtask_id = ? AND evaluator = ?",
                (turn.id, subtask_id, evaluator),
            )
        return row_score(r)

    def scores(self, session_id: str) -> list[Score]:
        with self.connect() as db:
            rows = db.all(
                "SELECT * FROM scores WHERE session_id = ? ORDER BY turn_id, subtask_id, evaluator", (session_id,)
            )
        return [row_score(r) for r in rows]

    # ------------------------------------------------------------------------------------------------ recovery

    def recover(self) -> dict[str, int]:
        """After an unclean stop (call once when an app starts): remove files a killed process left half-stored
        (the journal proves they are costa's), quarantine files nothing accounts for, count missing version files."""
        from costa.store.check import sweep

        return sweep(self)

    def sweep_orphans(self) -> int:
        """`recover`, returning how many files were removed or quarantined."""
        found = self.recover()
        return found["removed"] + found["quarantined"]

    # --------------------------------------------------------------------------------------------------- inner

    def _version(self, r: Any) -> Version:
        v = row_version(r)
        return replace(v, file=str(self.files.absolute(v.file)))

    def _session_row(self, session_id: str) -> Session:
        with self.connect() as db:
            r = db.one("SELECT * FROM sessions WHERE id = ?", (session_id,))
        if r is None:
            raise InputError(f"unknown session {str(session_id)[:6]}…: start a new one")
        return row_session(r)

    def _header(self, session: Session) -> dict[str, Any]:
        """A session folder's journal header: which store and session its files belong to."""
        return {"op": "session", "store": self.store_id, "session_id": session.id, "owner": session.owner,
                "created": session.created}  # fmt: skip


def _json(value: Any) -> str | None:
    return json.dumps(value) if value is not None else None


def quotas_of(settings: Settings) -> Quotas:
    """The per-owner quotas `settings` ask for."""
    return Quotas(settings.quota_sessions, settings.quota_versions, int(settings.quota_gb * 1024**3))
