"""`python -m costa campaign …` as a subprocess: create → run → items → import-scores → report, and `run` killed
(kill -9) or interrupted (Ctrl-C) part-way and resumed with the finished items kept — each on both store backends
(`backend`: SQLite in COSTA_HOME, then a throwaway PostgreSQL through COSTA_DATABASE_URL)."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from costa.campaign.db import CampaignDb
from costa.config import Settings
from costa.store import Store

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "assets"


@pytest.fixture(name="backend", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgresql)])
def backend_fixture(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Each store backend in turn: SQLite in the campaign's COSTA_HOME (None), then a fresh PostgreSQL database (its
    URL, in COSTA_DATABASE_URL: the `costa campaign` subprocesses inherit it; skipped without the server)."""
    if request.param == "sqlite":
        monkeypatch.delenv("COSTA_DATABASE_URL", raising=False)
        return None
    url: str = request.getfixturevalue("postgresql_url")
    monkeypatch.setenv("COSTA_DATABASE_URL", url)
    return url


def campaign_db(home: Path) -> CampaignDb:
    """The campaign rows of `home`'s store on the backend COSTA_DATABASE_URL names (the subprocesses' one)."""
    from costa.store.backends import database_for

    return CampaignDb(Store(home, database_for(dataclasses.replace(Settings.from_env(), home=home))))


def costa(home: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COSTA_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "costa", "campaign", *args], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


