"""People's verdicts flow on (issue 18 part 2): into the learned estimates and FaSTA*'s observations, counted once.

An Accept is a success of the proposed subtask's final tool on that subtask kind, a Discard a failure; a Refine
says nothing about the tool (the person pointed again) and teaches nothing. The search already recorded the run
the proposal came from — a tool-run observation with the check's quality, and in fast–slow mode a subtask trace
marked successful — so a verdict never adds a second run: it *relabels* the one recorded.

- Estimates (`costa.services.Estimates.relabel`): the run's quality becomes 1.0 (accepted) or 0.0 (discarded), the
  run count stays. Whole-plan (lazy, eager) turns teach the process's `services.estimates`, which live in memory
  only, as their runs do; fast–slow turns teach the runtime's `StoredEstimates`, whose runs persist in the store's
  `tool_runs` — the verdict row keeps the machine kind and the recorded quality (migration 9), and
  `ObservationLog.aggregates` applies the same relabel when a later process loads those runs.
- Traces: a discarded fast–slow subtask's trace (stored under the task `turn-<turn id>`) is marked failed, reason
  "discarded by a person", so induction (`costa.subroutines`) no longer learns a rule from it; an accepted one
  already says success.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from costa.store.proposals import Verdict

#: The reason a discarded subtask's trace carries afterwards.
DISCARDED_REASON = "discarded by a person"


def trace_task(turn_id: int) -> str:
    """The task name a session turn's fast–slow traces are stored under (what a verdict finds them by)."""
    return f"turn-{int(turn_id)}"


def label(verdict: Verdict) -> float | None:
    """The quality a verdict says the run had: 1.0 accepted, 0.0 discarded, None (no label) refined."""
    right = verdict.right
    return None if right is None else float(right)


@dataclass
class VerdictFlow:
    """Where verdicts flow: the process's estimates, and the session core's fast–slow runtime once it exists
    (`fast_slow()` returns it or None; it is never made for a verdict)."""

    services: Any
    fast_slow: Callable[[], Any]

    def machine(self, mode: str) -> str | None:
        """The machine kind whose observation log holds a `mode` turn's runs, or None (in memory only)."""
        runtime = self.fast_slow() if mode == "fast-slow" else None
        if runtime is None or runtime.log is None or not runtime.record:
            return None
        return str(getattr(runtime.estimates, "machine", "")) or None

    def observe(self, verdicts: Sequence[Verdict], mode: str) -> int:
        """Relabel the runs these verdicts judge; return how many estimates changed."""
        runtime = self.fast_slow() if mode == "fast-slow" else None
        if mode == "fast-slow" and (runtime is None or not runtime.record):
            return 0  # that turn taught nothing (or another process's runtime did): nothing to relabel here
        estimates = runtime.estimates if runtime is not None else self.services.estimates
        changed = 0
        for v in verdicts:
            now = label(v)
            if now is None or v.quality is None:
                continue
            changed += int(estimates.relabel(v.tool, v.kind, float(v.quality), now))
            if runtime is not None and runtime.log is not None and now == 0.0:
                discard_traces(runtime.log, trace_task(v.turn_id), v.kind, v.tool)
        return changed


def discard_traces(log: Any, task: str, kind: str, tool: str) -> int:
    """Mark the successful traces of `task`'s `kind` subtask that ended with `tool` failed (a person discarded that
    result); return how many."""
    log.flush()
    with log.store.connect(write=True) as db:
        rows = db.all("SELECT id, path FROM subtask_traces WHERE task = ? AND kind = ? AND success = 1", (task, kind))
        ids = [r["id"] for r in rows if (json.loads(r["path"]) or [""])[-1] == tool]
        for i in ids:
            db.execute("UPDATE subtask_traces SET success = 0, reason = ? WHERE id = ?", (DISCARDED_REASON, i))
    return len(ids)


@dataclass(frozen=True)
class ProposalRow:
    """One proposed subtask of a session and what became of it, for the evaluator tab and the scores CSV.

    `verdict` is the person's ("accepted", "discarded", "refined") or, undecided, the proposal's status ("pending",
    "superseded": a newer turn replaced it, no verdict); `who` and `when` are the verdict's (who "" without login;
    None while undecided); `refined_by` the number of the turn that refined it."""

    turn_id: int
    turn_number: int
    instruction: str
    subtask_id: str
    kind: str
    tool: str
    context: str
    reason: str
    verdict: str
    who: str
    when: float | None
    refined_by: int | None = None


def proposal_rows(store: Any, session_id: str) -> list[ProposalRow]:
    """Every proposed subtask of the session, oldest first, with its verdict (the caller checked the owner)."""
    from costa.calibration import StepContext
    from costa.store.proposals import session_proposals, verdicts

    turns = store.turns(session_id)
    numbers = {t.id: i for i, t in enumerate(turns, 1)}
    texts = {t.id: t.instruction for t in turns}
    decided = {(v.turn_id, v.subtask_id): v for v in verdicts(store, session_id)}
    out = []
    for p in session_proposals(store, session_id):
        for s in p.subtasks:
            v = decided.get((p.turn_id, s.subtask_id))
            ctx = StepContext(s.kind, s.tool, s.content, s.region, s.pointing).describe()
            who = "" if v is None else (v.owner or "")
            refined = numbers.get(p.refined_by) if p.refined_by is not None else None
            out.append(ProposalRow(p.turn_id, numbers.get(p.turn_id, 0), texts.get(p.turn_id, ""), s.subtask_id,
                                   s.kind, s.tool, ctx, s.reason, v.verdict if v else p.status, who,
                                   v.created if v else None, refined))  # fmt: skip
    return out
