"""The PostgreSQL backend (COSTA_DATABASE_URL=postgresql://…): the same schema as SQLite from the same migrations, a
session's round trip through `Store`, the turn lock and Stop across replicas, and faults as one sentence. The server
is a throwaway one (bench/pg_server.py); the `postgresql` tests skip when its binaries are absent."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.pg_server import free_port
from costa.config import Settings
from costa.errors import InputError, StorageError
from costa.store import MIGRATIONS, Store, load_memory, save_memory
from costa.store.backends import database_for
from costa.store.postgres import PostgresDatabase, pg_sql, redact_url
from costa.store.sqlite import SqliteDatabase

ROOT = Path(__file__).resolve().parents[1]
postgresql = pytest.mark.postgresql


def img(value: int) -> np.ndarray:
    return np.full((6, 8, 3), value, np.uint8)


def wait_for(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _pg_columns(db: PostgresDatabase) -> dict[str, list[str]]:
    with db.connect() as c:
        rows = c.all(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
            " ORDER BY table_name, ordinal_position"
        )
    out: dict[str, list[str]] = {}
    for r in rows:
        out.setdefault(r["table_name"], []).append(r["column_name"])
    out.pop("costa_schema")  # PostgreSQL's schema version (SQLite's is PRAGMA user_version)
    return out


def _sqlite_columns(db: SqliteDatabase) -> dict[str, list[str]]:
    with db.connect() as c:
        names = [r["name"] for r in c.all("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {n: [r["name"] for r in c.all(f"PRAGMA table_info({n})")] for n in names if not n.startswith("sqlite_")}


@postgresql
def test_migrations_from_empty_give_the_tables_sqlite_has(tmp_path: Path, postgresql_url: str) -> None:
    db = PostgresDatabase(postgresql_url)
    assert not db.exists() and db.schema_version() == 0
    Store(tmp_path / "pg", db)
    assert db.exists() and db.schema_version() == len(MIGRATIONS)
    lite = SqliteDatabase(tmp_path / "lite" / "costa.db")
    Store(tmp_path / "lite", lite)
    assert _pg_columns(db) == _sqlite_columns(lite)  # same tables, same columns, same order
    assert Store(tmp_path / "pg", PostgresDatabase(postgresql_url)).migrate() == len(MIGRATIONS)  # nothing twice
    assert db.schema_version() == len(MIGRATIONS) and db.integrity() == []


@postgresql
def test_a_new_migration_reaches_an_existing_database_and_replicas_migrate_once(
    tmp_path: Path, postgresql_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    dbs = [PostgresDatabase(postgresql_url) for _ in range(3)]
    errors: list[BaseException] = []

    def migrate(db: PostgresDatabase) -> None:
        try:
            db.migrate()
        except BaseException as e:  # handed to the test
            errors.append(e)

    threads = [threading.Thread(target=migrate, args=(db,)) for db in dbs]  # three replicas starting together
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and dbs[0].schema_version() == len(MIGRATIONS)

    def m_extra(db: Any) -> None:
        db.execute("CREATE TABLE extra (x INTEGER)")

    import costa.store.migrations as migrations

    monkeypatch.setattr(migrations, "MIGRATIONS", (*MIGRATIONS, m_extra))
    assert dbs[1].migrate() == len(MIGRATIONS) + 1 and dbs[2].schema_version() == len(MIGRATIONS) + 1


@postgresql
def test_a_session_round_trips_through_the_store_and_a_second_replica_sees_it(
    tmp_path: Path, postgresql_url: str
) -> None:
    store = Store(tmp_path, PostgresDatabase(postgresql_url))
    s = store.create_session("alice")
    v1 = store.add_version(s.id, img(10), "upload", "upload")
    plan = {"subtasks": [{"id": "s1", "kind": "text_removal"}]}
    tid = store.start_turn(s.id, v1.id, "remove the text", plan, {"alpha": 1.0})
    v2 = store.add_version(s.id, img(20), "turn", "turn 1", parent_id=v1.id, turn_id=tid)
    store.record_target(tid, "s1", "the text", "verified", "ocr", ["text"], [], "found")
    store.finish_turn(tid, "done", [{"kind": "plan_ready"}], {"seconds": 1.5}, v2.id, plan)
    store.save_score(s.id, tid, "s1", 0.6, "ok", "ann")
    store.save_score(s.id, tid, "s1", 0.9, "better", "ann")  # replaced, not added
    save_memory(store, s.id, tid, {"steps": ["a"], "masks": [("s1", 2, 3, b"\x00\xff\x10")]})
    from costa.subroutines.observations import ObservationLog

    log = ObservationLog(store)
    assert [log.bump("turns"), log.bump("turns")] == [1, 2]

    other = Store(tmp_path, PostgresDatabase(postgresql_url))  # another replica: same home (files), same database
    assert other.store_id == store.store_id
    assert other.session(s.id, "alice").head == v2.id
    assert [v.parent_id for v in other.versions(s.id)] == [None, v1.id]
    assert np.array_equal(other.load_image(other.version(s.id, v2.id)), img(20))
    t = other.turn(s.id, tid)
    assert (t.status, t.plan, t.summary["seconds"], t.result_version) == ("done", plan, 1.5, v2.id)
    assert [(x.score, x.comment) for x in other.scores(s.id)] == [(0.9, "better")]
    assert other.targets(tid)[0]["verified"] == ["text"]
    assert load_memory(other, s.id) == [{"steps": ["a"], "masks": [("s1", 2, 3, b"\x00\xff\x10")]}]
    assert ObservationLog(other).counter("turns") == 2
    with pytest.raises(InputError, match="unknown session"):
        other.session(s.id, "bob")
    from costa.store.check import check

    assert check(other).ok, check(other).problems


@postgresql
def test_proposals_observations_gc_and_repair_on_postgresql(tmp_path: Path, postgresql_url: str) -> None:
    from costa.store.proposals import ProposedSubtask, decide_proposal, keep_proposal, pending_proposal, verdicts
    from costa.store.repair import repair
    from costa.store.retention import gc
    from costa.subroutines.observations import ObservationLog, Trace

    store = Store(tmp_path, PostgresDatabase(postgresql_url))
    s = store.create_session()
    v1 = store.add_version(s.id, img(10), "upload", "upload")
    tid = store.start_turn(s.id, v1.id, "x", None, {})
    sub = ProposedSubtask("s1", "recolor", "recolor_lab", "red disc", "object", "none", "not calibrated", 0.7)
    region = np.zeros((6, 8), bool)
    region[1:3, 2:5] = True
    keep_proposal(store, s.id, tid, v1.id, img(30), region, [sub])
    pending = pending_proposal(store, s.id)
    assert pending is not None and np.array_equal(pending.region, region) and np.array_equal(pending.image, img(30))
    decide_proposal(store, pending, "discarded", None, machine="cpu")
    assert [(v.verdict, v.quality) for v in verdicts(store, s.id)] == [("discarded", 0.7)]
    log = ObservationLog(store)
    log.record_tool_run("recolor_lab", "recolor", 0.5, 0.7, True, {"area": 3}, machine="cpu")
    log.record_tool_run("recolor_lab", "recolor", 1.5, 0.9, False, machine="cpu")
    log.record_trace(Trace("t1", "recolor", ("recolor_lab",), 0.5, 0.7, True, "", {}), machine="cpu")
    n, seconds, quality = log.aggregates("cpu")[("recolor_lab", "recolor")]
    assert (n, seconds) == (2, 2.0) and quality == pytest.approx(0.9)  # the discarded run counts 0, not 0.7
    assert [t.success for t in log.traces("recolor")] == [True]
    report = repair(tmp_path, PostgresDatabase(postgresql_url))  # a sound store: re-indexed, nothing lost
    assert not report.lost and not report.rebuilt
    store.finish_turn(tid, "done", [], {}, None)
    assert gc(store, retention_days=0.0, now=time.time() + 10).expired == [s.id]
    assert store.sessions(None) == [] and store.versions(s.id) == []


@postgresql
def test_the_turn_lock_refuses_a_second_holder_from_another_connection(postgresql_url: str, tmp_path: Path) -> None:
    a, b = PostgresDatabase(postgresql_url), PostgresDatabase(postgresql_url)  # two replicas
    Store(tmp_path, a)
    assert not b.turn_held("s1")
    with a.turn_lock("s1") as held:
        assert held and b.turn_held("s1")
        with b.turn_lock("s1") as second:
            assert not second  # refused, not waited for
        with b.turn_lock("s2") as other:
            assert other  # another session's lock is its own
    assert not b.turn_held("s1")
    with b.turn_lock("s1") as held:
        assert held  # released at the end of the block


@postgresql
def test_a_turn_and_stop_across_replicas(postgresql_url: str, tmp_path: Path) -> None:
    """A second replica's turn of the same session is refused while the first runs; Stop pressed on the second
    reaches the running turn through the database; interrupted turns are marked only when no replica runs them."""
    from costa.session.replicas import STOP_POLL_SECONDS, replica_turn, stop_elsewhere
    from costa.session.runtime import SessionRuntime

    one, two = Store(tmp_path, PostgresDatabase(postgresql_url)), Store(tmp_path, PostgresDatabase(postgresql_url))
    sid = one.create_session().id
    idle = one.create_session().id
    rt = SessionRuntime()
    assert not stop_elsewhere(two, sid, "stop")  # nothing runs
    with replica_turn(one, rt, sid, "busy"):
        live = one.start_turn(sid, None, "x", None, {})
        dead = one.start_turn(idle, None, "y", None, {})  # left "running" by a killed replica
        with pytest.raises(InputError, match="busy"), replica_turn(two, SessionRuntime(), sid, "busy"):
            pass
        assert two.mark_interrupted() == 1
        assert (two.turn(sid, live).status, two.turn(idle, dead).status) == ("running", "interrupted")
        assert not rt.stop.is_set()
        t0 = time.monotonic()
        assert stop_elsewhere(two, sid, "stop")
        wait_for(rt.stop.is_set, 20 * STOP_POLL_SECONDS, "Stop from the other replica")
        assert time.monotonic() - t0 < 10 * STOP_POLL_SECONDS and rt.stop_reason == "stop"
    with replica_turn(two, SessionRuntime(), sid, "busy"):
        pass  # free again; the request was cleared with the turn
    from costa.store.stops import stop_requested

    assert stop_requested(two, sid) is None and not stop_elsewhere(two, sid, "stop")


def test_sqlite_keeps_its_in_process_lock_and_no_stop_requests(tmp_path: Path) -> None:
    from costa.session.replicas import replica_turn, stop_elsewhere
    from costa.session.runtime import SessionRuntime

    store = Store(tmp_path)
    sid = store.create_session().id
    assert store.db.shared is False
    with replica_turn(store, SessionRuntime(), sid, "busy"), replica_turn(store, SessionRuntime(), sid, "busy"):
        assert not store.db.turn_held(sid) and not stop_elsewhere(store, sid, "stop")


def test_an_unreachable_server_is_one_sentence_naming_the_url_without_its_password(tmp_path: Path) -> None:
    from bench.pg_server import free_port

    url = f"postgresql://costa:s3cret@127.0.0.1:{free_port()}/costa"
    with pytest.raises(StorageError) as caught:
        Store(tmp_path, database_for(Settings(home=tmp_path, database_url=url)))
    text = str(caught.value)
    assert "COSTA_DATABASE_URL" in text and "cannot be reached" in text and "nothing was saved" in text, text
    assert "s3cret" not in text and "\n" not in text and f"postgresql://costa@127.0.0.1:{url.split(':')[3]}" in text


@postgresql
def test_a_server_outage_is_one_sentence_and_the_store_works_again_once_it_is_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import costa.store.postgres as postgres
    from bench.pg_server import fresh_database, missing_reason, pg_server_process

    if missing_reason():
        pytest.skip(missing_reason() or "")
    monkeypatch.setattr(postgres, "PROBE_AFTER_S", 0.0)  # every pooled connection is checked before it is reused
    with pg_server_process() as server:  # its own server: this test stops it
        store = Store(tmp_path, PostgresDatabase(fresh_database(server.url)))
        s = store.create_session()
        server.stop()
        server.start()  # a restart nobody saw: the pooled connection is dead
        assert store.session(s.id).head is None
        server.stop()
        with pytest.raises(StorageError, match="cannot be reached") as caught:
            store.add_version(s.id, img(1), "upload", "upload")
        text = str(caught.value)
        assert "COSTA_DATABASE_URL" in text and "costa-test" not in text and "\n" not in text
        server.start()
        v = store.add_version(s.id, img(1), "upload", "upload")  # the pool's dead connections were replaced
        assert store.session(s.id).head == v.id


def test_the_app_refuses_an_unreachable_database_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.pg_server import free_port
    from tests.test_store_safety import run_app_until_exit

    monkeypatch.setenv("COSTA_DATABASE_URL", f"postgresql://costa:s3cret@127.0.0.1:{free_port()}/costa")
    r = run_app_until_exit(tmp_path / "home")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    lines = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "COSTA_DATABASE_URL" in lines[0] and "cannot be reached" in lines[0], r.stderr[-2000:]
    assert "s3cret" not in r.stderr + r.stdout


@postgresql
def test_a_refused_login_is_one_sentence_without_the_password(postgresql_url: str, tmp_path: Path) -> None:
    url = postgresql_url.replace(":costa-test@", ":wrong-Pa55@")
    assert url != postgresql_url
    with pytest.raises(StorageError, match=r"refused costa's login .*fix the user and password") as caught:
        Store(tmp_path, PostgresDatabase(url))
    text = str(caught.value)
    assert "wrong-Pa55" not in text and "COSTA_DATABASE_URL (postgresql://costa@127.0.0.1:" in text and "\n" not in text


@postgresql
def test_a_missing_database_is_one_sentence(postgresql_server: str, tmp_path: Path) -> None:
    url = postgresql_server.rsplit("/", 1)[0] + "/no_such_db"
    with pytest.raises(StorageError, match=r"does not exist on its server: .*createdb") as caught:
        Store(tmp_path, PostgresDatabase(url))
    assert "\n" not in str(caught.value)


def test_the_url_picks_the_backend_and_psycopg_is_imported_only_for_postgresql(tmp_path: Path) -> None:
    db = database_for(Settings(home=tmp_path, database_url="postgresql://u:pw@db.example/costa"))
    assert isinstance(db, PostgresDatabase) and db.url == "postgresql://u@db.example/costa"  # nothing connected yet
    assert isinstance(database_for(Settings(home=tmp_path)), SqliteDatabase)
    with pytest.raises(InputError, match="must start with"):
        database_for(Settings(home=tmp_path, database_url="mysql://x"))
    probe = (
        "import sys, tempfile, pathlib\nimport costa, costa.store, costa.session, costa.cli\n"
        "from costa.config import Settings\nfrom costa.store import Store\n"
        "Store.from_settings(Settings(home=pathlib.Path(tempfile.mkdtemp())))\n"
        "print('psycopg' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_placeholders_and_urls() -> None:
    assert pg_sql("UPDATE t SET a = ? WHERE b = 'it''s ?' AND c LIKE '%x'") == (
        "UPDATE t SET a = %s WHERE b = 'it''s ?' AND c LIKE '%%x'"
    )
    assert redact_url("postgresql://costa:pw@[::1]:5433/db") == "postgresql://costa@[::1]:5433/db"
    assert redact_url("postgresql:///db?host=/run/pg&password=pw") == "postgresql:///db?host=%2Frun%2Fpg"


@postgresql
@pytest.mark.slow
def test_two_session_cores_on_one_database_share_a_sessions_turn_lock_and_stop(
    postgresql_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two replicas (two `SessionCore`s over one home and one PostgreSQL database): while the first runs a turn with
    the slow FAKE tool (costa.testing.slow_tools), the second refuses a turn of that session and its undo, and its
    Stop ends the first's turn as stopped within the bound."""
    from costa.services import Services
    from costa.session import SessionCore, TurnOptions
    from costa.tables import load_tables
    from costa.testing import slow_tools
    from costa.testing.calibration import fake_table
    from tests.test_session_stop import REPLACE, STOP_BOUND, sign

    monkeypatch.setenv("COSTA_FAKE_TOOL_SECONDS", "5")
    tables = load_tables(slow_tools.slow_tables(tmp_path / "tables"))
    settings = Settings(calibration_table=fake_table(), home=tmp_path / "home", reflect=False)
    cores = [
        SessionCore(Services(settings, tables), Store(tmp_path / "store", PostgresDatabase(postgresql_url)))
        for _ in range(2)
    ]
    try:
        first, second = cores
        sid = first.open_session(None, None).id
        first.upload(sid, None, sign(tmp_path / "sign.png"))
        opts = TurnOptions.validate(first.settings, 1.0, 0.8)
        views: list[Any] = []
        began = slow_tools.CALLS["started"]
        turn = threading.Thread(
            target=lambda: views.extend(v for v, _ in first.run(first.prepare(sid, None, REPLACE, opts)))
        )
        turn.start()
        wait_for(lambda: slow_tools.CALLS["started"] > began, 90, "the slow fake tool to start")
        assert second.busy(sid) and not second.runtimes.busy(sid)  # running on the other replica, not here
        assert second.versions.turn_views(sid, None)[-1].status == "searching"  # a reload there: not "interrupted"
        with pytest.raises(InputError, match="already running"):
            list(second.run(second.prepare(sid, None, REPLACE, opts)))
        with pytest.raises(InputError, match="undo, redo, branch and uploads wait"), second.writing(sid):
            pass
        t0 = time.perf_counter()
        assert second.stop(sid, None)  # pressed on the replica that does not run the turn
        turn.join(STOP_BOUND + 2)
        assert not turn.is_alive() and time.perf_counter() - t0 < STOP_BOUND + 1
        assert views[-1].status == "stopped"
        assert second.store.turns(sid)[-1].summary.get("stopped_by") == "stop"
        assert not second.stop(sid, None) and not second.busy(sid)  # nothing runs now
    finally:
        for core in cores:
            core.close()


