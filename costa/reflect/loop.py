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
merge is recorded in the `Reflection` event (`merged`). S is the mean of the scores of the dimensions that have a
vote for the subtask's kind (`costa.reflect.votes`: an AUC ≥ 0.75 separating right from wrong on real photos); when
none has, reflection is advisory for that subtask — the experts' scores are shown, nothing is accepted, rejected or
retried on them, and the step's checks and the calibration alone decide. A subtask whose kept result differs from the
search's makes every later subtask run again on the new image (a local search each).
"""

from __future__ import annotations

from collections.abc import Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from costa.checks import CheckContext
from costa.config import Settings
from costa.constraints import kept_mask
from costa.events import Event, ExpertDropped, Reflection, ReflectionKept, ReflectionRetry
from costa.models.control import run_stoppable
from costa.reflect.experts import Evidence, ProtectedRegion, offline_experts
from costa.reflect.protocol import ExpertJudgement, Protocol, aggregate, load_protocol
from costa.reflect.retries import Attempt, Candidate, ChainFilter, Tried, any_chain, negatives, retry_candidates
from costa.reflect.vlm_experts import MergedFeedback, VlmPanel, vlm_panel
from costa.reflect.votes import ReflectionVotes, load_votes
from costa.turn.graphs import subtask_graph
from costa.turn.phase import subtask_results
from costa.turn.records import PhaseResult, SubtaskResult, TurnState, summarise
from costa.turn.search import SearchOptions, TurnContext, run_search
from costa.types import EditState


@dataclass
class Reflected:
    """What reflection kept: per-subtask results in order (the kept attempts), the final image, what retries cost,
    the subtasks left with no result after an earlier subtask's retry changed the image (id → why), and whether
    every subtask's kept attempt was accepted (S ≥ τ_sr)."""

    done: list[SubtaskResult]
    image: np.ndarray
    quality: float
    ok: bool
    extra_seconds: float = 0.0
    extra_executions: int = 0
    kept: dict[str, Attempt] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


@dataclass
class Reflector:
    """The experts and protocol for one turn."""

    protocol: Protocol
    offline: tuple[Any, ...]
    vlm: VlmPanel
    votes: ReflectionVotes

    @classmethod
    def for_settings(cls, settings: Settings) -> Reflector:
        """The table's protocol (`settings.reflection_table`, else the shipped one), its offline and VLM experts, and
        the votes table (`settings.reflection_votes`, else tool_tables/reflection_votes.csv)."""
        protocol = load_protocol(settings.reflection_table)
        votes = load_votes(settings.reflection_votes)
        return cls(protocol, offline_experts(protocol), vlm_panel(settings, protocol), votes)

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


def reflect_turn(
    ctx: TurnContext, phase: PhaseResult, image: np.ndarray, memory: Any = None
) -> Generator[Event, None, Reflected]:
    """Reflect on (and retry) every subtask the search phase served, in its order; see the module docstring.

    `image` is the turn's input; `memory` the session's `costa.reflect.memory.SessionMemory` (earlier turns'
    regions are protected and their summary is the history the experts read), or None."""
    return (yield from _TurnReflection(ctx, phase, image, memory).run())


