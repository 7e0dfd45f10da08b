"""A proposal in the app (issue 18 part 2), on `python app.py` with the REAL calibration table: through gradio_client
(/edit says "proposed", /accept saves it, /discard leaves the history, a call with nothing waiting is an error) and in
Debian's headless Chromium (Playwright): "Proposed — have a look" with the reason, the slider shows the proposal,
Accept and Discard one click each, and a reload brings a pending proposal back (its verdict once judged). Leaves
screenshots in artifacts/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from costa.store import Store
from costa.store.proposals import pending_proposal
from tests.app_server import AppServer, open_page, pixels, real_calibration_app, save_astronaut, send, upload
from tests.test_app_browser import ARTIFACTS, browser  # noqa: F401  (the module's Chromium fixture)

pytestmark = pytest.mark.slow
PORTS = range(7931, 7940)  # this module's app ports (never 7860)
FLAG = "0,0,120,180"  # the flag at the astronaut's top left, boxed
TIGHTER = "0,0,100,170"  # the same flag, boxed again more tightly: a Refine's new pointing
REASON = "recolor_lab for object_recoloration on photos (medium region, box)"


@pytest.fixture(scope="module")
def real_app(tmp_path_factory: pytest.TempPathFactory):
    with real_calibration_app(tmp_path_factory.mktemp("proposal_home"), PORTS) as server:
        yield server


@pytest.fixture
def astronaut(tmp_path: Path) -> Path:
    return save_astronaut(tmp_path / "astronaut.png")


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
    shown, original = pixels(image), pixels(str(astronaut))
    changed = np.abs(shown - original).max(axis=2) > 30
    assert changed[:180, :120].mean() > 0.2 and not changed[:, 140:].any()  # the proposal: the flag recoloured
    assert [v["kind"] for v in c.predict(sid, api_name="/history")["versions"]] == ["upload"]  # not a version yet

    current, history = c.predict(sid, api_name="/accept")
    assert history["decided"]["verdict"] == "accepted" and history["decided"]["version_id"] is not None
    assert [v["kind"] for v in history["versions"]] == ["upload", "turn"]
    assert np.array_equal(pixels(current), shown)  # the accepted proposal is the current image
    with pytest.raises(Exception, match=r"(?i)no proposal is waiting"):
        c.predict(sid, api_name="/accept")  # nothing waits any more: an error, nothing changes
    assert len(c.predict(sid, api_name="/history")["versions"]) == 2

    _, again = c.predict(sid, None, "make the flag green", 1.0, 0.8, FLAG, "", api_name="/edit")
    assert again["status"] == "proposed"
    current, history = c.predict(sid, api_name="/discard")
    assert history["decided"]["verdict"] == "discarded" and history["decided"]["version_id"] is None
    assert len(history["versions"]) == 2 and np.array_equal(pixels(current), shown)  # untouched
    with pytest.raises(Exception, match="nothing to discard"):
        c.predict(sid, api_name="/discard")


def test_a_proposal_in_the_browser_is_looked_at_then_accepted_or_discarded(
    real_app: AppServer,
    browser,  # noqa: F811
    astronaut: Path,
) -> None:
    page, errors = open_page(browser, real_app.url)
    upload(page, astronaut)
    assert not page.locator("#proposal-actions").is_visible()
    send(page, "make the flag blue", FLAG)
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
    # the box is spent, as after a done turn: the next instruction refers to the remembered flag, not to a box
    assert page.get_by_label("Target box x,y,w,h (optional)").input_value() == ""
    page.get_by_role("tab", name="History", exact=True).click()
    page.wait_for_selector("#gallery .thumbnail-item", timeout=30_000)
    assert page.locator("#gallery .thumbnail-item").count() == 2
    page.get_by_role("tab", name="Edit", exact=True).click()

    send(page, "make the flag green")
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


def _slider_pixels(page) -> list[np.ndarray]:
    """The before/after slider's two images, as pixels (fetched from the app like the page fetches them)."""
    import base64
    import io

    out = []
    for src in page.locator("#slider img").evaluate_all("imgs => imgs.map(i => i.src)"):
        body = base64.b64decode(src.split(",", 1)[1]) if src.startswith("data:") else page.request.get(src).body()
        out.append(np.asarray(Image.open(io.BytesIO(body)).convert("RGB")).astype(int))
    return out


def _reload(page) -> None:
    page.reload()
    page.wait_for_selector("#status >> text=Running on", timeout=60_000)
    page.wait_for_selector("#chat >> text=make the flag purple", timeout=30_000)  # the session's chat is back


