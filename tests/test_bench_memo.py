"""`python -m costa bench memo` as a subprocess: on a real-photo recolouring whose reflection is forced to retry, the
turn with the memo makes fewer tool executions than the same turn without it, replays what it already ran, and ends
the same way; a case id that is not there is refused in one line. Skips without the shared benchmark photos."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.cli import benchmarks_dir

ROOT = Path(__file__).resolve().parents[1]
LINE = re.compile(
    r"^(\S+)\s+(\S+)\s+(\d+) / (\d+)\s+([\d.]+) / ([\d.]+)\s+(\d+)\s+(\d+) / (\d+)\s.*\s(yes|no:.*|NO:.*)$", re.M
)


def bench_memo(*argv: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "costa", "bench", "memo", *argv]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.slow
def test_a_reflection_retry_turn_runs_fewer_tools_with_the_memo_and_ends_the_same() -> None:
    if benchmarks_dir() is None:
        pytest.skip("the shared benchmark photos (../shared/benchmarks) are absent")
    r = bench_memo("--cases", "dev-recolour-063", "--modes", "lazy")
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    (row,) = LINE.findall(r.stdout)
    case, mode, ex_with, ex_without, _, _, replays, retries, retries_without, same = row
    assert (case, mode) == ("dev-recolour-063", "lazy")
    assert int(retries) >= 1 and retries == retries_without, r.stdout  # forced retries happened, in both
    assert int(replays) >= 1 and int(ex_with) < int(ex_without), r.stdout  # replays are runs saved
    assert same == "yes", r.stdout
    assert "FORCED" in r.stdout


def test_an_unknown_case_is_refused_in_one_line() -> None:
    r = bench_memo("--cases", "dev-nothing-999")
    assert r.returncode == 2 and "dev-nothing-999" in r.stderr and "Traceback" not in r.stderr, r.stderr
