"""Fast–slow execution (FaSTA*): per subtask, the best applicable learned subroutine first, the local A* on failure.

The fast–slow search phase of a turn (`fast_slow_phase`), ended by the same ending as every mode
(`costa.turn.ending`). For each runnable subtask in plan order: compute its context features on the current image;
take the applicable rules (all activation conditions hold) and run the one minimising C^α·(2 − Q)^(2 − α)
(`costa.search.score`). The rule's chain runs as the turn's one search (`costa.turn.search.run_search`) over a graph
of that chain alone, every step checked as everywhere: first attempt only where the subtask has another path (the
traces say another path is the better next try than this step's retries), its retries too where none exists. If a
step fails, the lazy A* over the subtask's own tool graph runs from the image before the subtask without the failed
step (nor the paths an applicable contrastive rule says fail here), the rule's passing steps estimated at 0 s and
replayed by the turn's memo at 0 s (they are paid for); only if no other path passes does a second search get the
failed step back (its retries), everything measured so far replayed again at no cost. So a failed rule costs its own
runs and the fallback pays only for what the rule did not try. Leaving the failed step out is a bet, measured both
ways in `bench fasta --small` (one run each): with its retries kept in the fallback, α = 1 fast–slow was 0.9 %
cheaper than lazy A* instead of 24.7 % (a box-mask removal on a flat background fails at every attempt, each dearer
than the last, and skipping them is also how training finds the U²-Net path that serves those removals); the price
is a detour where a retry would have passed (one textured removal: 5.4 s through U²-Net where the fill's second
attempt took 0.9 s).
Events: the searches' own, plus `RuleHit` and `Fallback` (with the reason); every tool run (with its context features
and parameters) and subtask trace is recorded in the store; after each turn the task counter moves and every K = 20
tasks induction and verification run once (`FastSlowRuntime.task_done`).
"""

from __future__ import annotations

import time
from collections.abc import Generator, Hashable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import networkx as nx

from costa.events import (
    ErrorEvent,
    Event,
    Fallback,
    NodePopped,
    NodeQueued,
    PathChosen,
    RuleHit,
    SearchFailed,
    SubgraphBuilt,
    ToolFailed,
    ToolFinished,
)
from costa.graph import GOAL, START, StepNode, ToolGraph, step_key
from costa.search import Observation, SearchResult
from costa.subroutines.features import ContextFeatures, compute_features
from costa.subroutines.observations import StoredEstimates, Trace
from costa.subroutines.rules import Rule, RuleTable
from costa.turn.graphs import reaches_goal, subtask_graph
from costa.turn.phase import served_result
from costa.turn.records import PhaseResult, TurnState
from costa.turn.search import SearchOptions, TurnContext, run_search
from costa.types import Subtask

if TYPE_CHECKING:
    from costa.subroutines.runtime import FastSlowRuntime

#: Search events a rule's own chain does not show: `RuleHit` announced it, `Fallback` or `SubtaskDone` ends it.
_RULE_QUIET = (NodeQueued, NodePopped, PathChosen, SearchFailed)


@dataclass(frozen=True)
class SubtaskRun:
    """How one subtask went: served fast (by `rule_id`) or slow, its tool path, seconds spent, quality."""

    subtask: Subtask
    ok: bool
    state: TurnState | None
    path: tuple[str, ...]
    seconds: float  # every tool-second spent on this subtask: a failed subroutine's steps included
    quality: float
    executions: int
    fast: bool
    rule_id: str | None
    reason: str = ""  # fallback reason ("" when served fast), or why it failed
    features: ContextFeatures | None = None
    tried: str | None = None  # the rule tried first (served it, or failed and fell back); None: no rule applied
    search_seconds: float = 0.0  # wall seconds of choosing a rule, building the local graph and searching it (no tools)
    stopped: bool = False  # the user's Stop ended it


@dataclass
class _Served:
    """What one subtask's searches paid, kept across the rule's run and the fallback's searches."""

    ctx: TurnContext
    runtime: FastSlowRuntime
    subtask: Subtask
    features: ContextFeatures
    task: str
    record: bool
    spent: float = 0.0
    runs: int = 0
    paid: dict[tuple[Hashable, int], float] = field(default_factory=dict)  # (step key, attempt) → seconds paid

    def observer(self, obs: Observation[StepNode], params: dict[str, Any]) -> None:
        """Every real tool run is an observation (verification samples too), unless this runtime learns nothing."""
        self.paid[(step_key(obs.node), obs.attempt)] = obs.seconds
        if not self.runtime.record:
            return
        est = self.ctx.estimates
        node = obs.node
        if isinstance(est, StoredEstimates):
            feats = self.features.to_dict()
            est.observe_run(node.tool, node.kind, obs.seconds, obs.quality, obs.passed, feats, params)
        else:
            est.observe(node.tool, node.kind, obs.seconds, obs.quality)

    def trace(self, tools: tuple[str, ...], seconds: float, quality: float, success: bool, why: str, rule: str) -> None:
        """One subtask trace: "fast" with the rule that ran, "slow" for a local search's step."""
        if self.record and self.runtime.log is not None:
            feats = self.features.to_dict()
            mode, rule_id = ("fast", rule) if rule else ("slow", None)
            t = Trace(self.task, self.subtask.kind, tools, seconds, quality, success, why, feats, mode, rule_id)
            self.runtime.log.record_trace(t)

    def count(self, result: SearchResult[StepNode, TurnState]) -> None:
        self.spent += result.spent_seconds
        self.runs += result.executions


