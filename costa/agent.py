"""Run one turn: a validated plan on an image → tool subgraph → lazy A* with checks → typed events.

The CLI, the app and the benchmarks all consume `run_turn`'s event stream. The search core stays pure; this module is
where it meets real tools: `_Executor` runs a tool with the attempt's parameters, times it, checks the result and hands
the search an `Outcome`. Tool failures (`ToolError`) become recorded outcomes the search routes around; anything else
is a bug and propagates.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from costa.checks import CheckContext, check_step
from costa.errors import GroundingError, InputError, ToolError
from costa.events import (
    ErrorEvent,
    Event,
    PlanReady,
    PointingNeeded,
    SubgraphBuilt,
    SubtaskDone,
    TargetUnverified,
    TurnDone,
)
from costa.graph import GOAL, START, StepNode, ToolGraph, build_plan_graph, step_key
from costa.models.control import ToolStoppedError, TurnControl, run_stoppable
from costa.planner.validate import plan_param_problems
from costa.search import Outcome, SearchResult, check_alpha, iter_search
from costa.services import Services
from costa.targets import Verification, findable_by, ground_advice
from costa.types import Box, EditState, Mask, Plan, Point, Subtask, ToolOutput, ToolSpec


@dataclass(frozen=True)
class UserRegion:
    """What the user pointed at: boxes, brush masks, clicks. Becomes artifacts every subtask may start from."""

    boxes: tuple[Box, ...] = ()
    masks: tuple[Mask, ...] = ()
    points: tuple[Point, ...] = ()

    def artifacts(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.boxes:
            out["boxes"] = self.boxes
        if self.masks:
            out["masks"] = self.masks
        if self.points:
            out["points"] = self.points
        return out

    def validate(self, width: int, height: int) -> None:
        for b in self.boxes:
            if b.x < 0 or b.y < 0 or b.x2 > width or b.y2 > height:
                raise InputError(f"box {b.x},{b.y},{b.w},{b.h} is outside the {width}x{height} image")
        for m in self.masks:
            if m.data.shape != (height, width):
                raise InputError(f"mask is {m.data.shape[1]}x{m.data.shape[0]} but the image is {width}x{height}")
            if not m.data.any():
                raise InputError("the mask is empty: mark the region to edit")
        for p in self.points:
            if not (0 <= p.x < width and 0 <= p.y < height):
                raise InputError(f"point {p.x},{p.y} is outside the {width}x{height} image")


@dataclass(frozen=True, eq=False)
class FinalStep:
    """A subtask's last step on a path: what reflection judges (the state before and after it, the tool's output)."""

    subtask_id: str
    tools: tuple[str, ...]
    before: EditState
    after: EditState
    output: ToolOutput
    produced: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class TurnState:
    """The search's opaque state: the edit state plus per-subtask results gathered along this path."""

    edit: EditState
    results: tuple[tuple[str, str], ...] = ()
    images: tuple[tuple[str, np.ndarray], ...] = ()  # (subtask id, image after it) for subtasks that edit the image
    finals: tuple[FinalStep, ...] = ()  # each subtask's final step along this path, in order
    #: (subtask id, what its grounder verified, the candidate region it found) along this path
    verifications: tuple[tuple[str, Verification, np.ndarray | None], ...] = ()


