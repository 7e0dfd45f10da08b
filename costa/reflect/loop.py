"""Reflect on each finished subtask and retry it with the experts' feedback (IMAGAgent's protocol, our actions).

`reflect_turn` runs after the turn's search found a path. For each subtask in the path's order it judges the attempt
with every expert (offline always, VLM when configured), emits a `Reflection` event and decides: S ≥ τ_sr accepts;
otherwise the negative feedback picks an action the engine can take —

- ``other_path``: a new local search for the subtask that excludes every tool chain already rejected;
- ``next_params``: the rejected chain again, its final tool starting further along its retry schedule;
- ``other_grounder``: chains whose first tool (the grounder) differs from the ones tried;
- ``restore_protected``: the attempt with earlier edits' regions (outside this target) put back as they were;
- ``ask_user``: the target is the problem — stop and ask the user to point at it;

up to τ_it attempts in all; then the best-scoring attempt is kept and labelled (`ReflectionKept`). When the table
has an aggregator and VLM experts judged the attempt, the LLM aggregator merges their feedback first: its fixes (each
may name one of these actions) come before the experts' own negatives, so they pick the retry and its reason; the
merge is recorded in the `Reflection` event (`merged`). S is always the experts' arithmetic mean. A subtask whose
kept result differs from the search's makes every later subtask run again on the new image (a local search each).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from costa.checks import CheckContext
from costa.events import (
    Event,
    ExpertDropped,
    Reflection,
    ReflectionKept,
    ReflectionRetry,
    SubtaskDone,
)
from costa.masks import dilate_mask
from costa.models.control import run_stoppable
from costa.reflect.experts import Evidence, ProtectedRegion, offline_experts
from costa.reflect.protocol import ExpertJudgement, Feedback, Protocol, aggregate, load_protocol
from costa.reflect.vlm_experts import MergedFeedback, VlmPanel, vlm_panel
from costa.types import EditState, Plan, ToolOutput

if TYPE_CHECKING:
    from costa.agent import FinalStep, TurnState, UserRegion
    from costa.graph import StepNode
    from costa.search import Outcome, SearchResult
    from costa.services import Services


@dataclass
class Attempt:
    """One attempt at a subtask: its final step, the tools and checked quality of its path, and how it was judged."""

    number: int
    final: FinalStep
    start: np.ndarray
    tools: tuple[str, ...]
    quality: float
    action: str = "search"
    offset: int = 0
    judgements: tuple[ExpertJudgement, ...] = ()
    score: float = 0.0
    merged: MergedFeedback | None = None


@dataclass
class Reflected:
    """What the turn reports after reflection: per-subtask results, the final image, and what retries cost."""

    done: list[SubtaskDone]
    image: np.ndarray
    results: dict[str, str]
    quality: float
    ok: bool
    extra_seconds: float = 0.0
    extra_executions: int = 0
    kept: dict[str, Attempt] = field(default_factory=dict)


@dataclass
class Reflector:
    """The experts and protocol for one turn."""

    protocol: Protocol
    offline: tuple[Any, ...]
    vlm: VlmPanel

    @classmethod
    def for_services(cls, services: Services) -> Reflector:
        """The table's protocol (COSTA_REFLECTION_TABLE names another file), its offline and VLM experts."""
        import os
        from pathlib import Path

        table = os.environ.get("COSTA_REFLECTION_TABLE")
        protocol = load_protocol(Path(table) if table else None)
        return cls(protocol, offline_experts(protocol), vlm_panel(services.settings, protocol))

    def judge(
        self, evidence: Evidence, sid: str, attempt: int
    ) -> tuple[tuple[ExpertJudgement, ...], list[Event], MergedFeedback | None]:
        """Every expert's judgement of one attempt, the aggregator's merge of their feedback (None when no aggregator
        is configured or no VLM expert judged), and the events (LLM calls, dropped experts) they produced."""
        events: list[Event] = []
        judgements = [expert.judge(evidence) for expert in self.offline]
        if self.vlm.experts:
            with ThreadPoolExecutor(max_workers=len(self.vlm.experts)) as pool:
                verdicts = list(pool.map(lambda ex: ex.judge(evidence), self.vlm.experts))
            for expert, v in zip(self.vlm.experts, verdicts, strict=True):
                events.extend(v.calls)
                if v.judgement is None:
                    events.append(ExpertDropped(sid, attempt, expert.name, v.dropped))
                else:
                    judgements.append(v.judgement)
        merged = None
        if self.vlm.aggregator is not None and any(j.kind == "vlm" for j in judgements):
            merged = self.vlm.aggregator.merge(judgements, self.protocol.actions)
            events.extend(merged.calls)
        return tuple(judgements), events, merged