def serve_subtask(
    runtime: FastSlowRuntime,
    ctx: TurnContext,
    subtask: Subtask,
    state: TurnState,
    features: ContextFeatures,
    table: RuleTable | None = None,
    task: str = "",
    record: bool = True,
) -> Generator[Event, None, SubtaskRun]:
    """Serve one subtask fast (best applicable rule) or slow (local A*); the generator returns a `SubtaskRun`."""
    table = table or runtime.table()
    served = _Served(ctx, runtime, subtask, features, task, record)
    t_choose = time.perf_counter()
    rule = table.choose(features, ctx.alpha)
    choose_seconds = time.perf_counter() - t_choose
    reason, failed_tool, skip, measured = "no rule applies", None, set(), {}
    if rule is not None:
        conditions = tuple(c.describe() for c in rule.conditions)
        yield RuleHit(subtask.id, rule.id, rule.tools, table.version, rule.score(ctx.alpha), conditions)
        fast, failed = yield from _run_rule(served, rule, state)
        if fast.found:
            served.trace(rule.tools, fast.spent_seconds, fast.quality, True, "", rule.id)
            return _run(served, fast, True, rule.id, "", rule.id, choose_seconds)
        if fast.stopped:
            return SubtaskRun(subtask, False, None, (), served.spent, 0.0, served.runs, False, None, fast.reason,
                              features, rule.id, stopped=True)  # fmt: skip
        if failed is not None:
            node, why = failed
            failed_tool, reason = node.tool, f"rule {rule.id}: {node.tool} failed its check ({why})"
            skip.add(step_key(node))
            served.trace(node.tools, fast.spent_seconds, 0.0, False, why, rule.id)
        # A passing prefix is paid for: it costs the fallback nothing more (the memo replays it).
        measured = _passed_prefix(fast, failed)
    tried = rule.id if rule else None
    yield Fallback(subtask.id, reason, tried, failed_tool)
    return (yield from _fall_back(served, state, (skip, measured), (reason, tried), choose_seconds))


def _run_rule(
    served: _Served, rule: Rule, state: TurnState
) -> Generator[Event, None, tuple[SearchResult[StepNode, TurnState], tuple[StepNode, str] | None]]:
    """The rule's chain as a search over that chain alone; its failed step and why (None when it passed)."""
    ctx, subtask = served.ctx, served.subtask
    tools = ctx.services.tables.tools
    nodes = [
        StepNode((subtask.id,), rule.tools[: i + 1], subtask.kind, i == len(rule.tools) - 1)
        for i in range(len(rule.tools))
    ]
    graph = nx.DiGraph()
    nx.add_path(graph, [START, *nodes, GOAL])
    alternatives: dict[Hashable, bool] = {}

    def attempts(node: StepNode) -> int:
        key = step_key(node)
        if key not in alternatives:
            skip = (key,)
            alternatives[key] = reaches_goal(
                subtask_graph(ctx.services, subtask, ctx.region, skip=skip, ready=ctx.ready).graph
            )
        return 1 if alternatives[key] else max(1, tools[node.tool].max_attempts)

    failed: tuple[StepNode, str] | None = None
    last_why = ""
    search = run_search(ctx, graph, state, SearchOptions(attempts=attempts, observer=served.observer))
    while True:
        try:
            ev = next(search)
        except StopIteration as stop:
            result: SearchResult[StepNode, TurnState] = stop.value
            break
        if isinstance(ev, ToolFinished) and not ev.passed and not ev.stopped:
            last_why = (
                ev.reasons[0]
                if ev.quality == 0.0 and ev.reasons
                else (f"quality {ev.quality:.2f} below threshold {ctx.threshold:.2f}")
            )
        if isinstance(ev, ToolFailed):
            failed = (next(n for n in nodes if n.tool == ev.tool), last_why)
        if not isinstance(ev, _RULE_QUIET):
            yield ev
    served.count(result)
    return result, failed


def _passed_prefix(
    fast: SearchResult[StepNode, TurnState], failed: tuple[StepNode, str] | None
) -> dict[Hashable, tuple[float, float]]:
    """The rule's steps that passed before the failed one, at 0 s (their measured quality)."""
    if failed is None:
        return {}
    node = failed[0]
    out: dict[Hashable, tuple[float, float]] = {}
    for obs in fast.observations:
        if obs.passed and len(obs.node.tools) < len(node.tools):
            out[step_key(obs.node)] = (0.0, obs.quality)
    return out