@dataclass
class _Executor:
    services: Services
    plan: Plan
    region: UserRegion
    ctx: CheckContext
    control: TurnControl | None = None
    #: Why tools raised, in order, without repeats: (tool id, reason); and what would ground an unfound target.
    failures: dict[tuple[str, str], None] = field(default_factory=dict)
    advice: dict[str, None] = field(default_factory=dict)
    #: Deterministic refusals, (tool id, subtask id) → error: a retry with other parameters would refuse the same way.
    refused: dict[tuple[str, str], str] = field(default_factory=dict)
    #: Edit a target that was found but not verified (the user accepted the candidate) instead of stopping there.
    accept_unverified: bool = False
    #: Subtask id → (what its grounder verified, the candidate region) for targets found but not verified.
    unverified: dict[str, tuple[Verification, np.ndarray | None]] = field(default_factory=dict)

    def _record(self, tool: str, error: ToolError) -> None:
        if isinstance(error, GroundingError):
            self.failures[(tool, error.reason)] = None
            if error.advice:
                self.advice[error.advice] = None
        else:
            self.failures[(tool, str(error))] = None

    def failure_summary(self) -> str:
        """What the tools reported when they failed, and what would ground an unfound target ("" when nothing)."""
        text = "; ".join(f"{tool}: {why}" for tool, why in self.failures)
        if self.advice:
            text += ". " + " ".join(f"{a}." for a in self.advice)
        return text

    def __call__(self, node: StepNode, parent: TurnState, attempt: int) -> Outcome[TurnState]:
        tables = self.services.tables
        spec = tables.tools[node.tool]
        subtask = self.plan.by_id(node.subtask_id)
        before = parent.edit
        if len(node.tools) == 1:  # a subtask starts from the image and what the user pointed at, not stale artifacts
            before = EditState(before.image, self.region.artifacts())
        params = step_params(spec, subtask, attempt)
        refusal = self.refused.get((node.tool, subtask.id))
        if refusal is not None:  # the same words, the same refusal: not run again
            return Outcome(
                0.0, 0.0, error=f"{node.tool}: not retried, the refusal does not depend on parameters: {refusal}"
            )
        tool = self.services.tool(node.tool)
        try:  # loading a model once per process is not the tool's per-call cost; Stop does not wait for it either
            run_stoppable(tool.ensure_loaded, self.control, node.subtask_id, node.tool, attempt)
        except ToolStoppedError as e:
            return Outcome(0.0, 0.0, error=f"{node.tool}: {e}", stopped=True)
        except ToolError as e:
            return Outcome(0.0, 0.0, error=f"{node.tool}: {e}")
        if self.control is not None and self.control.stopped():
            return Outcome(0.0, 0.0, error=f"{node.tool}: not run, the turn was stopped", stopped=True)
        t0 = time.perf_counter()
        try:  # in a worker thread when the turn can be stopped: Stop ends the wait at once (costa.models.control)
            call = lambda: self.services.runner.run(tool, before, subtask, params)  # noqa: E731
            output = run_stoppable(call, self.control, node.subtask_id, node.tool, attempt)
        except ToolStoppedError as e:  # the user's Stop, not the tool's failure
            return Outcome(time.perf_counter() - t0, 0.0, error=f"{node.tool}: {e}", stopped=True)
        except ToolError as e:
            self._record(node.tool, e)
            if isinstance(e, GroundingError) and e.deterministic:
                self.refused[(node.tool, subtask.id)] = e.reason
            return Outcome(time.perf_counter() - t0, 0.0, error=f"{node.tool}: {e}")
        seconds = time.perf_counter() - t0
        if self.control is not None and self.control.stopped():  # pressed as it returned: not checked, not used
            return Outcome(seconds, 0.0, error=f"{node.tool}: result dropped, the turn was stopped", stopped=True)
        after = before.with_output(output)
        record, candidate = output_verification(output, after)
        if record is not None and not record.ok and not self.accept_unverified:
            # Not verified: no edit of it will be accepted, so none is paid for; the candidate is kept to show.
            self.unverified.setdefault(subtask.id, (record, candidate))
            if any(e.aspect == "class" for e in record.missing):  # no parameter makes a colour into a car
                self.refused[(node.tool, subtask.id)] = f"target not verified ({record.summary()})"
            return Outcome(seconds, 0.0, error=f"{node.tool}: target not verified — {record.summary()}")
        try:  # a check may read text (OCR, a second or more on a photo): Stop does not wait for it either
            kind = tables.subtasks[node.kind]
            check = lambda: check_step(self.ctx, kind, subtask, spec.outputs, before, after, output)  # noqa: E731
            verdict = run_stoppable(check, self.control, node.subtask_id, f"check:{node.tool}", attempt)
        except ToolStoppedError as e:
            return Outcome(seconds, 0.0, error=f"check of {node.tool}: {e}", stopped=True)
        except ToolError as e:
            return Outcome(seconds, 0.0, error=f"check of {node.tool} could not run: {e}")
        for reason in verdict.reasons:
            if "point better" in reason:  # the user's pointing, not the tool, was the problem: say so at the end
                self.advice[reason[:1].upper() + reason[1:]] = None
        results, images, finals = parent.results, parent.images, parent.finals
        verifications = _with_verification(parent.verifications, subtask, output, after, self.region, node.final)
        if node.final:
            results = (*results, (node.subtask_id, _summarise(tables.subtasks[node.kind].produces, after, output)))
            if tables.subtasks[node.kind].edits_image:
                images = (*images, (node.subtask_id, after.image))
            finals = (*finals, FinalStep(node.subtask_id, node.tools, before, after, output, spec.outputs))
        state = TurnState(after, results, images, finals, verifications)
        return Outcome(seconds, verdict.quality, state, verdict.reasons)


