"""The Edit tab's progress bar for a stepped tool, in Debian's headless Chromium (Playwright), and the pump that feeds
it (`ui.progress.with_progress`). The stepped tool is a FAKE (`costa.testing.slow_tools.SteppedTextReplacer`: the
real Pillow text writer after 8 sleeps of 0.6 s, each reported with `step(i, 8)`), registered through a copy of the
tool tables; everything else is the real app. Leaves a screenshot in artifacts/ for people to look at."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from costa.events import Event, ToolProgress
from costa.testing import slow_tools

ROOT = Path(__file__).resolve().parents[1]
REPLACE = "replace the text 'SALE' with 'OPEN'"
STEPS = 8
#: The app's port on the shared build machine (one of this test's ports); another free one when it is taken.
PORT = 7941


def _port() -> int | None:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", PORT))
        except OSError:
            return None  # running_app picks a free port
    return PORT


def _turn(steps: int, fail: bool = False) -> Callable[[Callable[[Event], None]], Iterator[str]]:
    def run(on_progress: Callable[[Event], None]) -> Iterator[str]:
        yield "started"
        for i in range(1, steps + 1):
            time.sleep(0.12)
            on_progress(ToolProgress("s1", "fake_stepped", 0, i, steps, "diffusion step"))
        if fail:
            raise RuntimeError("the turn failed")
        yield "finished"

    return run


def test_progress_arrives_between_the_turns_items_and_is_cleared() -> None:
    from ui.progress import progress_text, with_progress

    items = list(with_progress(_turn(4)))
    assert items[0] == ("turn", "started") and items[-1] == ("turn", "finished")
    bars = [ev for what, ev in items if what == "progress" and ev is not None]
    assert [ev.done for ev in bars] == sorted(ev.done for ev in bars) and len(bars) >= 2
    assert items[-2] == ("progress", None)  # hidden before the turn goes on
    assert progress_text(bars[-1]) == f"fake_stepped: step {bars[-1].done}/4"
    failing = with_progress(_turn(3, fail=True))
    seen = []
    with pytest.raises(RuntimeError, match="the turn failed"):
        for item in failing:
            seen.append(item)
    assert seen[-1] == ("progress", None)  # a failed turn hides the bar too


def test_closing_the_pump_closes_the_turn() -> None:
    from ui.progress import with_progress

    closed = threading.Event()

    def run(on_progress: Callable[[Event], None]) -> Iterator[str]:
        try:
            yield "a"
            yield "b"
        finally:
            closed.set()

    pump = with_progress(run)
    assert next(pump) == ("turn", "a")
    pump.close()  # e.g. the browser went away
    assert closed.wait(2)


@pytest.fixture(scope="module")
def stepped_app(tmp_path_factory: pytest.TempPathFactory):
    """`python app.py` whose text writer is the stepped FAKE (`python -m costa.testing.slow_tools DIR stepped`)."""
    from tests.app_server import running_app

    tmp = tmp_path_factory.mktemp("stepped_app")
    argv = ("-m", "costa.testing.slow_tools", str(tmp / "tables"), "stepped")
    env = {"COSTA_FAKE_STEPS": str(STEPS), "COSTA_FAKE_STEP_SECONDS": "0.6", "COSTA_REFLECT": "0"}
    with running_app(tmp / "home", argv=argv, extra_env=env, port=_port()) as server:
        yield server


@pytest.mark.slow
def test_the_edit_tab_shows_the_stepped_tools_progress(stepped_app) -> None:
    from tests.app_server import chromium, open_page
    from tests.test_app_browser import ARTIFACTS

    with chromium() as browser:
        page, console = open_page(browser, stepped_app.url, height=1000, console_errors=True)
        assert not page.locator("#tool-progress").is_visible()  # nothing runs: no bar
        page.set_input_files("#current-image input[type=file]", str(ROOT / "assets" / "sale_sign.png"))
        page.wait_for_selector("#slider img", timeout=30_000)
        page.fill("#instruction textarea", REPLACE)
        page.click("#send")
        pattern = re.compile(rf"{slow_tools.SLOW_TOOL}: step (\d+)/{STEPS}")
        page.wait_for_selector(f"#tool-progress >> text={slow_tools.SLOW_TOOL}: step", timeout=90_000)
        seen: list[int] = []
        shot = False
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            text = page.inner_text("#tool-progress") if page.locator("#tool-progress").is_visible() else ""
            m = pattern.search(text)
            if m:
                if not seen or int(m.group(1)) != seen[-1]:
                    seen.append(int(m.group(1)))
                if not shot and int(m.group(1)) >= STEPS // 2:
                    ARTIFACTS.mkdir(exist_ok=True)
                    page.screenshot(path=str(ARTIFACTS / "app-progress.png"), full_page=True)
                    shot = True
            elif seen:
                break  # the call ended: the bar is gone
            time.sleep(0.1)
        assert len(seen) >= 3 and seen == sorted(seen) and seen[-1] >= STEPS - 2, seen
        assert page.locator("#tool-progress progress").count() <= 1
        page.wait_for_selector("#chat >> text=Done", timeout=90_000)
        page.wait_for_selector("#tool-progress", state="hidden", timeout=10_000)
        # Stop during the steps: the turn ends as stopped and the bar goes away with it
        # a new word, not the old one back ('SALE' again is restored from history, pixel for pixel, without a tool)
        page.fill("#instruction textarea", "replace the text 'OPEN' with 'SHUT'")
        page.click("#send")
        page.wait_for_function(  # at step 2 or later (the page shows the latest step; it may skip one under load)
            "re => new RegExp(re).test(document.querySelector('#tool-progress')?.innerText || '')",
            arg=rf"{slow_tools.SLOW_TOOL}: step [2-{STEPS - 1}]/{STEPS}",
            timeout=90_000,
        )
        page.click("#stop")
        page.wait_for_selector("#chat >> text=Stopped", timeout=10_000)
        page.wait_for_selector("#tool-progress", state="hidden", timeout=10_000)
        assert not console, [e[:200] for e in console]
    print(f"progress steps seen in the page: {seen}")
