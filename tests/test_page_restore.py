"""What a page reload brings back, below the browser (issue 20 item 7): stored edit settings are validated one by one;
a turn whose page went away ends "stopped" and says why; `SessionCore.left` stops only the leaving tab's turn; the
scores CSV numbers turns as the page does. The browser side is tests/test_app_browser_reload.py."""

from __future__ import annotations

import csv
import io
import math
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from costa.config import Settings
from costa.services import Services
from costa.session import SessionCore, TurnOptions
from costa.session.runtime import STOPPED_BY_LEFT, STOPPED_BY_STOP
from costa.tables import load_tables
from costa.testing import slow_tools
from costa.testing.calibration import fake_table
from tests.proposing import disc, propose, proposing_core
from ui import proposal_view as PV
from ui.render import chat_messages, final_text
from ui.restore import checked_prefs, past_chat
from ui.state import UiState

ROOT = Path(__file__).resolve().parents[1]
REPLACE = "replace the text 'SALE' with 'OPEN'"


def _settings(tmp_path: Path) -> Settings:
    return Settings(calibration_table=fake_table(), home=tmp_path / "home", reflect=False)


@pytest.mark.parametrize(
    "stored",
    [
        None, "garbage", 3, [], {"alpha": math.nan}, {"alpha": math.inf}, {"alpha": -0.1}, {"alpha": 2.5},
        {"alpha": "1"}, {"alpha": True}, {"alpha": [1]}, {"threshold": 1.5}, {"threshold": {"x": 1}},
        {"mode": "fastest"}, {"mode": 3}, {"mode": ["lazy"]}, {"reflect": "yes"}, {"reflect": 1}, {"other": 1},
    ],
)  # fmt: skip
def test_a_bad_stored_setting_is_left_out(tmp_path: Path, stored: object) -> None:
    assert checked_prefs(_settings(tmp_path), stored) == {}


def test_good_stored_settings_come_back_each_on_its_own(tmp_path: Path) -> None:
    good = {"alpha": 0.3, "threshold": 0.65, "mode": "eager", "reflect": True}
    assert checked_prefs(_settings(tmp_path), good) == good
    assert checked_prefs(_settings(tmp_path), {**good, "threshold": -1}) == {
        k: good[k] for k in good if k != "threshold"
    }


def _slow_core(tmp_path: Path) -> tuple[SessionCore, str]:
    tables = load_tables(slow_tools.slow_tables(tmp_path / "tables"))
    core = SessionCore(Services(_settings(tmp_path), tables=tables))
    sid = core.new_session(None).id
    core.upload(sid, None, ROOT / "assets" / "sale_sign.png")
    return core, sid


