"""Reflection asking the user to point (a ReflectionRetry "ask_user"), folded into the turn view every interface
draws: the subtask needs pointing with the reason, the chat and the points line name the target. The browser test
(tests/test_app_browser_reflection.py) checks that the page opens the pointing tools."""

from __future__ import annotations

from costa.eventlog import event_from_dict, event_to_dict
from costa.events import PlanReady, Reflection, ReflectionKept, ReflectionRetry, SubtaskDone, TurnDone
from costa.planner import plan_with_rules
from costa.reflect.report import panel_markdown
from costa.services import Services
from costa.session.view import TurnView
from ui import render as R

WHY = "the grounded region is not the ball"


def _events() -> list:
    plan = plan_with_rules("make the ball blue", Services().tables.subtasks)
    return [
        PlanReady(plan),
        Reflection("s1", 1, (), 5.0, "best_of"),
        ReflectionRetry("s1", 2, "ask_user", WHY),
        ReflectionKept("s1", 1, 5.0, False, "no attempt reached 7"),
        SubtaskDone("s1", "object_recoloration", ("colour_grounder", "recolor_lab"), 0.9, "recoloured", None),
        TurnDone(1.0, 0.1, 2, 0.9, None, ok=False),
    ]


def _view(events: list) -> TurnView:
    view = TurnView("make the ball blue", {})
    for ev in events:
        view.apply(ev)
    return view


def test_ask_user_makes_the_subtask_need_pointing_with_its_reason() -> None:
    view = _view(_events())
    assert view.needs_pointing == {"s1"} and view.ask_pointing == {"s1": WHY}
    hint = R.points_hint(view)
    assert hint is not None and hint.startswith("📍 Point at 'ball'")
    text = R.final_text(view)
    assert f"Point at 'ball': reflection doubts the target ({WHY})" in text and "Send again" in text
    s1 = next(m for m in R.chat_messages(view) if m.get("metadata", {}).get("id") == "tlive-s1")
    assert "Point at 'ball'" in s1["content"]
    assert "asks you to point at the target" in panel_markdown(_events())


def test_a_reloaded_turn_asks_the_same() -> None:
    """The session's chat is rebuilt from stored events: the ask survives the round trip."""
    back = [event_from_dict(event_to_dict(e)) for e in _events()]
    assert _view(back).ask_pointing == {"s1": WHY}


def test_other_retries_do_not_ask() -> None:
    events = [
        e if not isinstance(e, ReflectionRetry) else ReflectionRetry("s1", 2, "other_path", WHY) for e in _events()
    ]
    view = _view(events)
    assert not view.needs_pointing and R.points_hint(view) is None and "Point at" not in R.final_text(view)


# ------------------------------------------------------------------ through the session core and the CLI, for real


def _ask_table(tmp_path):
    """A reflection table whose only retry is asking (τ_sr 10: the recolouring scores about 9.7, below it)."""
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[1]
    data = yaml.safe_load((root / "tool_tables" / "reflection.yaml").read_text())
    data["tau_sr"], data["actions"] = 10.0, ["ask_user"]
    table = tmp_path / "reflection-ask.yaml"
    table.write_text(yaml.safe_dump(data))
    return root, table


BALL_CLICK = (358, 185)  # the red ball's centre in assets/red_ball.png


_ASK_THROUGH_THE_CORE = """
import os
import sys
import numpy as np
from pathlib import Path
from costa.config import Settings
from costa.services import Services
from costa.session import Pointing, SessionCore, TurnOptions
from ui import render as R

root, home = Path(sys.argv[1]), Path(sys.argv[2])
click = (358, 185)
core = SessionCore(Services(Settings.from_env({**os.environ, "COSTA_HOME": str(home), "COSTA_REFLECT": "1"})))
sid = core.new_session(None).id
core.upload(sid, None, root / "assets" / "red_ball.png")
head0, image0 = core.head(sid, None)
opts = TurnOptions.validate(core.settings)
view = [v for v, _ in core.run(core.prepare(sid, None, "make the ball blue", opts, Pointing([click])))][-1]
assert view is not None and view.ask_pointing, view.notes
assert view.result_version is None
head1, image1 = core.head(sid, None)
assert head1.id == head0.id and np.array_equal(image1, image0)  # nothing saved
text = R.final_text(view)
assert "Nothing was saved" in text and "the best attempt was kept" not in text, text
accept = TurnOptions.validate(core.settings, accept_unverified=True)
kept = [v for v, _ in core.run(core.prepare(sid, None, "make the ball blue", accept, Pointing([click])))][-1]
head2, image2 = core.head(sid, None)
core.close()
assert kept is not None and kept.result_version == head2.id != head0.id
assert not np.array_equal(image2, image0)  # the kept (bluer) attempt is the new version
print("ok")
"""


