"""The app benchmark's load and first-event measurements, small, against the shared test app."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.app import first_event_latency, run_load
from costa.cli import main as cli_main
from tests.app_server import AppServer

pytestmark = pytest.mark.slow


def test_load_with_two_clients_counts_no_errors_and_no_leaks(app_server: AppServer, tmp_path: Path) -> None:
    result = run_load(app_server.url, clients=2, edits=2, folder=tmp_path)
    assert result.errors == [] and result.leaks == []
    assert len(result.latencies) == 4 and all(s > 0 for s in result.latencies)


def test_first_event_arrives_before_the_turn_ends(app_server: AppServer, tmp_path: Path) -> None:
    firsts, base = first_event_latency(app_server.url, runs=2, folder=tmp_path)
    assert len(firsts) == 2 and len(base) == 2 and all(0 < f < 5 for f in firsts)


def test_the_cli_offers_the_app_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        cli_main(["bench", "app", "--help"])
    assert e.value.code == 0 and "--clients" in capsys.readouterr().out
