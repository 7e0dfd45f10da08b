"""The page in Debian's headless Chromium (Playwright): upload, a text replacement by Enter, the tree and the A* path
drawn, history surviving a refresh. Leaves a screenshot in artifacts/ for people to look at."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.app_server import AppServer

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists() and not shutil.which("chromium"):
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium")), args=FLAGS
        )
        yield b
        b.close()


def test_text_replacement_in_the_browser(app_server: AppServer, browser) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(app_server.url)
    page.wait_for_selector("#status >> text=Running on", timeout=60_000)
    assert "LLM: offline rule planner" in page.inner_text("#status")

    page.set_input_files("#current-image input[type=file]", str(ROOT / "assets" / "sale_sign.png"))
    page.fill("#instruction textarea", "replace the text 'SALE' with 'OPEN'")
    page.wait_for_selector("#prediction >> text=Prediction at α = 1", timeout=30_000)
    page.wait_for_selector("#toolgraph svg", timeout=30_000)  # the predicted path, before running
    page.press("#instruction textarea", "Enter")

    page.wait_for_selector("#chat >> text=Done", timeout=90_000)
    page.wait_for_selector("#ledger >> text=1 turn(s)", timeout=30_000)  # the new version is shown
    assert page.input_value("#instruction textarea") == ""
    assert page.locator("#undo").is_enabled()
    chat = page.inner_text("#chat")
    assert "Text Replacement" in chat and "rapidocr_detect" in chat
    page.wait_for_selector("#tree svg", timeout=30_000)
    tree = page.inner_html("#tree")
    assert "Text Replacement" in tree and "done" in tree  # the subtask node carries the done class
    page.wait_for_selector("#toolgraph svg .chosen", timeout=30_000)
    assert page.locator("#toolgraph svg .chosen").count() >= 2  # detector + writer on the chosen A* path
    assert "rapidocr_detect" in page.inner_text("#ledger")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "app-text-replacement.png"), full_page=True)

    page.reload()  # the session id lives in the browser: history and chat come back
    page.wait_for_selector("#chat >> text=replace the text 'SALE' with 'OPEN'", timeout=60_000)
    page.wait_for_selector("#toolgraph svg .chosen", timeout=30_000)
    page.get_by_role("tab", name="History", exact=True).click()
    page.wait_for_selector("#gallery .thumbnail-item", timeout=30_000)
    assert page.locator("#gallery .thumbnail-item").count() == 2
    page.screenshot(path=str(ARTIFACTS / "app-history.png"), full_page=True)
    assert not [e for e in errors if "getAttribute" not in e], errors
    page.close()