@postgresql
def test_a_turn_a_killed_replica_left_running_is_interrupted_by_the_next_turn_of_its_session(
    postgresql_url: str, tmp_path: Path
) -> None:
    """Replica one dies mid-turn (its row stays `running`, its lock is gone); replica two, which never restarts,
    marks it `interrupted` when it takes the session's lock, and leaves other sessions' running turns alone."""
    from costa.session.replicas import replica_turn
    from costa.session.runtime import SessionRuntime

    one = Store(tmp_path, PostgresDatabase(postgresql_url))
    sid, busy = one.create_session().id, one.create_session().id
    dead = one.start_turn(sid, None, "x", None, {})  # written under a lock that died with its replica
    two = Store(tmp_path, PostgresDatabase(postgresql_url))
    with replica_turn(one, SessionRuntime(), busy, "busy"):
        live = one.start_turn(busy, None, "y", None, {})
        assert two.turn(sid, dead).status == "running"
        with replica_turn(two, SessionRuntime(), sid, "busy"):
            assert two.turn(sid, dead).status == "interrupted"
        assert two.turn(busy, live).status == "running"  # another session's turn, still running on replica one


def _doctor_store_line(home: Path, url: str | None) -> str:
    env = {**os.environ, "COSTA_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    env.pop("COSTA_DATABASE_URL", None)
    if url is not None:
        env["COSTA_DATABASE_URL"] = url
    r = subprocess.run([sys.executable, "-m", "costa", "doctor"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=120, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return next(line for line in r.stdout.splitlines() if line.startswith("store: "))


@postgresql
def test_doctor_says_whether_the_store_is_reachable_on_each_backend(tmp_path: Path, postgresql_url: str) -> None:
    """`costa doctor` named the store but never tried it: an unreachable server read the same as a working one."""
    line = _doctor_store_line(tmp_path / "fresh", None)
    assert line.startswith("store: SQLite in COSTA_HOME") and line.endswith(
        "reachable, empty (its tables are made at the first start)"
    )
    store = Store(tmp_path / "used")
    store.create_session()
    line = _doctor_store_line(tmp_path / "used", None)
    assert re.search(r": reachable, schema version \d+, 1 session\(s\)$", line), line
    pg = Store(tmp_path / "pg", database_for(replace(Settings(home=tmp_path / "pg"), database_url=postgresql_url)))
    pg.create_session()
    pg.create_session()
    line = _doctor_store_line(tmp_path / "pg", postgresql_url)
    assert re.search(r"^store: postgresql://costa:\*\*\*@127\.0\.0\.1:\d+/\w+ \(COSTA_DATABASE_URL\): reachable, "
                     r"schema version \d+, 2 session\(s\)$", line), line  # fmt: skip
    port = free_port()  # nothing listens there
    line = _doctor_store_line(tmp_path / "pg", f"postgresql://costa:secret@127.0.0.1:{port}/costa")
    assert ": NOT reachable: " in line and "cannot be reached" in line and "secret" not in line, line