def start(home: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "COSTA_HOME": str(home)}
    return subprocess.Popen(
        [sys.executable, "-m", "costa", "campaign", *args], cwd=ROOT, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def write_tasks(folder: Path, n_bright: int = 1) -> Path:
    """Fast real tasks on the demo images (global adjustments, a recolouring in a box, a two-turn session)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ball.png").write_bytes((ASSETS / "red_ball.png").read_bytes())
    tasks: list[dict[str, Any]] = [
        {"id": f"bright{k}", "image": "ball.png", "turns": ["make the photo brighter"]} for k in range(n_bright)
    ]
    tasks.append({"id": "ball", "image": "ball.png", "turns": [{"instruction": "make the red ball blue",
                                                               "box": "300,130,160,160"}]})  # fmt: skip
    tasks.append({"id": "two", "image": "ball.png", "turns": ["make the photo brighter", "make it black and white"]})
    path = folder / "tasks.json"
    path.write_text(json.dumps({"tasks": tasks}))
    return path


def statuses(home: Path | CampaignDb, name: str) -> dict[str, str]:
    db = home if isinstance(home, CampaignDb) else campaign_db(home)
    return {i.id: i.status for i in db.items(name)}


def wait_for(home: Path, name: str, proc: subprocess.Popen[str], done: int, timeout: float = 180) -> None:
    """Until `done` items are finished and another is running (the run is part-way through an item)."""
    deadline = time.time() + timeout
    db = campaign_db(home)
    while time.time() < deadline:
        if proc.poll() is not None:
            raise AssertionError("run ended early: " + (proc.stderr.read() if proc.stderr else ""))
        s = list(statuses(db, name).values())
        if s.count("done") >= done and "running" in s:
            return
        time.sleep(0.05)
    raise AssertionError(f"run did not reach {done} done items in {timeout} s")


def test_create_run_items_import_scores_and_report(tmp_path: Path, backend: str | None) -> None:
    home = tmp_path / "home"
    tasks = write_tasks(tmp_path / "set")
    r = costa(home, "create", "c1", "--tasks", str(tasks), "--conditions", "alpha=0,2; reflect=off",
              "--evaluators", "ann,bob")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "3 tasks × 2 condition(s) = 6 items" in r.stdout and "ann 6, bob 6" in r.stdout
    again = costa(home, "create", "c1", "--tasks", str(tasks))
    assert again.returncode == 2 and "exists already" in again.stderr

    r = costa(home, "run", "c1", "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert "ran 6 item(s), 0 failed; 0 left to run" in r.stdout
    assert (home / "costa.db").exists() == (backend is None)  # on PostgreSQL the rows went there, not to COSTA_HOME
    assert "6/6 items" in r.stderr and "elapsed" in r.stderr and "left" in r.stderr  # the progress bar

    items = json.loads(costa(home, "items", "c1", "--json").stdout)
    assert len(items) == 6 and all(set(i) == {"item", "task", "condition", "subtasks"} for i in items)
    assert {json.dumps(i["condition"], sort_keys=True) for i in items} == {
        '{"alpha": 0.0, "reflect": false}',
        '{"alpha": 2.0, "reflect": false}',
    }
    two = next(i for i in items if i["task"] == "two")
    assert [s["id"] for s in two["subtasks"]] == ["t1.s1", "t2.s1"]
    assert all(set(s) == {"id", "kind", "category"} for i in items for s in i["subtasks"])
    ball = next(i for i in items if i["task"] == "ball")
    assert ball["subtasks"][0]["kind"] == "object_recoloration" and ball["subtasks"][0]["category"]

    # a spreadsheet of scores: ann scores everything 1, bob 0.5 on α=2 items; one bad row refuses the whole file
    sheet = tmp_path / "scores.csv"
    rows = [
        (i["item"], s["id"], ev, 1.0 if ev == "ann" or i["condition"]["alpha"] == 0 else 0.5, "ok")
        for i in items
        for s in i["subtasks"]
        for ev in ("ann", "bob")
    ]
    with open(sheet, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item", "subtask", "evaluator", "score", "comment"])
        w.writerows([*rows, (items[0]["item"], "t9.s9", "ann", 1, "")])
    bad = costa(home, "import-scores", "c1", str(sheet))
    assert bad.returncode == 2 and "no finished item" in bad.stderr and "t9.s9" in bad.stderr
    with open(sheet, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item", "subtask", "evaluator", "score", "comment"])
        w.writerows(rows)
    ok = costa(home, "import-scores", "c1", str(sheet))
    assert ok.returncode == 0, ok.stderr
    assert f"imported {len(rows)} score(s)" in ok.stdout

    plot = tmp_path / "plot.png"
    rep = costa(home, "report", "c1", "--json", "--plot", str(plot))
    assert rep.returncode == 0, rep.stderr
    report = json.loads(rep.stdout)
    assert set(report) == {"conditions", "agreement", "costa_vs_humans"}
    by_alpha = {r["condition"]["alpha"]: r for r in report["conditions"]}
    assert by_alpha[0.0]["task_accuracy"] == 1.0 and by_alpha[2.0]["task_accuracy"] == 0.75
    assert by_alpha[0.0]["n_items"] == 3 and by_alpha[0.0]["tool_seconds_per_task"] > 0
    assert by_alpha[0.0]["turn_seconds_per_task"] >= by_alpha[0.0]["tool_seconds_per_task"]
    pair = report["agreement"]["pairs"][0]
    assert pair["evaluators"] == ["ann", "bob"] and pair["n"] == len(rows) // 2
    assert plot.read_bytes()[:4] == b"\x89PNG"
    text = costa(home, "report", "c1")
    assert "task acc" in text.stdout and "alpha=2 · reflect=off" in text.stdout
    status = costa(home, "status", "c1")
    assert "6 done, 0 failed, 0 pending" in status.stdout and "evaluator ann:" in status.stdout


def test_run_killed_part_way_resumes_with_the_finished_items_kept(tmp_path: Path, backend: str | None) -> None:
    home = tmp_path / "home"
    tasks = write_tasks(tmp_path / "set", n_bright=3)
    assert costa(home, "create", "k", "--tasks", str(tasks), "--conditions", "reflect=off").returncode == 0
    proc = start(home, "run", "k", "--workers", "1")
    try:
        wait_for(home, "k", proc, done=2)
        os.kill(proc.pid, signal.SIGKILL)  # a crash: no cleanup runs
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    db = campaign_db(home)
    before = {i.id: (i.session_id, i.finished) for i in db.items("k") if i.status == "done"}
    assert len(before) >= 2 and "running" in statuses(home, "k").values()

    r = costa(home, "run", "k", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert "resumed: 1 item(s)" in r.stdout
    after = {i.id: i for i in db.items("k")}
    assert {i.status for i in after.values()} == {"done"}
    assert all((after[k].session_id, after[k].finished) == v for k, v in before.items())  # kept, not run again
    assert f"ran {len(after) - len(before)} item(s)" in r.stdout
    assert all(db.item_units(k) for k in after)  # every item has its subtasks to score


def test_ctrl_c_stops_the_run_and_the_next_run_finishes_it(tmp_path: Path, backend: str | None) -> None:
    home = tmp_path / "home"
    tasks = write_tasks(tmp_path / "set", n_bright=3)
    assert costa(home, "create", "s", "--tasks", str(tasks), "--conditions", "reflect=off").returncode == 0
    proc = start(home, "run", "s", "--workers", "1")
    try:
        wait_for(home, "s", proc, done=1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in out and "Traceback" not in err
    s = statuses(home, "s")
    assert "running" not in s.values() and "pending" in s.values() and "done" in s.values()
    rest = costa(home, "run", "s")
    assert rest.returncode == 0, rest.stderr
    assert set(statuses(home, "s").values()) == {"done"}


def test_a_second_run_of_the_same_campaign_is_refused(tmp_path: Path, backend: str | None) -> None:
    """SQLite: the lock file in COSTA_HOME. PostgreSQL: the database's advisory lock alone refuses it (a run on
    another machine whose COSTA_HOME mount does not share file locks)."""
    from costa.campaign.runner import run_lock
    from costa.store.postgres import PostgresDatabase

    home = tmp_path / "home"
    tasks = write_tasks(tmp_path / "set")
    assert costa(home, "create", "l", "--tasks", str(tasks)).returncode == 0
    if backend is None:
        holder = run_lock(home, "l")
    else:
        holder = run_lock(tmp_path / "other-machine", "l", PostgresDatabase(backend))
    with holder:
        r = costa(home, "run", "l")
    assert r.returncode == 2 and "already running in another process" in r.stderr
    assert set(statuses(home, "l").values()) == {"pending"}
