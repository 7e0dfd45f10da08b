"""Uploads through the page are kept only when a turn keeps them (issue 21, defect 2), in Debian's headless Chromium:
a photo chosen or an example clicked is shown, pointed at and predicted on, but stored only when a turn keeps a
version (or needs the image next); a turn that plans nothing ("hello there") stores nothing and the photo stays on
screen for the next instruction. The API's side is bench/faults_defects.py's growth probe."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from tests.app_server import chromium, open_page, running_app

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
    home = tmp_path / "home"
    with running_app(home) as app, chromium() as browser:
        page, errors = open_page(browser, app.url, height=1000)

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
