"""Fast–slow execution (FaSTA*): per subtask, the best applicable learned subroutine first, the local A* on failure.

For each subtask in plan order: compute its context features on the current image; take the applicable rules (all
activation conditions hold) and run the one minimising C^α·(2 − Q)^(2 − α) (`costa.search.score`) step by step,
each step checked exactly as the search checks it (`costa.agent._Executor`), first attempt only (its retries too
when no other path completes the subtask, as the fallback could do nothing else). If a step fails
(error or quality below the threshold), the lazy A* over that subtask's own tool graph
(`costa.graph.build_subtask_graph`) runs from the image before the subtask without the failed step, the rule's
passing prefix replayed at no cost (those runs are paid already); only if no other path passes does a second search
get the failed step back (its retries), everything measured so far replayed again at no cost. So a failed rule costs
its own runs and the fallback pays only for what the rule did not try. Events: the search's own, plus `RuleHit` and
`Fallback` (with the reason); every tool run and subtask trace (one per step, its attempts together) is recorded in
the store; after each turn the task counter moves and every K = 20 tasks induction and verification run once
(`FastSlowRuntime.task_done`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Hashable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, cast

import numpy as np

from costa.agent import TurnState, UserRegion, _Executor, step_params
from costa.checks import CheckContext
from costa.events import (
    ErrorEvent,
    Event,
    Fallback,
    InductionDone,
    PlanReady,
    Retry,
    RuleHit,
    SubgraphBuilt,
    SubtaskDone,
    ToolFinished,
    ToolStarted,
    TurnDone,
)
from costa.graph import GOAL, START, StepNode, build_subtask_graph, step_key
from costa.search import Outcome, SearchResult, check_alpha, iter_search
from costa.subroutines.features import ContextFeatures, compute_features
from costa.subroutines.observations import ObservationLog, StoredEstimates, Trace
from costa.subroutines.rules import Rule, RuleTable, load_shipped_rules
from costa.types import EditState, Plan, Subtask

log = logging.getLogger(__name__)

#: Induction runs once every K finished tasks (tasks, not subtasks).
INDUCE_EVERY = 20


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


@dataclass
class FastSlowRuntime:
    """What fast–slow mode keeps between turns: the rule table, the observation log and induction policy.

    `induce` (tasks seen, runtime) → InductionDone runs induction + verification; None disables it (then
    `python -m costa mine` does it on demand). `executor_class` lets a benchmark replay tool runs.
    """

    services: Any
    log: ObservationLog | None = None
    shipped: tuple[Rule, ...] = ()
    k: int = INDUCE_EVERY
    induce: Callable[[int, FastSlowRuntime], InductionDone | None] | None = None
    executor_class: type[_Executor] = _Executor
    #: OCR engine the checks use (default the services' one; a benchmark may pass a memoising one).
    check_reader: Any = None
    #: `costa.vlm.VlmFeaturer` when an endpoint is configured: adds the paper's VLM context labels to the features.
    featurer: Any = None
    #: False: learn nothing from these turns (no traces, tool runs, estimates or task count) — for evaluation.
    record: bool = True
    _table: RuleTable | None = field(default=None, repr=False)
    _ready: Callable[[str], bool] | None = field(default=None, repr=False)

    def is_ready(self) -> Callable[[str], bool]:
        """Which tools may run (asked once per runtime: readiness does not change within a process)."""
        if self._ready is None:
            self._ready = self.services.is_ready_fn()
        return self._ready

    @classmethod
    def from_services(cls, services: Any, store: Any = None, induce: bool = True) -> FastSlowRuntime:
        """A runtime on `store` (default: the store under settings.home), with persisted estimates."""
        from costa.store import Store
        from costa.subroutines.observations import persist_estimates

        store = store or Store(services.settings.home)
        log = ObservationLog(store, buffered=True)  # written once per turn
        if not isinstance(services.estimates, StoredEstimates):
            persist_estimates(services, store)
        assert isinstance(services.estimates, StoredEstimates)
        services.estimates.log = log
        runtime = cls(services, log, load_shipped_rules(services.tables))
        from costa.llm_client import LlmClient, LlmConfig

        config = LlmConfig.from_settings(services.settings)
        if config is not None:
            from costa.vlm import VlmFeaturer

            runtime.featurer = VlmFeaturer(LlmClient(config), services.tables.subtasks)
        if induce:
            from costa.subroutines.mining import induce_and_verify

            runtime.induce = induce_and_verify
        return runtime

    def table(self) -> RuleTable:
        if self._table is None:
            self._table = self.log.rule_table(self.shipped) if self.log is not None else RuleTable(self.shipped)
        return self._table

    def refresh(self) -> None:
        self._table = None

    def task_done(self) -> InductionDone | None:
        """Count one finished task; run induction when K tasks have passed since the last one (once per K)."""
        if self.log is None or not self.record:
            return None
        self.log.flush()
        tasks = self.log.bump("tasks")
        last = self.log.counter("induced_at_tasks")
        if tasks - last < self.k or self.induce is None:
            return None
        self.log.set_counter("induced_at_tasks", tasks)
        done = self.induce(tasks, self)
        self.refresh()
        return done


def _label(n: object) -> tuple[str, str]:
    return (n.subtask_id, n.tool) if isinstance(n, StepNode) else ("", str(n))


def run_subtask(
    runtime: FastSlowRuntime,
    executor: _Executor,
    subtask: Subtask,
    state: TurnState,
    region: UserRegion,
    features: ContextFeatures,
    alpha: float,
    threshold: float,
    table: RuleTable | None = None,
    task: str = "",
    record: bool = True,
) -> Generator[Event, None, SubtaskRun]:
    """Serve one subtask fast (best applicable rule) or slow (local A*); the generator returns a `SubtaskRun`."""
    services = runtime.services
    tables = services.tables
    table = table or runtime.table()
    spent, runs = 0.0, 0
    t_choose = time.perf_counter()
    rule = table.choose(features, alpha)
    choose_seconds = time.perf_counter() - t_choose
    measured: dict[Hashable, tuple[float, float]] = {}
    fallback_reason = "no rule applies"
    failed_tool: str | None = None
    feats = features.to_dict()
    # What the rule measured, to hand to the local A* on a fallback: (step key, attempt) → (parent state, outcome).
    # Those runs are paid for already: the search replays them at 0 s instead of running the tools again.
    replay: dict[tuple[Hashable, int], tuple[TurnState, Outcome[TurnState], float]] = {}
    failed_key: Hashable | None = None
    if rule is not None:
        yield RuleHit(
            subtask.id,
            rule.id,
            rule.tools,
            table.version,
            rule.score(alpha),
            tuple(c.describe() for c in rule.conditions),
        )
        current, ok, quality, step_total = state, True, 1.0, 0.0
        for i, tool in enumerate(rule.tools):
            node = StepNode((subtask.id,), rule.tools[: i + 1], subtask.kind, final=i == len(rule.tools) - 1)
            # First attempt only where the subtask has another path: where it fails, the traces say another path is
            # the better next try than this step's retries (which the fallback still has, after every other path).
            # Where no other path exists, the retries run here, as the fallback would run them anyway.
            attempt, attempts = 0, 1
            while attempt < attempts:
                params = step_params(tables.tools[tool], subtask, attempt)
                yield ToolStarted(subtask.id, tool, attempt, params)
                out = executor(node, current, attempt)
                runs += 1
                spent += out.seconds
                step_total += out.seconds
                if out.stopped:  # the user's Stop: nothing failed, nothing is learned, no fallback
                    yield ToolFinished(
                        subtask.id, tool, attempt, out.seconds, 0.0, False, (out.error or "stopped",), True
                    )
                    why = out.error or "stopped"
                    return SubtaskRun(subtask, False, None, (), spent, 0.0, runs, False, None, why, features, rule.id)
                replay[(step_key(node), attempt)] = (current, out, out.seconds)
                q = 0.0 if out.error else out.quality
                passed = out.error is None and q >= threshold
                reasons = out.reasons if out.error is None else (out.error, *out.reasons)
                yield ToolFinished(subtask.id, tool, attempt, out.seconds, q, passed, reasons)
                if runtime.record:  # every real tool run is an observation (verification samples too), not evaluation's
                    _observe(services, tool, subtask.kind, out.seconds, q, passed, feats, params)
                why = "" if passed else out.error or f"quality {q:.2f} below threshold {threshold:.2f}"
                if passed:
                    break
                if attempt == 0 and not _has_alternative(runtime, subtask, region, step_key(node)):
                    attempts = max(1, tables.tools[tool].max_attempts)
                attempt += 1
                if attempt < attempts:
                    yield Retry(subtask.id, tool, attempt, why)
            measured[step_key(node)] = (0.0, q)  # sunk: a passing prefix costs the fallback nothing more
            if not passed:
                ok = False
                failed_tool = tool
                failed_key = step_key(node)
                fallback_reason = f"rule {rule.id}: {tool} failed its check ({why})"
                if record and runtime.log is not None:
                    runtime.log.record_trace(
                        Trace(
                            task, subtask.kind, rule.tools[: i + 1], step_total, q, False, why, feats, "fast", rule.id
                        )
                    )
                break
            quality *= q
            current = cast(TurnState, out.state)  # a passing step hands on its state
        if ok:
            if record and runtime.log is not None:
                runtime.log.record_trace(
                    Trace(task, subtask.kind, rule.tools, step_total, quality, True, "", feats, "fast", rule.id)
                )
            return SubtaskRun(
                subtask,
                True,
                current,
                rule.tools,
                spent,
                quality,
                runs,
                True,
                rule.id,
                "",
                features,
                rule.id,
                choose_seconds,
            )
    tried = rule.id if rule else None
    yield Fallback(subtask.id, fallback_reason, tried, failed_tool)
    t_slow = time.perf_counter()
    inside = [0.0]  # seconds inside tool runs and their checks, to leave out of the search's own overhead
    calls: list[tuple[StepNode, int, bool, float]] = []  # (node, attempt, replayed, seconds really paid), in order
    stopped = [False]  # the user's Stop ended an attempt (no observation of it; no second search)

    def timed(node: StepNode, parent: TurnState, attempt: int) -> Outcome[TurnState]:
        known = replay.get((step_key(node), attempt))
        if known is not None and known[0] is parent:  # the failed rule ran this already: its result, at no cost
            calls.append((node, attempt, True, known[2]))
            return replace(known[1], seconds=0.0)
        t = time.perf_counter()
        try:
            out = executor(node, parent, attempt)
        finally:
            inside[0] += time.perf_counter() - t
        if out.stopped:
            stopped[0] = True
            return out
        calls.append((node, attempt, False, out.seconds))
        replay[(step_key(node), attempt)] = (parent, out, out.seconds)  # a second search does not pay for it again
        return out

    tg = build_subtask_graph(
        tables,
        subtask,
        runtime.is_ready(),
        frozenset(region.artifacts()),
        why_not=lambda t: services.why_not(t) or "ready",
    )
    if subtask.id in tg.unavailable:
        why = tg.unavailable[subtask.id]
        return SubtaskRun(subtask, False, None, (), spent, 0.0, runs, False, None, why, features, tried)

    def estimate(n: StepNode) -> tuple[float, float]:
        return measured.get(step_key(n)) or services.estimates.get(n.tool, n.kind)

    def local_search(graph: Any) -> Generator[Event, None, SearchResult[StepNode, TurnState]]:
        yield SubgraphBuilt((subtask.id,), graph.number_of_nodes(), graph.number_of_edges(), tg.tools())
        search = iter_search(
            graph,
            START,
            GOAL,
            estimate=estimate,
            execute=timed,
            alpha=alpha,
            threshold=threshold,
            max_attempts=lambda n: tables.tools[n.tool].max_attempts,
            initial_state=state,
            lazy=True,
            label=_label,
            key=step_key,
        )
        held: ToolStarted | None = None
        while True:  # the search's events, less the replayed runs (they were reported when they ran)
            try:
                ev = next(search)
            except StopIteration as stop:
                return cast(SearchResult[StepNode, TurnState], stop.value)
            if isinstance(ev, ToolStarted):
                held = ev
                continue
            if isinstance(ev, ToolFinished | Retry) and calls and calls[-1][2] and not stopped[0]:
                held = None
                continue
            if held is not None:
                yield held
                held = None
            yield ev

    # The failed rule's step is left out: every other path first. Only when none passes does the search get it back
    # (its retries), with everything measured so far replayed at no cost.
    # Paths an applicable contrastive rule replaces (the traces say they fail in this context) wait there too.
    skip = {failed_key} if failed_key is not None else set()
    skip |= {(subtask.id, r.replaces) for r in table.applicable(features) if r.replaces}
    graph = tg.graph
    if skip:
        graph = tg.graph.copy()
        graph.remove_nodes_from([n for n in list(graph) if isinstance(n, StepNode) and step_key(n) in skip])
    result = yield from local_search(graph)
    observations = list(result.observations)
    if not result.found and skip and not stopped[0]:
        first = result
        result = yield from local_search(tg.graph)
        observations += result.observations
        result = replace(result, spent_seconds=first.spent_seconds + result.spent_seconds)
        result = replace(result, executions=first.executions + result.executions)
    replayed = sum(1 for c in calls if c[2])
    spent += result.spent_seconds
    runs += result.executions - replayed
    overhead = choose_seconds + time.perf_counter() - t_slow - inside[0]
    # One trace per step the search ran (its attempts together), with the seconds of the path up to it.
    prefix_seconds: dict[tuple[str, ...], float] = {}
    for i, (obs, (node, attempt, was_replayed, paid)) in enumerate(zip(observations, calls, strict=True)):
        n = obs.node
        if runtime.record and not was_replayed:
            params = step_params(tables.tools[n.tool], subtask, attempt)
            _observe(services, n.tool, n.kind, obs.seconds, obs.quality, obs.passed, feats, params)
        step = prefix_seconds.get(n.tools[:-1], 0.0) if attempt == 0 else prefix_seconds[n.tools]
        prefix_seconds[n.tools] = step + paid
        last_attempt = i + 1 == len(calls) or calls[i + 1][0] is not node
        if not last_attempt or was_replayed:
            continue
        if record and runtime.log is not None and (n.final or not obs.passed):
            runtime.log.record_trace(
                Trace(task, n.kind, n.tools, prefix_seconds[n.tools], obs.quality, obs.passed, "", feats, "slow")
            )
    if not result.found:
        return SubtaskRun(
            subtask, False, None, (), spent, 0.0, runs, False, None, result.reason, features, tried, overhead
        )
    path = tuple(n.tool for n in result.path)
    return SubtaskRun(
        subtask,
        True,
        result.state,
        path,
        spent,
        result.quality,
        runs,
        False,
        None,
        fallback_reason,
        features,
        tried,
        overhead,
    )


def _has_alternative(runtime: FastSlowRuntime, subtask: Subtask, region: UserRegion, key: Hashable) -> bool:
    """Whether the subtask's tool graph has a path to the goal that avoids the step `key` (milliseconds)."""
    import networkx as nx

    tg = build_subtask_graph(runtime.services.tables, subtask, runtime.is_ready(), frozenset(region.artifacts()))
    graph = tg.graph.copy()
    graph.remove_nodes_from([n for n in list(graph) if isinstance(n, StepNode) and step_key(n) == key])
    return START in graph and GOAL in graph and nx.has_path(graph, START, GOAL)