def _pending(app: AppServer, instruction: str) -> tuple[str, Any]:
    """The session whose last turn is `instruction`, and its pending proposal (None when there is none)."""
    store = Store(app.home)
    (sid,) = [s.id for s in store.sessions(None) if instruction in [t.instruction for t in store.turns(s.id)]]
    return sid, pending_proposal(store, sid)


def test_a_reload_keeps_a_pending_proposal_and_a_verdict(
    real_app: AppServer,
    browser,  # noqa: F811
    astronaut: Path,
) -> None:
    """After a reload (the same browser: its sealed session token reopens the session) a pending proposal shows
    again with its before/after and working Accept / Refine / Discard; accepting it then saves exactly what was
    proposed; a judged proposal comes back with its verdict and no buttons."""
    page, errors = open_page(browser, real_app.url)
    upload(page, astronaut)
    send(page, "make the flag purple", FLAG)
    page.wait_for_selector("#proposal-actions", state="visible", timeout=120_000)
    shown = _slider_pixels(page)
    _reload(page)
    page.wait_for_selector("#proposal-actions", state="visible", timeout=30_000)
    chat, note = page.inner_text("#chat"), page.inner_text("#proposal-note")
    assert "Proposed — have a look" in chat and REASON in chat and REASON in note
    assert "Accepted" not in chat and "Discarded" not in chat
    again = _slider_pixels(page)
    assert len(again) == 2 and all(np.array_equal(a, b) for a, b in zip(again, shown, strict=True))  # the same view
    assert not np.array_equal(again[0], again[1])  # before | the outlined proposal
    for button in ("#accept", "#refine", "#discard"):
        assert page.locator(button).is_visible() and page.locator(button).is_enabled(), button
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "app-proposal-after-reload.png"), full_page=True)
    Image.fromarray(again[1].astype(np.uint8)).save(ARTIFACTS / "app-proposal-after-reload-slider-after.png")

    box = page.get_by_label("Target box x,y,w,h (optional)")
    box.fill(TIGHTER)  # Refine works after the reload: a second proposal, from the tighter box
    page.click("#refine")
    page.wait_for_function(
        "() => (document.querySelector('#chat').innerText.match(/Proposed — have a look/g) || []).length >= 2",
        timeout=120_000,
    )
    page.wait_for_selector("#proposal-actions", state="visible", timeout=30_000)
    sid, proposal = _pending(real_app, "make the flag purple")
    assert proposal is not None and proposal.image is not None
    _reload(page)
    page.wait_for_selector("#proposal-actions", state="visible", timeout=30_000)
    page.click("#accept")  # after the reload: the proposal that waited becomes the current version
    page.wait_for_selector("#chat >> text=Accepted", timeout=30_000)
    page.wait_for_selector("#proposal-actions", state="hidden", timeout=30_000)
    store = Store(real_app.home)
    versions = store.versions(sid)
    assert [v.kind for v in versions] == ["upload", "turn"] and versions[1].parent_id == versions[0].id
    assert store.session(sid, None).head == versions[1].id and versions[1].turn_id == proposal.turn_id
    assert np.array_equal(store.load_image(versions[1]), proposal.image)  # exactly what was proposed
    assert page.locator("#undo").is_enabled()

    _reload(page)  # a judged proposal: its verdict under its turn, no buttons
    page.wait_for_selector("#chat >> text=saved as version v2", timeout=30_000)
    assert not page.locator("#proposal-actions").is_visible()
    send(page, "make the flag green", FLAG)  # the box field is empty after a reload: boxed again
    page.wait_for_selector("#proposal-actions", state="visible", timeout=120_000)
    _reload(page)
    page.wait_for_selector("#proposal-actions", state="visible", timeout=30_000)
    page.click("#discard")
    page.wait_for_selector("#chat >> text=Discarded", timeout=30_000)
    _reload(page)
    page.wait_for_selector("#chat >> text=Discarded", timeout=30_000)
    chat = page.inner_text("#chat")
    assert chat.index("saved as version v2") < chat.index("make the flag green") < chat.index("Discarded")
    assert not page.locator("#proposal-actions").is_visible()
    assert [v.id for v in Store(real_app.home).versions(sid)] == [v.id for v in versions]  # the discard added none
    page.screenshot(path=str(ARTIFACTS / "app-proposal-verdicts-after-reload.png"), full_page=True)
    assert not errors, errors
    page.close()
