"""Uploads through the page are kept only when a turn keeps them (issue 21, defect 2), in Debian's headless Chromium:
a photo chosen or an example clicked is shown, pointed at and predicted on, but stored only when a turn keeps a
version (or needs the image next); a turn that plans nothing ("hello there") stores nothing and the photo stays on
screen for the next instruction. The API's side is bench/faults_defects.py's growth probe."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from tests.app_server import running_app
from tests.test_app_browser import CHROMIUM, FLAGS

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


def _stored(home: Path) -> tuple[int, int, list[str]]:
    """(versions, finished turns, version kinds in order) in the app's store."""
    db = sqlite3.connect(f"file:{home / 'costa.db'}?mode=ro", uri=True)
    try:
        kinds = [k for (k,) in db.execute("SELECT kind FROM versions ORDER BY id")]
        (turns,) = db.execute("SELECT COUNT(*) FROM turns WHERE status != 'running'").fetchone()
    finally:
        db.close()
    return len(kinds), int(turns), kinds


def _wait_turns(home: Path, n: int, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while _stored(home)[1] < n:
        assert time.monotonic() < deadline, f"fewer than {n} finished turns after {seconds:g} s"
        time.sleep(0.2)


def test_a_page_upload_is_stored_only_when_a_turn_keeps_it(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = CHROMIUM if CHROMIUM.exists() else shutil.which("chromium")
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    home = tmp_path / "home"
    with running_app(home) as app, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(app.url)
        page.wait_for_selector("#status >> text=Running on", timeout=60_000)

        page.set_input_files("#current-image input[type=file]", str(ROOT / "assets" / "sale_sign.png"))
        page.wait_for_selector("#slider img", timeout=30_000)  # shown before any turn
        page.fill("#instruction textarea", "replace the text 'SALE' with 'OPEN'")
        page.wait_for_selector("#prediction >> text=Prediction at α = 1", timeout=30_000)  # predicted on it
        assert _stored(home)[0] == 0, "the upload was stored before any turn"

        page.fill("#instruction textarea", "hello there")
        page.press("#instruction textarea", "Enter")
        page.wait_for_selector("#chat >> text=nothing editable was recognised", timeout=90_000)
        _wait_turns(home, 1)
        assert _stored(home)[0] == 0, "a turn that planned nothing stored its upload"
        assert page.locator("#current-image img").count() == 1  # the photo is still there to edit

        page.fill("#instruction textarea", "replace the text 'SALE' with 'OPEN'")
        page.press("#instruction textarea", "Enter")
        page.wait_for_selector("#chat >> text=New version v2", timeout=90_000)
        _wait_turns(home, 2)
        assert _stored(home)[0::2] == (2, ["upload", "turn"])  # the upload it edited, then its result

        page.locator("#examples").get_by_text("make the red ball blue").click()  # a new session
        page.wait_for_selector("text=New photo, new session", timeout=30_000)
        page.wait_for_selector("#prediction >> text=Prediction at α = 1", timeout=30_000)
        assert _stored(home)[0] == 2, "a clicked example was stored before any turn"
        assert not errors, errors
        browser.close()
