"""Refine a proposal in the app (issue 18 part 2), on `python app.py` with the REAL calibration table: through
gradio_client (/refine runs the proposal's instruction again with new pointing; the old proposal is recorded refined;
no new pointing or nothing waiting is an error) and in Debian's headless Chromium (Playwright): the Refine button
beside Accept / Discard, refused until the person points again, then a second proposal; the Evaluate tab lists each
proposal with its verdict, who and when. Leaves screenshots in artifacts/."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from costa.calibration import CALIBRATION_FILE
from tests.app_server import AppServer, port_in, running_app
from tests.test_app_browser import ARTIFACTS, browser  # noqa: F401  (the module's Chromium fixture)

pytestmark = pytest.mark.slow
PORTS = range(7941, 7950)  # this module's app ports (never 7860)
FLAG = "0,0,120,180"  # the flag at the astronaut's top left, boxed
TIGHTER = "0,0,100,170"  # the same flag, boxed again more tightly: the refined pointing
PROPOSED = "Proposed — have a look"


@pytest.fixture(scope="module")
def real_app(tmp_path_factory: pytest.TempPathFactory):
    """The app judging passed steps by the REAL calibration table (the suite's FAKE one vouches for everything)."""
    home = tmp_path_factory.mktemp("refine_home")
    env = {"COSTA_CALIBRATION_TABLE": str(CALIBRATION_FILE)}
    with running_app(home, extra_env=env, port=port_in(PORTS)) as server:
        yield server


@pytest.fixture
def astronaut(tmp_path: Path) -> Path:
    from skimage import data

    path = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(path)
    return path


def _pixels(path: str) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB")).astype(int)


def test_the_api_refines_a_proposal_with_a_new_box(real_app: AppServer, astronaut: Path) -> None:
    from gradio_client import Client, handle_file

    c = Client(real_app.url, verbose=False)
    sid = c.predict(api_name="/new_session")
    with pytest.raises(Exception, match="nothing to refine"):
        c.predict(sid, TIGHTER, "", None, api_name="/refine")  # no image, no proposal
    _, first = c.predict(sid, handle_file(str(astronaut)), "make the flag blue", 1.0, 0.8, FLAG, "", api_name="/edit")
    assert first["status"] == "proposed"
    with pytest.raises(Exception, match="add a brush, more clicks or a box"):
        c.predict(sid, FLAG, "", None, api_name="/refine")  # the proposal's own box: nothing would differ
    image, again = c.predict(sid, TIGHTER, "", None, api_name="/refine")
    assert again["status"] == "proposed" and again["turn_id"] != first["turn_id"]  # judged like any turn
    assert again["proposal"]["subtasks"][0]["context"]["pointing"] == "box"
    changed = np.abs(_pixels(image) - _pixels(str(astronaut))).max(axis=2) > 30
    assert changed[:170, :100].mean() > 0.2 and not changed[:, 110:].any()  # recoloured inside the tighter box only
    history = c.predict(sid, api_name="/history")
    assert [v["kind"] for v in history["versions"]] == ["upload"]  # refining saves nothing
    _, decided = c.predict(sid, api_name="/accept")  # the refined run's result
    assert decided["decided"]["verdict"] == "accepted" and [v["kind"] for v in decided["versions"]] == [
        "upload",
        "turn",
    ]
    rows = list(csv.DictReader(Path(c.predict(sid, api_name="/scores_csv")).read_text().splitlines()))
    verdicts = [r["verdict"] for r in rows if r["record"] == "verdict"]
    assert verdicts == ["refined", "accepted"]  # the first proposal refined, the refined run's accepted


def _proposals_shown(page: object) -> int:
    return page.locator(f"#chat >> text={PROPOSED}").count()  # type: ignore[attr-defined]


def _wait_for(predicate: object, timeout_s: float, what: str) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def test_refine_in_the_browser_runs_again_with_the_new_box_and_the_evaluator_lists_the_verdicts(
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
    box = page.get_by_label("Target box x,y,w,h (optional)")
    box.fill(FLAG)
    box.blur()
    page.fill("#instruction textarea", "make the flag blue")
    page.press("#instruction textarea", "Enter")
    page.wait_for_selector("#proposal-actions", state="visible", timeout=120_000)
    assert page.locator("#refine").is_visible() and "Refine" in page.inner_text("#chat")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "app-refine-proposal.png"), full_page=True)

    page.click("#refine")  # nothing pointed since: refused, one toast, nothing runs
    page.wait_for_selector("text=add a brush, more clicks or a box", timeout=30_000)
    assert _proposals_shown(page) == 1 and page.locator("#proposal-actions").is_visible()

    box.fill(TIGHTER)
    box.blur()
    page.wait_for_timeout(1500)  # let the box's blur event settle first (a click racing it once never ran)
    page.click("#refine")
    try:
        _wait_for(lambda: _proposals_shown(page) >= 2, 120, "the refined run's proposal")
    except AssertionError:
        page.screenshot(path=str(ARTIFACTS / "app-refine-failed.png"), full_page=True)
        toasts = page.locator(".toast-body").all_inner_texts()
        raise AssertionError(f"no second proposal (toasts {toasts}):\n" + page.inner_text("#chat")) from None
    page.wait_for_selector("#proposal-actions", state="visible", timeout=30_000)
    assert "make the flag blue" in page.inner_text("#chat")  # the same instruction, run again
    page.screenshot(path=str(ARTIFACTS / "app-refine-again.png"), full_page=True)

    page.get_by_role("tab", name="Evaluate", exact=True).click()
    # the Dataframe renders each cell twice (one copy hidden): wait on the table's text, not on a cell
    _wait_for(lambda: "refined (turn 2)" in page.inner_text("#verdicts-table"), 30, "the refined verdict")
    table = page.inner_text("#verdicts-table")
    assert "pending" in table and "recolor_" in table and "no real-photo evidence" in table
    page.get_by_role("tab", name="Edit", exact=True).click()
    page.click("#accept")
    page.wait_for_selector("#chat >> text=Accepted", timeout=30_000)
    page.get_by_role("tab", name="Evaluate", exact=True).click()
    _wait_for(lambda: "accepted" in page.inner_text("#verdicts-table"), 30, "the accepted verdict")
    table = page.inner_text("#verdicts-table")
    assert "refined (turn 2)" in table and "no login" in table and "20" in table  # who and when (ISO time)
    page.screenshot(path=str(ARTIFACTS / "app-refine-evaluate.png"), full_page=True)
    page.get_by_role("tab", name="History", exact=True).click()
    page.wait_for_selector("#gallery .thumbnail-item", timeout=30_000)
    assert page.locator("#gallery .thumbnail-item").count() == 2  # upload + the accepted refined result
    assert not errors, errors
    page.close()
