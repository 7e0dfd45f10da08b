"""The one ending every search mode shares: from the search phase's `PhaseResult` to the turn's last events.

Whatever searched (whole-plan lazy or eager A*, or fast–slow subtask by subtask), the turn ends the same way:

1. Targets a grounder found but did not verify are reported (`TargetUnverified`); a subtask that stopped at one is
   not done and the turn's status is *unverified* (the CLI exits 4, nothing is written) unless the user accepted
   the candidate.
2. Reflection (when on) judges every served subtask and retries it on the experts' feedback (`costa.reflect.loop`).
3. Each kept subtask that passed its checks is asked of the real-photo calibration (`costa.turn.vouching`): where
   it vouches for the subtask's context, the subtask ends `SubtaskDone` with its tools, quality, result and image;
   anywhere else it ends **proposed** (`SubtaskProposed`, with the result and the calibration's one-sentence
   reason): the result exists, the user decides. The turn's status is then *proposed* (the CLI exits 4, nothing is
   written) unless the user accepted unverified results, when the proposal is also reported done.
4. `TurnDone` carries the final image, the results, what was skipped and why, what was not verified, what is only
   proposed and why, the tool seconds and runs of the search and of reflection's retries.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from costa.events import ErrorEvent, Event, SubtaskDone, SubtaskProposed, TargetUnverified, TurnDone
from costa.reflect.loop import reflect_turn
from costa.targets import Verification
from costa.turn.records import PhaseResult, SubtaskResult, VerificationEntry
from costa.turn.search import TurnContext
from costa.turn.vouching import judge


@dataclass(frozen=True, eq=False)
class Ending:
    """What the ending needs besides the phase's result: the turn's input image, the subtasks that never ran (id →
    why: no ready tool, point first), when the turn started (perf_counter seconds), whether to reflect, the
    session's memory (or None), and whether the user accepted unverified candidates."""

    image: np.ndarray
    skipped: dict[str, str]
    started: float
    reflect: bool
    memory: Any = None
    accept_unverified: bool = False


def unverified_event(
    ctx: TurnContext, sid: str, record: Verification, candidate: np.ndarray | None
) -> TargetUnverified:
    """The event for a target found but not verified: what was verified, what was not, the candidate region."""
    return TargetUnverified(
        sid,
        ctx.plan.by_id(sid).target or "",
        record.method,
        tuple(e.describe() for e in record.verified),
        tuple(e.describe() for e in record.missing),
        record.summary(),
        candidate,
    )


def end_turn(ctx: TurnContext, phase: PhaseResult, ending: Ending) -> Generator[Event, None, None]:
    """Report the phase's result as the turn's last events (see the module docstring); the last is `TurnDone`."""
    if not phase.done:
        yield from _nothing_done(ctx, phase, ending)
        return
    unverified: dict[str, str] = {}
    served = {d.subtask_id for d in phase.done}
    for sid, (record, candidate) in ctx.executor.unverified.items():
        if sid not in served:  # the phase went on without it (fast–slow serves the others)
            unverified[sid] = record.summary()
            yield unverified_event(ctx, sid, record, candidate)
    skipped = {**ending.skipped, **{k: v for k, v in phase.failed.items() if k not in unverified}}
    done, image, extra_seconds, extra_runs, accepted = phase.done, _last_image(phase, ending), 0.0, 0, True
    checked: dict[str, VerificationEntry] = {v[0]: v for v in (phase.state.verifications if phase.state else ())}
    if ending.reflect and not phase.stopped:
        reflected = yield from reflect_turn(ctx, phase, ending.image, ending.memory)
        done, image, accepted = reflected.done, reflected.image, reflected.ok
        extra_seconds, extra_runs = reflected.extra_seconds, reflected.extra_executions
        skipped.update(reflected.failed)
        checked.update({sid: a.verification for sid, a in reflected.kept.items() if a.verification is not None})
    results: dict[str, str] = {}
    proposed: dict[str, str] = {}
    for d in done:
        results[d.subtask_id] = d.result
        entry = checked.get(d.subtask_id)
        if entry is not None and not entry[1].ok:  # only when accepted: unaccepted ones never pass a step
            unverified[d.subtask_id] = entry[1].summary()
            yield unverified_event(ctx, d.subtask_id, entry[1], entry[2])
            if not ending.accept_unverified:
                continue
        else:
            judged = judge(ctx.services, d, ctx.region, ctx.plan.by_id(d.subtask_id).target or "")
            if not judged.vouch.verified:  # passed its checks, but real-photo evidence does not back that here
                proposed[d.subtask_id] = judged.vouch.reason
                c = judged.context
                yield SubtaskProposed(
                    d.subtask_id, d.kind, d.tools, d.quality, d.result, d.image, judged.vouch.reason,
                    (c.kind, c.tool, c.content, c.region, c.pointing), judged.region,
                )  # fmt: skip
                if not ending.accept_unverified:
                    continue
        yield _done_event(d)
    quality = float(np.prod([d.quality for d in done])) if done else 0.0
    ok = not skipped and accepted and (ending.accept_unverified or not (unverified or proposed))
    yield TurnDone(
        time.perf_counter() - ending.started,
        phase.spent_seconds + extra_seconds,
        phase.executions + extra_runs,
        quality,
        image,
        results,
        ok=ok,
        skipped=skipped,
        unverified=unverified,
        proposed=proposed,
    )


def _done_event(d: SubtaskResult) -> SubtaskDone:
    boxes = d.final.after.artifacts.get("boxes", ()) if d.image is None else ()  # a reading subtask's finds
    found = tuple((int(b.x), int(b.y), int(b.w), int(b.h), str(b.label)) for b in boxes)
    return SubtaskDone(d.subtask_id, d.kind, d.tools, d.quality, d.result, d.image, found)


def _last_image(phase: PhaseResult, ending: Ending) -> np.ndarray:
    return phase.state.edit.image if phase.state is not None else ending.image


def _nothing_done(ctx: TurnContext, phase: PhaseResult, ending: Ending) -> Generator[Event, None, None]:
    """No subtask was served: what was not verified, why nothing passed, and an unchanged image (none)."""
    unverified = {sid: record.summary() for sid, (record, _) in ctx.executor.unverified.items()}
    for sid, (record, candidate) in ctx.executor.unverified.items():
        yield unverified_event(ctx, sid, record, candidate)
    why = ctx.executor.failure_summary()
    if unverified:  # the search stopped at a target it could not verify: that, not the checks, is the news
        yield ErrorEvent("the target was found but not verified, so nothing was edited; the image is unchanged")
    else:
        reason = phase.reason or "no subtask could be served"
        yield ErrorEvent(
            f"no tool path passed its checks: {reason}; the image is unchanged" + (f" — {why}" if why else "")
        )
    skipped = {**ending.skipped, **{k: v for k, v in phase.failed.items() if k not in unverified}}
    seconds = time.perf_counter() - ending.started
    yield TurnDone(
        seconds, phase.spent_seconds, phase.executions, 0.0, None, ok=False, skipped=skipped, unverified=unverified
    )
