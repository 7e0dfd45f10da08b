"""Reflection's attempts and the retry actions the engine can take for a rejected one.

An `Attempt` is one result for one subtask (the search phase's, or a retry's) with how the experts judged it. For a
rejected attempt, `retry_candidates` lists the actions that can run, in the order its negative feedback and the
table give: ``other_path`` (a new local search excluding every rejected chain), ``next_params`` (the rejected chain
again, its final tool further along its retry schedule), ``other_grounder`` (chains whose grounder differs),
``restore_protected`` (the attempt with earlier edits outside this target put back), ``ask_user`` (point at it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from costa.graph import subtask_chains
from costa.masks import dilate_mask
from costa.reflect.experts import ProtectedRegion
from costa.reflect.protocol import ExpertJudgement, Feedback, Protocol
from costa.reflect.vlm_experts import MergedFeedback
from costa.turn.records import FinalStep, VerificationEntry
from costa.turn.search import TurnContext
from costa.types import ToolOutput

#: A tool chain filter: which complete chains a retry's local search may take.
ChainFilter = Callable[[tuple[str, ...]], bool]


def any_chain(chain: tuple[str, ...]) -> bool:
    return True


@dataclass
class Attempt:
    """One attempt at a subtask: its final step, the tools and checked quality of its path, how it was judged, and
    what its grounder verified along its path."""

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
    verification: VerificationEntry | None = None


@dataclass(frozen=True)
class Candidate:
    """A retry action that can run: its reason (the feedback it acts on), which chains it may search, how far along
    the retry schedule the final step starts, or the restored attempt itself."""

    action: str
    reason: str
    allow: ChainFilter = any_chain
    offset: int = 0
    restored: Attempt | None = None


@dataclass
class Tried:
    """What a subtask's retries have used so far: rejected chains, grounders, whether earlier edits were restored."""

    rejected: set[tuple[str, ...]] = field(default_factory=set)
    grounders: set[str] = field(default_factory=set)
    restored: bool = False

    def add(self, a: Attempt) -> None:
        self.rejected.add(a.tools)
        if len(a.tools) > 1:
            self.grounders.add(a.tools[0])


def negatives(a: Attempt) -> list[Feedback]:
    """The feedback a retry acts on: the aggregator's fixes first (when it merged), then every expert's negatives."""
    merged = list(a.merged.fix) if a.merged is not None else []
    return [*merged, *(f for j in a.judgements for f in j.negative)]


def actions(feedback: Sequence[Feedback], p: Protocol) -> list[str]:
    """Actions to try: those the negative feedback asks for (in order), then the table's default order; only the
    table's `actions` (a protocol that lists fewer never takes the others)."""
    asked = [f.action for f in feedback if f.action]
    return [x for x in dict.fromkeys([*asked, *p.actions]) if x in p.actions]


def restore(a: Attempt, protected: Sequence[ProtectedRegion], number: int) -> Attempt | None:
    """The attempt with protected regions outside its own target put back from the image before it."""
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
    note = (out.notes + "; earlier edits restored").strip("; ")
    output = ToolOutput(fixed, dict(out.artifacts), out.edited_region, note)
    f = a.final
    final = FinalStep(f.subtask_id, f.tools, f.before, f.before.with_output(output), output, f.produced)
    return Attempt(
        number, final, a.start, a.tools, a.quality, "restore_protected", a.offset, verification=a.verification
    )


def retry_candidates(
    ctx: TurnContext, p: Protocol, a: Attempt, protected: Sequence[ProtectedRegion], tried: Tried
) -> list[Candidate]:
    """The retry actions that can run for attempt `a`, in the order its negative feedback and the table give."""
    subtask = ctx.plan.by_id(a.final.subtask_id)
    tools = ctx.services.tables.tools
    chains = subtask_chains(ctx.services.tables, subtask.kind, frozenset(ctx.region.artifacts()), ctx.ready)
    feedback = negatives(a)
    out: list[Candidate] = []
    for action in actions(feedback, p):
        reason = next((f.text for f in feedback if f.action == action), feedback[0].text if feedback else "")
        if action == "ask_user":
            if subtask.target:
                out.append(Candidate(action, reason or "the target may be the wrong one"))
            continue
        if action == "restore_protected":
            cand = None if tried.restored else restore(a, protected, a.number + 1)
            if cand is not None:
                out.append(Candidate(action, reason, restored=cand))
            continue
        allow: ChainFilter
        offset = 0
        if action == "other_path":
            rejected = frozenset(tried.rejected)
            allow = lambda t, r=rejected: t not in r  # type: ignore[misc]  # noqa: E731
        elif action == "other_grounder":
            if not tried.grounders:
                continue
            g = frozenset(tried.grounders)
            allow = lambda t, g=g: len(t) > 1 and t[0] not in g  # type: ignore[misc]  # noqa: E731
        else:  # next_params
            offset = a.offset + 1
            if tools[a.tools[-1]].max_attempts <= offset:
                continue
            allow = lambda t, c=a.tools: t == c  # type: ignore[misc]  # noqa: E731
        if any(allow(c) for c in chains):
            out.append(Candidate(action, reason, allow, offset))
    return out
