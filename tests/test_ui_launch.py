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


def test_gradio_server_variables_are_honoured_and_costa_ones_win() -> None:
    from costa.config import listen_address

    assert listen_address({}) == ("127.0.0.1", 7860)
    assert listen_address({"GRADIO_SERVER_NAME": "0.0.0.0", "GRADIO_SERVER_PORT": "8080"}) == ("0.0.0.0", 8080)
    both = {"COSTA_HOST": "127.0.0.2", "COSTA_PORT": "9000", "GRADIO_SERVER_NAME": "0.0.0.0", "GRADIO_SERVER_PORT": "1"}
    assert listen_address(both) == ("127.0.0.2", 9000)
    with pytest.raises(InputError, match=r"GRADIO_SERVER_PORT must be a port number.*'http'"):
        listen_address({"GRADIO_SERVER_PORT": "http"})
    with pytest.raises(InputError, match=r"COSTA_PORT must be a port number.*'70000'"):
        listen_address({"COSTA_PORT": "70000", "GRADIO_SERVER_PORT": "80"})


@pytest.mark.slow
def test_app_listens_on_gradio_server_port_and_refuses_a_bad_one(tmp_path: Path) -> None:
    import os
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    root = Path(__file__).resolve().parents[1]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k not in ("COSTA_PORT", "COSTA_HOST")}
    env |= {"COSTA_HOME": str(tmp_path), "GRADIO_SERVER_PORT": "not-a-port"}
    bad = subprocess.run([sys.executable, "app.py"], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "GRADIO_SERVER_PORT must be a port number" in bad.stderr
    assert "Traceback" not in bad.stderr
    env["GRADIO_SERVER_PORT"] = str(port)
    proc = subprocess.Popen(
        [sys.executable, "app.py"], cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.time() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as r:
                    assert r.status == 200
                    break
            except OSError:
                assert proc.poll() is None and time.time() < deadline, "the app did not answer on GRADIO_SERVER_PORT"
                time.sleep(0.5)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
