"""Server-side history: sessions, image versions, turns and evaluator scores in SQLite (WAL), images as PNG files.

Layout under `home` (COSTA_HOME): `costa.db` and `sessions/<session id>/v<version id>.png`. The schema is an
append-only list of migration functions (`MIGRATIONS`); `PRAGMA user_version` records how many have run, so a new
table or column is always a new function at the end, never an edit of an old one.

Sessions are keyed by an unguessable random id (the browser keeps it); a session created by a logged-in user also has
an `owner` and is visible only to that user. Every read and write names the session, so one user's ids never reach
another's data.

Example:
    >>> import tempfile, numpy as np
    >>> store = Store(Path(tempfile.mkdtemp()))
    >>> s = store.create_session()
    >>> v = store.add_version(s.id, np.zeros((4, 4, 3), np.uint8), kind="upload", label="upload")
    >>> store.session(s.id).head == v.id
    True
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from costa.errors import InputError

VersionKind = Literal["upload", "subtask", "turn"]
TurnStatus = Literal["running", "done", "partial", "unverified", "failed", "stopped"]
#: What became of a subtask's target: verified by its grounder, found but not verified, or needing the user to point.
TargetStatus = Literal["verified", "unverified", "pointing_needed"]
#: Scores evaluators may give a subtask: fail, partial credit 0.1 … 0.9 (CoSTA*'s human-evaluation rubric), full.
SCORE_LEVELS: tuple[float, ...] = tuple(round(i / 10, 1) for i in range(11))


def _statements(db: sqlite3.Connection, script: str) -> None:
    """Run `;`-separated DDL inside the caller's transaction (`executescript` would commit it first)."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _m1_history(db: sqlite3.Connection) -> None:
    _statements(
        db,
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            owner TEXT,
            created REAL NOT NULL,
            head INTEGER,
            redo TEXT NOT NULL DEFAULT '[]'
        );
        CREATE INDEX sessions_owner ON sessions(owner);
        CREATE TABLE versions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            parent_id INTEGER REFERENCES versions(id),
            turn_id INTEGER,
            subtask_id TEXT,
            kind TEXT NOT NULL,
            label TEXT NOT NULL,
            file TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            width INTEGER NOT NULL,
            height INTEGER NOT NULL,
            created REAL NOT NULL
        );
        CREATE INDEX versions_session ON versions(session_id);
        CREATE TABLE turns (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            base_version INTEGER,
            result_version INTEGER,
            instruction TEXT NOT NULL,
            plan TEXT,
            params TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL,
            events TEXT NOT NULL DEFAULT '[]',
            summary TEXT NOT NULL DEFAULT '{}',
            created REAL NOT NULL,
            finished REAL
        );
        CREATE INDEX turns_session ON turns(session_id);
        """,
    )


def _m2_scores(db: sqlite3.Connection) -> None:
    _statements(
        db,
        """
        CREATE TABLE scores (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            turn_id INTEGER NOT NULL REFERENCES turns(id),
            subtask_id TEXT NOT NULL,
            score REAL NOT NULL,
            comment TEXT NOT NULL DEFAULT '',
            evaluator TEXT NOT NULL,
            created REAL NOT NULL,
            UNIQUE (turn_id, subtask_id, evaluator)
        );
        CREATE INDEX scores_session ON scores(session_id);
        """,
    )


def _m3_memory(db: sqlite3.Connection) -> None:
    """Cross-turn memory (costa.reflect.memory): per turn the plan steps, resolved instruction and feedback as JSON,
    and the accepted masks as packed bits."""
    _statements(
        db,
        """
        CREATE TABLE memory (
            session_id TEXT NOT NULL REFERENCES sessions(id),
            turn_id INTEGER NOT NULL REFERENCES turns(id),
            record TEXT NOT NULL,
            PRIMARY KEY (session_id, turn_id)
        );
        CREATE TABLE memory_masks (
            session_id TEXT NOT NULL REFERENCES sessions(id),
            turn_id INTEGER NOT NULL REFERENCES turns(id),
            subtask_id TEXT NOT NULL,
            height INTEGER NOT NULL,
            width INTEGER NOT NULL,
            bits BLOB NOT NULL,
            PRIMARY KEY (turn_id, subtask_id)
        );
        """,
    )


def _m4_observations(db: sqlite3.Connection) -> None:
    """Tool runs and subtask traces (FaSTA*'s observations), learned subroutine rules, proposals, counters."""
    _statements(
        db,
        """
        CREATE TABLE tool_runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created REAL NOT NULL,
            machine TEXT NOT NULL,
            tool TEXT NOT NULL,
            kind TEXT NOT NULL,
            seconds REAL NOT NULL,
            quality REAL NOT NULL,
            passed INTEGER NOT NULL,
            features TEXT NOT NULL DEFAULT '{}',
            params TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX tool_runs_key ON tool_runs(machine, tool, kind);
        CREATE TABLE subtask_traces (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created REAL NOT NULL,
            machine TEXT NOT NULL,
            task TEXT NOT NULL,
            kind TEXT NOT NULL,
            path TEXT NOT NULL,
            seconds REAL NOT NULL,
            quality REAL NOT NULL,
            success INTEGER NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            features TEXT NOT NULL DEFAULT '{}',
            mode TEXT NOT NULL DEFAULT '',
            rule_id TEXT
        );
        CREATE INDEX subtask_traces_kind ON subtask_traces(kind);
        CREATE TABLE subroutine_rules (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            table_version INTEGER NOT NULL,
            rule_id TEXT NOT NULL,
            action TEXT NOT NULL,
            rule TEXT NOT NULL,
            created REAL NOT NULL
        );
        CREATE TABLE subroutine_proposals (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created REAL NOT NULL,
            inducer TEXT NOT NULL,
            action TEXT NOT NULL,
            rule TEXT NOT NULL,
            refinement INTEGER NOT NULL,
            accepted INTEGER NOT NULL,
            evidence TEXT NOT NULL
        );
        CREATE TABLE counters (
            name TEXT PRIMARY KEY,
            value INTEGER NOT NULL
        )
        """,
    )


def _m5_targets(db: sqlite3.Connection) -> None:
    """Per turn and subtask, what its target's grounder verified and what it did not (turn status 'unverified')."""
    _statements(
        db,
        """
        CREATE TABLE targets (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            turn_id INTEGER NOT NULL REFERENCES turns(id),
            subtask_id TEXT NOT NULL,
            target TEXT NOT NULL,
            status TEXT NOT NULL,
            method TEXT NOT NULL DEFAULT '',
            verified TEXT NOT NULL DEFAULT '[]',
            missing TEXT NOT NULL DEFAULT '[]',
            summary TEXT NOT NULL DEFAULT '',
            created REAL NOT NULL
        );
        CREATE INDEX targets_turn ON targets(turn_id);
        """,
    )


#: Schema history, oldest first. Append only: never edit or reorder a migration that has shipped.
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    _m1_history,
    _m2_scores,
    _m3_memory,
    _m4_observations,
    _m5_targets,
)


