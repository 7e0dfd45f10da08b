"""How app.py serves the page: login, upload limit, queue, MCP only when its package is there."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from costa.config import Settings
from costa.errors import InputError
from costa.services import Services
from ui.app import launch_kwargs, queue_kwargs


def test_login_and_limits_come_from_the_environment(tmp_path: Path) -> None:
    env = {"COSTA_HOME": str(tmp_path), "COSTA_AUTH": "alice:pw1,bob:p:w2", "COSTA_MAX_UPLOAD_MB": "3"}
    env |= {"COSTA_QUEUE_SIZE": "10", "COSTA_CONCURRENCY": "1"}
    services = Services(Settings.from_env(env))
    kw = launch_kwargs(services)
    assert kw["auth"] == [("alice", "pw1"), ("bob", "p:w2")]
    assert kw["max_file_size"] == 3 * 1024 * 1024 and not kw["show_error"]
    assert queue_kwargs(services)["max_size"] == 10 and services.settings.concurrency == 1
    assert "pw1" not in repr(services.settings)  # passwords stay out of logs
    assert "auth" not in launch_kwargs(Services(Settings(home=tmp_path)))


def test_bad_login_setting_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="COSTA_AUTH must be user:password pairs"):
        Settings.from_env({"COSTA_HOME": str(tmp_path), "COSTA_AUTH": "alice"})


def test_mcp_is_on_only_when_asked_and_installed(tmp_path: Path) -> None:
    kw = launch_kwargs(Services(Settings(home=tmp_path, mcp=True)))
    assert kw.get("mcp_server", False) == (importlib.util.find_spec("mcp") is not None)
    assert "mcp_server" not in launch_kwargs(Services(Settings(home=tmp_path)))
