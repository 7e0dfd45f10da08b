"""A session's pending proposal and the person's Accept / Discard (issue 18 part 2), for every interface.

A turn whose result costa cannot vouch for on real-photo evidence ends *proposed* (`costa.turn.ending`): the turn
records it, and `SessionProposals.keep` holds its result as the session's pending proposal — not a new version.
`accept` saves it as a version (the new current image, child of the version the turn edited) and records the
person's verdict on each proposed subtask; `discard` leaves the image and the history as they are and records the
verdict. Each verdict then flows into the learned estimates and FaSTA*'s observations (`costa.session.verdicts`:
the run it judges is relabelled, never counted twice). `refining` and `refined` are Refine: the person points again
(a brush, more clicks, a box) and the proposal's instruction runs once more with that pointing (a new turn, judged
like any); the old proposal is recorded "refined" — neither accepted nor discarded. With no pending proposal each
refuses with a clear `InputError` and changes nothing. A newer turn in the session replaces a pending proposal nobody
decided (no verdict is recorded for it).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np

from costa.errors import InputError
from costa.session.verdicts import ProposalRow, VerdictFlow, proposal_rows
from costa.store import Store, Turn, Version
from costa.store.proposals import (
    Proposal,
    ProposedSubtask,
    Verdict,
    decide_proposal,
    decided_proposals,
    keep_proposal,
    pending_proposal,
    supersede_pending,
)

NO_POINTING = (
    "Refine runs the proposal again with new pointing: add a brush, more clicks or a box on the image first "
    "(nothing was changed)"
)
NO_PROPOSAL = (
    "no proposal is waiting in this session: nothing to {what}, nothing was changed (a proposal is a turn's result "
    "costa cannot vouch for)"
)


@dataclass(frozen=True, eq=False)
class Decided:
    """What an Accept or Discard did: the proposal, the verdicts recorded, and the version an accept saved."""

    proposal: Proposal
    verdicts: tuple[Verdict, ...]
    version: Version | None


class SessionProposals:
    """Pending proposals of the sessions in one store; `writing(session_id)` is the core's short session lock."""

    def __init__(
        self, store: Store, writing: Callable[[str], AbstractContextManager[Any]], flow: VerdictFlow | None = None
    ) -> None:
        """`flow`: where verdicts teach the estimates and observations (None: they are only stored)."""
        self.store = store
        self.writing = writing
        self.flow = flow

    def keep(self, session_id: str, turn_id: int, base_version: int | None, image: np.ndarray, view: Any) -> Proposal:
        """Hold a finished turn's result as the session's pending proposal (`view`: its `TurnView`, whose
        `proposed` events name each proposed subtask's context and reason, and the regions it changed)."""
        subs = []
        region: np.ndarray | None = None
        for ev in view.proposed.values():
            kind, tool, content, size, pointing = (tuple(ev.context) + ("",) * 5)[:5]
            quality = _final_quality(view, ev.subtask_id, tool, ev.quality)
            subs.append(ProposedSubtask(ev.subtask_id, kind, tool, content, size, pointing, ev.reason, quality))
            r = getattr(ev, "region", None)
            if r is not None and np.asarray(r).shape == image.shape[:2]:
                region = np.asarray(r, bool) if region is None else region | np.asarray(r, bool)
        return keep_proposal(self.store, session_id, turn_id, base_version, image, region, subs)

    def replaced(self, session_id: str) -> int:
        """A new turn starts: a pending proposal nobody decided is replaced (no verdict)."""
        return supersede_pending(self.store, session_id)

    def pending(self, session_id: str, owner: str | None) -> Proposal | None:
        """The caller's session's pending proposal, or None."""
        session = self.store.session(session_id, owner)
        return pending_proposal(self.store, session.id)

    def decided(self, session_id: str, owner: str | None) -> dict[int, Proposal]:
        """The caller's session's accepted or discarded proposals by the turn that made them (images not loaded)."""
        session = self.store.session(session_id, owner)
        return {p.turn_id: p for p in decided_proposals(self.store, session.id)}

    def accept(self, session_id: str, owner: str | None) -> Decided:
        """Save the pending proposal as a version (the new current image) and record the person's verdict.

        Raises:
            InputError: no proposal is waiting (nothing changes), the session is busy, or not the caller's.
        """
        session = self.store.session(session_id, owner)
        with self.writing(session.id):
            p = pending_proposal(self.store, session.id)
            if p is None or p.image is None:
                raise InputError(NO_PROPOSAL.format(what="accept"))
            turn = self.store.turn(session.id, p.turn_id)
            label = f"accepted proposal: {turn.instruction}"[:60]
            version = self.store.add_version(session.id, p.image, "turn", label, p.base_version, p.turn_id)
            mode = str(turn.params.get("mode") or "lazy")
            verdicts = decide_proposal(self.store, p, "accepted", owner, version.id, self._machine(mode))
        self._observe(verdicts, mode)
        return Decided(p, tuple(verdicts), version)

    def discard(self, session_id: str, owner: str | None) -> Decided:
        """Drop the pending proposal (image and history untouched) and record the person's verdict.

        Raises:
            InputError: no proposal is waiting (nothing changes), the session is busy, or not the caller's.
        """
        session = self.store.session(session_id, owner)
        with self.writing(session.id):
            p = pending_proposal(self.store, session.id)
            if p is None:
                raise InputError(NO_PROPOSAL.format(what="discard"))
            mode = str(self.store.turn(session.id, p.turn_id).params.get("mode") or "lazy")
            verdicts = decide_proposal(self.store, p, "discarded", owner, None, self._machine(mode))
        self._observe(verdicts, mode)
        return Decided(p, tuple(verdicts), None)

    def refining(self, session_id: str, owner: str | None, pointing: tuple[Any, ...]) -> Turn:
        """Check a Refine before it runs; return the proposal's turn (its instruction runs again, with its params).

        `pointing` is the pointing the new run gets: (clicks, box text, brush mask or None).

        Raises:
            InputError: no proposal is waiting, or no pointing is given or it is the proposal turn's own (nothing
                would differ); nothing changes.
        """
        session = self.store.session(session_id, owner)
        p = pending_proposal(self.store, session.id)
        if p is None:
            raise InputError(NO_PROPOSAL.format(what="refine"))
        clicks, box, brush = pointing
        turn = self.store.turn(session.id, p.turn_id)
        given = [list(map(int, c)) for c in clicks or ()]
        if not given and not (box or "").strip() and brush is None:
            raise InputError(NO_POINTING)
        same_box = (box or "").strip() == (turn.params.get("box") or "").strip()
        if given == (turn.params.get("clicks") or []) and same_box and _same_brush(brush, turn.params):
            raise InputError(NO_POINTING)
        return turn

    def refined(self, session_id: str, owner: str | None, turn_id: int) -> Decided:
        """The refining turn `turn_id` started: record the pending proposal as refined by it (no label).

        Raises:
            InputError: no proposal is waiting (the turn runs as a plain one).
        """
        p = pending_proposal(self.store, session_id)
        if p is None:
            raise InputError(NO_PROPOSAL.format(what="refine"))
        verdicts = decide_proposal(self.store, p, "refined", owner, refined_by=turn_id)
        return Decided(p, tuple(verdicts), None)

    def rows(self, session_id: str, owner: str | None) -> list[ProposalRow]:
        """The caller's session's proposed subtasks and their verdicts, oldest first (`ProposalRow`)."""
        session = self.store.session(session_id, owner)
        return proposal_rows(self.store, session.id)

    def _machine(self, mode: str) -> str | None:
        return self.flow.machine(mode) if self.flow is not None else None

    def _observe(self, verdicts: list[Verdict], mode: str) -> None:
        if self.flow is not None:
            self.flow.observe(verdicts, mode)


def _same_brush(brush: Any, params: dict[str, Any]) -> bool:
    """Whether `brush` (a `Mask` or None) is the brush the proposal's turn ran with (its area and bounding box)."""
    if brush is None:
        return "brush_px" not in params
    b = brush.bbox()
    box = None if b is None else [b.x, b.y, b.w, b.h]
    return params.get("brush_px") == brush.area and params.get("brush_box") == box


def _final_quality(view: Any, subtask_id: str, tool: str, fallback: float) -> float:
    """The check quality of the last passed run of `tool` for the subtask (what the search observed), else
    `fallback` (the subtask's quality: the product of its steps')."""
    for row in reversed(getattr(view, "calls", ())):
        if row.subtask_id == subtask_id and row.tool == tool and row.passed and row.quality is not None:
            return float(row.quality)
    return float(fallback)
