"""A session's pending proposal and the person's Accept / Discard (issue 18 part 2), for every interface.

A turn whose result costa cannot vouch for on real-photo evidence ends *proposed* (`costa.turn.ending`): the turn
records it, and `SessionProposals.keep` holds its result as the session's pending proposal — not a new version.
`accept` saves it as a version (the new current image, child of the version the turn edited) and records the
person's verdict on each proposed subtask; `discard` leaves the image and the history as they are and records the
verdict. With no pending proposal both refuse with a clear `InputError` and change nothing. A newer turn in the
session replaces a pending proposal nobody decided (no verdict is recorded for it).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np

from costa.errors import InputError
from costa.store import Store, Version
from costa.store.proposals import (
    Proposal,
    ProposedSubtask,
    Verdict,
    decide_proposal,
    keep_proposal,
    pending_proposal,
    supersede_pending,
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

    def __init__(self, store: Store, writing: Callable[[str], AbstractContextManager[Any]]) -> None:
        self.store = store
        self.writing = writing

    def keep(self, session_id: str, turn_id: int, base_version: int | None, image: np.ndarray, view: Any) -> Proposal:
        """Hold a finished turn's result as the session's pending proposal (`view`: its `TurnView`, whose
        `proposed` events name each proposed subtask's context and reason, and the regions it changed)."""
        subs = []
        region: np.ndarray | None = None
        for ev in view.proposed.values():
            kind, tool, content, size, pointing = (tuple(ev.context) + ("",) * 5)[:5]
            subs.append(ProposedSubtask(ev.subtask_id, kind, tool, content, size, pointing, ev.reason))
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
            verdicts = decide_proposal(self.store, p, "accepted", owner, version.id)
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
            verdicts = decide_proposal(self.store, p, "discarded", owner)
        return Decided(p, tuple(verdicts), None)