@dataclass(frozen=True)
class Session:
    id: str
    owner: str | None
    created: float
    head: int | None
    redo: tuple[int, ...] = ()


@dataclass(frozen=True)
class Version:
    """One image in a session's history; `parent_id` makes the history a tree (branches keep both futures)."""

    id: int
    session_id: str
    parent_id: int | None
    turn_id: int | None
    subtask_id: str | None
    kind: str
    label: str
    file: str
    sha256: str
    width: int
    height: int
    created: float

    def summary(self) -> dict[str, object]:
        """The fields a client or a reproducibility bundle shows (no session id, file path or time)."""
        return {
            "id": self.id,
            "parent_id": self.parent_id,
            "kind": self.kind,
            "label": self.label,
            "turn_id": self.turn_id,
            "subtask_id": self.subtask_id,
            "sha256": self.sha256,
            "width": self.width,
            "height": self.height,
        }


@dataclass(frozen=True)
class Turn:
    """One instruction and what came of it; `events` are dicts from `costa.eventlog.event_to_dict`."""

    id: int
    session_id: str
    base_version: int | None
    result_version: int | None
    instruction: str
    plan: dict[str, Any] | None
    params: dict[str, Any]
    status: str
    events: list[dict[str, Any]]
    summary: dict[str, Any]
    created: float
    finished: float | None


@dataclass(frozen=True)
class Score:
    id: int
    session_id: str
    turn_id: int
    subtask_id: str
    score: float
    comment: str
    evaluator: str
    created: float


def image_sha256(image: np.ndarray) -> str:
    """Hash of the pixels and shape (not of a PNG encoding, which varies with the encoder)."""
    h = hashlib.sha256(f"{image.shape[0]}x{image.shape[1]}x{image.shape[2]}:".encode())
    h.update(np.ascontiguousarray(image).tobytes())
    return h.hexdigest()


