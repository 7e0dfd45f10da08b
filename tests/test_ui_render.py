"""The page's drawings of a turn from hand-written event streams: retries, failures, the chosen path, skipped work."""

from __future__ import annotations

import numpy as np

from costa import events as E
from costa.graph import build_plan_graph
from costa.session.view import GraphLayout, TurnView, path_keys
from costa.tables import load_tables
from costa.types import Plan, Subtask
from ui import render as R

IMAGE = np.zeros((4, 4, 3), np.uint8)
NAMES = {"text_removal": "Text Removal", "object_removal": "Object Removal"}


def removal_view() -> TurnView:
    tables = load_tables()
    plan = Plan(
        instruction="remove the text 'SALE' and the cup",
        subtasks=(Subtask(id="s1", kind="text_removal", target="SALE"), Subtask(id="s2", kind="object_removal")),
    )
    tg = build_plan_graph(tables, plan, lambda t: tables.tools[t].status == "ready")
    view = TurnView(plan.instruction, NAMES, 0.8, turn_id=7)
    view.layout = GraphLayout.from_tool_graph(tg, lambda n: (0.1, 0.9))
    view.apply(E.PlanReady(plan, 0.01))
    view.apply(E.SubgraphBuilt(("s1",), 4, 4, ("rapidocr_detect",), (("s2", "no ready tool path"),)))
    return view


def run_events(view: TurnView) -> None:
    detect, telea, patch = "rapidocr_detect", "text_remove_telea", "text_remove_patchmatch"
    for ev in (
        E.NodeQueued("s1", detect, (detect,), 1.0, False),
        E.NodePopped("s1", detect, (detect,), 1.0, False),
        E.ToolStarted("s1", detect, 0),
        E.ToolFinished("s1", detect, 0, 0.2, 1.0, True, ("found 'SALE'",)),
        E.NodeQueued("s1", telea, (detect, telea), 1.1, False),
        E.NodeQueued("s1", patch, (detect, patch), 1.2, False),
        E.NodePopped("s1", telea, (detect, telea), 1.1, False),
        E.ToolStarted("s1", telea, 0),
        E.ToolFinished("s1", telea, 0, 0.05, 0.5, False, ("ghost of the letters remains",)),
        E.Retry("s1", telea, 1, "quality 0.50 below threshold 0.80"),
        E.ToolStarted("s1", telea, 1),
        E.ToolFinished("s1", telea, 1, 0.06, 0.6, False, ("still visible",)),
        E.ToolFailed("s1", telea, "quality 0.60 below threshold 0.80 after 2 attempt(s)"),
        E.NodePopped("s1", patch, (detect, patch), 1.2, False),
        E.ToolStarted("s1", patch, 0),
        E.ToolFinished("s1", patch, 0, 0.3, 0.95, True, ("clean",)),
        E.PathChosen((("s1", detect), ("s1", patch)), 0.5, 0.95, 0.6, 4, 0.61),
        E.SubtaskDone("s1", "text_removal", (detect, patch), 0.95, "removed 1 region"),
        E.TurnDone(0.9, 0.61, 4, 0.95, IMAGE, {"s1": "removed 1 region"}, False, {"s2": "no ready tool path"}),
    ):
        view.apply(ev)


def test_retries_failures_and_the_chosen_path_are_marked() -> None:
    view = removal_view()
    run_events(view)
    assert view.node_state[("s1", ("rapidocr_detect", "text_remove_telea"))] == "failed"
    assert view.retries[("s1", ("rapidocr_detect", "text_remove_telea"))] == 1
    assert view.chosen == path_keys([("s1", "rapidocr_detect"), ("s1", "text_remove_patchmatch")])
    graph = R.graph_markdown(view)
    assert 'text_remove_telea<br/><small>est 0.10 s · q 0.90 · ↻1</small>"]:::failed' in graph
    assert ":::chosen" in graph and "linkStyle" in graph and "stroke-dasharray:6 3" not in graph.split("linkStyle")[1]
    totals = view.totals()
    assert (totals["executions"], totals["retries"]) == (4, 1)