def _evidence(
    services: Services,
    plan: Plan,
    a: Attempt,
    protected: Sequence[ProtectedRegion],
    history: Sequence[str],
    ctx: CheckContext | None = None,
) -> Evidence:
    subtask = plan.by_id(a.final.subtask_id)
    spec = services.tables.subtasks[subtask.kind]
    return Evidence(
        subtask,
        spec,
        a.final.produced,
        a.start,
        a.final.before,
        a.final.after,
        a.final.output,
        ctx or CheckContext(reader=services.reader),
        tuple(protected),
        tuple(history),
    )


def _local_search(
    services: Services,
    plan: Plan,
    sid: str,
    region: UserRegion,
    image: np.ndarray,
    executor: Callable[..., Any],
    alpha: float,
    threshold: float,
    allow: Callable[[tuple[str, ...]], bool],
    offset: int = 0,
) -> Generator[Event, None, SearchResult[StepNode, TurnState] | None]:
    """A local A* for one subtask from `image` over the chains `allow` keeps; None when no chain is left."""
    from costa.agent import TurnState
    from costa.graph import GOAL, START, StepNode, build_subtask_graph, step_key
    from costa.search import iter_search

    tables = services.tables
    subtask = plan.by_id(sid)
    tg = build_subtask_graph(tables, subtask, services.is_ready_fn(), frozenset(region.artifacts()))
    graph = tg.graph.copy()
    graph.remove_nodes_from([n for n in tg.graph if isinstance(n, StepNode) and n.final and not allow(n.tools)])
    if not any(isinstance(n, StepNode) and n.final for n in graph):
        return None

    def execute(node: StepNode, state: TurnState, attempt: int) -> Outcome[TurnState]:
        top = tables.tools[node.tool].max_attempts - 1
        return executor(node, state, min(attempt + (offset if node.final else 0), top))

    def attempts(node: StepNode) -> int:
        n = tables.tools[node.tool].max_attempts
        return max(1, n - offset) if node.final else n

    result: SearchResult[StepNode, TurnState] = yield from iter_search(
        graph,
        START,
        GOAL,
        estimate=lambda n: services.estimates.get(n.tool, n.kind),
        execute=execute,
        alpha=alpha,
        threshold=threshold,
        max_attempts=attempts,
        initial_state=TurnState(EditState(image)),
        label=lambda n: (n.subtask_id, n.tool) if isinstance(n, StepNode) else ("", str(n)),
        key=step_key,
    )
    for obs in result.observations:
        services.estimates.observe(obs.node.tool, obs.node.kind, obs.seconds, obs.quality)
    return result


def _restore(a: Attempt, protected: Sequence[ProtectedRegion], number: int) -> Attempt | None:
    """The attempt with protected regions outside its own target put back from the image before it."""
    from costa.agent import FinalStep

    after = a.final.after.image
    if after.shape != a.start.shape:
        return None
    target = a.final.output.edited_region
    if target is None or target.shape != after.shape[:2]:
        target = np.abs(a.start.astype(np.int16) - after.astype(np.int16)).max(axis=2) > 12
    keep = np.zeros(after.shape[:2], bool)
    for r in protected:
        if r.mask.shape == keep.shape:
            keep |= r.mask
    keep &= ~dilate_mask(target.astype(bool), 1)
    if not keep.any() or np.array_equal(after[keep], a.start[keep]):
        return None
    fixed = after.copy()
    fixed[keep] = a.start[keep]
    out = a.final.output
    output = ToolOutput(
        fixed, dict(out.artifacts), out.edited_region, (out.notes + "; earlier edits restored").strip("; ")
    )
    final = FinalStep(
        a.final.subtask_id, a.final.tools, a.final.before, a.final.before.with_output(output), output, a.final.produced
    )
    return Attempt(number, final, a.start, a.tools, a.quality, "restore_protected", a.offset)


def _attempt_from(
    result: SearchResult[StepNode, TurnState] | None, sid: str, start: np.ndarray, number: int, action: str, offset: int
) -> Attempt | None:
    if result is None or not result.found:
        return None
    state = cast("TurnState", result.state)  # found: the chosen path's last state, never None
    finals = [f for f in state.finals if f.subtask_id == sid]
    if not finals:
        return None
    quality = float(np.prod(result.step_quality)) if result.step_quality else result.quality
    return Attempt(number, finals[-1], start, finals[-1].tools, quality, action, offset)


