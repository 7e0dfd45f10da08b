"""A proposal in the app (issue 18 part 2), on `python app.py` with the REAL calibration table: through gradio_client
(/edit says "proposed", /accept saves it, /discard leaves the history, a call with nothing waiting is an error) and in
Debian's headless Chromium (Playwright): "Proposed — have a look" with the reason, the slider shows the proposal,
Accept and Discard one click each. Leaves screenshots in artifacts/."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from costa.calibration import CALIBRATION_FILE
from tests.app_server import AppServer, port_in, running_app
from tests.test_app_browser import ARTIFACTS, browser  # noqa: F401  (the module's Chromium fixture)

pytestmark = pytest.mark.slow
PORTS = range(7931, 7940)  # this module's app ports (never 7860)
FLAG = "0,0,120,180"  # the flag at the astronaut's top left, boxed
REASON = "recolor_lab for object_recoloration on photos (medium region, box)"


def _port() -> int:
    return port_in(PORTS)


@pytest.fixture(scope="module")
def real_app(tmp_path_factory: pytest.TempPathFactory):
    """The app judging passed steps by the REAL calibration table (the suite's FAKE one vouches for everything)."""
    home = tmp_path_factory.mktemp("proposal_home")
    with running_app(home, extra_env={"COSTA_CALIBRATION_TABLE": str(CALIBRATION_FILE)}, port=_port()) as server:
        yield server


@pytest.fixture
def astronaut(tmp_path: Path) -> Path:
    from skimage import data

    path = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(path)
    return path


def _pixels(path: str) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB")).astype(int)


def test_the_api_says_proposed_and_accept_and_discard_decide(real_app: AppServer, astronaut: Path) -> None:
    from gradio_client import Client, handle_file

    c = Client(real_app.url, verbose=False)
    sid = c.predict(api_name="/new_session")
    image, report = c.predict(sid, handle_file(str(astronaut)), "make the flag blue", 1.0, 0.8, FLAG, "",
                              api_name="/edit")  # fmt: skip
    assert report["status"] == "proposed" and not report["ok"] and report["version_id"] is None
    (sub,) = report["subtasks"]
    assert sub["state"] == "proposed" and REASON in sub["proposed"]
    proposal = report["proposal"]
    assert proposal["id"] is not None and proposal["subtasks"][0]["context"]["pointing"] == "box"
    assert "Proposed — have a look" in report["message"] and REASON in report["message"]
    shown, original = _pixels(image), _pixels(str(astronaut))
    changed = np.abs(shown - original).max(axis=2) > 30
    assert changed[:180, :120].mean() > 0.2 and not changed[:, 140:].any()  # the proposal: the flag recoloured
    assert [v["kind"] for v in c.predict(sid, api_name="/history")["versions"]] == ["upload"]  # not a version yet

    current, history = c.predict(sid, api_name="/accept")
    assert history["decided"]["verdict"] == "accepted" and history["decided"]["version_id"] is not None
    assert [v["kind"] for v in history["versions"]] == ["upload", "turn"]
    assert np.array_equal(_pixels(current), shown)  # the accepted proposal is the current image
    with pytest.raises(Exception, match=r"(?i)no proposal is waiting"):
        c.predict(sid, api_name="/accept")  # nothing waits any more: an error, nothing changes
    assert len(c.predict(sid, api_name="/history")["versions"]) == 2

    _, again = c.predict(sid, None, "make the flag green", 1.0, 0.8, FLAG, "", api_name="/edit")
    assert again["status"] == "proposed"
    current, history = c.predict(sid, api_name="/discard")
    assert history["decided"]["verdict"] == "discarded" and history["decided"]["version_id"] is None
    assert len(history["versions"]) == 2 and np.array_equal(_pixels(current), shown)  # untouched
    with pytest.raises(Exception, match="nothing to discard"):
        c.predict(sid, api_name="/discard")


def test_a_proposal_in_the_browser_is_looked_at_then_accepted_or_discarded(
    real_app: AppServer,
    browser,  # noqa: F811
    astronaut: Path,
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(real_app.url)
    page.wait_for_selector("#status >> text=Running on", timeout=60_000)
    page.set_input_files("#current-image input[type=file]", str(astronaut))
    page.wait_for_selector("#slider img", timeout=30_000)
    assert not page.locator("#proposal-actions").is_visible()
    box = page.get_by_label("Target box x,y,w,h (optional)")
    box.fill(FLAG)
    box.blur()
    page.fill("#instruction textarea", "make the flag blue")
    page.press("#instruction textarea", "Enter")
    try:
        page.wait_for_selector("#chat >> text=Proposed — have a look", timeout=120_000)
    except Exception:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "app-proposal-failed.png"), full_page=True)
        raise AssertionError("the chat never said 'Proposed':\n" + page.inner_text("#chat")) from None
    page.wait_for_selector("#proposal-actions", state="visible", timeout=30_000)
    chat = page.inner_text("#chat")
    assert REASON in chat and "✅ Done" not in chat
    assert REASON in page.inner_text("#proposal-note")
    assert page.locator("#slider img").count() == 2  # before | the proposal
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "app-proposal.png"), full_page=True)

    page.click("#accept")
    page.wait_for_selector("#chat >> text=Accepted", timeout=30_000)
    page.wait_for_selector("#proposal-actions", state="hidden", timeout=30_000)
    assert page.locator("#undo").is_enabled()  # a new version: undo goes back to the upload
    page.get_by_role("tab", name="History", exact=True).click()
    page.wait_for_selector("#gallery .thumbnail-item", timeout=30_000)
    assert page.locator("#gallery .thumbnail-item").count() == 2
    page.get_by_role("tab", name="Edit", exact=True).click()

    page.fill("#instruction textarea", "make the flag green")
    page.press("#instruction textarea", "Enter")
    page.wait_for_selector("#proposal-actions", state="visible", timeout=120_000)
    page.click("#discard")
    page.wait_for_selector("#chat >> text=Discarded", timeout=30_000)
    page.wait_for_selector("#proposal-actions", state="hidden", timeout=30_000)
    page.get_by_role("tab", name="History", exact=True).click()
    page.wait_for_selector("#gallery .thumbnail-item", timeout=30_000)
    assert page.locator("#gallery .thumbnail-item").count() == 2  # the discarded proposal is no version
    page.screenshot(path=str(ARTIFACTS / "app-proposal-discarded.png"), full_page=True)
    assert not errors, errors
    page.close()
