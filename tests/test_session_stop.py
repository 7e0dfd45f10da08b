"""Stop does not wait for the tool call in flight: through the session core, and through `python app.py` with
gradio_client. The slow tool is a FAKE (`costa.testing.slow_tools.SlowTextReplacer`: the real Pillow text writer
after a 5 s sleep), registered through a copy of the tool tables; everything else is the real app."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from PIL import Image

from costa.config import Settings
from costa.errors import ToolError
from costa.models.control import ToolStoppedError, TurnControl, abandoned_calls, run_stoppable, step
from costa.services import Services
from costa.session import SessionCore, TurnOptions
from costa.store import Store
from costa.tables import load_tables
from costa.testing import slow_tools
from costa.testing.calibration import fake_table
from tests.text_helpers import Line, background, draw

REPLACE = "replace the text 'SALE' with 'OPEN'"
#: How long the fake tool takes, and the most a stopped turn may take to end (well below it), in seconds.
TOOL_SECONDS = 5.0
STOP_BOUND = 2.0


def sign(path: Path) -> Path:
    Image.fromarray(draw(background("flat", 480, 200), [Line("SALE", (60, 50), 64, (190, 20, 20))])).save(path)
    return path


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_a_stopped_call_ends_the_wait_at_once_and_its_result_is_dropped() -> None:
    control = TurnControl()
    release = threading.Event()
    finished: list[str] = []
    progress: list[object] = []
    control.on_event = progress.append

    def slow() -> str:
        step(1, 3)  # progress reaches the turn while the call is live
        release.wait(10)
        finished.append("done")
        try:
            step(2, 3)  # the abandoned call sees its own Stop flag here, and its progress is dropped
        except ToolStoppedError:
            finished.append("stopped at step 2")
            raise
        return "result"

    threading.Timer(0.2, control.stop.set).start()
    t0 = time.perf_counter()
    with pytest.raises(ToolStoppedError, match="finishes in the background"):
        run_stoppable(slow, control, "s1", "fake_slow", 0)
    assert time.perf_counter() - t0 < STOP_BOUND
    assert not finished and abandoned_calls("fake_slow") == 1
    control.stop.clear()  # the next turn clears the session's flag: the abandoned call stays stopped
    started = threading.Event()

    def next_call() -> str:
        started.set()
        return "second"

    worker = threading.Thread(target=lambda: run_stoppable(next_call, control, "s1", "fake_slow", 0))
    worker.start()
    time.sleep(0.2)
    assert not started.is_set()  # a new call of the same tool waits for the abandoned one
    release.set()
    worker.join(10)
    assert started.is_set() and finished == ["done", "stopped at step 2"] and abandoned_calls() == 0
    assert len(progress) == 1  # the abandoned call's later step was not reported


def test_tool_errors_and_results_pass_through_the_worker() -> None:
    control = TurnControl()
    assert run_stoppable(lambda: 42, control, "s1", "fake", 0) == 42
    assert run_stoppable(lambda: 7, None, "s1", "fake", 0) == 7

    def broken() -> None:
        raise ToolError("the fake tool failed")

    with pytest.raises(ToolError, match="the fake tool failed"):
        run_stoppable(broken, control, "s1", "fake", 0)
    control.stop.set()
    with pytest.raises(ToolStoppedError, match="not run"):
        run_stoppable(lambda: 1, control, "s1", "fake", 0)


@pytest.fixture
def slow_core(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COSTA_FAKE_TOOL_SECONDS", str(TOOL_SECONDS))
    tables = load_tables(slow_tools.slow_tables(tmp_path / "tables"))
    services = Services(Settings(calibration_table=fake_table(), home=tmp_path / "home", reflect=False), tables)
    core = SessionCore(services, Store(tmp_path / "store"))
    yield core
    core.close()


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["run", "load"])
def test_stop_ends_a_turn_at_once_while_a_slow_tool_runs(
    slow_core: SessionCore, tmp_path: Path, monkeypatch, phase: str
) -> None:
    """Stop while the fake runs for 5 s (or, "load", loads its model for 5 s): the turn ends at once as stopped,
    nothing is stored, the call finishes in the background and what it returns is dropped."""
    core = slow_core
    if phase == "load":
        monkeypatch.setenv("COSTA_FAKE_LOAD_SECONDS", str(TOOL_SECONDS))
        monkeypatch.setenv("COSTA_FAKE_TOOL_SECONDS", "0")
    began, ended = ("started", "finished") if phase == "run" else ("loading", "loaded")
    sid = core.open_session(None, None).id
    core.upload(sid, None, sign(tmp_path / "sign.png"))
    before = core.versions.summary(sid, None)
    opts = TurnOptions.validate(core.settings, 1.0, 0.8)
    views: list = []
    began0, ended0 = slow_tools.CALLS[began], slow_tools.CALLS[ended]
    turn = threading.Thread(target=lambda: views.extend(v for v, _ in core.run(core.prepare(sid, None, REPLACE, opts))))
    turn.start()
    wait_for(lambda: slow_tools.CALLS[began] > began0, 90, f"the slow fake tool's {phase} to start")
    t0 = time.perf_counter()
    assert core.stop(sid, None)
    turn.join(STOP_BOUND + 1)
    seconds = time.perf_counter() - t0
    print(f"core: Stop during the tool's {phase} → turn ended in {seconds:.3f} s ({phase} {TOOL_SECONDS:g} s)")
    assert not turn.is_alive() and seconds < STOP_BOUND, seconds  # the 5 s call was not waited for
    assert slow_tools.CALLS[ended] == ended0  # it is still running in the background
    view = views[-1]
    assert view.status == "stopped" and view.result_version is None
    after = core.versions.summary(sid, None)
    assert after["head"] == before["head"] and len(after["versions"]) == len(before["versions"])
    assert after["turns"][-1]["status"] == "stopped"
    wait_for(lambda: slow_tools.CALLS[ended] > ended0, TOOL_SECONDS + 10, "the abandoned call to finish")
    wait_for(lambda: abandoned_calls() == 0, 5, "the abandoned call to be forgotten")
    assert core.versions.summary(sid, None) == after  # its result was dropped: nothing changed when it returned
    monkeypatch.setenv("COSTA_FAKE_TOOL_SECONDS", "0")
    done = [v for v, _ in core.run(core.prepare(sid, None, REPLACE, opts))][-1]
    assert done.status == "done" and done.result_version is not None  # the session is free again


@pytest.fixture(scope="module")
def slow_app(tmp_path_factory: pytest.TempPathFactory):
    """`python app.py` whose Pillow text writer is the slow FAKE (`python -m costa.testing.slow_tools DIR`)."""
    from tests.app_server import running_app

    tmp = tmp_path_factory.mktemp("slow_app")
    argv = ("-m", "costa.testing.slow_tools", str(tmp / "tables"))
    env = {"COSTA_FAKE_TOOL_SECONDS": str(TOOL_SECONDS), "COSTA_REFLECT": "0"}
    with running_app(tmp / "home", argv=argv, extra_env=env) as server:
        yield server


@pytest.mark.slow
def test_stop_through_gradio_client_does_not_wait_for_the_tool(slow_app, tmp_path: Path) -> None:
    """A second instruction while a turn runs is refused; /stop ends the turn as stopped (never done: the slow FAKE
    tool is still running), within the bound, the history unchanged. (It replaces test_app's version, which
    accepted "stopped" or "done".)"""
    from gradio_client import Client, handle_file

    c = Client(slow_app.url, verbose=False)
    sid = c.predict(api_name="/new_session")
    job = c.submit(sid, handle_file(str(sign(tmp_path / "sign.png"))), REPLACE, 1.0, 0.8, "", "", api_name="/edit")

    def slow_tool_running() -> bool:
        outs = job.outputs()
        return bool(outs) and any(
            call["tool"] == slow_tools.SLOW_TOOL and call["passed"] is None for call in outs[-1][1]["calls"]
        )

    wait_for(slow_tool_running, 90, "the slow fake tool to start")
    with pytest.raises(Exception, match="already running"):  # a second instruction while the turn runs: refused
        c.predict(sid, None, REPLACE, 1.0, 0.8, "", "", api_name="/edit")
    versions = c.predict(sid, api_name="/history")["versions"]
    t0 = time.perf_counter()
    assert c.predict(sid, api_name="/stop") == {"stopping": True}
    _, report = job.result(timeout=STOP_BOUND + 5)
    seconds = time.perf_counter() - t0
    print(f"gradio_client: /stop → /edit result in {seconds:.3f} s (tool call {TOOL_SECONDS:g} s)")
    assert seconds < STOP_BOUND, seconds
    assert report["status"] == "stopped", report["message"]
    stopped = [call for call in report["calls"] if call["tool"] == slow_tools.SLOW_TOOL]
    assert stopped and stopped[-1]["stopped"] and not stopped[-1]["passed"]  # the ledger says stopped, not failed
    history = c.predict(sid, api_name="/history")
    # the upload of a stopped turn is not stored (issue 21: uploads kept only when the turn keeps a version)
    assert history["versions"] == versions == [] and history["head"] is None
    assert c.predict(sid, api_name="/stop") == {"stopping": False}


@pytest.mark.slow
def test_the_pages_stop_button_does_not_wait_for_the_tool(slow_app) -> None:
    """In headless Chromium: Send, then Stop while the slow tool runs: the chat says Stopped at once, the image and
    the gallery are unchanged, the instruction is kept, and the console has no errors."""
    from tests.app_server import chromium, open_page, send, upload
    from tests.test_app_browser import ARTIFACTS, ROOT

    def stored_versions() -> int:
        store = Store(slow_app.home)
        return sum(len(store.versions(s.id)) for s in store.sessions(None))

    before = stored_versions()
    with chromium() as browser:
        page, console = open_page(browser, slow_app.url, height=1000, console_errors=True)
        upload(page, ROOT / "assets" / "sale_sign.png")
        send(page, REPLACE)
        page.wait_for_selector(f"#chat >> text={slow_tools.SLOW_TOOL}", timeout=90_000)  # the slow call is running
        t0 = time.perf_counter()
        page.click("#stop")
        page.wait_for_selector("#chat >> text=Stopped", timeout=int(TOOL_SECONDS * 1000))
        seconds = time.perf_counter() - t0
        print(f"page: Stop click → 'Stopped' in the chat in {seconds:.3f} s (tool call {TOOL_SECONDS:g} s)")
        assert seconds < STOP_BOUND + 1, seconds  # the page's own round trips on top of the core's bound
        page.wait_for_function(  # the ledger's check column says stopped, not fail
            "() => [...document.querySelectorAll('#ledger td')].some(td => td.textContent.trim() === 'stopped')",
            timeout=10_000,
        )
        page.wait_for_function(  # kept, to send again
            "t => document.querySelector('#instruction textarea').value === t", arg=REPLACE, timeout=10_000
        )
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "app-stopped.png"), full_page=True)
        # nothing was stored, not even the upload (issue 21), which stays on screen to send again
        assert page.locator("#current-image img").count() == 1
        assert stored_versions() == before
        assert not console, [e[:200] for e in console]


# ---------------------------------------------------------------------------------- Stop during LLM requests
# The endpoint is the scripted FAKE OpenAI-compatible server (tests/fake_openai.py); the tools are the real ones.
TEXT_PLAN = {
    "form": "chain",
    "subtasks": [{"id": "s1", "kind": "text_replacement", "target": "SALE", "result": "OPEN", "parents": []}],
    "unsupported": [],
    "question": None,
}
SLOW_REPLY = 20.0  # how long the fake endpoint takes to answer a slow request, in seconds


def _llm_core(tmp_path: Path, url: str, reflect: bool) -> SessionCore:
    settings = Settings(
        calibration_table=fake_table(),
        home=tmp_path / "home",
        openai_base_url=url,
        llm_model="fake-model",
        llm_retries=0,
        reflect=reflect,
    )
    return SessionCore(Services(settings, load_tables()), Store(tmp_path / "store"))


def _stop_while(core: SessionCore, sid: str, condition, what: str) -> tuple[float, list]:
    """Run REPLACE in a thread, press Stop once `condition()` holds; seconds from Stop to the turn's end, views."""
    before = core.versions.summary(sid, None)
    opts = TurnOptions.validate(core.settings, 1.0, 0.8)
    views: list = []
    turn = threading.Thread(target=lambda: views.extend(v for v, _ in core.run(core.prepare(sid, None, REPLACE, opts))))
    turn.start()
    wait_for(condition, 90, what)
    t0 = time.perf_counter()
    assert core.stop(sid, None)
    turn.join(STOP_BOUND + 1)
    seconds = time.perf_counter() - t0
    assert not turn.is_alive() and seconds < STOP_BOUND, seconds
    after = core.versions.summary(sid, None)
    assert after["head"] == before["head"] and len(after["versions"]) == len(before["versions"])
    assert after["turns"][-1]["status"] == "stopped"
    return seconds, views