def test_an_ask_saves_nothing_and_sending_again_edits_the_image_as_it_was(tmp_path) -> None:
    """Before, the doubted attempt was saved as the new version, so Send again after pointing recoloured on top of
    it. Now the head stays; the next turn starts from the same image; accepting keeps the attempt as a version.
    Through the session core in a fresh process (the reflection table comes from the environment, as in the app)."""
    import os
    import subprocess
    import sys

    root, table = _ask_table(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(root), "COSTA_REFLECTION_TABLE": str(table), "COSTA_HOME": str(tmp_path)}
    env["COSTA_TOOLS_OFF"] = "recolor_lab"  # HSV (~9.7 < τ_sr 10) every time, whatever the measured seconds
    env.pop("OPENAI_BASE_URL", None)
    r = subprocess.run(
        [sys.executable, "-c", _ASK_THROUGH_THE_CORE, str(root), str(tmp_path / "home")],
        env=env, capture_output=True, text=True, timeout=300, cwd=root,
    )  # fmt: skip
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


def test_the_cli_writes_nothing_on_an_ask_and_keeps_the_attempt_when_accepted(tmp_path) -> None:
    import os
    import subprocess
    import sys

    root, table = _ask_table(tmp_path)
    env = {**os.environ, "COSTA_HOME": str(tmp_path / "home"), "PYTHONPATH": str(root)}
    env["COSTA_REFLECTION_TABLE"] = str(table)
    env["COSTA_TOOLS_OFF"] = "recolor_lab"  # HSV (~9.7 < τ_sr 10) every time, whatever the measured seconds
    env.pop("OPENAI_BASE_URL", None)
    out = tmp_path / "out.png"
    args = [sys.executable, "-m", "costa", "edit", str(root / "assets" / "red_ball.png"), "make the ball blue",
            "-o", str(out), "--point", f"{BALL_CLICK[0]},{BALL_CLICK[1]}"]  # fmt: skip
    r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 4, r.stdout + r.stderr
    assert "reflection doubts the target of s1 ('ball')" in r.stderr and not out.exists()
    r = subprocess.run([*args, "--accept-unverified"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 3 and out.exists(), r.stdout + r.stderr  # kept, and said to be not accepted (partial)


def test_a_retry_s_failed_search_is_not_the_turn_s_error() -> None:
    """The app said "⚠️ No tool path passed its checks" twice under a removal that was done (reflection's retries
    found no other path); that is a note about the retry, and a search failing outside a retry is still an error."""
    from costa.events import SearchFailed

    plan = plan_with_rules("remove the ball", Services().tables.subtasks)
    events = [
        PlanReady(plan),
        Reflection("s1", 1, (), 6.7, "retry"),
        ReflectionRetry("s1", 2, "other_path", "pasted content"),
        SearchFailed("every tool path failed its checks", 3, 1.0),
        ReflectionRetry("s1", 3, "next_params", "pasted content"),
        SearchFailed("every tool path failed its checks", 2, 1.0),
        ReflectionKept("s1", 1, 6.7, False, "no attempt reached 7"),
        SubtaskDone("s1", "object_removal", ("box_mask", "remove_patchmatch"), 0.9, "filled", None),
        TurnDone(1.0, 0.1, 2, 0.9, None, ok=False),
    ]
    view = _view(events)
    assert not view.errors and sum("no other tool path" in n for n in view.notes) == 1, (view.errors, view.notes)
    alone = _view([PlanReady(plan), SearchFailed("every tool path failed its checks", 3, 1.0)])
    assert alone.errors == ["No tool path passed its checks: every tool path failed its checks."]
