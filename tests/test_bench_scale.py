"""`python -m costa bench scale`, small, as a subprocess: one and then two app replicas on a throwaway PostgreSQL
(bench/pg_server.py) complete every turn, the database-restart probe loses no version and its errors are one
sentence, the kill -9 probe holds, and the Ray probe says why it skips. Skips, saying why, without Debian's
postgresql binaries or psycopg."""

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
#: A table row: replicas, clients, turns, errors, wall seconds, turns per minute, p50, p95.
ROW = re.compile(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s+[\d.]+$", re.M)


@pytest.mark.slow
@pytest.mark.postgresql
def test_a_small_bench_scale_completes_turns_on_one_and_two_replicas_and_its_probes_hold() -> None:
    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    argv = ["bench", "scale", "--clients", str(CLIENTS), "--edits", str(EDITS), "--kills", "1"]
    r = subprocess.run(
        [sys.executable, "-m", "costa", *argv, "--outage-seconds", "2", "--probe-seconds", "90"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    out = r.stdout
    assert r.returncode == 0, out + r.stderr[-3000:]
    rows = [(*(int(x) for x in m[:4]), float(m[4])) for m in ROW.findall(out)]
    assert [row[:4] for row in rows] == [(1, CLIENTS, CLIENTS * EDITS, 0), (2, CLIENTS, CLIENTS * EDITS, 0)], out
    assert all(row[4] > 0 for row in rows) and re.search(r"ratio 2/1: turns/min [\d.]+×", out), out
    restart = next(line for line in out.splitlines() if "postgres restart" in line)
    assert restart.lstrip().startswith("held") and "lost 0" in restart, restart
    assert re.search(r"\b[1-9]\d* errors during it, one sentence each", restart), restart
    kill = next(line for line in out.splitlines() if "kill -9 mid-turn" in line)
    assert kill.lstrip().startswith("held") and "1 kill(s) mid-turn" in kill and "versions lost 0" in kill, kill
    assert re.search(r"^  skipped: the Ray runner ", out, re.M), out  # the probe is not written yet


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
