"""Events survive the trip to JSON and back (the store and the reloaded chat depend on it)."""

from __future__ import annotations

import json

import numpy as np

from costa import events as E
from costa.eventlog import event_from_dict, event_to_dict
from costa.types import Plan, Subtask


def test_every_event_kind_round_trips_through_json() -> None:
    plan = Plan(instruction="x", subtasks=(Subtask(id="s1", kind="text_removal", target="SALE"),))
    samples = [
        E.PlanReady(plan, 0.01),
        E.SubgraphBuilt(("s1",), 5, 5, ("a", "b"), (("s2", "no tool"),)),
        E.NodeQueued("s1", "a", ("a",), 1.5, False),
        E.NodePopped("s1", "a", ("a",), 1.5, True),
        E.ToolStarted("s1", "a", 0, {"k": 1}),
        E.ToolFinished("s1", "a", 0, 0.1, 0.9, True, ("fine",)),
        E.Retry("s1", "a", 1, "too low"),
        E.ToolFailed("s1", "a", "still too low"),
        E.PathChosen((("s1", "a"), ("s1", "b")), 0.2, 0.9, 0.3, 3, 0.4),
        E.SearchFailed("nothing passed", 2, 0.3),
        E.SubtaskDone("s1", "text_removal", ("a", "b"), 0.9, "removed", np.zeros((2, 3, 3), np.uint8)),
        E.TurnDone(1.0, 0.4, 3, 0.9, np.zeros((2, 3, 3), np.uint8), {"s1": "removed"}, True, {}),
        E.ErrorEvent("oops"),
        E.LlmCall("plan", "m", 0.5, 10, 5, None, True, ""),
        E.PlannerFallback("bad json"),
        E.ClarificationNeeded("which colour?"),
    ]
    for ev in samples:
        d = json.loads(json.dumps(event_to_dict(ev)))
        back = event_from_dict(d)
        assert type(back) is type(ev), ev
        for name, value in vars(ev).items():
            if name == "image":
                assert d["image"] == (None if value is None else list(value.shape))
                assert back.image is None  # pixels live in versions, not in the event log
            else:
                assert getattr(back, name) == value, (ev, name)


def test_unknown_or_incomplete_events_are_skipped() -> None:
    assert event_from_dict({"kind": "from_a_newer_costa", "x": 1}) is None
    assert event_from_dict({"kind": "tool_failed", "subtask_id": "s1"}) is None
