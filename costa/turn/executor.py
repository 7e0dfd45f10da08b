"""The step executor: run one tool step of a search with the attempt's parameters, time it, check it, and hand the
search an `Outcome`.

Every search of a turn (whole-plan A*, a subtask's fast path and its fallback, reflection's retries) runs its steps
through one `StepExecutor`, so the turn's memo of tool runs (`costa.turn.memo`) sees them all: a run already made on
the same input with the same parameters is replayed at 0 s. Tool failures (`ToolError`) become recorded outcomes the
search routes around; anything else is a bug and propagates. A target a grounder found but did not verify stops there
(no edit of it is paid for) unless the user accepted the candidate.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from costa.checks import CheckContext, check_step
from costa.errors import GroundingError, ToolError
from costa.graph import StepNode
from costa.models.control import ToolStoppedError, TurnControl, run_stoppable
from costa.search import Outcome
from costa.targets import Verification
from costa.turn.memo import MemoEntry, RunMemo
from costa.turn.records import (
    FinalStep,
    TurnState,
    UserRegion,
    VerificationEntry,
    step_params,
    subtask_start,
    summarise,
)
from costa.types import EditState, Plan, Subtask, ToolOutput, Verdict

#: The reason a replayed run carries in the ledger.
MEMO_REASON = "memo: the same run on the same input earlier in this turn (not run again, 0 s)"

#: Said of a refusal no other parameters can change: the step is dropped after this attempt.
NOT_RETRIED = "not retried, the refusal does not depend on parameters"


@dataclass
class StepExecutor:
    """`(node, parent state, attempt) → Outcome` for one turn's searches (see the module docstring).

    `failures` are why tools raised, in order, without repeats: (tool id, reason); `advice` what would ground an
    unfound target; `refused` the deterministic refusals, (tool id, subtask id) → error (a retry with other
    parameters would refuse the same way); `unverified` the targets found but not verified, subtask id → (what its
    grounder verified, the candidate region).
    """

    services: Any  # costa.services.Services
    plan: Plan
    region: UserRegion
    ctx: CheckContext
    control: TurnControl | None = None
    accept_unverified: bool = False
    memo: RunMemo = field(default_factory=RunMemo)
    failures: dict[tuple[str, str], None] = field(default_factory=dict)
    advice: dict[str, None] = field(default_factory=dict)
    refused: dict[tuple[str, str], str] = field(default_factory=dict)
    unverified: dict[str, tuple[Verification, np.ndarray | None]] = field(default_factory=dict)
    #: Wall seconds spent inside steps (tools, checks, replays), to tell a search's own overhead apart.
    busy_seconds: float = 0.0

    def failure_summary(self) -> str:
        """What the tools reported when they failed, and what would ground an unfound target ("" when nothing)."""
        text = "; ".join(f"{tool}: {why}" for tool, why in self.failures)
        if self.advice:
            text += ". " + " ".join(f"{a}." for a in self.advice)
        return text

    def stopped(self) -> bool:
        return self.control is not None and self.control.stopped()

    def __call__(self, node: StepNode, parent: TurnState, attempt: int) -> Outcome[TurnState]:
        t0 = time.perf_counter()
        try:
            out = self._step(node, parent, attempt)
            return replace(out, runner=self.services.runner.where(self.services.tables.tools[node.tool]))
        finally:
            self.busy_seconds += time.perf_counter() - t0

    def _step(self, node: StepNode, parent: TurnState, attempt: int) -> Outcome[TurnState]:
        spec = self.services.tables.tools[node.tool]
        subtask = self.plan.by_id(node.subtask_id)
        # what the user pointed at is the edit's target, never the thing the instruction keeps unchanged
        region = UserRegion() if subtask.params.get("role") == "keep" else self.region.for_target(subtask.target or "")
        before = subtask_start(parent.edit, region) if len(node.tools) == 1 else parent.edit
        refusal = self.refused.get((node.tool, subtask.id))
        if refusal is not None:  # the same words, the same refusal: not run again
            why = f"{node.tool}: {NOT_RETRIED}: {refusal}"
            return Outcome(0.0, 0.0, error=why, final=True)
        params = step_params(spec, subtask, attempt)
        key = self.memo.key(node.tool, subtask, params, before)
        known = self.memo.get(key)
        if known is not None:
            return self._replay(node, parent, before, subtask, known)
        ran = self.run_tool(node, subtask, before, params, attempt)
        if isinstance(ran, Outcome):
            return ran
        seconds, output, error = ran
        if error is not None:
            self.memo.put(key, MemoEntry(None, None, error, seconds, (subtask.id, node.tool, attempt)))
            return self._failed(node, subtask, seconds, error)
        assert output is not None
        return self._judge(node, parent, before, subtask, (key, attempt), seconds, output)

    # ------------------------------------------------------------------------------------------------- running

    def run_tool(
        self, node: StepNode, subtask: Subtask, before: EditState, params: dict[str, Any], attempt: int
    ) -> tuple[float, ToolOutput | None, ToolError | None] | Outcome[TurnState]:
        """Run the tool (in a worker thread when the turn can be stopped): (seconds, output, error), or an `Outcome`
        when Stop or loading ended it. The seam a benchmark overrides to replay measured runs across turns."""
        tool = self.services.tool(node.tool)
        load = lambda: self.services.runner.load(tool)  # noqa: E731
        try:  # loading a model once per process is not the tool's per-call cost; Stop does not wait for it either
            run_stoppable(load, self.control, node.subtask_id, node.tool, attempt)
        except ToolStoppedError as e:
            return Outcome(0.0, 0.0, error=f"{node.tool}: {e}", stopped=True)
        except ToolError as e:
            return Outcome(0.0, 0.0, error=f"{node.tool}: {e}")
        if self.stopped():
            return Outcome(0.0, 0.0, error=f"{node.tool}: not run, the turn was stopped", stopped=True)
        t0 = time.perf_counter()
        try:
            call = lambda: self.services.runner.run(tool, before, subtask, params)  # noqa: E731
            output = run_stoppable(call, self.control, node.subtask_id, node.tool, attempt)
        except ToolStoppedError as e:  # the user's Stop, not the tool's failure
            return Outcome(time.perf_counter() - t0, 0.0, error=f"{node.tool}: {e}", stopped=True)
        except ToolError as e:
            return time.perf_counter() - t0, None, e
        seconds = time.perf_counter() - t0
        if self.stopped():  # pressed as it returned: not checked, not used
            return Outcome(seconds, 0.0, error=f"{node.tool}: result dropped, the turn was stopped", stopped=True)
        return seconds, output, None

    def _failed(self, node: StepNode, subtask: Subtask, seconds: float, error: Exception) -> Outcome[TurnState]:
        if isinstance(error, GroundingError):
            self.failures[(node.tool, error.reason)] = None
            if error.advice:
                self.advice[error.advice] = None
            if error.deterministic:
                self.refused[(node.tool, subtask.id)] = error.reason
                return Outcome(seconds, 0.0, error=f"{node.tool}: {error}; {NOT_RETRIED}", final=True)
        else:
            self.failures[(node.tool, str(error))] = None
        return Outcome(seconds, 0.0, error=f"{node.tool}: {error}")

    def _judge(
        self,
        node: StepNode,
        parent: TurnState,
        before: EditState,
        subtask: Subtask,
        where: tuple[Any, int],
        seconds: float,
        output: ToolOutput,
    ) -> Outcome[TurnState]:
        """Check a fresh run's output (unless its target is unverified) and remember the run."""
        key, attempt = where
        after = before.with_output(output)
        refused = self._unverified(node, subtask, output, after, seconds)
        if refused is not None:
            self.memo.put(key, MemoEntry(output, None, None, seconds, (subtask.id, node.tool, attempt)))
            return refused
        spec = self.services.tables.tools[node.tool]
        kind = self.services.tables.subtasks[node.kind]
        try:  # a check may read text (OCR, a second or more on a photo): Stop does not wait for it either
            check = lambda: check_step(self.ctx, kind, subtask, spec.outputs, before, after, output)  # noqa: E731
            verdict = run_stoppable(check, self.control, node.subtask_id, f"check:{node.tool}", attempt)
        except ToolStoppedError as e:
            return Outcome(seconds, 0.0, error=f"check of {node.tool}: {e}", stopped=True)
        except ToolError as e:
            return Outcome(seconds, 0.0, error=f"check of {node.tool} could not run: {e}")
        self.memo.put(key, MemoEntry(output, verdict, None, seconds, (subtask.id, node.tool, attempt)))
        return self._passed_on(node, parent, before, subtask, output, verdict, seconds)

    def _replay(
        self, node: StepNode, parent: TurnState, before: EditState, subtask: Subtask, known: MemoEntry
    ) -> Outcome[TurnState]:
        """A run made earlier in this turn on the same input: its outcome again, at 0 s."""
        if known.error is not None:
            return Outcome(0.0, 0.0, error=f"{node.tool}: {known.error}", reasons=(MEMO_REASON,), cached=True)
        assert known.output is not None
        after = before.with_output(known.output)
        refused = self._unverified(node, subtask, known.output, after, 0.0)
        if refused is not None or known.verdict is None:
            out = refused or Outcome(0.0, 0.0, error=f"{node.tool}: target not verified")
            return Outcome(0.0, 0.0, error=out.error, reasons=(MEMO_REASON,), cached=True)
        verdict = Verdict(known.verdict.quality, (MEMO_REASON, *known.verdict.reasons))
        out = self._passed_on(node, parent, before, subtask, known.output, verdict, 0.0)
        return Outcome(out.seconds, out.quality, out.state, out.reasons, out.error, out.stopped, cached=True)

    def _unverified(
        self, node: StepNode, subtask: Subtask, output: ToolOutput, after: EditState, seconds: float
    ) -> Outcome[TurnState] | None:
        """A refusal when the step found its target without verifying it (and the user did not accept that)."""
        record, candidate = output_verification(output, after)
        if record is None or record.ok or self.accept_unverified:
            return None
        # Not verified: no edit of it will be accepted, so none is paid for; the candidate is kept to show.
        self.unverified.setdefault(subtask.id, (record, candidate))
        final = any(not e.retryable for e in record.missing)
        if final:
            self.refused[(node.tool, subtask.id)] = f"target not verified ({record.summary()})"
        why = f"{node.tool}: target not verified — {record.summary()}" + (f"; {NOT_RETRIED}" if final else "")
        return Outcome(seconds, 0.0, error=why, final=final)

    def _passed_on(
        self,
        node: StepNode,
        parent: TurnState,
        before: EditState,
        subtask: Subtask,
        output: ToolOutput,
        verdict: Verdict,
        seconds: float,
    ) -> Outcome[TurnState]:
        """The new search state after a checked step (its result and final step recorded when it ends a subtask)."""
        tables = self.services.tables
        for reason in verdict.reasons:
            if "point better" in reason:  # the user's pointing, not the tool, was the problem: say so at the end
                self.advice[reason[:1].upper() + reason[1:]] = None
        after = before.with_output(output)
        results, images, finals = parent.results, parent.images, parent.finals
        region = self.region.for_target(subtask.target or "")
        verifications = with_verification(parent.verifications, subtask, output, after, region, node.final)
        if node.final:
            kind = tables.subtasks[node.kind]
            results = (*results, (node.subtask_id, summarise(kind.produces, after, output)))
            if kind.edits_image:
                images = (*images, (node.subtask_id, after.image))
            outputs = tables.tools[node.tool].outputs
            finals = (*finals, FinalStep(node.subtask_id, node.tools, before, after, output, outputs))
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


def with_verification(
    known: tuple[VerificationEntry, ...],
    subtask: Subtask,
    output: Any,
    after: EditState,
    region: UserRegion,
    final: bool,
) -> tuple[VerificationEntry, ...]:
    """`known` plus what this step's grounder verified (the record on the masks or boxes it output), or, at the end
    of a subtask with a target that no grounder verified, "pointed by the user" when the user pointed."""
    found, candidate = output_verification(output, after)
    if found is None and final and subtask.target and region.artifacts() and all(k != subtask.id for k, _, _ in known):
        from costa.grounding import pointed

        found = pointed("user", subtask.target)
    if found is None:
        return known
    return (*(k for k in known if k[0] != subtask.id), (subtask.id, found, candidate))