def _wait(condition, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_a_turn_whose_reader_goes_away_ends_stopped_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COSTA_FAKE_TOOL_SECONDS", "0")
    core, sid = _slow_core(tmp_path)
    turn = core.run(core.prepare(sid, None, REPLACE, TurnOptions()))
    next(turn)  # the turn has started and is recorded as running
    turn.close()  # what Gradio does when the page that ran it is reloaded: it stops reading
    (stored,) = core.store.turns(sid)
    assert stored.status == "stopped" and stored.summary["stopped_by"] == STOPPED_BY_LEFT
    assert not core.busy(sid)
    (view,) = core.versions.turn_views(sid, None)
    assert "Stopped when the page was reloaded or closed" in final_text(view)
    assert "the image is unchanged" in chat_messages(view)[-1]["content"]
    core.close()


def test_left_stops_the_leaving_tabs_turn_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTA_FAKE_TOOL_SECONDS", "5")
    core, sid = _slow_core(tmp_path)
    views: list[object] = []
    req = core.prepare(sid, None, REPLACE, TurnOptions())
    worker = threading.Thread(target=lambda: views.extend(v for v, _ in core.run(req, tab="tab-a")))
    began = slow_tools.CALLS["started"]
    worker.start()
    _wait(lambda: slow_tools.CALLS["started"] > began, 60)  # the slow call is running
    assert core.left("tab-b") == [] and core.busy(sid)  # another tab going away: the turn runs on
    (running,) = core.store.turns(sid)
    assert running.status == "running"
    (shown,) = core.versions.turn_views(sid, None)  # a page loaded now says it still runs
    assert "still running" in " ".join(shown.notes) and shown.status == "searching"
    t0 = time.perf_counter()
    assert core.left("tab-a") == [sid]
    worker.join(10)
    assert not worker.is_alive() and time.perf_counter() - t0 < 3  # ended well before the 5 s tool call
    (stored,) = core.store.turns(sid)
    assert stored.status == "stopped" and stored.summary["stopped_by"] == STOPPED_BY_LEFT
    assert core.versions.summary(sid, None)["versions"][-1]["kind"] == "upload"  # nothing saved
    core.close()


def test_stop_says_stop_and_the_csv_numbers_turns_as_the_page_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COSTA_FAKE_TOOL_SECONDS", "0")
    core, sid = _slow_core(tmp_path)
    other = core.new_session(None).id  # a turn in another session first: store ids and numbers differ
    core.upload(other, None, ROOT / "assets" / "sale_sign.png")
    list(core.run(core.prepare(other, None, REPLACE, TurnOptions())))
    view = [v for v, _ in core.run(core.prepare(sid, None, REPLACE, TurnOptions()))][-1]
    assert view.status == "done" and view.turn_id != 1
    core.versions.score(sid, None, view.turn_id, "s1", 1.0, "", "ann")
    rows = csv.DictReader(io.StringIO(core.versions.scores_csv(sid, None).read_text()))
    (row,) = [r for r in rows if r["record"] == "score"]
    assert row["turn"] == "1" and row["turn_id"] == str(view.turn_id)
    monkeypatch.setenv("COSTA_FAKE_TOOL_SECONDS", "5")
    sid = core.new_session(None).id  # a fresh sign: its text replacement runs the slow call
    core.upload(sid, None, ROOT / "assets" / "sale_sign.png")
    req = core.prepare(sid, None, REPLACE, TurnOptions())
    worker = threading.Thread(target=lambda: list(core.run(req)))
    began = slow_tools.CALLS["started"]
    worker.start()
    _wait(lambda: slow_tools.CALLS["started"] > began, 60)
    assert core.stop(sid, None)
    worker.join(10)
    last = core.store.turns(sid)[-1]
    assert last.status == "stopped" and last.summary["stopped_by"] == STOPPED_BY_STOP
    assert "Stopped** after" in final_text(core.versions.turn_views(sid, None)[-1])
    core.close()


# ------------------------------------------------------------------------------------ a pending proposal (issue 18)


def _slider(core: SessionCore, sid: str) -> dict[str, object]:
    """What the page draws for the session's proposal (its row, note and slider), in a freshly loaded tab."""
    return PV.updates(core, UiState(session_id=sid), "row", "note", "slider")


def _chat(core: SessionCore, sid: str) -> list[str]:
    return [str(m["content"]) for m in past_chat(core, UiState(session_id=sid))[0]]


def test_a_reload_keeps_a_pending_proposal_and_a_verdict(tmp_path: Path) -> None:
    """A reload (the same session reopened from the store; here by a second core, as after a restart too) shows a
    pending proposal again — its line, note and before/after — and an Accept then saves what accepting before the
    reload would have; a judged proposal comes back with its verdict and no buttons."""
    core, sid = proposing_core(tmp_path)
    twin = core.new_session(None).id  # the same edit, accepted without a reload: what "as before" means
    core.upload(twin, None, tmp_path / "disc.png")
    for s in (sid, twin):
        assert propose(core, s).status == "proposed"
    before, waiting = _slider(core, sid), core.proposals.pending(sid, None)
    assert waiting is not None and waiting.image is not None
    reason = waiting.subtasks[0].reason

    reloaded = SessionCore(Services(core.settings), core.store)
    shown = _slider(reloaded, sid)
    assert shown["row"]["visible"] is True and reason in str(shown["note"])  # type: ignore[index]
    (current, after), (current0, after0) = shown["slider"], before["slider"]  # type: ignore[misc]
    assert np.array_equal(current, current0) and np.array_equal(after, after0)  # the same before/after
    assert np.array_equal(current, disc()) and (after != current).any()  # the upload | the outlined proposal
    chat = _chat(reloaded, sid)
    assert PV.PROPOSED in chat[-1] and reason in chat[-1]
    assert not any("Accepted" in m or "Discarded" in m for m in chat)

    reloaded.proposals.accept(sid, None)  # after the reload
    core.proposals.accept(twin, None)  # without one
    saved, twins = core.store.versions(sid), core.store.versions(twin)
    assert [(v.kind, v.label, v.sha256) for v in saved] == [(v.kind, v.label, v.sha256) for v in twins]
    assert [v.kind for v in saved] == ["upload", "turn"] and saved[1].parent_id == saved[0].id
    version, image = reloaded.head(sid, None)
    assert version is not None and version.id == saved[1].id and np.array_equal(image, waiting.image)
    assert core.store.turn(sid, saved[1].turn_id).result_version == version.id  # type: ignore[arg-type]
    judged = _slider(reloaded, sid)
    assert judged["row"]["visible"] is False and judged["note"] == ""  # type: ignore[index]
    chat = _chat(reloaded, sid)  # the page reloaded once more
    assert PV.PROPOSED in chat[-2] and "**Accepted** — saved as version **v2**" in chat[-1]

    assert propose(reloaded, sid, "make the object green").status == "proposed"
    assert _slider(reloaded, sid)["row"]["visible"] is True  # type: ignore[index]
    reloaded.proposals.discard(sid, None)
    assert [v.id for v in core.store.versions(sid)] == [v.id for v in saved]  # nothing added
    chat = _chat(reloaded, sid)
    accepted = next(i for i, m in enumerate(chat) if "**Accepted**" in m)
    green = next(i for i, m in enumerate(chat) if m.startswith("make the object green"))
    assert accepted < green and "**Discarded**" in chat[-1]  # each verdict under its own turn
    assert _slider(reloaded, sid)["row"]["visible"] is False  # type: ignore[index]
    core.close()
    reloaded.close()
