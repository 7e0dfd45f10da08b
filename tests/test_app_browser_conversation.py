"""The page as a person uses it in a conversation (Debian's headless Chromium, Playwright): a mistake is one toast
and no error badge stays on any component; a follow-up refers to what is on the image now; words undo like the
button. Screenshots go to artifacts/ for people to look at."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app_server import AppServer, chromium

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per module (`tests.app_server.chromium`)."""
    with chromium() as b:
        yield b


def _send(page, text: str) -> None:
    page.fill("#instruction textarea", text)
    page.press("#instruction textarea", "Enter")


def _badges(page) -> int:
    return (
        page.locator("span.error, div.error:not(.toast-body):not(.toast-wrap)").count()
        + page.locator("[data-testid='status-tracker'] >> text=Error").count()
    )


def test_a_mistake_is_one_toast_and_leaves_no_error_badge(app_server: AppServer, browser, tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(app_server.url)
    page.wait_for_selector("#status >> text=Running on", timeout=60_000)
    bad = tmp_path / "broken.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n not really a png")
    page.set_input_files("#current-image input[type=file]", str(bad))
    page.wait_for_selector("text=not an image", timeout=30_000)  # one toast says why
    _send(page, "   ")  # an empty instruction: refused before anything runs
    page.wait_for_timeout(1500)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "app-error-no-badge.png"), full_page=True)
    assert _badges(page) == 0, "an error badge stayed on a component"
    page.set_input_files("#current-image input[type=file]", str(ROOT / "assets" / "red_ball.png"))
    page.wait_for_selector("#slider img", timeout=30_000)  # the page still works
    assert _badges(page) == 0
    page.close()


def test_a_follow_up_session_and_words_as_undo(app_server: AppServer, browser) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(app_server.url)
    page.wait_for_selector("#status >> text=Running on", timeout=60_000)
    page.set_input_files("#current-image input[type=file]", str(ROOT / "assets" / "red_ball.png"))
    page.wait_for_selector("#slider img", timeout=30_000)
    _send(page, "make the red ball blue")
    page.wait_for_selector("#chat >> text=Done", timeout=120_000)
    page.wait_for_selector("#ledger >> text=1 turn(s)", timeout=120_000)  # the turn is recorded, not only shown
    _send(page, "now make it darker")
    page.wait_for_selector("#chat >> text=the blue ball", timeout=120_000)  # 'it' read as the ball, as it is now
    page.wait_for_selector("#ledger >> text=2 turn(s)", timeout=120_000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "app-follow-up.png"), full_page=True)
    _send(page, "undo")
    page.wait_for_selector("#chat >> text=Undid 1 step", timeout=60_000)
    page.screenshot(path=str(ARTIFACTS / "app-words-undo.png"), full_page=True)
    _send(page, "change it back")
    page.wait_for_selector("#chat >> text=Changed back", timeout=60_000)
    assert not errors, errors
    assert _badges(page) == 0
    page.close()


def test_the_models_panel_says_what_is_missing_and_how_to_get_it(app_server: AppServer, browser) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(app_server.url)
    page.wait_for_selector("#status >> text=Running on", timeout=60_000)
    page.get_by_role("tab", name="Models", exact=True).click()
    page.wait_for_selector("#models-table >> text=models present", timeout=30_000)
    table = page.inner_text("#models-table")
    assert "stabilityai/stable-diffusion-2-inpainting" in table and "missing" in table and "GB" in table
    assert "python -m costa models pull stabilityai/stable-diffusion-2-inpainting --yes" in table  # downloads off
    assert not page.locator("#models-pull").is_visible()  # no Pull button unless COSTA_ALLOW_DOWNLOADS=1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "app-models.png"), full_page=True)
    page.close()
