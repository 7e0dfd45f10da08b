"""The α preview: what a typed instruction would do before anything runs — its plan, the drawable tool subgraph,
the predicted best path, seconds and quality for several α, and which subtasks need the user to point.

`Previews` is one object the session core holds (`SessionCore.previews`); it reads the services, the store (earlier
instructions for planning) and the planner's LLM client, and writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from costa.events import Event, LlmCall
from costa.graph import GOAL, START, StepNode, step_key, subtask_chains
from costa.search import predict_best
from costa.session.turns import HISTORY_TURNS, PlanResult, Vocabulary, plan_turn
from costa.session.view import GraphLayout, TurnView, path_keys
from costa.turn.graphs import build_graph
from costa.turn.records import UserRegion, check_alpha_value
from costa.types import Plan

#: α values the preview predicts for, besides the current one.
ALPHA_GRID = (0.0, 0.5, 1.0, 1.5, 2.0)

Prediction = tuple[float, tuple[tuple[str, str], ...], float, float]  # α, ((subtask, tool), …), seconds, quality


@dataclass
class Preview:
    """What the instruction would do under α: predictions for the grid, a view to draw, or why nothing would run."""

    alpha: float
    predictions: list[Prediction] = field(default_factory=list)
    view: TurnView | None = None
    pointing: list[str] = field(default_factory=list)  # subtasks that could run if the user pointed
    nothing: str = ""  # why the instruction would not run ("" when it would)


class Previews:
    """Planning previews, predicted paths and pointing advice (see the module docstring).

    `client` returns the planner's LLM client (None: the offline rule planner), made once by the core."""

    def __init__(self, services: Any, store: Any, vocabulary: Vocabulary, client: Any) -> None:
        self.services, self.store, self.vocabulary, self.client = services, store, vocabulary, client

    def estimate(self, n: StepNode) -> tuple[float, float]:
        """The estimate a search would start from for step `n` (the process's learned estimates)."""
        return self.services.estimates.get(n.tool, n.kind)

    def pointing_helps(self, kind: str) -> bool:
        """Whether a subtask of `kind` has a ready tool path that starts from what the user points at (a tool that
        takes the pointing as input, or an image-wide editor that acts inside the pointed region: `in_region`)."""
        tables = self.services.tables
        pointed = frozenset({"boxes", "masks", "points"})
        chains = subtask_chains(tables, kind, pointed, self.services.is_ready_fn())
        return any(set(tables.tools[c[0]].inputs) & pointed or tables.tools[c[0]].in_region for c in chains)

    def pointing_subtasks(self, plan: Plan, unavailable: Mapping[str, str]) -> set[str]:
        """The unavailable subtasks that pointing (a click, box or brush) would make runnable."""
        return {sid for sid in unavailable if self.pointing_helps(plan.by_id(sid).kind)}

    def after_turn_pointing(self, view: TurnView, given: Sequence[str]) -> None:
        """A turn that failed to find its target without any pointing: ask the user to point (when that helps)."""
        if view.plan is None or given or view.status not in ("failed", "partial"):
            return
        for s in view.plan.subtasks:
            if s.id not in view.done_subtasks and self.pointing_helps(s.kind):
                view.needs_pointing.add(s.id)

    def plan_only(self, session_id: str, instruction: str, image: np.ndarray | None) -> tuple[PlanResult, list[Event]]:
        """Plan `instruction` as a turn would (OCR text, history), without running or storing anything."""
        history = [t.instruction for t in self.store.turns(session_id)][-HISTORY_TURNS:]
        gen = plan_turn(self.services, self.client(), instruction, image, history)
        events: list[Event] = []
        while True:
            try:
                events.append(next(gen))
            except StopIteration as stop:
                return stop.value, events

    def predict(
        self, plan: Plan, region: UserRegion, alphas: Sequence[float], threshold: float | None = None
    ) -> list[Prediction]:
        """The path the search settles on for each α when tools perform as estimated: (α, ((subtask, tool), …),
        seconds, quality); [] if none.

        `threshold` is the step quality the search will require (default from settings): a step estimated below it
        fails in the preview as it would when run.
        """
        tg = build_graph(self.services, plan, region)
        if not tg.steps:
            return []
        th = self.services.settings.threshold if threshold is None else float(threshold)
        out = []
        for a in alphas:
            check_alpha_value(a)
            # the search's own threshold and step identity, so the predicted path is the one it settles on
            path, seconds, quality = predict_best(tg.graph, START, GOAL, self.estimate, a, th, key=step_key)
            if path:
                out.append((a, tuple((n.subtask_id, n.tool) for n in path), seconds, quality))
        return out

    def preview(
        self,
        planned: PlanResult,
        text: str,
        alpha: float,
        region: UserRegion,
        threshold: float | None = None,
    ) -> Preview:
        """Predictions for α and the grid, and a view of the plan with the predicted path (nothing runs); `threshold`
        as in `predict`."""
        a = round(float(alpha), 2)
        th = self.services.settings.threshold if threshold is None else float(threshold)
        if planned.plan is None:
            why = [getattr(e, "message", "") or getattr(e, "question", "") for e in planned.events]
            return Preview(a, nothing="; ".join(w for w in why if w) or "no edit recognised")
        plan = planned.plan
        tg = build_graph(self.services, plan, region)
        preds: list[Prediction] = []
        if tg.steps:
            for x in sorted({*ALPHA_GRID, a}):
                check_alpha_value(x)
                path, seconds, quality = predict_best(tg.graph, START, GOAL, self.estimate, x, th, key=step_key)
                if path:
                    preds.append((x, tuple((n.subtask_id, n.tool) for n in path), seconds, quality))
        view = self.vocabulary.view(text, status="preview")
        view.layout = GraphLayout.from_tool_graph(tg, self.estimate)
        view.plan, view.unavailable = plan, dict(tg.unavailable)
        view.needs_pointing = self.pointing_subtasks(plan, tg.unavailable)
        view.llm = [e for e in planned.events if isinstance(e, LlmCall)]
        current = [p for p in preds if abs(p[0] - a) < 1e-9]
        view.predicted = path_keys(current[0][1]) if current else []
        return Preview(a, preds, view, sorted(view.needs_pointing))


def plan_cache_put(cache: dict[str, Any], key: str, value: Any, keep: int = 16) -> dict[str, Any]:
    """A new cache dict with `key` added, keeping the newest `keep` entries."""
    return {**dict(list(cache.items())[-(keep - 1) :]), key: value}
