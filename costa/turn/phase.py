"""The whole-plan search phase (CoSTA*: one lazy or eager A* over the plan's tool subgraph), and how any search's
result becomes the per-subtask results the shared ending reports.

The fast–slow phase (`costa.subroutines.executor.fast_slow_phase`) produces the same `PhaseResult`, subtask by
subtask.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence

import numpy as np

from costa.events import Event
from costa.graph import StepNode, ToolGraph
from costa.search import SearchResult
from costa.turn.records import PhaseResult, SubtaskResult, TurnState
from costa.turn.search import SearchOptions, TurnContext, run_search
from costa.types import EditState


def subtask_results(
    ctx: TurnContext, result: SearchResult[StepNode, TurnState], only: Sequence[str] | None = None
) -> list[SubtaskResult]:
    """Each subtask a found search result served (or those in `only`), in path order: its chain, the product of
    its steps' qualities, its final step, its one-line result and the image after it."""
    state = result.state
    if not result.found or state is None:
        return []
    order = list(dict.fromkeys(n.subtask_id for n in result.path))
    quality: dict[str, float] = {}
    for node, q in zip(result.path, result.step_quality, strict=True):
        quality[node.subtask_id] = quality.get(node.subtask_id, 1.0) * q
    finals = {f.subtask_id for f in state.finals}
    return [
        served_result(ctx, state, sid, tools_of(result, sid), quality.get(sid, 0.0))
        for sid in order
        if (only is None or sid in only) and sid in finals
    ]


def tools_of(result: SearchResult[StepNode, TurnState], sid: str) -> tuple[str, ...]:
    """The tools a found result's path ran for subtask `sid`, in order."""
    return tuple(n.tool for n in result.path if n.subtask_id == sid)


def served_result(
    ctx: TurnContext, state: TurnState, sid: str, tools: tuple[str, ...], quality: float
) -> SubtaskResult:
    """Subtask `sid` as `state` has it after serving it: its last final step, result and image."""
    final = next(f for f in reversed(state.finals) if f.subtask_id == sid)
    image = next((img for k, img in reversed(state.images) if k == sid), None)
    result = next((r for k, r in reversed(state.results) if k == sid), "")
    return SubtaskResult(sid, ctx.plan.by_id(sid).kind, tools, quality, final, result, image)


def whole_plan_phase(
    ctx: TurnContext, tg: ToolGraph, start: EditState | np.ndarray, lazy: bool = True
) -> Generator[Event, None, PhaseResult]:
    """One A* over the whole plan's graph from `start` (an image, or a state with the turn's `kept` region): every
    subtask served on one path, or none (the search found no path)."""
    state = start if isinstance(start, EditState) else EditState(start)
    result = yield from run_search(ctx, tg.graph, TurnState(state), SearchOptions(lazy=lazy))
    phase = PhaseResult(executions=result.executions, spent_seconds=result.spent_seconds, reason=result.reason)
    phase.stopped = result.stopped
    if result.found:
        phase.done = subtask_results(ctx, result)
        phase.state = result.state
    return phase