def _row_version(r: sqlite3.Row) -> Version:
    return Version(**{k: r[k] for k in r.keys()})  # noqa: SIM118 (sqlite3.Row is not a mapping)


def _row_turn(r: sqlite3.Row) -> Turn:
    return Turn(
        id=r["id"],
        session_id=r["session_id"],
        base_version=r["base_version"],
        result_version=r["result_version"],
        instruction=r["instruction"],
        plan=json.loads(r["plan"]) if r["plan"] else None,
        params=json.loads(r["params"]),
        status=r["status"],
        events=json.loads(r["events"]),
        summary=json.loads(r["summary"]),
        created=r["created"],
        finished=r["finished"],
    )


class Store:
    """SQLite history under `home`; safe to share between threads (one short connection per operation)."""

    def __init__(self, home: Path) -> None:
        self.home = Path(home)
        self.files = self.home / "sessions"
        self.files.mkdir(parents=True, exist_ok=True)
        self.path = self.home / "costa.db"
        self._migrate_lock = threading.Lock()
        self.migrate()

    @contextmanager
    def _db(self, write: bool = False) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        db.row_factory = sqlite3.Row
        try:
            db.execute("PRAGMA foreign_keys=ON")
            if write:
                db.execute("BEGIN IMMEDIATE")
                try:
                    yield db
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
            else:
                yield db
        finally:
            db.close()

    def migrate(self) -> int:
        """Run the migrations not yet applied; return the schema version."""
        with self._migrate_lock, self._db() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("BEGIN IMMEDIATE")
            try:
                done = db.execute("PRAGMA user_version").fetchone()[0]
                for i, migration in enumerate(MIGRATIONS[done:], start=done + 1):
                    migration(db)
                    db.execute(f"PRAGMA user_version={i}")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            return len(MIGRATIONS)

    # ------------------------------------------------------------------------------------------------ sessions

    def create_session(self, owner: str | None = None) -> Session:
        sid = secrets.token_urlsafe(18)
        now = time.time()
        with self._db(write=True) as db:
            db.execute("INSERT INTO sessions (id, owner, created) VALUES (?, ?, ?)", (sid, owner, now))
        return Session(sid, owner, now, None)

    def session(self, session_id: str, owner: str | None = None) -> Session:
        """The session, if it exists and `owner` may see it (a session with an owner is visible only to them).

        Raises:
            InputError: unknown session, or one that belongs to another user (the message does not say which).
        """
        if not isinstance(session_id, str) or not session_id:
            raise InputError("no session id given: call new_session first")
        with self._db() as db:
            r = db.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if r is None or (r["owner"] is not None and r["owner"] != owner):
            raise InputError(f"unknown session {session_id[:6]}…: start a new one")
        return Session(r["id"], r["owner"], r["created"], r["head"], tuple(json.loads(r["redo"])))

    def sessions(self, owner: str) -> list[Session]:
        """Sessions owned by `owner`, newest first."""
        with self._db() as db:
            rows = db.execute("SELECT * FROM sessions WHERE owner = ? ORDER BY created DESC", (owner,)).fetchall()
        return [Session(r["id"], r["owner"], r["created"], r["head"], tuple(json.loads(r["redo"]))) for r in rows]

    def set_head(self, session_id: str, version_id: int | None, redo: Sequence[int] = ()) -> None:
        with self._db(write=True) as db:
            db.execute(
                "UPDATE sessions SET head = ?, redo = ? WHERE id = ?", (version_id, json.dumps(list(redo)), session_id)
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
        """Save `image` as a new version (PNG file + row); by default it becomes the head and clears redo."""
        from PIL import Image

        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise InputError(f"a version must be an RGB uint8 image, got shape {image.shape} dtype {image.dtype}")
        folder = self.files / session_id
        folder.mkdir(parents=True, exist_ok=True)
        digest = image_sha256(image)
        now = time.time()
        h, w = image.shape[:2]
        with self._db(write=True) as db:
            cur = db.execute(
                "INSERT INTO versions (session_id, parent_id, turn_id, subtask_id, kind, label, file, sha256, width,"
                " height, created) VALUES (?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?)",
                (session_id, parent_id, turn_id, subtask_id, kind, label, digest, w, h, now),
            )
            vid = int(cur.lastrowid or 0)
            file = folder / f"v{vid}.png"
            Image.fromarray(image).save(file, compress_level=1)
            db.execute("UPDATE versions SET file = ? WHERE id = ?", (str(file), vid))
            if make_head:
                db.execute("UPDATE sessions SET head = ?, redo = '[]' WHERE id = ?", (vid, session_id))
        return Version(vid, session_id, parent_id, turn_id, subtask_id, kind, label, str(file), digest, w, h, now)

    def version(self, session_id: str, version_id: int) -> Version:
        with self._db() as db:
            r = db.execute(
                "SELECT * FROM versions WHERE id = ? AND session_id = ?", (int(version_id), session_id)
            ).fetchone()
        if r is None:
            raise InputError(f"version {version_id} does not exist in this session")
        return _row_version(r)

    def versions(self, session_id: str) -> list[Version]:
        with self._db() as db:
            rows = db.execute("SELECT * FROM versions WHERE session_id = ? ORDER BY id", (session_id,)).fetchall()
        return [_row_version(r) for r in rows]

    def load_image(self, version: Version) -> np.ndarray:
        from PIL import Image

        with Image.open(version.file) as img:
            return np.ascontiguousarray(np.asarray(img.convert("RGB"), dtype=np.uint8))

    # --------------------------------------------------------------------------------------------------- turns

    def start_turn(
        self,
        session_id: str,
        base_version: int | None,
        instruction: str,
        plan: dict[str, Any] | None,
        params: dict[str, Any],
    ) -> int:
        with self._db(write=True) as db:
            cur = db.execute(
                "INSERT INTO turns (session_id, base_version, instruction, plan, params, status, created)"
                " VALUES (?, ?, ?, ?, ?, 'running', ?)",
                (
                    session_id,
                    base_version,
                    instruction,
                    json.dumps(plan) if plan is not None else None,
                    json.dumps(params, default=str),
                    time.time(),
                ),
            )
            return int(cur.lastrowid or 0)

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
        with self._db(write=True) as db:
            db.execute(
                "UPDATE turns SET status = ?, events = ?, summary = ?, result_version = ?, finished = ?,"
                " plan = COALESCE(?, plan) WHERE id = ?",
                (
                    status,
                    json.dumps(events, default=str),
                    json.dumps(summary, default=str),
                    result_version,
                    time.time(),
                    json.dumps(plan) if plan is not None else None,
                    turn_id,
                ),
            )

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
        with self._db(write=True) as db:
            db.execute(
                "INSERT INTO targets (turn_id, subtask_id, target, status, method, verified, missing, summary, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    turn_id,
                    subtask_id,
                    target,
                    status,
                    method,
                    json.dumps(list(verified)),
                    json.dumps(list(missing)),
                    summary,
                    time.time(),
                ),
            )

    def targets(self, turn_id: int) -> list[dict[str, Any]]:
        """The target records of a turn, in the order they were recorded."""
        with self._db() as db:
            rows = db.execute("SELECT * FROM targets WHERE turn_id = ? ORDER BY id", (int(turn_id),)).fetchall()
        return [{**dict(r), "verified": json.loads(r["verified"]), "missing": json.loads(r["missing"])} for r in rows]

    def turn(self, session_id: str, turn_id: int) -> Turn:
        try:
            tid = int(turn_id)
        except (TypeError, ValueError) as e:
            raise InputError(f"turn id must be a whole number, got {turn_id!r}") from e
        with self._db() as db:
            r = db.execute("SELECT * FROM turns WHERE id = ? AND session_id = ?", (tid, session_id)).fetchone()
        if r is None:
            raise InputError(f"turn {turn_id} does not exist in this session")
        return _row_turn(r)

    def turns(self, session_id: str) -> list[Turn]:
        with self._db() as db:
            rows = db.execute("SELECT * FROM turns WHERE session_id = ? ORDER BY id", (session_id,)).fetchall()
        return [_row_turn(r) for r in rows]

    # -------------------------------------------------------------------------------------------------- scores

    def save_score(
        self, session_id: str, turn_id: int, subtask_id: str, score: float, comment: str, evaluator: str
    ) -> Score:
        """Record (or replace) `evaluator`'s score of one subtask of a finished turn.

        Raises:
            InputError: unknown turn or subtask, a turn still running, or a score that is not 0, 0.1 … 0.9 or 1.
        """
        turn = self.turn(session_id, turn_id)
        if turn.status == "running":
            raise InputError(f"turn {turn.id} is still running: score it when it has finished")
        ids = [s["id"] for s in (turn.plan or {}).get("subtasks", [])]
        if subtask_id not in ids:
            raise InputError(f"turn {turn.id} has no subtask {subtask_id!r}; its subtasks are {ids or 'none'}")
        try:
            value = round(float(score), 3)
        except (TypeError, ValueError) as e:
            raise InputError(f"score must be a number, got {score!r}") from e
        if value not in SCORE_LEVELS:
            raise InputError(f"score must be 0 (fail), 0.1 … 0.9 (partial) or 1 (full), got {score!r}")
        evaluator = (evaluator or "").strip() or "anonymous"
        now = time.time()
        with self._db(write=True) as db:
            db.execute(
                "INSERT INTO scores (session_id, turn_id, subtask_id, score, comment, evaluator, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (turn_id, subtask_id, evaluator)"
                " DO UPDATE SET score = excluded.score, comment = excluded.comment, created = excluded.created",
                (session_id, turn.id, subtask_id, value, comment or "", evaluator, now),
            )
            r = db.execute(
                "SELECT * FROM scores WHERE turn_id = ? AND subtask_id = ? AND evaluator = ?",
                (turn.id, subtask_id, evaluator),
            ).fetchone()
        return Score(**{k: r[k] for k in r.keys()})  # noqa: SIM118

    def scores(self, session_id: str) -> list[Score]:
        with self._db() as db:
            rows = db.execute(
                "SELECT * FROM scores WHERE session_id = ? ORDER BY turn_id, subtask_id, evaluator", (session_id,)
            ).fetchall()
        return [Score(**{k: r[k] for k in r.keys()}) for r in rows]  # noqa: SIM118