def _changed_region(before: np.ndarray, after: np.ndarray) -> np.ndarray | None:
    if before.shape != after.shape:
        return None
    mask = np.abs(before.astype(np.int16) - after.astype(np.int16)).max(axis=2) > 12
    return mask if mask.any() else None


def reflect_turn(
    services: Services,
    plan: Plan,
    image: np.ndarray,
    region: UserRegion,
    result: SearchResult[StepNode, TurnState],
    executor: Callable[..., Any],
    alpha: float,
    threshold: float,
    memory: Any = None,
) -> Generator[Event, None, Reflected]:
    """Reflect on (and retry) every subtask of the search's chosen path; see the module docstring."""
    from costa.agent import _summarise

    reflector = Reflector.for_services(services)
    control = getattr(executor, "control", None)  # the turn's Stop flag (None in benchmarks and tests)
    p = reflector.protocol
    tables = services.tables
    order = list(dict.fromkeys(n.subtask_id for n in result.path))
    finals = {f.subtask_id: f for f in cast("TurnState", result.state).finals}  # a found result's last state
    quality_of: dict[str, float] = {}
    for n, q in zip(result.path, result.step_quality, strict=True):
        quality_of[n.subtask_id] = quality_of.get(n.subtask_id, 1.0) * q
    history: tuple[str, ...] = tuple(memory.summary_lines()) if memory is not None else ()
    protected: list[ProtectedRegion] = list(memory.protected(image.shape[:2])) if memory is not None else []
    current = image
    redo = False
    out = Reflected([], image, {}, 1.0, True)
    for sid in order:
        kind = plan.by_id(sid).kind
        spec = tables.subtasks[kind]
        first: Attempt | None = None
        if not redo and sid in finals:
            f = finals[sid]
            first = Attempt(1, f, current, f.tools, quality_of.get(sid, 0.0))
        else:
            res = yield from _local_search(
                services, plan, sid, region, current, executor, alpha, threshold, lambda t: True
            )
            if res is not None:
                out.extra_seconds += res.spent_seconds
                out.extra_executions += res.executions
            first = _attempt_from(res, sid, current, 1, "search", 0) if res is not None else None
        if first is None:
            out.ok = False
            out.results[sid] = "not done: no tool path passed its checks on the image after the earlier retries"
            continue
        attempts: list[Attempt] = []
        a: Attempt | None = first
        rejected: set[tuple[str, ...]] = set()
        grounders: set[str] = set()
        used_restore = False
        while a is not None:
            attempts.append(a)
            rejected.add(a.tools)
            if len(a.tools) > 1:
                grounders.add(a.tools[0])
            ev_in = _evidence(services, plan, a, protected, history, getattr(executor, "ctx", None))
            judged = lambda e=ev_in, n=a.number, s=sid: reflector.judge(e, s, n)  # noqa: E731
            # the experts and the aggregator (OCR, VLM requests) in a worker: Stop ends the turn without waiting for
            # an endpoint
            judgements, events, merged = run_stoppable(judged, control, sid, "reflection", a.number, exclusive=False)
            yield from events
            a.judgements = judgements
            a.merged = merged
            a.score = round(aggregate(judgements), 3)  # the experts' mean: the aggregator never scores
            decision, _ = p.decide(a.score, a.number)
            candidates: list[_Candidate] = []
            if decision == "retry":
                candidates = _candidates(
                    p, services, plan, sid, region, a, protected, rejected, grounders, used_restore
                )
                if not any(c.action != "ask_user" for c in candidates):
                    decision = "best_of"
            yield Reflection(
                sid,
                a.number,
                tuple(j.to_event() for j in judgements),
                a.score,
                decision,
                merged.to_event() if merged is not None else {},
            )
            if decision != "retry":
                ask = next((c for c in candidates if c.action == "ask_user"), None)
                if ask is not None:
                    yield ReflectionRetry(sid, a.number + 1, "ask_user", ask.reason)
                break
            nxt: Attempt | None = None
            for c in candidates:
                yield ReflectionRetry(sid, a.number + 1, c.action, c.reason)
                if c.action == "ask_user":
                    break
                if c.restored is not None:
                    used_restore = True
                    nxt = c.restored
                    break
                res = yield from _local_search(
                    services, plan, sid, region, current, executor, alpha, threshold, c.allow, c.offset
                )
                if res is not None:
                    out.extra_seconds += res.spent_seconds
                    out.extra_executions += res.executions
                nxt = _attempt_from(res, sid, current, a.number + 1, c.action, c.offset) if res is not None else None
                if nxt is not None:
                    break
            a = nxt
        best = max(attempts, key=lambda x: (x.score, -x.number))
        accepted = best.score >= p.tau_sr
        if accepted:
            why = f"attempt {best.number} scored {best.score:.1f} ≥ {p.tau_sr:g}"
        else:
            worst = [f.text for f in _negatives(best)][:2]
            why = (
                f"no attempt reached {p.tau_sr:g} in {len(attempts)} attempt(s); kept attempt {best.number} "
                f"(score {best.score:.1f})" + (": " + "; ".join(worst) if worst else "")
            )
            out.ok = False
        yield ReflectionKept(sid, best.number, best.score, accepted, why)
        out.kept[sid] = best
        if best is not first or redo:
            redo = redo or best is not first
        after = best.final.after
        out.results[sid] = _summarise(spec.produces, after, best.final.output)
        out.quality *= best.quality
        if spec.edits_image:
            changed = _changed_region(current, after.image)
            if changed is not None:
                protected.append(ProtectedRegion(0, sid, f"{kind} {sid}", changed))
            current = after.image
        out.done.append(
            SubtaskDone(
                sid, kind, best.tools, best.quality, out.results[sid], after.image if spec.edits_image else None
            )
        )
    out.image = current
    return out


