"""`python -m costa bench scale`, small, as a subprocess: one and then two app replicas on a throwaway PostgreSQL
(bench/pg_server.py) complete every turn, the database-restart probe loses no version and its errors are one
sentence, the kill -9 probe holds, and the Ray probe says why it skips without the Ray runner; with it (`extras`),
a replica on COSTA_RUNNER=ray completes its turns through a local Ray on 127.0.0.1 and the probe that kills a Serve
replica's worker mid-call holds. Skips, saying why, without Debian's postgresql binaries or psycopg."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.pg_server import missing_reason
from costa.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]
CLIENTS, EDITS = 2, 2
#: A table row: runner, replicas, clients, turns, errors, wall seconds, turns per minute, p50, p95.
ROW = re.compile(r"^\s+(in_process|ray)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s+[\d.]+$", re.M)


def bench_scale(*argv: str, timeout: float) -> str:
    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    r = subprocess.run([sys.executable, "-m", "costa", "bench", "scale", *argv], cwd=ROOT, capture_output=True,
                       text=True, timeout=timeout, check=False)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    return r.stdout


def rows(out: str) -> list[tuple[str, int, int, int, int, float]]:
    return [(m[0], *(int(x) for x in m[1:5]), float(m[5])) for m in ROW.findall(out)]


@pytest.mark.slow
@pytest.mark.postgresql
def test_a_small_bench_scale_completes_turns_on_one_and_two_replicas_and_its_probes_hold() -> None:
    argv = ["--clients", str(CLIENTS), "--edits", str(EDITS), "--kills", "1", "--runners", "in_process"]
    out = bench_scale(*argv, "--outage-seconds", "2", "--probe-seconds", "90", timeout=300)
    got = rows(out)
    assert [row[:5] for row in got] == [
        ("in_process", 1, CLIENTS, CLIENTS * EDITS, 0),
        ("in_process", 2, CLIENTS, CLIENTS * EDITS, 0),
    ], out
    assert all(row[5] > 0 for row in got) and re.search(r"in_process ratio 2/1: turns/min [\d.]+×", out), out
    restart = next(line for line in out.splitlines() if "postgres restart" in line)
    assert restart.lstrip().startswith("held") and "lost 0" in restart, restart
    assert re.search(r"\b[1-9]\d* errors during it, one sentence each", restart), restart
    kill = next(line for line in out.splitlines() if "kill -9 mid-turn" in line)
    assert kill.lstrip().startswith("held") and "1 kill(s) mid-turn" in kill and "versions lost 0" in kill, kill
    assert re.search(r"^  skipped: the Ray runner configuration .*\(not in --runners\)$", out, re.M), out


@pytest.mark.slow
@pytest.mark.postgresql
@pytest.mark.extras
def test_a_replica_on_the_ray_runner_completes_turns_and_survives_a_worker_killed_mid_call() -> None:
    pytest.importorskip("ray", reason="ray is not installed (pip install -r requirements-ray.txt)")
    out = bench_scale("--clients", "1", "--edits", str(EDITS), "--replicas-max", "1", "--runners", "ray",
                      "--probes", "raykill", timeout=540)  # fmt: skip
    assert [row[:5] for row in rows(out)] == [("ray", 1, 1, EDITS, 0)], out
    assert re.search(r"ray: a new local Ray in this process \(127\.0\.0\.1:\d+, nodes 127\.0\.0\.1\)", out), out
    probe = next(line for line in out.splitlines() if "ray worker kill" in line)
    assert probe.lstrip().startswith("held"), probe
    assert re.search(r"pid \d+ of costa-(adjust|text_edit) mid-call: recorded as '[^']*died during the call", probe)
    assert re.search(r"; the turn ended (done|'[^']+')", probe), probe
    assert re.search(r"replaced the replica \(new pid \d+ [\d.]+ s after the kill\); the next turn succeeded", probe)
    assert "history intact" in probe, probe


def test_the_cli_offers_bench_scale_and_without_postgresql_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as e:
        cli_main(["bench", "scale", "--help"])
    assert e.value.code == 0 and "--replicas-max" in capsys.readouterr().out
    monkeypatch.setenv("COSTA_PG_BIN", str(tmp_path))  # a folder without initdb
    assert cli_main(["bench", "scale", "--skip-faults"]) == 2
    err = capsys.readouterr().err
    assert "bench scale needs a PostgreSQL server" in err and "apt-get install -y postgresql" in err, err
