"""Shared fixtures: every test gets its own COSTA_HOME, so nothing touches the user's data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from costa.testing.calibration import fake_table

SHARED_BENCHMARKS = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The scene generators read shared photos only through this variable (the library never looks outside the repo).
if SHARED_BENCHMARKS.is_dir():
    os.environ.setdefault("COSTA_BENCHMARKS_DIR", str(SHARED_BENCHMARKS))

# Reflection's mechanics are tested on synthetic scenes, where the real-photo votes table (almost no expert votes)
# says nothing: a FAKE table in which every dimension votes (tests/fake_votes.py). Gating tests set their own.
if "COSTA_REFLECTION_VOTES" not in os.environ:
    import tempfile

    from tests.fake_votes import write_fake_votes

    _FAKE_VOTES = Path(tempfile.mkdtemp(prefix="costa-fake-votes-")) / "reflection_votes.csv"
    os.environ["COSTA_REFLECTION_VOTES"] = str(write_fake_votes(_FAKE_VOTES))


# Every test runs with the FAKE calibration table (costa/testing/calibration.py): it vouches for the synthetic scenes'
# contexts, which the real table (real-photo evidence) does not. Subprocesses (the CLI, app.py) inherit the setting;
# tests of the real ending set COSTA_CALIBRATION_TABLE to costa.calibration.CALIBRATION_FILE themselves.
os.environ["COSTA_CALIBRATION_TABLE"] = str(fake_table())

NEURAL_MODULES = ("torch", "diffusers", "transformers")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip `neural` tests, with the reason, when the neural extra (requirements-neural.txt) is not installed."""
    import importlib.util

    absent = [m for m in NEURAL_MODULES if importlib.util.find_spec(m) is None]
    if not absent:
        return
    skip = pytest.mark.skip(reason=f"needs the neural extra (pip install -r requirements-neural.txt): no {absent}")
    for item in items:
        if "neural" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _costa_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "costa_home"
    monkeypatch.setenv("COSTA_HOME", str(home))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return home


@pytest.fixture(scope="session")
def app_server(tmp_path_factory: pytest.TempPathFactory):
    """One `python app.py` shared by the app tests (gradio_client and browser); see tests/app_server.py."""
    from tests.app_server import running_app

    with running_app(tmp_path_factory.mktemp("app_home")) as server:
        yield server


@pytest.fixture(scope="session")
def postgresql_server():
    """The URL of a throwaway PostgreSQL server for the whole run (bench/pg_server.py); skips, saying why,
    when Debian's postgresql binaries are not installed."""
    from bench.pg_server import missing_reason, pg_server

    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    with pg_server() as url:
        yield url


@pytest.fixture
def postgresql_url(postgresql_server: str) -> str:
    """A fresh, empty database on the test server, for one test."""
    from bench.pg_server import fresh_database

    return fresh_database(postgresql_server)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgresql)])
def store_database(request: pytest.FixtureRequest, tmp_path: Path):
    """Each backend in turn, as a callable giving a new `Database` object on the same database (a second process
    opening it): SQLite in `tmp_path`, then a fresh PostgreSQL database (skipped without the server)."""
    if request.param == "sqlite":
        from costa.store.sqlite import SqliteDatabase

        return lambda: SqliteDatabase(tmp_path / "costa.db")
    from costa.store.postgres import PostgresDatabase

    url = request.getfixturevalue("postgresql_url")
    return lambda: PostgresDatabase(url)
