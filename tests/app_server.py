"""`python app.py` in a subprocess for the app tests (gradio_client and browser), on a free port and a temp home, and
what the browser tests share: Debian's headless Chromium (`chromium`), a page opened on the app with its errors
collected (`open_page`), a photo uploaded and an instruction sent (`upload`, `send`), the app judging by the REAL
calibration table (`real_calibration_app`), a real photo (`save_astronaut`) and an image file's pixels (`pixels`)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: Planted in the app's environment; no page or API response may ever contain it.
SECRET_KEY = "sk-test-NEVER-IN-THE-BROWSER-7f3a"
#: Upload limit the test app runs with, in megabytes.
UPLOAD_LIMIT_MB = 2
CHROMIUM = Path("/usr/bin/chromium")
#: Chromium's flags for the browser tests: headless, no sandbox (containers), nothing reaching the network.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


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


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's headless Chromium through Playwright (a `playwright.sync_api.Browser`); skips the test when Playwright
    or Chromium is not installed."""
    import pytest

    sync_api = pytest.importorskip("playwright.sync_api")
    exe = str(CHROMIUM) if CHROMIUM.exists() else shutil.which("chromium")
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def open_page(browser: Any, url: str, height: int = 1100, console_errors: bool = False) -> tuple[Any, list[str]]:
    """A 1400-px-wide page on the app at `url`, once the status line says it runs, and the list its errors collect
    into (the page's uncaught errors; with `console_errors`, the console's errors too): a test ends by asserting it
    is empty."""
    page = browser.new_page(viewport={"width": 1400, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    if console_errors:
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(url)
    page.wait_for_selector("#status >> text=Running on", timeout=60_000)
    return page, errors


def upload(page: Any, image: str | Path) -> None:
    """Upload `image` on the Edit tab and wait until the before/after slider shows it."""
    page.set_input_files("#current-image input[type=file]", str(image))
    page.wait_for_selector("#slider img", timeout=30_000)


def send(page: Any, instruction: str, box: str = "") -> None:
    """Type the target box (when given) and the instruction on the Edit tab, then press Send."""
    if box:
        field = page.get_by_label("Target box x,y,w,h (optional)")
        field.fill(box)
        field.blur()
    page.fill("#instruction textarea", instruction)
    page.click("#send")


@contextmanager
def real_calibration_app(home: Path, ports: range) -> Iterator[AppServer]:
    """The app judging passed steps by the REAL calibration table (tool_tables/calibration.csv: real-photo evidence;
    the suite's FAKE table vouches for everything), on the first free port of `ports`."""
    from costa.calibration import CALIBRATION_FILE

    env = {"COSTA_CALIBRATION_TABLE": str(CALIBRATION_FILE)}
    with running_app(home, extra_env=env, port=port_in(ports)) as server:
        yield server


def save_astronaut(path: Path) -> Path:
    """scikit-image's astronaut photo (512×512, the flag at the top left) saved as a PNG at `path`."""
    from PIL import Image
    from skimage import data

    Image.fromarray(data.astronaut()).save(path)
    return path


def pixels(path: str | Path) -> np.ndarray:
    """An image file's RGB pixels as ints (differences do not wrap)."""
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB")).astype(int)
