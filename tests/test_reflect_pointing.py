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
