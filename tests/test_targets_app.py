"""An unverified target in the app: through gradio_client (the /edit endpoint of `python app.py`) and through the
session core the page's three actions call ("Edit this region", "Let me point", "Do the rest")."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from costa.config import Settings
from costa.services import Services
from costa.session import Pointing, SessionCore, TurnOptions
from costa.store import Store
from costa.testing.calibration import fake_table
from tests.app_server import AppServer
from ui import render as R
from ui import targets_view as TV

Workspace = SessionCore

pytestmark = pytest.mark.slow


def chelsea(path: Path) -> Path:
    from skimage.data import chelsea as cat

    Image.fromarray(cat()).save(path)
    return path


def test_the_red_car_on_a_cat_is_shown_as_an_unverified_candidate(app_server: AppServer, tmp_path: Path) -> None:
    from gradio_client import Client, handle_file

    c = Client(app_server.url, verbose=False)
    sid = c.predict(api_name="/new_session")
    src = chelsea(tmp_path / "cat.png")
    image, report = c.predict(sid, handle_file(str(src)), "make the red car blue", 1.0, 0.8, "", "", api_name="/edit")
    assert report["status"] == "unverified" and not report["ok"] and report["version_id"] is None
    target = report["targets"]["s1"]
    assert target["status"] == "unverified" and any("class 'car'" in m for m in target["missing"])
    assert target["candidate_px"] > 0 and target["actions"] == [TV.EDIT_THIS_REGION, TV.LET_ME_POINT, TV.DO_THE_REST]
    assert "Target not verified" in report["message"]
    shown = np.asarray(Image.open(image).convert("RGB")).astype(int)
    original = np.asarray(Image.open(src).convert("RGB")).astype(int)
    changed = np.abs(shown - original).max(axis=2) > 8
    assert 0 < changed.mean() < 0.05  # the candidate (the cat's nose) is highlighted, nothing else
    history = c.predict(sid, api_name="/history")
    assert [v["kind"] for v in history["versions"]] == ["upload"]  # nothing saved as done


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    w = Workspace(Services(Settings(calibration_table=fake_table(), home=tmp_path / "home")), Store(tmp_path / "store"))
    yield w
    w.close()


def last_view(gen):
    views = [view for view, _ in gen]
    return views[-1]


def run(core: SessionCore, sid: str, text: str, brush=None, cached=None):
    """A turn as the page runs it: the whole request validated, then run."""
    opts = TurnOptions.validate(core.settings)
    return core.run(core.prepare(sid, None, text, opts, Pointing(brush=brush), cached=cached))


def test_edit_this_region_and_do_the_rest_keep_the_instruction(ws: Workspace, tmp_path: Path) -> None:
    sid = ws.open_session(None, None).id
    ws.upload(sid, None, chelsea(tmp_path / "cat.png"))
    text = "make the red car blue and upscale it 2x"
    view = last_view(run(ws, sid, text))
    assert view.status == "unverified" and set(view.unverified) == {"s1"}
    (panel,) = view.panels["s1"]  # the follow-ups, under the subtask's message, live and after a reload
    assert panel.actions == (TV.EDIT_THIS_REGION, TV.LET_ME_POINT, TV.DO_THE_REST)
    assert ws.versions.turn_views(sid, None)[-1].panels["s1"] == [panel]
    assert ws.store.turn(sid, view.turn_id).summary["unverified"].keys() == {"s1"}
    records = ws.store.targets(view.turn_id)
    assert records[0]["status"] == "unverified" and records[0]["subtask_id"] == "s1"
    assert ws.store.turn(sid, view.turn_id).status == "unverified"
    state = SimpleNamespace(last_view=view, clicks=[], brush=None, box="", plans={}, past=[])
    assert TV.on_edit_this_region(state) == text and state.brush is not None  # the instruction is kept
    accepted = last_view(run(ws, sid, text, brush=state.brush))
    assert accepted.status == "done" and set(accepted.done_subtasks) == {"s1", "s2"}  # pointed by the user: verified
    state = SimpleNamespace(last_view=view, clicks=[], brush=None, box="", plans={}, past=[])
    assert TV.on_do_the_rest(state) == text
    rest = last_view(run(ws, sid, text, cached=state.plans[text]))
    assert rest.status == "done" and set(rest.done_subtasks) == {"s2"}  # the upscale ran, the recolour did not


def test_a_target_no_tool_can_find_asks_for_pointing_before_anything_runs(ws: Workspace, tmp_path: Path) -> None:
    from tests.target_scenes import disc_and_saucer

    path = tmp_path / "scene.png"
    Image.fromarray(disc_and_saucer()[0]).save(path)
    sid = ws.open_session(None, None).id
    ws.upload(sid, None, path)
    text = "recolor the tower to gold and make the image brighter"
    view = last_view(run(ws, sid, text))
    assert view.status == "unverified" and not view.calls  # asked first: no tool ran
    assert view.needs_pointing == {"s1"} and "Point first" in R.final_text(view) and "'tower'" in R.final_text(view)
    assert [p.actions for p in view.panels["s1"]] == [(TV.LET_ME_POINT, TV.DO_THE_REST)]
    assert ws.store.targets(view.turn_id)[0]["status"] == "pointing_needed"
    state = SimpleNamespace(last_view=view, clicks=[], brush=None, box="", plans={}, past=[])
    assert TV.pending(state) is view and TV.on_edit_this_region(state) == text  # nothing to accept: point instead
    assert state.brush is None and state.last_view is None
    state = SimpleNamespace(last_view=view, clicks=[], brush=None, box="", plans={}, past=[])
    assert TV.on_do_the_rest(state) == text
    rest = last_view(run(ws, sid, text, cached=state.plans[text]))
    assert rest.status == "done" and set(rest.done_subtasks) == {"s2"}


def test_an_unverified_turn_renders_in_the_chat_tree_and_ledger(ws: Workspace, tmp_path: Path) -> None:
    sid = ws.open_session(None, None).id
    ws.upload(sid, None, chelsea(tmp_path / "cat.png"))
    view = last_view(run(ws, sid, "make the red car blue"))
    messages = R.chat_messages(view)
    assert any("🎯" in (m.get("metadata") or {}).get("title", "") for m in messages)
    assert "target not verified" in R.tree_markdown(view) and "target not verified" in R.ledger_markdown(view)