def _observe(
    services: Any, tool: str, kind: str, seconds: float, quality: float, passed: bool, feats: dict, params: dict
) -> None:
    est = services.estimates
    if isinstance(est, StoredEstimates):
        est.observe_run(tool, kind, seconds, quality, passed, feats, params)
    else:
        est.observe(tool, kind, seconds, quality)


def run_fast_slow(
    services: Any,
    image: np.ndarray,
    plan: Plan,
    alpha: float | None = None,
    threshold: float | None = None,
    region: UserRegion | None = None,
    runtime: FastSlowRuntime | None = None,
    task: str = "",
    control: Any = None,
) -> Iterator[Event]:
    """Execute `plan` subtask by subtask, fast first; the last event is always `TurnDone`.

    `control` (a `costa.models.control.TurnControl`) is the turn's Stop flag, seen by every tool call.

    Unlike the whole-plan search, a subtask that no path serves is reported and the later subtasks still run on the
    image as it is (the turn is then partial, `ok=False`).
    """
    t0 = time.perf_counter()
    alpha = services.settings.alpha if alpha is None else alpha
    threshold = services.settings.threshold if threshold is None else threshold
    check_alpha(alpha)
    region = region or UserRegion()
    edit = EditState(image)
    region.validate(edit.width, edit.height)
    runtime = runtime or FastSlowRuntime.from_services(services)
    yield PlanReady(plan)
    if not plan.subtasks:
        yield ErrorEvent("nothing to do: no edit was recognised")
        yield TurnDone(time.perf_counter() - t0, 0.0, 0, 0.0, None, ok=False)
        return
    executor = runtime.executor_class(
        services, plan, region, CheckContext(reader=runtime.check_reader or services.reader), control
    )
    state = TurnState(edit)
    spent, runs, quality = 0.0, 0, 1.0
    results: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for s in plan.subtasks:
        features = compute_features(state.edit.image, s, region.boxes)
        if runtime.featurer is not None:
            vlm = runtime.featurer.features(s, state.edit.image)
            yield from vlm.calls
            labels = tuple(sorted((k, str(v)) for k, v in vlm.values.items() if isinstance(v, str)))
            features = replace(features, labels=labels)
        run: SubtaskRun = yield from run_subtask(
            runtime, executor, s, state, region, features, alpha, threshold, task=task, record=runtime.record
        )
        spent += run.seconds
        runs += run.executions
        if not run.ok or run.state is None:
            skipped[s.id] = run.reason
            yield ErrorEvent(f"{s.id} ({s.kind}) was not done: {run.reason}")
            continue
        quality *= run.quality
        done = dict(run.state.results)
        results[s.id] = done.get(s.id, "")
        images = dict(run.state.images)
        state = TurnState(EditState(run.state.edit.image), run.state.results, run.state.images)
        yield SubtaskDone(s.id, s.kind, run.path, run.quality, results[s.id], images.get(s.id))
    induced = runtime.task_done()
    if induced is not None:
        yield induced
    ok = not skipped
    image_out = state.edit.image if len(skipped) < len(plan.subtasks) else None
    yield TurnDone(time.perf_counter() - t0, spent, runs, quality if ok else 0.0, image_out, results, ok, skipped)
