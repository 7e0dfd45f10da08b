"""Reflection asks the user to point, in Debian's headless Chromium (Playwright): with a protocol table whose only
retry action is `ask_user` (COSTA_REFLECTION_TABLE), a recolouring that does not reach τ_sr makes the chat name the
target, keeps the instruction in the box, opens the brush accordion on the current image and turns the points line
into "Point at 'ball' …". Leaves a screenshot in artifacts/ for people to look at."""

from __future__ import annotations

import pytest
import yaml

from tests.app_server import AppServer, port_in, running_app
from tests.test_app_browser import ARTIFACTS, ROOT, browser  # noqa: F401  (the module's Chromium fixture)

pytestmark = pytest.mark.slow
PORTS = range(7911, 7920)  # this test's app ports (never 7860)
BALL = (358, 185)  # the red ball's centre in assets/red_ball.png (640×420), image pixels


def _port() -> int:
    return port_in(PORTS)


def _click_image(page, x: int, y: int) -> None:
    """Click image pixel (x, y) of the current image (shown letterboxed: object-fit contain)."""
    img = page.locator("#current-image img").first
    box = img.bounding_box()
    assert box is not None
    w, h = img.evaluate("e => [e.naturalWidth, e.naturalHeight]")
    scale = min(box["width"] / w, box["height"] / h)
    left = box["x"] + (box["width"] - w * scale) / 2
    top = box["y"] + (box["height"] - h * scale) / 2
    page.mouse.click(left + x * scale, top + y * scale)


@pytest.fixture(scope="module")
def ask_app(tmp_path_factory: pytest.TempPathFactory):
    """The app with a reflection table that can only ask the user (τ_sr 10: the HSV recolouring scores ~9.7)."""
    home = tmp_path_factory.mktemp("ask_home")
    data = yaml.safe_load((ROOT / "tool_tables" / "reflection.yaml").read_text())
    data["tau_sr"], data["actions"] = 10.0, ["ask_user"]
    table = home / "reflection-ask.yaml"
    table.write_text(yaml.safe_dump(data))
    # CIELAB's recolouring scores 10 (accepted) and HSV's ~9.65: with both ready the search chose by measured seconds,
    # so the ask came or not with the machine's load; switched off, HSV is the path every time
    env = {"COSTA_REFLECTION_TABLE": str(table), "COSTA_TOOLS_OFF": "recolor_lab"}
    with running_app(home, extra_env=env, port=_port()) as server:
        yield server


def test_reflection_asking_to_point_opens_the_pointing_tools(ask_app: AppServer, browser) -> None:  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(ask_app.url)
    page.wait_for_selector("#status >> text=Running on", timeout=60_000)
    page.set_input_files("#current-image input[type=file]", str(ROOT / "assets" / "red_ball.png"))
    page.wait_for_selector("#slider img", timeout=30_000)
    assert not page.locator("#brush-editor canvas").is_visible()  # the brush accordion starts closed
    _click_image(page, *BALL)  # one click on the ball: the region around it is the target
    page.wait_for_selector("#points >> text=1 click at", timeout=30_000)
    page.fill("#instruction textarea", "make the ball blue")
    page.press("#instruction textarea", "Enter")

    try:
        page.wait_for_selector("#chat >> text=reflection doubts the target", timeout=120_000)
    except Exception:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "app-reflection-ask-point-failed.png"), full_page=True)
        raise AssertionError("the chat never asked to point:\n" + page.inner_text("#chat")) from None
    page.wait_for_function(  # kept: point, then send again
        "t => document.querySelector('#instruction textarea').value === t", arg="make the ball blue", timeout=30_000
    )
    page.wait_for_selector("#points >> text=Point at 'ball'", timeout=30_000)
    page.wait_for_selector("#brush-editor canvas", state="visible", timeout=30_000)  # the accordion opened
    chat = page.inner_text("#chat")
    assert "Point at 'ball'" in chat and "Send again" in chat
    assert "ask_user" not in chat  # said in words, not as the action's name
    page.get_by_text("Reflection (multi-expert check per subtask)").click()
    page.wait_for_selector("#reflection >> text=best_of", timeout=30_000)
    page.wait_for_timeout(800)  # the current image is drawn into the editor
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "app-reflection-ask-point.png"), full_page=True)
    assert not errors, errors
    page.close()