def _fall_back(
    served: _Served,
    state: TurnState,
    known: tuple[set[Hashable], dict[Hashable, tuple[float, float]]],
    why: tuple[str, str | None],
    choose_seconds: float,
) -> Generator[Event, None, SubtaskRun]:
    """The local A* over the subtask's own graph, without the failed step and the paths contrastive rules replace
    first; with them back only when no other path passes."""
    ctx, subtask, runtime = served.ctx, served.subtask, served.runtime
    skip, measured = known
    reason, tried = why
    t_slow, busy0 = time.perf_counter(), ctx.executor.busy_seconds
    full = subtask_graph(ctx.services, subtask, ctx.region, ready=ctx.ready)
    if subtask.id in full.unavailable:
        return SubtaskRun(subtask, False, None, (), served.spent, 0.0, served.runs, False, None,
                          full.unavailable[subtask.id], served.features, tried)  # fmt: skip
    table = runtime.table()
    skip = skip | {(subtask.id, r.replaces) for r in table.applicable(served.features) if r.replaces}
    graph = subtask_graph(ctx.services, subtask, ctx.region, skip=skip, ready=ctx.ready) if skip else full
    opts = SearchOptions(measured=measured, observer=served.observer)
    result = yield from _local(served, graph, full, state, opts)
    if not result.found and skip and not result.stopped:
        result = yield from _local(served, full, full, state, opts)
    overhead = choose_seconds + time.perf_counter() - t_slow - (ctx.executor.busy_seconds - busy0)
    if not result.found:
        return SubtaskRun(subtask, False, None, (), served.spent, 0.0, served.runs, False, None, result.reason,
                          served.features, tried, overhead, result.stopped)  # fmt: skip
    return _run(served, result, False, None, reason, tried, overhead)


def _local(
    served: _Served, graph: ToolGraph, full: ToolGraph, state: TurnState, opts: SearchOptions
) -> Generator[Event, None, SearchResult[StepNode, TurnState]]:
    """One local search; its steps' traces (one per step it ran, its attempts together, with the seconds of the
    path up to it)."""
    g = graph.graph
    yield SubgraphBuilt((served.subtask.id,), g.number_of_nodes(), g.number_of_edges(), full.tools())
    result = yield from run_search(served.ctx, g, state, opts)
    served.count(result)
    prefix: dict[tuple[str, ...], float] = {}
    obs = result.observations
    for i, o in enumerate(obs):
        n = o.node
        paid = o.seconds if not o.cached else served.paid.get((step_key(n), o.attempt), 0.0)
        step = prefix.get(n.tools[:-1], 0.0) if o.attempt == 0 else prefix.get(n.tools, 0.0)
        prefix[n.tools] = step + paid
        last = i + 1 == len(obs) or obs[i + 1].node is not n
        if last and not o.cached and (n.final or not o.passed):
            served.trace(n.tools, prefix[n.tools], o.quality, o.passed, "", "")
    return result


def _run(
    served: _Served,
    result: SearchResult[StepNode, TurnState],
    fast: bool,
    rule_id: str | None,
    reason: str,
    tried: str | None,
    overhead: float,
) -> SubtaskRun:
    path = tuple(n.tool for n in result.path)
    s = served
    return SubtaskRun(s.subtask, True, result.state, path, s.spent, result.quality, s.runs, fast, rule_id, reason,
                      s.features, tried, overhead)  # fmt: skip


def fast_slow_phase(
    runtime: FastSlowRuntime, ctx: TurnContext, tg: ToolGraph, state: TurnState, task: str = ""
) -> Generator[Event, None, PhaseResult]:
    """Serve the plan's runnable subtasks one by one, fast first (see the module docstring).

    Unlike the whole-plan search, a subtask that no path serves is reported and the later subtasks still run on the
    image as it is; the shared ending then reports the turn as partial (or unverified)."""
    phase = PhaseResult()
    table = runtime.table()
    for s in ctx.plan.subtasks:
        if s.id in tg.unavailable:
            continue
        features = compute_features(state.edit.image, s, ctx.region.boxes)
        if runtime.featurer is not None:
            vlm = runtime.featurer.features(s, state.edit.image)
            yield from vlm.calls
            labels = tuple(sorted((k, str(v)) for k, v in vlm.values.items() if isinstance(v, str)))
            features = replace(features, labels=labels)
        run = yield from serve_subtask(runtime, ctx, s, state, features, table, task, runtime.record)
        phase.spent_seconds += run.seconds
        phase.executions += run.executions
        if run.stopped:
            phase.stopped, phase.reason = True, run.reason
            break
        if not run.ok or run.state is None:
            phase.failed[s.id] = run.reason
            if s.id not in ctx.executor.unverified:  # an unverified target is the ending's news, not a failure
                yield ErrorEvent(f"{s.id} ({s.kind}) was not done: {run.reason}")
            continue
        phase.done.append(served_result(ctx, run.state, s.id, run.path, run.quality))
        state = run.state.carried()
    induced = runtime.task_done()
    if induced is not None:
        yield induced
    if phase.done:
        phase.state = state
    elif not phase.reason:
        phase.reason = "; ".join(f"{k}: {v}" for k, v in phase.failed.items()) or "no subtask could be served"
    return phase
