"""Run one turn: a validated plan on an image → tool subgraph → a search phase → the shared ending → typed events.

The CLI, the app and the benchmarks all consume `run_turn`'s event stream. A turn is a search phase producing a
`PhaseResult` — the whole-plan lazy or eager A* (`costa.turn.phase`), or fast–slow subtask by subtask
(`costa.subroutines.executor`) — and then the one ending every mode shares (`costa.turn.ending`): unverified
targets, reflection, `SubtaskDone` per kept subtask, `TurnDone`. Every search of the turn runs its steps through one
`costa.turn.executor.StepExecutor`, so the turn's memo of tool runs sees them all.

Adding a search mode: its key in `costa.turn.records.MODES` and a phase function (context, graph, start state →
`PhaseResult`) chosen in `_phase` below.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Generator, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from costa.checks import CheckContext
from costa.errors import InputError
from costa.events import ErrorEvent, Event, PlanReady, SubgraphBuilt, TurnDone
from costa.graph import ToolGraph
from costa.models.control import TurnControl
from costa.planner.validate import plan_param_problems
from costa.reflect.memo import MemoReader
from costa.services import Services
from costa.turn.ending import Ending, end_turn
from costa.turn.executor import StepExecutor
from costa.turn.graphs import build_graph, pointing_events
from costa.turn.kept import keep_subtask_ids, locate_kept, without_keeps
from costa.turn.phase import whole_plan_phase
from costa.turn.records import PhaseResult, TurnConfig, TurnState, UserRegion, turn_numbers
from costa.turn.search import TurnContext
from costa.types import EditState, Plan


@dataclass(frozen=True, eq=False)
class TurnEnv:
    """What the caller lends a turn: the session's memory (earlier turns' regions are protected, their summary is
    reflection's history), the turn's Stop flag and progress sink (seen by long tool calls), the fast–slow runtime
    (`costa.subroutines.runtime.FastSlowRuntime`; opened on COSTA_HOME when a fast–slow turn has none), the step
    executor class of a whole-plan search (a benchmark replays tool runs; fast–slow uses its runtime's), and the name
    the turn's traces are stored under (default: a fresh one per turn)."""

    memory: Any = None
    control: TurnControl | None = None
    runtime: Any = None
    executor_class: type[StepExecutor] = StepExecutor
    task: str = ""


def run_turn(
    services: Services,
    image: np.ndarray,
    plan: Plan,
    config: TurnConfig | None = None,
    region: UserRegion | None = None,
    graph: ToolGraph | None = None,
    env: TurnEnv | None = None,
) -> Iterator[Event]:
    """Execute `plan` on `image`, yielding events; the last event is always `TurnDone`.

    Args:
        config: α, threshold, search mode, reflection and accepting unverified candidates (`TurnConfig`; None: the
            settings' defaults, lazy A*).
        region: boxes/masks/points the user supplied.
        graph: the tool graph `build_graph(services, plan, region)` already built for this turn (built here if None).
        env: the session's memory, the Stop flag, the fast–slow runtime (`TurnEnv`).

    Raises:
        InputError: α, threshold, the image, the region or the plan's parameters cannot be used (before anything
            runs).
    """
    t_start = time.perf_counter()
    cfg, env = config or TurnConfig(), env or TurnEnv()
    alpha, threshold = turn_numbers(services.settings, cfg.alpha, cfg.threshold)
    region = region or UserRegion()
    state = EditState(image)  # validates the image
    region.validate(state.width, state.height)
    problems = plan_param_problems(plan, services.tables)
    if problems:  # refused before any tool runs, naming the value and its declared range
        raise InputError("the plan's parameters cannot be used: " + "; ".join(problems))
    yield PlanReady(plan)
    if not plan.subtasks:
        reasons = "; ".join(f"{u.text!r}: {u.reason}" for u in plan.unsupported) or "no edit was recognised"
        yield ErrorEvent(f"nothing to do: {reasons}")
        yield TurnDone(time.perf_counter() - t_start, 0.0, 0, 0.0, None, ok=False)
        return
    tg = graph if graph is not None else build_graph(services, plan, region)
    runnable = [s.id for s in plan.subtasks if s.id not in tg.unavailable]
    n, e = tg.graph.number_of_nodes(), tg.graph.number_of_edges()
    yield SubgraphBuilt(tuple(runnable), n, e, tg.tools(), tuple(tg.unavailable.items()))
    skipped = dict(tg.unavailable)
    for ev in pointing_events(plan, skipped):
        yield ev
        for sid in ev.subtask_ids:
            skipped[sid] = ev.reason
    if not runnable:
        yield ErrorEvent("no subtask can run here: " + " | ".join(f"{k}: {v}" for k, v in skipped.items()))
        yield TurnDone(time.perf_counter() - t_start, 0.0, 0, 0.0, None, ok=False, skipped=skipped)
        return
    ctx, runtime = _context(services, plan, region, (alpha, threshold), cfg, env)
    if keep_subtask_ids(plan):  # "… and keep the trees unchanged": locate what is kept before the edits run
        state, unkept, _ = yield from locate_kept(ctx, plan, state)
        skipped.update(unkept)
        edits = without_keeps(plan)  # every mode's phase serves the edits only (the executor still knows them all)
        ctx, tg = replace(ctx, plan=edits), build_graph(services, edits, region)
    phase = yield from _phase(ctx, runtime, tg, state, (cfg.mode, env.task or f"turn-{uuid.uuid4().hex[:12]}"))
    reflect = services.settings.reflect if cfg.reflect is None else cfg.reflect
    ending = Ending(image, skipped, t_start, reflect, env.memory, cfg.accept_unverified)
    yield from end_turn(ctx, phase, ending)


def _context(
    services: Services,
    plan: Plan,
    region: UserRegion,
    numbers: tuple[float, float],
    cfg: TurnConfig,
    env: TurnEnv,
) -> tuple[TurnContext, Any]:
    """The turn's context (one executor: its memo, its OCR memo, what it refused), and the fast–slow runtime."""
    alpha, threshold = numbers
    runtime = None
    if cfg.mode == "fast-slow":
        from costa.subroutines.runtime import FastSlowRuntime

        runtime = env.runtime or FastSlowRuntime.from_services(services)
        ctx = runtime.context(plan, region, alpha, threshold, env.control)
    else:
        check = CheckContext(reader=MemoReader(services.reader))  # the same pixels are read once per turn
        executor = env.executor_class(services, plan, region, check, env.control)
        ready = services.is_ready_fn()
        ctx = TurnContext(services, plan, region, executor, alpha, threshold, services.estimates, ready)
    ctx.executor.accept_unverified = cfg.accept_unverified
    return ctx, runtime


def _phase(
    ctx: TurnContext, runtime: Any, tg: ToolGraph, state: EditState, mode_task: tuple[str, str]
) -> Generator[Event, None, PhaseResult]:
    """The search phase of the mode (and the task name fast–slow stores its traces under)."""
    mode, task = mode_task
    if mode == "fast-slow":
        from costa.subroutines.executor import fast_slow_phase

        return (yield from fast_slow_phase(runtime, ctx, tg, TurnState(state), task))
    return (yield from whole_plan_phase(ctx, tg, state, lazy=mode != "eager"))
