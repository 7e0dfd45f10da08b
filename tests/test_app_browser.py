"""The page in Debian's headless Chromium (Playwright): upload, a text replacement by Enter, the tree and the A* path
drawn, history surviving a refresh, a brush mask painted on the image. Leaves screenshots in artifacts/ for people to
look at."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app_server import AppServer, chromium
from ui.diagrams import DRAWN

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per module (`tests.app_server.chromium`)."""
    with chromium() as b:
        yield b


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
    page.wait_for_selector(f"#toolgraph {DRAWN}", timeout=30_000)  # the predicted path, before running
    page.press("#instruction textarea", "Enter")

    page.wait_for_selector("#chat >> text=Done", timeout=90_000)
    page.wait_for_selector("#ledger >> text=1 turn(s)", timeout=30_000)  # the new version is shown
    assert page.input_value("#instruction textarea") == ""
    assert page.locator("#undo").is_enabled()
    chat = page.inner_text("#chat")
    assert "Text Replacement" in chat and "rapidocr_detect" in chat
    page.wait_for_selector(f"#tree {DRAWN}", timeout=30_000)
    tree = page.inner_html("#tree")
    assert "Text Replacement" in tree and "done" in tree  # the subtask node carries the done class
    page.wait_for_selector(f"#toolgraph {DRAWN} .chosen", timeout=30_000)
    assert page.locator(f"#toolgraph {DRAWN} .chosen").count() >= 2  # detector + writer on the chosen A* path
    assert "rapidocr_detect" in page.inner_text("#ledger")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "app-text-replacement.png"), full_page=True)

    page.reload()  # the session id lives in the browser: history and chat come back
    page.wait_for_selector("#chat >> text=replace the text 'SALE' with 'OPEN'", timeout=60_000)
    page.wait_for_selector(f"#toolgraph {DRAWN} .chosen", timeout=30_000)
    page.get_by_role("tab", name="History", exact=True).click()
    page.wait_for_selector("#gallery .thumbnail-item", timeout=30_000)
    assert page.locator("#gallery .thumbnail-item").count() == 2
    page.screenshot(path=str(ARTIFACTS / "app-history.png"), full_page=True)
    assert not errors, errors
    page.close()


def test_a_brush_mask_in_the_browser(app_server: AppServer, browser) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(app_server.url)
    page.wait_for_selector("#status >> text=Running on", timeout=60_000)
    page.set_input_files("#current-image input[type=file]", str(ROOT / "assets" / "red_ball.png"))
    page.wait_for_selector("#slider img", timeout=30_000)
    page.click("#brush-panel >> text=Brush a mask")
    page.wait_for_selector("#brush-editor canvas", timeout=30_000)
    page.wait_for_timeout(500)  # the current image is drawn into the editor
    page.click("#brush-editor button[aria-label='Brush']")
    canvas = page.locator("#brush-editor canvas").first.bounding_box()
    assert canvas is not None
    x, y = canvas["x"] + canvas["width"] * 0.57, canvas["y"] + canvas["height"] * 0.48
    page.mouse.move(x, y)
    page.mouse.down()
    for k in range(1, 16):
        page.mouse.move(x + 3 * k, y + (k % 4))
    page.mouse.up()
    page.click("#use-brush")
    page.wait_for_selector("#points >> text=Brush mask set", timeout=30_000)
    assert " px" in page.inner_text("#points")
    # the prediction now starts from the mask: a recolouring path straight from it, no grounding first
    page.fill("#instruction textarea", "make the ball blue")
    page.wait_for_selector("#prediction >> text=Prediction at α = 1", timeout=30_000)
    current = page.inner_text("#prediction").splitlines()[0]  # without the mask: colour_grounder → recolor_lab
    assert " via recolor_" in current, current
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#brush-panel").screenshot(path=str(ARTIFACTS / "app-brush.png"))
    page.click("#clear-brush")
    page.wait_for_selector("#points >> text=No target marked", timeout=30_000)
    assert not errors, errors
    page.close()