def output_verification(output: Any, after: EditState) -> tuple[Verification | None, np.ndarray | None]:
    """The `Verification` on the masks or boxes a step output, and the union of those as a bool (H, W) region."""
    for kind in ("masks", "boxes"):
        items = tuple(output.artifacts.get(kind) or ())
        found = next((i.verification for i in items if getattr(i, "verification", None) is not None), None)
        if found is not None:
            candidate = np.zeros((after.height, after.width), dtype=bool)
            for item in items:
                data = item.data if kind == "masks" else item.to_mask(after.height, after.width)
                if data.shape == candidate.shape:
                    candidate |= data
            return found, candidate
    return None, None


def _unverified_event(plan: Plan, sid: str, record: Verification, candidate: np.ndarray | None) -> TargetUnverified:
    return TargetUnverified(
        sid,
        plan.by_id(sid).target or "",
        record.method,
        tuple(e.describe() for e in record.verified),
        tuple(e.describe() for e in record.missing),
        record.summary(),
        candidate,
    )


def _with_verification(
    known: tuple[tuple[str, Verification, np.ndarray | None], ...],
    subtask: Subtask,
    output: Any,
    after: EditState,
    region: UserRegion,
    final: bool,
) -> tuple[tuple[str, Verification, np.ndarray | None], ...]:
    """`known` plus what this step's grounder verified (the record on the masks or boxes it output), or, at the end
    of a subtask with a target that no grounder verified, "pointed by the user" when the user pointed."""
    found, candidate = output_verification(output, after)
    if found is None and final and subtask.target and region.artifacts() and all(k != subtask.id for k, _, _ in known):
        from costa.grounding import pointed

        found = pointed("user", subtask.target)
    if found is None:
        return known
    return (*(k for k in known if k[0] != subtask.id), (subtask.id, found, candidate))


def step_params(spec: ToolSpec, subtask: Subtask, attempt: int) -> dict[str, Any]:
    """Parameters a tool runs with on `attempt` (0 = first try): its retry schedule, overridden by the plan's params."""
    params = spec.params_for_attempt(attempt)
    params.update({k: v for k, v in subtask.params.items() if k in params})
    return params


def _summarise(produces: str, after: EditState, output: Any) -> str:
    value = after.artifacts.get(produces)
    if produces in ("text", "label", "caption") and isinstance(value, str):
        return value
    if produces == "text_regions" and value is not None:
        return "; ".join(f"{r.text!r} at {r.box.x},{r.box.y},{r.box.w},{r.box.h}" for r in value)
    if produces == "boxes" and value is not None:
        return "; ".join(f"{b.label or 'object'} at {b.x},{b.y},{b.w},{b.h}" for b in value)
    if produces == "masks" and value is not None:
        return f"{len(value)} mask(s), {sum(m.area for m in value)} px"
    return output.notes or "edited"