def test_the_chat_nests_tool_calls_under_their_subtask_with_verdicts() -> None:
    view = removal_view()
    run_events(view)
    msgs = R.chat_messages(view)
    children = [m for m in msgs if m.get("metadata", {}).get("parent_id") == "t7-s1"]
    assert [m["metadata"]["title"] for m in children] == [
        "🔧 rapidocr_detect",
        "🔧 text_remove_telea",
        "🔧 text_remove_telea · retry 1",
        "🔧 text_remove_patchmatch",
    ]
    assert "❌ failed" in children[1]["content"] and "ghost of the letters" in children[1]["content"]
    assert "Dropped" in children[2]["content"]
    assert children[3]["metadata"]["duration"] == 0.3 and children[3]["metadata"]["status"] == "done"
    s2 = next(m for m in msgs if m.get("metadata", {}).get("id") == "t7-s2")
    assert s2["metadata"]["title"].startswith("⏭️") and "no ready tool path" in s2["content"]
    assert "Partly done" in msgs[-1]["content"]
    tree = R.tree_markdown(view)
    assert ":::done" in tree and ":::skipped" in tree
    ledger = R.ledger_markdown(view)
    assert "| 3 | s1 | `text_remove_telea` | 1 | 0.060 | 0.60 | fail (dropped) |" in ledger


def test_while_running_the_subtask_is_pending_and_the_tool_is_running() -> None:
    view = removal_view()
    view.apply(E.NodePopped("s1", "rapidocr_detect", ("rapidocr_detect",), 1.0, False))
    view.apply(E.ToolStarted("s1", "rapidocr_detect", 0))
    msgs = R.chat_messages(view)
    s1 = next(m for m in msgs if m.get("metadata", {}).get("id") == "t7-s1")
    tool = next(m for m in msgs if m.get("metadata", {}).get("parent_id") == "t7-s1")
    assert s1["metadata"]["status"] == "pending" and tool["metadata"]["status"] == "pending"
    assert ":::running" in R.graph_markdown(view) and "running…" in R.tree_markdown(view)


def test_labels_cannot_break_the_diagram() -> None:
    assert R.esc('say "hi" <b>#1</b>') == "say #quot;hi#quot; #lt;b#gt;#35;1#lt;/b#gt;"
    assert len(R.esc("x" * 200, 20)) == 20


def test_the_prediction_readout_marks_the_current_alpha() -> None:
    md = R.prediction_markdown(1.0, [(0.0, (("s1", "a"),), 1.0, 0.99), (1.0, (("s1", "b"),), 0.1, 0.9)])
    assert md.startswith("**Prediction at α = 1:** 0.100 s, quality 0.90 via b") and "| **1** | **b** |" in md


def test_an_answer_checked_for_form_only_is_not_called_verified() -> None:
    """A caption (no reference offline) that passed its form check is shown as an unverified answer, not as
    "Done · quality 1.00"; an OCR read (checked by reading again) keeps its quality line."""
    tables = load_tables()
    unreferenced = frozenset(k for k, v in tables.subtasks.items() if v.unreferenced)
    assert {"image_captioning", "depth_estimation"} <= unreferenced and "text_extraction" not in unreferenced
    plan = Plan(
        instruction="caption this image and read the text",
        subtasks=(Subtask(id="s1", kind="image_captioning"), Subtask(id="s2", kind="text_extraction")),
    )
    view = TurnView(plan.instruction, {}, 0.8, turn_id=3, unreferenced=unreferenced)
    for ev in (
        E.PlanReady(plan, 0.01),
        E.SubtaskDone("s1", "image_captioning", ("blip_caption",), 1.0, "A dog on a sofa."),
        E.SubtaskDone("s2", "text_extraction", ("rapidocr_read",), 0.97, "SALE"),
        E.TurnDone(0.5, 0.4, 2, 0.97, None, {"s1": "A dog on a sofa.", "s2": "SALE"}, True, {}),
    ):
        view.apply(ev)
    text = {m["metadata"]["id"].split("-")[-1]: m["content"] for m in R.chat_messages(view) if m.get("metadata")}
    assert "not verified" in text["s1"] and "quality 1.00" not in text["s1"]
    assert "quality 0.97" in text["s2"] and "not verified" not in text["s2"]
