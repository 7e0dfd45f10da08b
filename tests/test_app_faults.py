"""The fault probes of `python -m costa bench faults`, as tests against a live `python app.py` (gradio_client and
HTTP): rejected requests change nothing, hostile files, concurrent edits on one session, temporary-file lifecycle and
file modes, kill -9 and restart, login isolation of owner-less sessions and of exported files."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bench.faults import (
    LiveApp,
    audit,
    probe_auth,
    probe_concurrent,
    probe_hostile,
    probe_kills,
    probe_lifecycle,
    probe_rejected,
)
from tests.app_server import AppServer

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


def live(server: AppServer) -> LiveApp:
    """The shared test app as a probe target."""
    return LiveApp(server.home, ROOT, port=urlsplit(server.url).port or 0)


def test_every_rejected_request_leaves_the_session_as_it_was(app_server: AppServer, tmp_path: Path) -> None:
    probe = probe_rejected(live(app_server), tmp_path)
    assert probe.held, probe.detail


def test_hostile_files_are_refused_or_converted(app_server: AppServer, tmp_path: Path) -> None:
    probe = probe_hostile(live(app_server), tmp_path)
    assert probe.held, probe.detail


def test_concurrent_edits_on_one_session_run_or_are_refused_whole(app_server: AppServer, tmp_path: Path) -> None:
    probe = probe_concurrent(live(app_server), tmp_path, 4)
    assert probe.held, probe.detail
    assert audit(app_server.home)["orphans"] == 0


def test_lifecycle_kills_and_login_isolation(tmp_path: Path) -> None:
    """One app of its own: idle sessions' temporary files expire, stored files are owner-only, a kill -9 mid-turn
    leaves nothing running or orphaned after the restart, and with login on neither an owner-less session nor another
    user's export can be opened."""
    app = LiveApp(tmp_path / "home", ROOT, {"COSTA_TMP_IDLE_SECONDS": "2"}).start()
    try:
        ownerless = app.client().predict(api_name="/new_session")
        life, _ = probe_lifecycle(app, tmp_path, 2.0)
        assert life.held, life.detail
        kills = probe_kills(app, tmp_path, 1, seed=3)
        assert kills.held, kills.detail
        auth = probe_auth(app, tmp_path, ownerless)
        assert auth.held, auth.detail
    finally:
        app.stop()
    leftovers = [p for p in (tmp_path / "home" / "tmp").rglob("*") if p.is_file()]
    assert not leftovers, leftovers  # shutdown removed the app's temporary files and Gradio's cache