@pytest.mark.slow
def test_stop_does_not_wait_for_the_planners_llm_request(tmp_path: Path) -> None:
    """Stop while the LLM planner's request is unanswered: the turn ends at once as stopped; the next turn plans
    without waiting for the abandoned request (an HTTP request holds no model)."""
    from tests.fake_openai import FakeOpenAI, chat

    with FakeOpenAI([chat(TEXT_PLAN, delay=SLOW_REPLY)]) as fake:
        core = _llm_core(tmp_path, fake.base_url, reflect=False)
        try:
            sid = core.open_session(None, None).id
            core.upload(sid, None, sign(tmp_path / "sign.png"))
            seconds, views = _stop_while(core, sid, lambda: len(fake.chat_requests) >= 1, "the planner's request")
            print(f"core: Stop during the planner's LLM request → turn ended in {seconds:.3f} s")
            assert views[-1].status == "stopped" and views[-1].plan is None
            fake.push(chat(TEXT_PLAN))
            t0 = time.perf_counter()
            done = [v for v, _ in core.run(core.prepare(sid, None, REPLACE, TurnOptions.validate(core.settings)))][-1]
            assert time.perf_counter() - t0 < SLOW_REPLY / 2  # not held up by the abandoned request
            assert done.status == "done" and done.result_version is not None, (done.status, done.errors)
        finally:
            core.close()