def build_graph(services: Services, plan: Plan, region: UserRegion) -> ToolGraph:
    """The plan's tool subgraph; a grounder that cannot find a subtask's target by its words (the colour grounder
    for a target with no colour, the face detector for "the tower") is left out for that subtask."""
    given = {s.id: frozenset(region.artifacts()) for s in plan.subtasks}
    tools = services.tables.tools

    def can_serve(subtask: Subtask, tool_id: str) -> str | None:
        if not subtask.target or findable_by(tools[tool_id].family, subtask.target):
            return None
        return f"{tool_id} cannot find {subtask.target!r} ({tools[tool_id].family} grounding);"

    return build_plan_graph(
        services.tables,
        plan,
        services.is_ready_fn(),
        given,
        why_not=lambda t: services.why_not(t) or "ready",
        can_serve=can_serve,
    )


def pointing_needed(services: Services, plan: Plan, region: UserRegion) -> list[PointingNeeded]:
    """Before anything runs: the targets no ready tool can find by itself with what the user pointed at so far."""
    return _pointing_needed(plan, dict(build_graph(services, plan, region).unavailable))


def _pointing_needed(plan: Plan, unavailable: dict[str, str]) -> list[PointingNeeded]:
    """One `PointingNeeded` per target whose subtasks are unavailable only because no ready tool can find it."""
    by_target: dict[str, list[str]] = {}
    for sid, why in unavailable.items():
        sub = plan.by_id(sid)
        if sub.target and "cannot find" in why:
            by_target.setdefault(sub.target, []).append(sid)
    return [
        PointingNeeded(tuple(sids), target, f"no ready tool can find {target!r} by itself. {ground_advice(target)}")
        for target, sids in by_target.items()
    ]