class _TurnReflection:
    """One turn's reflection, subtask by subtask (the state that carries from one subtask to the next)."""

    def __init__(self, ctx: TurnContext, phase: PhaseResult, image: np.ndarray, memory: Any) -> None:
        self.ctx, self.phase = ctx, phase
        self.reflector = Reflector.for_settings(ctx.services.settings)
        self.p = self.reflector.protocol
        self.history: tuple[str, ...] = tuple(memory.summary_lines()) if memory is not None else ()
        self.protected: list[ProtectedRegion] = list(memory.protected(image.shape[:2])) if memory is not None else []
        self.first = {d.subtask_id: d for d in phase.done}
        checked = phase.state.verifications if phase.state is not None else ()
        self.verified = {v[0]: v for v in checked}
        self.current = image
        self.kept = kept_mask(phase.state.edit) if phase.state is not None else None
        self.redo = False  # an earlier subtask kept another attempt than the search's: later ones run again
        self.advisory: dict[str, str] = {}  # subtask id → why no expert's dimension votes for its kind
        self.out = Reflected([], image, 1.0, True)

    def run(self) -> Generator[Event, None, Reflected]:
        for d in self.phase.done:
            yield from self.subtask(d.subtask_id)
        self.out.image = self.current
        return self.out

    def subtask(self, sid: str) -> Generator[Event, None, None]:
        first = yield from self.first_attempt(sid)
        if first is None:
            self.out.ok = False
            self.out.failed[sid] = "no tool path passed its checks on the image after the earlier retries"
            return
        attempts = yield from self.attempts(first)
        best = max(attempts, key=lambda x: (x.score, -x.number))
        accepted = best.score >= self.p.tau_sr or sid in self.advisory
        if sid in self.advisory:
            why = f"reflection is advisory here (S {best.score:.1f} shown, not used): {self.advisory[sid]}"
        elif accepted:
            why = f"attempt {best.number} scored {best.score:.1f} ≥ {self.p.tau_sr:g}"
        else:
            worst = [f.text for f in negatives(best)][:2]
            why = (
                f"no attempt reached {self.p.tau_sr:g} in {len(attempts)} attempt(s); kept attempt {best.number} "
                f"(score {best.score:.1f})" + (": " + "; ".join(worst) if worst else "")
            )
            self.out.ok = False
        yield ReflectionKept(sid, best.number, best.score, accepted, why)
        self.keep(sid, best, first)

    def keep(self, sid: str, best: Attempt, first: Attempt) -> None:
        """Record the kept attempt; the image after it is where the next subtask starts."""
        self.out.kept[sid] = best
        self.redo = self.redo or best is not first
        subtask = self.ctx.plan.by_id(sid)
        spec = self.ctx.services.tables.subtasks[subtask.kind]
        after = best.final.after
        result = summarise(spec.produces, after, best.final.output)
        self.out.quality *= best.quality
        image = after.image if spec.edits_image else None
        if image is not None:
            changed = _changed_region(self.current, image)
            if changed is not None:
                self.protected.append(ProtectedRegion(0, sid, f"{subtask.kind} {sid}", changed))
            self.current = image
        self.out.done.append(SubtaskResult(sid, subtask.kind, best.tools, best.quality, best.final, result, image))

    def first_attempt(self, sid: str) -> Generator[Event, None, Attempt | None]:
        """The search phase's result, or — after an earlier subtask kept another attempt — a new local search."""
        d = self.first.get(sid)
        if not self.redo and d is not None:
            return Attempt(1, d.final, self.current, d.tools, d.quality, verification=self.verified.get(sid))
        return (yield from self.search(sid, any_chain, 0, (1, "search")))

    def attempts(self, first: Attempt) -> Generator[Event, None, list[Attempt]]:
        """Judge, then retry with the feedback's action, until one is accepted or τ_it attempts are spent."""
        sid = first.final.subtask_id
        attempts: list[Attempt] = []
        tried = Tried()
        a: Attempt | None = first
        while a is not None:
            attempts.append(a)
            tried.add(a)
            decision, candidates = yield from self.judge(a, tried)
            if decision != "retry":
                ask = next((c for c in candidates if c.action == "ask_user"), None)
                if ask is not None:
                    yield ReflectionRetry(sid, a.number + 1, "ask_user", ask.reason)
                break
            a = yield from self.retry(a, candidates, tried)
        return attempts

    def judge(self, a: Attempt, tried: Tried) -> Generator[Event, None, tuple[str, list[Candidate]]]:
        """Every expert on attempt `a` (in a worker: Stop does not wait for an endpoint); the decision and, for a
        retry, the actions that can run."""
        sid = a.final.subtask_id
        evidence = self.evidence(a)
        judged = lambda: self.reflector.judge(evidence, sid, a.number)  # noqa: E731
        judgements, events, merged = run_stoppable(
            judged, self.ctx.executor.control, sid, "reflection", a.number, exclusive=False
        )
        yield from events
        a.judgements, a.merged = judgements, merged
        kind = self.ctx.plan.by_id(sid).kind
        calibrated = self.reflector.votes.calibrate(judgements, kind)
        if calibrated.score is None:  # no dimension separates right from wrong for this kind: shown, never used
            a.score = round(aggregate(judgements), 3)
            decision = "accept"
            self.advisory[sid] = f"no expert's score separates right from wrong for {kind} on real photos"
        else:  # the voting dimensions' mean: the aggregator never scores
            a.score = round(calibrated.score, 3)
            decision, _ = self.p.decide(a.score, a.number)
        candidates: list[Candidate] = []
        if decision == "retry":
            candidates = retry_candidates(self.ctx, self.p, a, self.protected, tried)
            if not any(c.action != "ask_user" for c in candidates):
                decision = "best_of"
        merged_event = merged.to_event() if merged is not None else {}
        yield Reflection(
            sid, a.number, tuple(j.to_event() for j in judgements), a.score, decision, merged_event,
            calibrated=calibrated.score is not None, silent=calibrated.silent,
        )  # fmt: skip
        return decision, candidates

    def retry(self, a: Attempt, candidates: list[Candidate], tried: Tried) -> Generator[Event, None, Attempt | None]:
        """The next attempt: the first candidate action that produces one."""
        sid = a.final.subtask_id
        for c in candidates:
            yield ReflectionRetry(sid, a.number + 1, c.action, c.reason)
            if c.action == "ask_user":
                return None
            if c.restored is not None:
                tried.restored = True
                return c.restored
            nxt = yield from self.search(sid, c.allow, c.offset, (a.number + 1, c.action))
            if nxt is not None:
                return nxt
        return None

    def search(
        self, sid: str, allow: ChainFilter, offset: int, attempt: tuple[int, str]
    ) -> Generator[Event, None, Attempt | None]:
        """A local A* for one subtask from the current image over the chains `allow` keeps (the turn's one search:
        the memo replays what already ran on this image); None when no chain is left or none passes."""
        ctx = self.ctx
        subtask = ctx.plan.by_id(sid)
        tg = subtask_graph(ctx.services, subtask, ctx.region, allow, ready=ctx.ready)
        if not any(getattr(n, "final", False) for n in tg.graph):
            return None
        # a retry keeps what the instruction keeps unchanged, like the search it repeats (costa.constraints)
        start = TurnState(EditState(self.current, {"kept": self.kept} if self.kept is not None else {}))
        result = yield from run_search(ctx, tg.graph, start, SearchOptions(offset=offset))
        self.out.extra_seconds += result.spent_seconds
        self.out.extra_executions += result.executions
        found = subtask_results(ctx, result, (sid,))
        if not found:
            return None
        d = found[0]
        state = result.state
        verification = next((v for v in state.verifications if v[0] == sid), None) if state is not None else None
        number, action = attempt
        return Attempt(number, d.final, self.current, d.tools, d.quality, action, offset, verification=verification)

    def evidence(self, a: Attempt) -> Evidence:
        services = self.ctx.services
        subtask = self.ctx.plan.by_id(a.final.subtask_id)
        spec = services.tables.subtasks[subtask.kind]
        f = a.final
        check = self.ctx.executor.ctx or CheckContext(reader=services.reader)
        protected, history = tuple(self.protected), self.history
        return Evidence(subtask, spec, f.produced, a.start, f.before, f.after, f.output, check, protected, history)


def _changed_region(before: np.ndarray, after: np.ndarray) -> np.ndarray | None:
    if before.shape != after.shape:
        return None
    mask = np.abs(before.astype(np.int16) - after.astype(np.int16)).max(axis=2) > 12
    return mask if mask.any() else None