@pytest.mark.slow
def test_stop_does_not_wait_for_a_reflection_experts_request(tmp_path: Path) -> None:
    """Stop while a VLM reflection expert's request is unanswered (the plan came at once, the tool ran): the turn
    ends at once as stopped and nothing is stored."""
    from tests.fake_openai import FakeOpenAI, chat, slow

    with FakeOpenAI([chat(TEXT_PLAN), *[slow(SLOW_REPLY)] * 6]) as fake:
        core = _llm_core(tmp_path, fake.base_url, reflect=True)
        try:
            sid = core.open_session(None, None).id
            core.upload(sid, None, sign(tmp_path / "sign.png"))
            seconds, views = _stop_while(core, sid, lambda: len(fake.chat_requests) >= 2, "an expert's request")
            print(f"core: Stop during a reflection expert's request → turn ended in {seconds:.3f} s")
            view = views[-1]
            assert view.status == "stopped" and view.result_version is None
            assert any(c.tool == "text_replace_pillow" and c.passed for c in view.calls)  # it was reflecting
        finally:
            core.close()


def test_a_stopped_step_ends_the_search_and_teaches_nothing() -> None:
    """The pure search: an execute that reports `stopped` ends the search at once; its attempt is reported as
    stopped (not failed, no retry) and is not an observation."""
    import networkx as nx

    from costa.events import SearchFailed, ToolFinished
    from costa.search import Outcome, SearchPolicy, iter_search

    g = nx.DiGraph([("S", "a"), ("a", "G"), ("S", "b"), ("b", "G")])
    runs: list[str] = []

    def execute(node: str, state: object, attempt: int) -> Outcome[object]:
        runs.append(node)
        return Outcome(0.5, 0.0, error=f"{node}: stopped by the user", stopped=True)

    gen = iter_search(
        g, "S", "G", lambda n: (1.0, 0.9), execute, SearchPolicy(1.0, threshold=0.8, max_attempts=lambda n: 3)
    )
    events = []
    while True:
        try:
            events.append(next(gen))
        except StopIteration as stop:
            result = stop.value
            break
    assert len(runs) == 1  # not retried, and the other path was not tried
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert len(finished) == 1 and finished[0].stopped and not finished[0].passed
    failed = [e for e in events if isinstance(e, SearchFailed)]
    assert failed and failed[-1].stopped and "stopped by the user" in failed[-1].reason
    assert result.observations == () and not result.found
