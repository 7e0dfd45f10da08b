"""`python -m costa store check | repair | gc` as a user runs them (subprocesses on a temp COSTA_HOME), and the
quotas that bound growth (issue 21, defects 1, 2 and 5)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from costa.errors import QuotaError, StorageError
from costa.store import Quotas, Store

ROOT = Path(__file__).resolve().parents[1]


def costa(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COSTA_HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("COSTA_AUTH", None)
    return subprocess.run(
        [sys.executable, "-m", "costa", *args], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT
    )


def img(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 255, (20, 30, 3), dtype=np.uint8)


def two_sessions(home: Path) -> tuple[Store, list[str]]:
    store = Store(home)
    ids = []
    for k in range(2):
        s = store.create_session()
        v1 = store.add_version(s.id, img(10 * k), "upload", "upload")
        tid = store.start_turn(s.id, v1.id, f"make it brighter {k}", {"subtasks": [{"id": "s1"}]}, {"alpha": 1})
        v2 = store.add_version(s.id, img(10 * k + 1), "turn", "turn 1", v1.id, tid)
        store.finish_turn(tid, "done", [], {"seconds": 1.0}, v2.id)
        ids.append(s.id)
    return store, ids


def test_check_passes_a_sound_store_and_names_each_lost_version(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store, ids = two_sessions(home)
    ok = costa("store", "check", home=home)
    assert ok.returncode == 0 and "4 versions" in ok.stdout and "nothing lost" in ok.stdout, ok.stdout + ok.stderr
    first, second = store.versions(ids[0])
    Path(first.file).unlink()
    Path(second.file).write_bytes(Path(second.file).read_bytes()[:-9] + b"tampered!")
    bad = costa("store", "check", home=home)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert f"file missing (ids {first.id})" in bad.stdout
    assert f"file changed since it was stored (ids {second.id})" in bad.stdout
    report = json.loads(costa("store", "check", "--json", home=home).stdout)
    assert report["ok"] is False and report["counts"]["versions"] == 4


def test_repair_rebuilds_the_index_of_versions_from_the_files_after_the_database_is_lost(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store, ids = two_sessions(home)
    before = {s: [(v.id, v.sha256, v.parent_id) for v in store.versions(s)] for s in ids}
    heads = {s: store.session(s).head for s in ids}
    for p in home.glob("costa.db*"):
        p.unlink()
    refused = costa("store", "check", home=home)
    assert refused.returncode == 1 and "missing or empty" in refused.stdout and "Traceback" not in refused.stderr
    assert "4 version(s) recorded in the session folders' journals" in refused.stdout
    r = costa("store", "repair", "--yes", home=home)
    assert r.returncode == 1, r.stdout + r.stderr  # the turns lived only in the database: said, and exit 1
    assert "rebuilt from the files' journals: sessions 2, versions 4" in r.stdout
    assert "not recovered: the turns, scores and memory" in r.stdout
    again = Store(home)
    assert {s: [(v.id, v.sha256, v.parent_id) for v in again.versions(s)] for s in ids} == before
    assert {s: again.session(s).head for s in ids} == heads
    assert np.array_equal(again.load_image(again.versions(ids[1])[1]), img(11))
    assert costa("store", "check", home=home).returncode == 0


def test_repair_keeps_every_readable_row_of_a_damaged_database_and_keeps_the_damaged_copy(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store, ids = two_sessions(home)
    for k in range(60):  # a big turns table, so one damaged page leaves most of it readable
        tid = store.start_turn(ids[0], None, "x" * 400 + str(k), None, {})
        store.finish_turn(tid, "done", [], {}, None)
    db = sqlite3.connect(home / "costa.db")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.close()
    raw = bytearray((home / "costa.db").read_bytes())
    page = pages - 2  # a page near the end: the turns' rows
    raw[4096 * page : 4096 * (page + 1)] = os.urandom(4096)
    (home / "costa.db").write_bytes(bytes(raw))
    with pytest.raises(StorageError, match="damaged"):
        Store(home)
    checked = costa("store", "check", home=home)
    assert checked.returncode == 1 and "PROBLEM the database" in checked.stdout and "damaged" in checked.stdout
    r = costa("store", "repair", "--yes", home=home)
    assert "the damaged database was kept as" in r.stdout, r.stdout + r.stderr
    kept = list(home.glob("costa.db.damaged-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == bytes(raw)
    again = Store(home)
    assert [len(again.versions(s)) for s in ids] == [2, 2]
    survived = len(again.turns(ids[0]))
    assert 40 <= survived < 61  # most of the turns survive one lost page, and the report counts the others
    assert r.returncode == 1 and f"{61 - survived} row(s) of turns on damaged pages" in r.stdout


def test_gc_expires_idle_sessions_with_their_files_and_quarantines_what_is_not_costas(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store, ids = two_sessions(home)
    old = time.time() - 10 * 86400
    with store.connect(write=True) as db:
        db.execute("UPDATE sessions SET touched = ? WHERE id = ?", (old, ids[0]))
    folder = store.files.folder(ids[0])
    (folder / "notes.txt").write_text("mine")
    kept = costa("store", "gc", home=home)
    assert (
        kept.returncode == 0 and "idle sessions are kept" in kept.stdout and "0 idle session(s) expired" in kept.stdout
    )
    dry = costa("store", "gc", "--days", "7", "--dry-run", home=home)
    assert "1 idle session(s) expired" in dry.stdout and folder.is_dir()
    r = costa("store", "gc", "--days", "7", home=home)
    assert "1 idle session(s) expired" in r.stdout and "2 version(s) and 2 file(s) deleted" in r.stdout, r.stdout
    assert "1 unknown file(s) quarantined" in r.stdout
    assert not folder.exists() and list((home / "quarantine").rglob("notes.txt"))
    again = Store(home)
    with pytest.raises(Exception, match="unknown session"):
        again.session(ids[0])
    assert len(again.versions(ids[1])) == 2 and costa("store", "check", home=home).returncode == 0


def test_the_periodic_gc_runs_once_per_hour_across_processes(tmp_path: Path, store_database) -> None:
    """One run per hour over every process sharing the store, on both backends — also when the replicas ask at the
    same moment (on PostgreSQL two replicas read the old time, both wrote theirs and both ran gc)."""
    import threading

    from costa.store.retention import GC_PERIOD_SECONDS, _take_lease, gc

    a, b = Store(tmp_path, store_database()), Store(tmp_path, store_database())
    assert not gc(a, 30, periodic=True).skipped
    assert "less than an hour ago" in gc(b, 30, periodic=True).skipped
    later = time.time() + GC_PERIOD_SECONDS + 1
    stores = [Store(tmp_path, store_database()) for _ in range(4)]
    won: list[bool] = []
    start = threading.Barrier(len(stores))

    def take(store: Store, at: float) -> None:
        start.wait()
        won.append(_take_lease(store, at, GC_PERIOD_SECONDS))

    threads = [threading.Thread(target=take, args=(s, later + k / 1000)) for k, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(won) == [False, False, False, True], won


def test_the_session_quota_drops_empty_sessions_first_then_refuses(tmp_path: Path) -> None:
    store = Store(tmp_path, quotas=Quotas(sessions=3, versions=0, bytes=0))
    full = store.create_session()
    store.add_version(full.id, img(1), "upload", "upload")
    for _ in range(50):  # 3,000 /new_session calls used to make 3,000 rows: now the empty ones make room
        store.create_session()
    kept = store.sessions(None)
    assert len(kept) == 3 and full.id in [s.id for s in kept]
    for s in kept:
        if s.id != full.id:
            store.add_version(s.id, img(2), "upload", "upload")
    with pytest.raises(QuotaError, match="COSTA_QUOTA_SESSIONS=3"):
        store.create_session()


def test_version_and_byte_quotas_refuse_a_write_and_store_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path, quotas=Quotas(sessions=0, versions=2, bytes=0))
    s = store.create_session()
    store.add_version(s.id, img(1), "upload", "upload")
    store.add_version(s.id, img(2), "turn", "turn")
    files = sorted((tmp_path / "sessions").rglob("*.webp"))
    with pytest.raises(QuotaError, match="COSTA_QUOTA_VERSIONS=2"):
        store.add_version(s.id, img(3), "turn", "turn")
    assert sorted((tmp_path / "sessions").rglob("*.webp")) == files and len(store.versions(s.id)) == 2
    small = Store(tmp_path / "b", quotas=Quotas(sessions=0, versions=0, bytes=3000))
    t = small.create_session()
    small.add_version(t.id, img(1), "upload", "upload")  # about 1.8 kB of noise
    with pytest.raises(QuotaError, match="COSTA_QUOTA_GB"):
        small.add_version(t.id, img(2), "turn", "turn")