def test_mistakes_pointing_new_photos_downloads_and_the_version_tree(app_server: AppServer, browser) -> None:
    """As a new user: a mistake is a toast; asked to point, the instruction stays; a download is quick and shows
    its links; a new photo starts a new session (numbers from v1, old links gone); the version tree drawn while its
    tab was hidden shows when the tab is opened; the API tab names this app's address; no console errors."""
    import time

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console.append(str(e)))
    page.goto(app_server.url)
    page.wait_for_selector("#status >> text=Running on", timeout=60_000)
    page.click("#send")  # nothing typed, no image
    page.wait_for_selector("text=The instruction is empty", timeout=30_000)  # a toast, not a silent HTTP 500

    page.set_input_files("#current-image input[type=file]", str(ROOT / "assets" / "red_ball.png"))
    page.wait_for_selector("#slider img", timeout=30_000)
    page.fill("#instruction textarea", "make the ball blue")
    page.press("#instruction textarea", "Enter")
    page.wait_for_selector("#chat >> text=Click on it in the image", timeout=90_000)
    page.wait_for_function(  # kept: point, then send again (the chat streams before the turn's last update)
        "t => document.querySelector('#instruction textarea').value === t", arg="make the ball blue", timeout=30_000
    )

    t0 = time.time()
    page.click("#export")
    page.wait_for_selector("#downloads a", timeout=30_000)
    seconds = time.time() - t0
    assert seconds < 6, seconds
    assert page.locator("#downloads a").count() == 2
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "app-pointing-and-downloads.png"), full_page=True)

    page.set_input_files("#current-image input[type=file]", str(ROOT / "assets" / "sale_sign.png"))
    page.wait_for_selector("text=New photo, new session", timeout=30_000)
    page.wait_for_function("() => !document.querySelector('#downloads a')", timeout=30_000)  # old links gone
    page.fill("#instruction textarea", "replace the text 'SALE' with 'OPEN'")
    page.press("#instruction textarea", "Enter")
    page.wait_for_selector("#chat >> text=rapidocr_detect", timeout=90_000)
    page.get_by_role("tab", name="History", exact=True).click()  # tabs switched while the diagrams stream
    page.wait_for_timeout(400)
    page.get_by_role("tab", name="Edit", exact=True).click()
    page.wait_for_selector("#chat >> text=New version v2", timeout=90_000)  # numbered within this session
    page.get_by_role("tab", name="History", exact=True).click()
    page.wait_for_selector(f"#versions {DRAWN}", timeout=30_000)  # drawn now, although the turn ran while it was hidden
    page.wait_for_function(
        f"() => (document.querySelector('#versions {DRAWN}')?.textContent || '').includes('v2')", timeout=30_000
    )
    tree = page.text_content("#versions") or ""
    assert "v1" in tree and "v2" in tree and "turn 1:" in tree
    assert page.locator("#gallery .thumbnail-item").count() == 2
    page.screenshot(path=str(ARTIFACTS / "app-version-tree.png"), full_page=True)
    page.get_by_role("tab", name="Evaluate", exact=True).click()
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / "app-evaluate.png"), full_page=True)
    page.get_by_role("tab", name="API", exact=True).click()
    port = app_server.url.rstrip("/").rsplit(":", 1)[1]
    page.wait_for_selector(f"text=127.0.0.1:{port}", timeout=30_000)
    drawn = page.evaluate("window.__costaMermaid")
    print(f"mermaid: {drawn['drawn']} drawn, {drawn['dropped']} superseded and dropped; console errors {len(console)}")
    assert drawn["drawn"] > 0  # the page's safe Mermaid drawing is in use
    assert not console, [e[:200] for e in console]  # Mermaid's getAttribute error included (ui/diagrams.py)
    page.close()
