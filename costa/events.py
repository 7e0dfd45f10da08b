"""Typed events streamed by a turn: the CLI, the app and the benchmarks consume the same stream.

Pure records, no heavy imports: `costa.search` emits the search events itself. Every event has a `kind` string so
consumers can switch on it and serialise with `dataclasses.asdict`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

R = TypeVar("R")


@dataclass(frozen=True)
class Event:
    @property
    def kind(self) -> str:
        name = type(self).__name__
        return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


@dataclass(frozen=True)
class PlanReady(Event):
    plan: Any  # costa.types.Plan
    seconds: float = 0.0


@dataclass(frozen=True)
class LlmCall(Event):
    """One request to the LLM/VLM endpoint, successful or not: what the cost ledger shows.

    `purpose` says what it was for ("plan", "plan re-ask", "quality check", "context features"); `cost` is in the
    currency of COSTA_LLM_PRICE_IN/OUT and None when no price is configured; `error` is empty when `ok`.
    """

    purpose: str
    model: str
    seconds: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    ok: bool = True
    error: str = ""


@dataclass(frozen=True)
class PlannerFallback(Event):
    """The LLM planner could not produce a valid plan; the offline rule planner planned instead, for this reason."""

    reason: str


@dataclass(frozen=True)
class ClarificationNeeded(Event):
    """The instruction cannot be planned as written (e.g. two colours for one wall): ask the user this question."""

    question: str


@dataclass(frozen=True)
class SubgraphBuilt(Event):
    subtask_ids: tuple[str, ...]
    nodes: int
    edges: int
    tools: tuple[str, ...]
    unavailable: tuple[tuple[str, str], ...] = ()  # (subtask id, reason) for subtasks with no ready tool path


@dataclass(frozen=True)
class NodeQueued(Event):
    subtask_id: str
    tool: str
    path: tuple[str, ...]  # tool ids of the whole partial path, earlier subtasks included
    f: float
    executed: bool


@dataclass(frozen=True)
class NodePopped(Event):
    subtask_id: str
    tool: str
    path: tuple[str, ...]
    f: float
    executed: bool


@dataclass(frozen=True)
class ToolStarted(Event):
    subtask_id: str
    tool: str
    attempt: int
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolFinished(Event):
    """One tool attempt ended: measured seconds and checked quality; `stopped` when the user's Stop ended it (then
    it neither passed nor failed, and nothing about the tool is learned from it); `cached` when the turn's memo
    replayed an identical earlier run (same tool, parameters and input: not run again, 0 s). `runner` names what
    ran the call: "in_process" or "ray" (a Ray Serve deployment, `costa.models.ray_runner`); "" in events stored
    before the field existed (those ran in process) and from searches whose caller does not say."""

    subtask_id: str
    tool: str
    attempt: int
    seconds: float
    quality: float
    passed: bool
    reasons: tuple[str, ...] = ()
    stopped: bool = False
    cached: bool = False
    runner: str = ""


@dataclass(frozen=True)
class ToolProgress(Event):
    """A long tool call finished `done` of `total` steps (diffusion steps); the page draws it as a progress bar."""

    subtask_id: str
    tool: str
    attempt: int
    done: int
    total: int
    what: str = "step"


@dataclass(frozen=True)
class Retry(Event):
    subtask_id: str
    tool: str
    attempt: int  # the attempt about to run (1 = first retry)
    reason: str


@dataclass(frozen=True)
class ToolFailed(Event):
    subtask_id: str
    tool: str
    reason: str


@dataclass(frozen=True)
class PathChosen(Event):
    path: tuple[tuple[str, str], ...]  # (subtask id, tool id) in execution order
    seconds: float  # tool seconds along the chosen path, retries included
    quality: float  # product of the path's step qualities
    score: float
    executions: int  # tool runs the search paid for (chosen path or not)
    spent_seconds: float  # tool seconds of all those runs


@dataclass(frozen=True)
class SearchFailed(Event):
    """No path was found: every path failed its checks, none reaches the goal, or (`stopped`) the user stopped it."""

    reason: str
    executions: int
    spent_seconds: float
    stopped: bool = False


@dataclass(frozen=True)
class SubtaskDone(Event):
    subtask_id: str
    subtask_kind: str
    tools: tuple[str, ...]
    quality: float
    result: str = ""  # text/label/caption results, or a short summary of the edit
    image: Any = None  # np.ndarray image right after this subtask when it edits the image (per-subtask versions)
    #: what a subtask that reads the image found, as (x, y, w, h, label) in pixels of the image it read (a detector's
    #: boxes), so a person can see them drawn (the Campaign tab) instead of reading coordinates; () otherwise
    boxes: tuple[tuple[int, int, int, int, str], ...] = ()


@dataclass(frozen=True)
class SubtaskProposed(Event):
    """A subtask passed its checks but costa cannot vouch for it: the real-photo calibration has too little evidence,
    or too poor a record, for its context (`costa.calibration`). The result exists and the user decides; it is not
    done and, in a session, not a new version until accepted.

    `reason` is the calibration's one sentence; `context` the `StepContext` as (kind, tool, content, region size,
    pointing); `region` the bool (H, W) mask the step consumed (None for a whole-image step).
    """

    subtask_id: str
    subtask_kind: str
    tools: tuple[str, ...]
    quality: float
    result: str = ""
    image: Any = None  # np.ndarray image right after this subtask when it edits the image
    reason: str = ""
    context: tuple[str, ...] = ()
    region: Any = None


@dataclass(frozen=True)
class TurnDone(Event):
    seconds: float  # wall seconds for the whole turn
    tool_seconds: float
    executions: int
    quality: float
    image: Any = None  # final np.ndarray image; None when nothing could be done
    results: dict[str, str] = field(default_factory=dict)  # subtask id -> text/label/caption or edit summary
    ok: bool = True  # every planned subtask was done and passed its checks
    skipped: dict[str, str] = field(default_factory=dict)  # subtask id -> why it could not run
    unverified: dict[str, str] = field(default_factory=dict)  # subtask id -> what of its target was not verified
    proposed: dict[str, str] = field(default_factory=dict)  # subtask id -> why costa cannot vouch for its result


@dataclass(frozen=True)
class TargetUnverified(Event):
    """A subtask's target was grounded but not verified (e.g. only its colour matched "the red car"): the subtask is
    not done. `region` is the candidate bool (H, W) mask the grounder found (None before anything ran, when no ready
    tool can find the target: the user must point first); `verified`/`missing` describe the evidence."""

    subtask_id: str
    target: str
    method: str
    verified: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    summary: str = ""
    region: Any = None


@dataclass(frozen=True)
class PointingNeeded(Event):
    """Known at graph build time: no ready tool can find these subtasks' target by itself; the user must point
    (click, box or brush). The subtasks that do not depend on them still run."""

    subtask_ids: tuple[str, ...]
    target: str
    reason: str


@dataclass(frozen=True)
class ErrorEvent(Event):
    message: str


@dataclass(frozen=True)
class RuleHit(Event):
    """Fast–slow mode: subroutine `rule_id` (table `version`) serves this subtask first, tools in order."""

    subtask_id: str
    rule_id: str
    tools: tuple[str, ...]
    version: int
    score: float
    conditions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Fallback(Event):
    """Fast–slow mode: the local A* serves this subtask; `reason` says why ("no rule applies", or the failed step)."""

    subtask_id: str
    reason: str
    rule_id: str | None = None
    tool: str | None = None


@dataclass(frozen=True)
class InductionDone(Event):
    """Fast–slow mode: induction ran after `tasks` tasks; `accepted` rule ids entered table `version`."""

    tasks: int
    proposals: int
    accepted: tuple[str, ...]
    version: int


@dataclass(frozen=True)
class Reflection(Event):
    """One reflection of one attempt at a subtask (IMAGAgent's multi-expert reflection).

    `experts`: one dict per expert — `name`, `kind` ("offline"/"vlm"), `scores` for semantic_alignment,
    perceptual_quality, aesthetics and logical_consistency (0–10, None where not judged), its `score` (mean of the
    judged ones), `positive` and `negative` (lists of strings). `score` is the mean of the experts' scores (0–10);
    `decision` is "accept" (score ≥ τ_sr), "retry" or "best_of" (τ_it attempts spent).
    `merged` is the LLM aggregator's merge of the feedback when it ran (an aggregator is configured and VLM experts
    judged): `keep` and `fix` (each fix `text` and `action`, "" for none), `ignored` (actions it named that the
    protocol does not know) and `note` (why it was unavailable or unusable); empty when it did not run.
    `calibrated` is False when no judged dimension has a vote for this subtask's kind on real photos
    (`costa.reflect.votes`): then `score` is the plain mean, shown but not used, and `decision` is "accept" (reflection
    neither accepts nor rejects on it); `silent` says why each judged dimension that does not vote is silent.
    """

    subtask_id: str
    attempt: int  # 1 = the search's first result
    experts: tuple[dict[str, Any], ...]
    score: float
    decision: str
    merged: dict[str, Any] = field(default_factory=dict)
    calibrated: bool = True
    silent: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReflectionRetry(Event):
    """A rejected attempt is retried with this action (other_path, next_params, other_grounder, restore_protected,
    ask_user) because of `reason` (the negative feedback it acts on)."""

    subtask_id: str
    attempt: int  # the attempt about to run
    action: str
    reason: str


@dataclass(frozen=True)
class ExpertDropped(Event):
    """A VLM expert gave no usable judgement for this attempt (malformed twice, endpoint down, timed out)."""

    subtask_id: str
    attempt: int
    expert: str
    reason: str


@dataclass(frozen=True)
class ReflectionKept(Event):
    """Which attempt a subtask keeps: the accepted one, or after τ_it attempts the best-scoring one (`accepted`
    False)."""

    subtask_id: str
    attempt: int
    score: float
    accepted: bool
    reason: str


def drain(gen: Generator[Any, None, R], on_event: Callable[[Any], None] | None = None) -> R:
    """Run an event generator to its end, handing each event to `on_event`, and return the generator's value.

    The one place the "next() until StopIteration" loop lives (planning, search and turns all return a result after
    their events). `on_event` may raise to stop early; the generator is then closed.

    Example:
        >>> def gen():
        ...     yield 1
        ...     yield 2
        ...     return "done"
        >>> seen = []
        >>> drain(gen(), seen.append), seen
        ('done', [1, 2])
    """
    try:
        while True:
            try:
                ev = next(gen)
            except StopIteration as stop:
                return stop.value
            if on_event is not None:
                on_event(ev)
    finally:
        gen.close()
