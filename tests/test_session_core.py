"""The session core in-process on real embedded tools: turns, versions, undo/redo/branch, pointing, scores, bundles,
bad input, one turn at a time, Stop, temporary-file lifecycle — and the page's renderings of all of it."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from costa.config import Settings
from costa.errors import InputError
from costa.events import ToolFinished, TurnDone
from costa.services import Services
from costa.session import Pointing, SessionCore, TurnOptions
from costa.store import Store
from costa.testing import hostile_files as bad_images
from costa.testing.calibration import fake_table
from tests.text_helpers import Line, background, draw
from ui import render as R
from ui.api import report

Workspace = SessionCore

REPLACE = "replace the text 'SALE' with 'OPEN'"


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Services:
    return Services(Settings(calibration_table=fake_table(), home=tmp_path_factory.mktemp("home"), max_upload_mb=1.0))


@pytest.fixture
def ws(services: Services, tmp_path: Path) -> Workspace:
    w = Workspace(services, Store(tmp_path / "store"))
    yield w
    w.close()


@pytest.fixture
def sign(tmp_path: Path) -> Path:
    p = tmp_path / "sign.png"
    Image.fromarray(draw(background("flat", 480, 200), [Line("SALE", (60, 50), 64, (190, 20, 20))])).save(p)
    return p


def run(ws: SessionCore, sid: str, owner, text: str, alpha=None, threshold=None, clicks=(), box: str = ""):
    """A turn through the core as every interface runs it: validate the whole request, then run it."""
    opts = TurnOptions.validate(ws.settings, alpha, threshold)
    return ws.run(ws.prepare(sid, owner, text, opts, Pointing(clicks, box)))


def finish(gen) -> R.TurnView:
    views = [view for view, _ in gen]
    assert views
    return views[-1]


def new_session_with(ws: Workspace, path: Path) -> str:
    sid = ws.open_session(None, None).id
    ws.upload(sid, None, path)
    return sid


@pytest.mark.slow
def test_a_turn_streams_records_and_renders(ws: Workspace, sign: Path) -> None:
    sid = new_session_with(ws, sign)
    steps = list(run(ws, sid, None, REPLACE, 1.0, 0.8))
    view, seen = steps[-1][0], [ev for _, ev in steps]
    assert seen[0] is None and view.status == "done" and view.result_version is not None
    assert any(isinstance(e, ToolFinished) for e in seen) and any(isinstance(e, TurnDone) for e in seen)
    hist = ws.versions.summary(sid, None)
    assert hist["head"] == view.result_version and hist["can_undo"] and not hist["can_redo"]
    assert [t["status"] for t in hist["turns"]] == ["done"]
    # the chat: one message per subtask, tool calls nested under it with duration, status and the check's verdict
    msgs = R.chat_messages(view)
    sub = [m for m in msgs if m.get("metadata", {}).get("id") == f"t{view.turn_id}-s1"]
    tools = [m for m in msgs if m.get("metadata", {}).get("parent_id") == f"t{view.turn_id}-s1"]
    assert len(sub) == 1 and tools
    assert all("duration" in m["metadata"] and m["metadata"]["status"] == "done" for m in tools)
    assert all("Check:" in m["content"] and "threshold 0.80" in m["content"] for m in tools)
    # diagrams: the tree marks s1 done; the tool graph draws the chosen path thick
    assert ":::done" in R.tree_markdown(view)
    graph = R.graph_markdown(view)
    assert "```mermaid" in graph and ":::chosen" in graph and "linkStyle" in graph and "rapidocr_detect" in graph
    ledger = R.ledger_markdown(view, R.session_totals(ws.versions.session_totals(sid)))
    assert "| 1 | s1 | `rapidocr_detect`" in ledger and "**session** · 1 turn(s)" in ledger
    # a page refresh rebuilds the same chat from the store
    reloaded = ws.versions.turn_views(sid, None)[-1]
    assert [m["content"] for m in R.chat_messages(reloaded)] == [m["content"] for m in msgs]
    assert report(view, sid)["subtasks"][0]["state"] == "done"


@pytest.mark.slow
def test_undo_redo_and_branch_keep_both_futures(ws: Workspace, sign: Path) -> None:
    sid = new_session_with(ws, sign)
    v_upload = ws.versions.summary(sid, None)["head"]
    first = finish(run(ws, sid, None, REPLACE))
    assert ws.versions.undo(sid, None).id == v_upload
    assert ws.versions.redo(sid, None).id == first.result_version
    with pytest.raises(InputError, match="nothing to redo"):
        ws.versions.redo(sid, None)
    ws.versions.branch(sid, None, v_upload)
    second = finish(run(ws, sid, None, "replace the text 'SALE' with 'SHUT'"))
    versions = {v["id"]: v for v in ws.versions.summary(sid, None)["versions"]}
    assert versions[first.result_version]["parent_id"] == v_upload  # the first future is kept …
    assert versions[second.result_version]["parent_id"] == v_upload  # … next to the new branch
    assert ws.versions.summary(sid, None)["head"] == second.result_version
    with pytest.raises(InputError, match="version 999 does not exist"):
        ws.versions.branch(sid, None, 999)


def test_undo_with_no_history_is_a_message(ws: Workspace, sign: Path) -> None:
    sid = ws.open_session(None, None).id
    with pytest.raises(InputError, match="nothing to undo: there is no image yet"):
        ws.versions.undo(sid, None)
    ws.upload(sid, None, sign)
    with pytest.raises(InputError, match="nothing to undo: this is the first version"):
        ws.versions.undo(sid, None)
    with pytest.raises(InputError, match="nothing to redo"):
        ws.versions.redo(sid, None)


def test_score_for_a_missing_turn_is_a_message(ws: Workspace) -> None:
    sid = ws.open_session(None, None).id
    with pytest.raises(InputError, match="turn 12345 does not exist in this session"):
        ws.versions.score(sid, None, 12345, "s1", 1.0)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (bad_images.corrupt_png, "not an image costa can read"),
        (bad_images.truncated_png, "corrupt or truncated"),
        (bad_images.bomb_png, "more pixels than the limit of .* \\(COSTA_MAX_PIXELS\\)"),
    ],
)
def test_bad_uploads_are_refused_and_nothing_is_lost(
    ws: Workspace, sign: Path, tmp_path: Path, make, message: str
) -> None:
    sid = new_session_with(ws, sign)
    before = ws.versions.summary(sid, None)
    with pytest.raises(InputError, match=message) as e:
        ws.upload(sid, None, make(tmp_path / "bad.png"))
    assert str(tmp_path) not in str(e.value)  # no server paths in messages
    assert ws.versions.summary(sid, None) == before


def test_an_upload_over_the_size_limit_is_refused(ws: Workspace, tmp_path: Path) -> None:
    big = tmp_path / "big.png"
    Image.fromarray(np.random.default_rng(1).integers(0, 255, (800, 800, 3), dtype=np.uint8)).save(big)
    sid = ws.open_session(None, None).id
    with pytest.raises(InputError, match=r"the limit is 1 MB"):
        ws.upload(sid, None, big)


@pytest.mark.parametrize(
    ("make", "name", "note"),
    [
        (bad_images.animated_gif, "a.gif", "animated (3 frames): costa edits its first frame"),
        (bad_images.cmyk_jpeg, "c.jpg", "CMYK: it was converted to RGB"),
        (bad_images.png16, "p.png", "16 bits per channel"),
    ],
)
def test_unusual_images_are_converted_with_a_note(ws: Workspace, tmp_path: Path, make, name: str, note: str) -> None:
    sid = ws.open_session(None, None).id
    version, notes = ws.upload(sid, None, make(tmp_path / name))
    assert note in " ".join(notes)
    assert ws.store.load_image(version).dtype == np.uint8 and ws.store.load_image(version).shape[2] == 3


@pytest.mark.slow
def test_one_turn_at_a_time_and_stop_keeps_the_image(ws: Workspace, sign: Path) -> None:
    sid = new_session_with(ws, sign)
    head = ws.versions.summary(sid, None)["head"]
    running = run(ws, sid, None, REPLACE)
    next(running)  # the turn has started and holds the session
    with pytest.raises(InputError, match="already running"):
        next(run(ws, sid, None, REPLACE))
    with pytest.raises(InputError, match="a turn is running in this session: undo"):  # names what is busy
        ws.versions.undo(sid, None)
    assert ws.stop(sid, None)
    view = finish(running)
    assert view.status == "stopped" and "Stopped" in R.final_text(view)
    assert ws.versions.summary(sid, None)["head"] == head  # the image is unchanged
    assert ws.versions.summary(sid, None)["turns"][-1]["status"] == "stopped"
    assert not ws.stop(sid, None)  # nothing running any more
    assert finish(run(ws, sid, None, REPLACE)).status == "done"  # the session is free again


def test_a_noun_the_backend_cannot_find_asks_the_user_to_point(ws: Workspace, tmp_path: Path) -> None:
    p = tmp_path / "ball.png"
    Image.open(Path(__file__).resolve().parents[1] / "assets" / "red_ball.png").save(p)
    sid = new_session_with(ws, p)
    view = finish(run(ws, sid, None, "make the ball blue"))
    assert view.needs_pointing == {"s1"} and view.status == "unverified"  # asked before anything ran
    assert "Click on it in the image" in R.final_text(view) and "Point first" in R.final_text(view)
    assert "needs pointing" in R.tree_markdown(view)
    assert ws.versions.turn_views(sid, None)[0].needs_pointing == {"s1"}  # the request survives a page refresh
    clicked = finish(run(ws, sid, None, "make the ball blue", clicks=[(380, 210)]))
    assert clicked.status == "done" and clicked.region_note.startswith("box ")
    after = ws.store.load_image(ws.store.version(sid, clicked.result_version))
    assert after[210, 380, 2] > after[210, 380, 0]  # the ball is blue where the user clicked


@pytest.mark.slow
def test_each_accepted_subtask_is_a_version_and_the_bundle_has_everything(ws: Workspace) -> None:
    poster = Path(__file__).resolve().parents[1] / "assets" / "cafe_poster.png"
    sid = new_session_with(ws, poster)
    view = finish(run(ws, sid, None, "highlight the word 'FREE' and redact the phone number"))
    assert view.status == "done"
    kinds = [(v["kind"], v["subtask_id"]) for v in ws.versions.summary(sid, None)["versions"]]
    assert kinds == [("upload", None), ("subtask", "s1"), ("turn", None)]
    ws.versions.score(sid, None, view.turn_id, "s1", 1.0, "clear", "ann")
    image_path, bundle = ws.versions.export(sid, None)
    assert image_path is not None and image_path.exists()
    with zipfile.ZipFile(bundle) as z:
        names = set(z.namelist())
        assert {"manifest.json", "session.json", "versions.json", "README.txt", "scores.csv"} <= names
        assert f"turns/turn-{view.turn_id}.json" in names
        manifest = json.loads(z.read("manifest.json"))
        assert manifest["packages"]["numpy"] and "tools.yaml" in manifest["tool_tables_sha256"]
        assert "seeds" in manifest and "openai_api_key" not in json.dumps(manifest)
        versions = json.loads(z.read("versions.json"))
        assert all(len(v["sha256"]) == 64 and v["file"] in names for v in versions)
        turn = json.loads(z.read(f"turns/turn-{view.turn_id}.json"))
        assert turn["plan"]["subtasks"][1]["kind"] == "text_redaction"
        assert turn["tool_calls"] and all("params" in c and "seconds" in c for c in turn["tool_calls"])
        assert turn["costs"]["executions"] == len(turn["tool_calls"])
        assert any(e["kind"] == "path_chosen" for e in turn["events"])
    ws.runtimes.release(sid)
    assert not bundle.exists()  # per-session temporary files are removed when its tabs close


def test_sessions_do_not_see_each_other(ws: Workspace, sign: Path) -> None:
    a = new_session_with(ws, sign)
    owned = ws.open_session(None, "alice").id
    assert ws.open_session(owned, "bob").id != owned  # bob cannot open alice's session: he gets a new one
    with pytest.raises(InputError, match="unknown session"):
        ws.versions.summary(owned, "bob")
    with pytest.raises(InputError, match="does not exist in this session"):
        ws.versions.branch(owned, "alice", ws.versions.summary(a, None)["head"])  # a version id from another session


def test_the_prediction_follows_alpha(ws: Workspace) -> None:
    from costa.planner import plan_with_rules
    from costa.turn.records import UserRegion

    preds = ws.previews.predict(plan_with_rules(REPLACE), UserRegion(), [0.0, 1.0, 2.0])
    assert [a for a, *_ in preds] == [0.0, 1.0, 2.0]
    for _, path, seconds, quality in preds:
        assert path[0] == ("s1", "rapidocr_detect") and seconds > 0 and 0 < quality <= 1


def test_building_the_page_never_sends_keys_or_passwords(tmp_path: Path) -> None:
    from ui.app import build_ui

    settings = Settings(
        calibration_table=fake_table(),
        home=tmp_path,
        openai_base_url="http://user:hunter2@localhost:9/v1?token=sk-QUERY",
        openai_api_key="sk-SECRET-123",
        llm_model="tiny",
        auth=(("alice", "pw-alice-987"),),
    )
    demo = build_ui(Services(settings))
    config = json.dumps(demo.get_config_file(), default=str)
    for secret in ("sk-SECRET-123", "hunter2", "sk-QUERY", "pw-alice-987"):
        assert secret not in config


@pytest.mark.slow
def test_llm_planner_calls_reach_the_chat_and_the_ledger(tmp_path: Path, sign: Path) -> None:
    from tests.fake_openai import FakeOpenAI, chat
    from ui.overlays import llm_line

    plan = {
        "form": "chain",
        "subtasks": [{"id": "s1", "kind": "text_replacement", "target": "SALE", "result": "OPEN", "params": {}}],
        "unsupported": [],
        "question": None,
    }
    with FakeOpenAI([chat(plan, prompt_tokens=900, completion_tokens=60)]) as fake:
        # Reflection off: its VLM experts would ask the fake too (their calls are tested in tests/test_reflect.py).
        settings = Settings(
            calibration_table=fake_table(),
            home=tmp_path,
            openai_base_url=fake.base_url,
            llm_model="fake-model",
            llm_retries=0,
            reflect=False,
        )
        ws = Workspace(Services(settings), Store(tmp_path / "store"))
        assert ws.uses_llm() and llm_line(settings.openai_base_url, "fake-model", True).startswith("LLM: fake-model at")
        sid = new_session_with(ws, sign)
        view = finish(run(ws, sid, None, REPLACE))
        ws.close()
    assert view.status == "done" and view.plan is not None and view.plan.planner != "rules"
    assert view.llm and view.llm[0].prompt_tokens == 900
    assert "LLM planner" in R.chat_messages(view)[1]["metadata"]["title"]
    assert "1 LLM call(s), 960 tokens" in R.ledger_markdown(view)


def test_turn_options_carry_mode_reflection_and_accepting_an_unverified_target(services: Services) -> None:
    s = services.settings
    assert TurnOptions.validate(s).reflect is None  # None: COSTA_REFLECT decides
    opts = TurnOptions.validate(s, 0.5, 0.7, "fast-slow", False, "rest", accept_unverified=True)
    assert (opts.mode, opts.reflect, opts.action, opts.accept_unverified) == ("fast-slow", False, "rest", True)
    with pytest.raises(InputError, match="mode must be one of"):
        TurnOptions.validate(s, mode="greedy")


def test_a_turn_records_its_reflection_switch_and_remembers_itself(ws: Workspace, tmp_path: Path) -> None:
    from costa.reflect.session import load_session_memory

    path = tmp_path / "grey.png"
    Image.fromarray(np.full((48, 64, 3), 90, np.uint8)).save(path)
    sid = new_session_with(ws, path)
    opts = TurnOptions.validate(ws.settings, reflect=False)
    view = finish(ws.run(ws.prepare(sid, None, "Make the image brighter.", opts)))
    assert view.status == "done" and not [c for c in view.calls if c.tool.startswith("reflect")]
    turn = ws.store.turns(sid)[-1]
    assert turn.params["reflect"] is False and turn.params["mode"] == "lazy"
    assert [t.resolved for t in load_session_memory(ws.store, sid).turns] == ["Make the image brighter."]


def test_the_cli_runs_fast_slow_with_and_without_reflection_through_the_core(tmp_path: Path, monkeypatch) -> None:
    """Fast–slow reflects like every mode, and --no-reflect switches it off (before, fast–slow never reflected, so
    the "without reflection" half of this test could not fail)."""
    import io

    from costa.cli import main

    monkeypatch.setenv("COSTA_HOME", str(tmp_path / "home"))

    src = tmp_path / "grey.png"
    Image.fromarray(np.full((48, 64, 3), 90, np.uint8)).save(src)
    args = ["edit", str(src), "Make the image brighter.", "-o", str(tmp_path / "out.png"), "--mode", "fast-slow"]
    for flags, reflected in (([], True), (["--no-reflect"], False)):
        out = io.StringIO()
        assert main([*args, *flags, "--events", str(tmp_path / "ev.jsonl")], out) == 0
        kinds = [json.loads(line)["kind"] for line in (tmp_path / "ev.jsonl").read_text().splitlines()]
        assert (
            "rule_hit" in kinds and ("reflection" in kinds) is reflected and ("reflection_kept" in kinds) is reflected
        )
        assert "shipped-adjust" in out.getvalue() and (tmp_path / "out.png").is_file()
