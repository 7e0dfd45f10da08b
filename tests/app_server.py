"""`python app.py` in a subprocess for the app tests (gradio_client and browser), on a free port and a temp home."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Planted in the app's environment; no page or API response may ever contain it.
SECRET_KEY = "sk-test-NEVER-IN-THE-BROWSER-7f3a"
#: Upload limit the test app runs with, in megabytes.
UPLOAD_LIMIT_MB = 2


@dataclass(frozen=True)
class AppServer:
    url: str
    home: Path


def port_in(ports: range) -> int:
    """The first port of `ports` free on 127.0.0.1 (a module's own app ports); skips the test when none is."""
    import pytest

    for port in ports:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.skip(f"no free port in {ports.start}–{ports.stop - 1}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_app(
    home: Path,
    timeout_s: float = 120,
    argv: Sequence[str] = ("app.py",),
    extra_env: Mapping[str, str] | None = None,
    port: int | None = None,
) -> Iterator[AppServer]:
    """`python <argv>` (default app.py) from the repository root, with `extra_env` added to its environment, on
    `port` (default a free one)."""
    port = port or _free_port()
    env = {
        **os.environ,
        "COSTA_HOME": str(home),
        "COSTA_PORT": str(port),
        "COSTA_MAX_UPLOAD_MB": str(UPLOAD_LIMIT_MB),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "OPENAI_API_KEY": SECRET_KEY,  # a key without an endpoint or model: the offline planner still plans
        "COSTA_RATE_LIMIT": "0",  # the shared app serves every test from one address; test_faults_defects sets one
    }
    env.update(extra_env or {})
    env.pop("OPENAI_BASE_URL", None)
    env.pop("COSTA_LLM_MODEL", None)
    log = home / "app.log"
    home.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, *argv], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + timeout_s
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError("app exited early:\n" + log.read_text())
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError(f"app did not answer within {timeout_s:.0f} s:\n" + log.read_text()) from None
                time.sleep(0.3)
        yield AppServer(url, home)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
