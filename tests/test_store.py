"""The history store: migrations, ownership, the version tree, turns and scores (SQLite in a temp COSTA_HOME; the
tests taking `store_database` run on PostgreSQL too)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from costa.errors import InputError
from costa.store import MIGRATIONS, Score, Store, accuracy, image_sha256
from costa.store.database import Database


def img(value: int, h: int = 6, w: int = 8) -> np.ndarray:
    return np.full((h, w, 3), value, np.uint8)


def test_migrations_run_once_in_order_and_use_wal(tmp_path: Path) -> None:
    store = Store(tmp_path)
    db = sqlite3.connect(store.path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"sessions", "versions", "turns", "scores"} <= tables
    db.close()
    assert Store(tmp_path).migrate() == len(MIGRATIONS)  # reopening applies nothing twice


def test_a_new_migration_is_applied_to_an_existing_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Store(tmp_path)

    def m_extra(db: Any) -> None:
        db.execute("CREATE TABLE extra (x INTEGER)")

    import costa.store.migrations as migrations

    monkeypatch.setattr(migrations, "MIGRATIONS", (*MIGRATIONS, m_extra))
    assert Store(tmp_path).migrate() == len(MIGRATIONS) + 1
    db = sqlite3.connect(tmp_path / "costa.db")
    assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) + 1
    db.close()


def test_sessions_are_private_to_their_owner(tmp_path: Path, store_database: Callable[[], Database]) -> None:
    store = Store(tmp_path, store_database())
    alice = store.create_session("alice")
    anon = store.create_session()
    assert store.session(alice.id, "alice").owner == "alice"
    with pytest.raises(InputError, match="unknown session"):
        store.session(alice.id, "bob")
    with pytest.raises(InputError, match="unknown session"):
        store.session(alice.id, None)
    assert store.session(anon.id, None).id == anon.id
    with pytest.raises(InputError, match="unknown session"):
        store.session("no-such-session", None)
    assert [s.id for s in store.sessions("alice")] == [alice.id]
    assert store.sessions("bob") == []
    assert len(alice.id) >= 24  # unguessable: 18 random bytes


def test_versions_form_a_tree_with_pixel_hashes(tmp_path: Path, store_database: Callable[[], Database]) -> None:
    store = Store(tmp_path, store_database())
    s = store.create_session()
    v1 = store.add_version(s.id, img(10), "upload", "upload")
    v2 = store.add_version(s.id, img(20), "turn", "turn 1", parent_id=v1.id)
    v3 = store.add_version(s.id, img(30), "turn", "turn 2", parent_id=v1.id)  # a second branch from v1
    assert store.session(s.id).head == v3.id
    assert [v.parent_id for v in store.versions(s.id)] == [None, v1.id, v1.id]
    assert v2.sha256 == image_sha256(img(20)) != v3.sha256
    assert np.array_equal(store.load_image(v2), img(20))
    other = store.create_session()
    with pytest.raises(InputError, match="does not exist in this session"):
        store.version(other.id, v2.id)  # another session's version is invisible
    with pytest.raises(InputError, match="RGB uint8"):
        store.add_version(s.id, np.zeros((4, 4), np.uint8), "upload", "grey")


def test_image_hash_depends_on_shape_not_only_bytes() -> None:
    assert image_sha256(img(0, 4, 6)) != image_sha256(img(0, 6, 4))


def test_turns_record_plan_events_and_summary(tmp_path: Path, store_database: Callable[[], Database]) -> None:
    store = Store(tmp_path, store_database())
    s = store.create_session()
    tid = store.start_turn(s.id, None, "remove the text", None, {"alpha": 1.0})
    assert store.turn(s.id, tid).status == "running"
    plan = {"subtasks": [{"id": "s1", "kind": "text_removal"}]}
    store.finish_turn(tid, "done", [{"kind": "plan_ready"}], {"seconds": 1.5}, None, plan)
    t = store.turn(s.id, tid)
    assert (t.status, t.plan, t.events, t.summary["seconds"]) == ("done", plan, [{"kind": "plan_ready"}], 1.5)
    with pytest.raises(InputError, match="turn 999 does not exist"):
        store.turn(s.id, 999)
    with pytest.raises(InputError, match="whole number"):
        store.turn(s.id, "abc")  # type: ignore[arg-type]


def test_scores_validate_levels_turns_and_subtasks(tmp_path: Path, store_database: Callable[[], Database]) -> None:
    store = Store(tmp_path, store_database())
    s = store.create_session()
    plan = {"subtasks": [{"id": "s1", "kind": "text_removal"}, {"id": "s2", "kind": "text_addition"}]}
    tid = store.start_turn(s.id, None, "x", plan, {})
    with pytest.raises(InputError, match="still running"):
        store.save_score(s.id, tid, "s1", 1.0, "", "ann")
    store.finish_turn(tid, "done", [], {}, None)
    store.save_score(s.id, tid, "s1", 1.0, "good", "ann")
    store.save_score(s.id, tid, "s2", 0.4, "half", "ann")
    store.save_score(s.id, tid, "s2", 0.6, "re-scored", "ann")  # the same evaluator replaces their score
    assert [(x.subtask_id, x.score, x.comment) for x in store.scores(s.id)] == [
        ("s1", 1.0, "good"),
        ("s2", 0.6, "re-scored"),
    ]
    for bad in (0.55, 1.5, -0.1, "high"):
        with pytest.raises(InputError, match="score must"):
            store.save_score(s.id, tid, "s1", bad, "", "ann")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="no subtask 's9'"):
        store.save_score(s.id, tid, "s9", 1.0, "", "ann")
    with pytest.raises(InputError, match="turn 4242 does not exist"):
        store.save_score(s.id, 4242, "s1", 1.0, "", "ann")
    tasks, overall = accuracy(store.scores(s.id))
    assert tasks == {tid: 0.8} and overall == 0.8


def test_accuracy_averages_evaluators_then_subtasks_then_tasks() -> None:
    scores = [
        Score(1, "s", 1, "s1", 1.0, "", "a", 0),
        Score(2, "s", 1, "s1", 0.0, "", "b", 0),  # two evaluators disagree: 0.5
        Score(3, "s", 1, "s2", 1.0, "", "a", 0),
        Score(4, "s", 2, "s1", 0.2, "", "a", 0),
    ]
    assert accuracy(scores) == ({1: 0.75, 2: 0.2}, 0.475)
    assert accuracy([]) == ({}, None)


def test_concurrent_writers_do_not_lose_versions(tmp_path: Path, store_database: Callable[[], Database]) -> None:
    store = Store(tmp_path, store_database())
    sessions = [store.create_session() for _ in range(4)]

    def write(sid: str) -> None:
        for k in range(10):
            store.add_version(sid, img(k), "turn", f"v{k}")

    threads = [threading.Thread(target=write, args=(s.id,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [len(store.versions(s.id)) for s in sessions] == [10, 10, 10, 10]
