"""The one search of a turn: `run_search` drives the pure A* (`costa.search.iter_search`) over a tool graph with the
turn's step executor, estimates, α and threshold.

Every search a turn makes goes through it — the whole plan's (lazy or eager), a fast–slow rule's chain and its
fallback, reflection's retries — so they estimate, label, key and observe steps the same way, share the turn's memo
of tool runs (through the one executor), and learn the same way from what they measured: every real run (memo hits
and stopped calls are not runs) becomes an observation of the estimates the turn reads.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from costa.events import Event
from costa.graph import GOAL, START, StepNode, step_key
from costa.search import Observation, Outcome, SearchPolicy, SearchResult, iter_search
from costa.turn.executor import StepExecutor
from costa.turn.records import TurnState, UserRegion, step_params
from costa.types import Plan

#: (observation, the parameters that attempt ran with) → None: where a real tool run is recorded.
Observer = Callable[[Observation[StepNode], dict[str, Any]], None]


@dataclass
class TurnContext:
    """What every search of one turn shares: the plan and the user's region, the one step executor (its memo, its
    failures), α and the threshold, the estimates it reads and teaches, and which tools are ready (asked once)."""

    services: Any  # costa.services.Services
    plan: Plan
    region: UserRegion
    executor: StepExecutor
    alpha: float
    threshold: float
    estimates: Any  # costa.services.Estimates: get(tool, kind), observe(tool, kind, seconds, quality)
    ready: Callable[[str], bool]

    def observe(self, obs: Observation[StepNode], params: dict[str, Any]) -> None:
        """The default record of a real run: the estimates learn its seconds and quality."""
        self.estimates.observe(obs.node.tool, obs.node.kind, obs.seconds, obs.quality)


@dataclass(frozen=True)
class SearchOptions:
    """How one search of a turn differs from the default lazy A*.

    lazy: False expands eagerly (the published search). offset: final steps start this far along their retry
    schedule (reflection's `next_params`). measured: step key → (seconds, quality) known already, used instead of
    the estimate (a failed rule's passing steps: paid for, so they cost the fallback nothing). attempts: node → how
    many attempts (default its retry schedule, less `offset` for final steps). observer: where real runs are
    recorded (default `TurnContext.observe`).
    """

    lazy: bool = True
    offset: int = 0
    measured: Mapping[Hashable, tuple[float, float]] = field(default_factory=dict)
    attempts: Callable[[StepNode], int] | None = None
    observer: Observer | None = None


def label(node: object) -> tuple[str, str]:
    """(subtask id, tool id) of a step for events; the sentinels are ("", "START") and ("", "GOAL")."""
    return (node.subtask_id, node.tool) if isinstance(node, StepNode) else ("", str(node))


def run_search(
    ctx: TurnContext, graph: nx.DiGraph, start: TurnState, options: SearchOptions | None = None
) -> Generator[Event, None, SearchResult[StepNode, TurnState]]:
    """Search `graph` from `start` with the turn's executor; yield the search's events, return its result, and
    record every real run it made (see the module docstring)."""
    opts = options or SearchOptions()
    tools = ctx.services.tables.tools

    def shifted(node: StepNode, attempt: int) -> int:
        if not node.final or not opts.offset:
            return attempt
        return min(attempt + opts.offset, tools[node.tool].max_attempts - 1)

    def attempts(node: StepNode) -> int:
        if opts.attempts is not None:
            return opts.attempts(node)
        n = tools[node.tool].max_attempts
        return max(1, n - opts.offset) if node.final else n

    def execute(node: StepNode, state: TurnState, attempt: int) -> Outcome[TurnState]:
        return ctx.executor(node, state, shifted(node, attempt))

    def estimate(node: StepNode) -> tuple[float, float]:
        return opts.measured.get(step_key(node)) or ctx.estimates.get(node.tool, node.kind)

    def params_of(node: StepNode, attempt: int) -> dict[str, Any]:
        return step_params(tools[node.tool], ctx.plan.by_id(node.subtask_id), shifted(node, attempt))

    policy = SearchPolicy(ctx.alpha, ctx.threshold, attempts, opts.lazy, label, step_key, params_of)
    result: SearchResult[StepNode, TurnState] = yield from iter_search(
        graph, START, GOAL, estimate, execute, policy, start
    )
    observe = opts.observer or ctx.observe
    for obs in result.observations:
        if not obs.cached:
            observe(obs, params_of(obs.node, obs.attempt))
    return result
