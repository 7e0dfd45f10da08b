"""Shared fixtures: every test gets its own COSTA_HOME, so nothing touches the user's data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_BENCHMARKS = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _costa_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "costa_home"
    monkeypatch.setenv("COSTA_HOME", str(home))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return home