def run_turn(
    services: Services,
    image: np.ndarray,
    plan: Plan,
    alpha: float | None = None,
    threshold: float | None = None,
    region: UserRegion | None = None,
    lazy: bool = True,
    graph: ToolGraph | None = None,
    mode: str | None = None,
    runtime: Any = None,
    reflect: bool | None = None,
    memory: Any = None,
    accept_unverified: bool = False,
    control: TurnControl | None = None,
) -> Iterator[Event]:
    """Execute `plan` on `image`, yielding events; the last event is always `TurnDone`.

    Args:
        alpha: cost/quality trade-off in [0, 2] (default from settings).
        threshold: quality a step's check must reach, in [0, 1] (default from settings).
        region: boxes/masks/points the user supplied.
        lazy: False runs every successor on expansion (the published behaviour; for benchmarks).
        graph: the tool graph `build_graph(services, plan, region)` already built for this turn (built here if None).
        accept_unverified: report a subtask whose target was found but not verified as done (the user accepted the
            candidate region); otherwise it is reported `TargetUnverified`, not done, and the turn is not ok.
        control: the turn's Stop flag and progress sink, seen by long tool calls (diffusion steps).
        mode: "lazy" / "eager" (whole-plan A*) or "fast-slow" (FaSTA*: learned subroutines first, local A* on
            failure; `runtime` is its `costa.subroutines.executor.FastSlowRuntime`, built from settings when None).
        reflect: judge each finished subtask with the reflection experts and retry on their feedback
            (`costa.reflect`); default from settings (COSTA_REFLECT, on).
        memory: the session's `costa.reflect.memory.SessionMemory` (earlier turns' regions are protected).
    """
    if mode == "fast-slow":
        from costa.subroutines.executor import run_fast_slow

        yield from run_fast_slow(services, image, plan, alpha, threshold, region, runtime, control=control)
        return
    lazy = lazy if mode is None else mode != "eager"
    t_start = time.perf_counter()
    alpha = services.settings.alpha if alpha is None else alpha
    threshold = services.settings.threshold if threshold is None else threshold
    check_alpha(alpha)
    if not 0.0 <= threshold <= 1.0:
        raise InputError(f"threshold must be in [0, 1], got {threshold}")
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
    yield SubgraphBuilt(
        tuple(runnable),
        tg.graph.number_of_nodes(),
        tg.graph.number_of_edges(),
        tg.tools(),
        tuple(tg.unavailable.items()),
    )
    skipped = dict(tg.unavailable)
    for ev in _pointing_needed(plan, skipped):
        yield ev
        for sid in ev.subtask_ids:
            skipped[sid] = ev.reason
    if not runnable:
        yield ErrorEvent("no subtask can run here: " + " | ".join(f"{k}: {v}" for k, v in skipped.items()))
        yield TurnDone(time.perf_counter() - t_start, 0.0, 0, 0.0, None, ok=False, skipped=skipped)
        return
    from costa.reflect.memo import MemoReader  # the same pixels are read once per turn (checks, then reflection)

    executor = _Executor(services, plan, region, CheckContext(reader=MemoReader(services.reader)), control)
    executor.accept_unverified = accept_unverified

    def label(n: object) -> tuple[str, str]:
        return (n.subtask_id, n.tool) if isinstance(n, StepNode) else ("", str(n))

    result: SearchResult[StepNode, TurnState] = yield from iter_search(
        tg.graph,
        START,
        GOAL,
        estimate=lambda n: services.estimates.get(n.tool, n.kind),
        execute=executor,
        alpha=alpha,
        threshold=threshold,
        max_attempts=lambda n: services.tables.tools[n.tool].max_attempts,
        initial_state=TurnState(state),
        lazy=lazy,
        label=label,
        key=step_key,
        params_of=lambda n, attempt: step_params(services.tables.tools[n.tool], plan.by_id(n.subtask_id), attempt),
    )
    for obs in result.observations:
        services.estimates.observe(obs.node.tool, obs.node.kind, obs.seconds, obs.quality)
    if not result.found:
        unverified: dict[str, str] = {sid: rec.summary() for sid, (rec, _) in executor.unverified.items()}
        for sid, (rec, cand) in executor.unverified.items():
            yield _unverified_event(plan, sid, rec, cand)
        why = executor.failure_summary()
        if unverified:  # the search stopped at a target it could not verify: that, not the checks, is the news
            yield ErrorEvent("the target was found but not verified, so nothing was edited; the image is unchanged")
        else:
            yield ErrorEvent(
                f"no tool path passed its checks: {result.reason}; the image is unchanged"
                + (f" — {why}" if why else "")
            )
        yield TurnDone(
            time.perf_counter() - t_start,
            result.spent_seconds,
            result.executions,
            0.0,
            None,
            ok=False,
            skipped=skipped,
            unverified=unverified,
        )
        return
    final = cast(TurnState, result.state)  # found: the chosen path's last state, never None
    if services.settings.reflect if reflect is None else reflect:
        from costa.reflect.loop import reflect_turn

        reflected = yield from reflect_turn(services, plan, image, region, result, executor, alpha, threshold, memory)
        yield from reflected.done
        yield TurnDone(
            time.perf_counter() - t_start,
            result.spent_seconds + reflected.extra_seconds,
            result.executions + reflected.extra_executions,
            reflected.quality,
            reflected.image,
            reflected.results,
            ok=not skipped and reflected.ok,
            skipped=skipped,
        )
        return
    results = dict(final.results)
    images = dict(final.images)
    steps = list(zip(result.path, result.step_quality, strict=True))
    checked = {sid: (v, cand) for sid, v, cand in final.verifications}
    unverified = {}
    for sid in [s for s in runnable]:
        mine = [(n, q) for n, q in steps if n.subtask_id == sid]
        quality = float(np.prod([q for _, q in mine])) if mine else 0.0
        record, candidate = checked.get(sid, (None, None))
        if record is not None and not record.ok:  # only when accepted: unaccepted ones never reach a path
            unverified[sid] = record.summary()
            yield _unverified_event(plan, sid, record, candidate)
            if not accept_unverified:
                continue
        yield SubtaskDone(
            sid, plan.by_id(sid).kind, tuple(n.tool for n, _ in mine), quality, results.get(sid, ""), images.get(sid)
        )
    yield TurnDone(
        time.perf_counter() - t_start,
        result.spent_seconds,
        result.executions,
        result.quality,
        final.edit.image,
        results,
        ok=not skipped and (accept_unverified or not unverified),
        skipped=skipped,
        unverified=unverified,
    )