def save_memory(store: Store, session_id: str, turn_id: int, row: dict[str, Any]) -> None:
    """Save one turn's memory (`costa.reflect.memory.record_to_row`); masks go to their own table as packed bits."""
    record = {k: v for k, v in row.items() if k != "masks"}
    with store._db(write=True) as db:
        db.execute(
            "INSERT OR REPLACE INTO memory (session_id, turn_id, record) VALUES (?, ?, ?)",
            (session_id, int(turn_id), json.dumps(record)),
        )
        for sid, h, w, bits in row.get("masks", ()):
            db.execute(
                "INSERT OR REPLACE INTO memory_masks (session_id, turn_id, subtask_id, height, width, bits)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, int(turn_id), sid, h, w, bits),
            )


def load_memory(store: Store, session_id: str) -> list[dict[str, Any]]:
    """Every remembered turn of a session, oldest first, as rows for `costa.reflect.memory.record_from_row`."""
    with store._db() as db:
        rows = db.execute(
            "SELECT turn_id, record FROM memory WHERE session_id = ? ORDER BY turn_id", (session_id,)
        ).fetchall()
        masks = db.execute(
            "SELECT turn_id, subtask_id, height, width, bits FROM memory_masks WHERE session_id = ?", (session_id,)
        ).fetchall()
    out = []
    for r in rows:
        d = json.loads(r["record"])
        d["masks"] = [
            (m["subtask_id"], m["height"], m["width"], bytes(m["bits"])) for m in masks if m["turn_id"] == r["turn_id"]
        ]
        out.append(d)
    return out


def accuracy(scores: Sequence[Score]) -> tuple[dict[int, float], float | None]:
    """Task accuracy per turn (mean over its scored subtasks, evaluators averaged first) and overall (mean of tasks).

    >>> s = [Score(1, "s", 1, "s1", 1.0, "", "a", 0), Score(2, "s", 1, "s2", 0.5, "", "a", 0),
    ...      Score(3, "s", 2, "s1", 0.0, "", "a", 0)]
    >>> accuracy(s)
    ({1: 0.75, 2: 0.0}, 0.375)
    """
    per_subtask: dict[tuple[int, str], list[float]] = {}
    for s in scores:
        per_subtask.setdefault((s.turn_id, s.subtask_id), []).append(s.score)
    per_turn: dict[int, list[float]] = {}
    for (tid, _), values in per_subtask.items():
        per_turn.setdefault(tid, []).append(sum(values) / len(values))
    tasks = {tid: round(sum(v) / len(v), 4) for tid, v in sorted(per_turn.items())}
    overall = round(sum(tasks.values()) / len(tasks), 4) if tasks else None
    return tasks, overall