@dataclass(frozen=True)
class _Candidate:
    action: str
    reason: str
    allow: Callable[[tuple[str, ...]], bool] = lambda t: True
    offset: int = 0
    restored: Attempt | None = None


def _candidates(
    p: Protocol,
    services: Services,
    plan: Plan,
    sid: str,
    region: UserRegion,
    a: Attempt,
    protected: Sequence[ProtectedRegion],
    rejected: set[tuple[str, ...]],
    grounders: set[str],
    used_restore: bool,
) -> list[_Candidate]:
    """The retry actions that can run for attempt `a`, in the order its negative feedback and the table give."""
    tables = services.tables
    negatives = _negatives(a)
    out: list[_Candidate] = []
    for action in _actions(negatives, p):
        reason = next((f.text for f in negatives if f.action == action), negatives[0].text if negatives else "")
        if action == "ask_user":
            if plan.by_id(sid).target:
                out.append(_Candidate(action, reason or "the target may be the wrong one"))
            continue
        if action == "restore_protected":
            cand = None if used_restore else _restore(a, protected, a.number + 1)
            if cand is not None:
                out.append(_Candidate(action, reason, restored=cand))
            continue
        if action == "other_path":
            r = frozenset(rejected)
            allow: Callable[[tuple[str, ...]], bool] = lambda t, r=r: t not in r  # type: ignore[misc]  # noqa: E731
            offset = 0
        elif action == "other_grounder":
            if not grounders:
                continue
            g = frozenset(grounders)
            allow = lambda t, g=g: len(t) > 1 and t[0] not in g  # type: ignore[misc]  # noqa: E731
            offset = 0
        else:  # next_params
            offset = a.offset + 1
            if tables.tools[a.tools[-1]].max_attempts <= offset:
                continue
            allow = lambda t, c=a.tools: t == c  # type: ignore[misc]  # noqa: E731
        if _any_chain(services, plan, sid, region, allow):
            out.append(_Candidate(action, reason, allow, offset))
    return out


def _negatives(a: Attempt) -> list[Feedback]:
    """The feedback a retry acts on: the aggregator's fixes first (when it merged), then every expert's negatives."""
    merged = list(a.merged.fix) if a.merged is not None else []
    return [*merged, *(f for j in a.judgements for f in j.negative)]


def _actions(negatives: Sequence[Feedback], p: Protocol) -> list[str]:
    """Actions to try: those the negative feedback asks for (in order), then the table's default order; only the
    table's `actions` (a protocol that lists fewer never takes the others)."""
    asked = [f.action for f in negatives if f.action]
    return [x for x in dict.fromkeys([*asked, *p.actions]) if x in p.actions]


def _any_chain(
    services: Services, plan: Plan, sid: str, region: UserRegion, allow: Callable[[tuple[str, ...]], bool]
) -> bool:
    from costa.graph import subtask_chains

    subtask = plan.by_id(sid)
    chains = subtask_chains(services.tables, subtask.kind, frozenset(region.artifacts()), services.is_ready_fn())
    return any(allow(c) for c in chains)
