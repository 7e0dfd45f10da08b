"""Pending proposals and people's verdicts on them, in the store (tables `proposals` and `verdicts`, migration 8).

A turn whose result costa cannot vouch for (`costa.turn.vouching`) is not a new version: its result image waits
here, one pending proposal per session at most (a newer one supersedes it), until the user accepts it — then it is
saved as a version and the decision is recorded — or discards it (image and history untouched, the decision
recorded) — or refines it (points again and runs it once more: status "refined", neither right nor wrong). A verdict
is a person's decision on one proposed subtask, with that subtask's `StepContext`, the check quality the search
recorded for its final tool and the machine kind whose observation log holds that run (migration 9); verdicts outlive
their session (labelled real cases for `bench real --verdicts`, observations for the learned estimates:
`costa.session.verdicts`).

Example:
    >>> import tempfile, numpy as np
    >>> from pathlib import Path
    >>> from costa.store import Store
    >>> store = Store(Path(tempfile.mkdtemp()))
    >>> sid = store.create_session().id
    >>> v = store.add_version(sid, np.zeros((4, 4, 3), np.uint8), "upload", "upload")
    >>> t = store.start_turn(sid, v.id, "remove it", None, {})
    >>> sub = ProposedSubtask("s1", "object_removal", "remove_telea", "photo", "small", "box", "no evidence")
    >>> p = keep_proposal(store, sid, t, v.id, np.ones((4, 4, 3), np.uint8), None, (sub,))
    >>> pending_proposal(store, sid).subtasks[0].tool
    'remove_telea'
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from costa.errors import InputError
from costa.store.files import decode, encode
from costa.store.validate import check_text

if TYPE_CHECKING:
    from costa.store.core import Store

Decision = Literal["accepted", "discarded", "refined"]
DECISIONS: tuple[str, ...] = ("accepted", "discarded", "refined")
#: What a verdict says of the proposed result: right (accepted), wrong (discarded), or nothing (refined: the person
#: pointed again, which judges the pointing, not the tool's result).
RIGHT: dict[str, bool | None] = {"accepted": True, "discarded": False, "refined": None}


@dataclass(frozen=True)
class ProposedSubtask:
    """One proposed subtask: its id, its `StepContext` (kind, tool, content, region, pointing) and why costa could
    not vouch for it (the calibration's sentence); `quality` the check quality the search recorded for its final tool's
    run (None: not known, a proposal kept before migration 9)."""

    subtask_id: str
    kind: str
    tool: str
    content: str
    region: str
    pointing: str
    reason: str
    quality: float | None = None


@dataclass(frozen=True, eq=False)
class Proposal:
    """A pending (or decided) proposal: the turn that made it, the version it edits, its result and the region it
    changed (bool (H, W) or None), its proposed subtasks, status ("pending", "accepted", "discarded", "refined",
    "superseded"), and once decided when, the version an accept saved and the turn that refined it."""

    id: int
    session_id: str
    turn_id: int
    base_version: int | None
    image: np.ndarray | None
    region: np.ndarray | None
    subtasks: tuple[ProposedSubtask, ...]
    status: str
    created: float
    decided: float | None = None
    result_version: int | None = None
    refined_by: int | None = None


@dataclass(frozen=True)
class Verdict:
    """A person's decision on one proposed subtask, with its context, when, and who (None: no login); `quality` the
    check quality the search recorded for the final tool's run, `machine` the machine kind whose observation log holds
    that run (None: it lived only in a process's estimates)."""

    id: int
    session_id: str
    owner: str | None
    turn_id: int
    subtask_id: str
    kind: str
    tool: str
    content: str
    region: str
    pointing: str
    verdict: str
    reason: str
    created: float
    quality: float | None = None
    machine: str | None = None

    @property
    def right(self) -> bool | None:
        """True for an accept, False for a discard, None for a refine (no label)."""
        return RIGHT.get(self.verdict)


def _mask_png(mask: np.ndarray | None) -> bytes | None:
    if mask is None:
        return None
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.asarray(mask, bool).astype(np.uint8) * 255).save(buf, format="PNG")
    return buf.getvalue()


def keep_proposal(
    store: Store,
    session_id: str,
    turn_id: int,
    base_version: int | None,
    image: np.ndarray,
    region: np.ndarray | None,
    subtasks: Sequence[ProposedSubtask],
) -> Proposal:
    """Keep a turn's result as the session's pending proposal (an earlier pending one becomes "superseded": nobody
    decided it, so it is no verdict)."""
    if not subtasks:
        raise InputError("a proposal needs at least one proposed subtask")
    _any_owner(store, session_id)  # the session exists (its caller was checked by the session core)
    data = encode(image).data
    rows = json.dumps([asdict(s) for s in subtasks])
    now = time.time()
    with store.connect(write=True) as db:
        db.execute(
            "UPDATE proposals SET status = 'superseded', decided = ?, image = NULL WHERE session_id = ? AND"
            " status = 'pending'",
            (now, session_id),
        )
        pid = db.insert(
            "INSERT INTO proposals (session_id, turn_id, base_version, image, region, subtasks, status, created)"
            " VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)",
            (session_id, turn_id, base_version, data, _mask_png(region), rows, now),
        )
    return Proposal(pid, session_id, turn_id, base_version, image, region, tuple(subtasks), "pending", now)


def supersede_pending(store: Store, session_id: str) -> int:
    """A newer turn replaces the session's pending proposal (status "superseded", no verdict); return how many."""
    with store.connect(write=True) as db:
        cur = db.execute(
            "UPDATE proposals SET status = 'superseded', decided = ?, image = NULL WHERE session_id = ? AND"
            " status = 'pending'",
            (time.time(), session_id),
        )
        return int(cur.rowcount or 0)


def pending_proposal(store: Store, session_id: str) -> Proposal | None:
    """The session's pending proposal, or None."""
    with store.connect() as db:
        r = db.one(
            "SELECT * FROM proposals WHERE session_id = ? AND status = 'pending' ORDER BY id DESC", (session_id,)
        )
    return None if r is None else _proposal(r)


def session_proposals(store: Store, session_id: str) -> list[Proposal]:
    """Every proposal of the session, oldest first, whatever became of it (decided ones carry no image)."""
    with store.connect() as db:
        rows = db.all("SELECT * FROM proposals WHERE session_id = ? ORDER BY id", (session_id,))
    return [_proposal(r) for r in rows]


def _proposal(r: Any) -> Proposal:
    region = decode(bytes(r["region"]))[..., 0] > 127 if r["region"] is not None else None
    subs = tuple(ProposedSubtask(**s) for s in json.loads(r["subtasks"]))
    image = decode(bytes(r["image"])) if r["image"] is not None else None
    return Proposal(r["id"], r["session_id"], r["turn_id"], r["base_version"], image, region, subs, r["status"],
                    r["created"], r["decided"], r["result_version"], r["refined_by"])  # fmt: skip


def decided_proposals(store: Store, session_id: str) -> list[Proposal]:
    """The session's accepted or discarded proposals, oldest first, without their images (an accepted one's image is
    its version's): what the chat says after each proposed turn when the page is reloaded."""
    with store.connect() as db:
        rows = db.all(
            "SELECT id, session_id, turn_id, base_version, subtasks, status, created, decided, result_version"
            " FROM proposals WHERE session_id = ? AND status IN ('accepted', 'discarded') ORDER BY id",
            (session_id,),
        )
    return [Proposal(r["id"], r["session_id"], r["turn_id"], r["base_version"], None, None,
                     tuple(ProposedSubtask(**x) for x in json.loads(r["subtasks"])), r["status"], r["created"],
                     r["decided"], r["result_version"]) for r in rows]  # fmt: skip


def decide_proposal(
    store: Store,
    proposal: Proposal,
    decision: str,
    owner: str | None,
    result_version: int | None = None,
    machine: str | None = None,
    refined_by: int | None = None,
) -> list[Verdict]:
    """Record a person's `decision` ("accepted", "discarded" or "refined") on a pending proposal: its status, when,
    the version an accept saved or the turn that refined it, and one verdict per proposed subtask (with the quality
    the search recorded and `machine`, the kind whose observation log holds the run, or None). The pending image is
    dropped (an accepted one lives on as its version)."""
    if decision not in DECISIONS:
        raise InputError(f"a decision is one of {', '.join(DECISIONS)}, got {decision!r}")
    who = None if owner is None else check_text(owner, "owner", 200)
    now = time.time()
    out: list[Verdict] = []
    with store.connect(write=True) as db:
        cur = db.execute(
            "UPDATE proposals SET status = ?, decided = ?, result_version = ?, refined_by = ?, image = NULL WHERE"
            " id = ? AND status = 'pending'",
            (decision, now, result_version, refined_by, proposal.id),
        )
        if not int(cur.rowcount or 0):
            raise InputError("this proposal was already decided or replaced by a newer turn: nothing was changed")
        for s in proposal.subtasks:
            values = (proposal.session_id, who, proposal.turn_id, s.subtask_id, s.kind, s.tool, s.content, s.region,
                      s.pointing, decision, s.reason, now, s.quality, machine)  # fmt: skip
            vid = db.insert(
                "INSERT INTO verdicts (session_id, owner, turn_id, subtask_id, kind, tool, content, region, pointing,"
                " verdict, reason, created, quality, machine) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )
            out.append(Verdict(vid, *values))
        if result_version is not None:
            db.execute("UPDATE turns SET result_version = ? WHERE id = ?", (result_version, proposal.turn_id))
    return out


def verdicts(store: Store, session_id: str | None = None) -> list[Verdict]:
    """People's verdicts, oldest first (of one session, or all)."""
    sql = "SELECT * FROM verdicts"
    args: tuple[str, ...] = ()
    if session_id is not None:
        sql, args = sql + " WHERE session_id = ?", (session_id,)
    with store.connect() as db:
        rows = db.all(sql + " ORDER BY id", args)
    return [Verdict(r["id"], r["session_id"], r["owner"], r["turn_id"], r["subtask_id"], r["kind"], r["tool"],
                    r["content"], r["region"], r["pointing"], r["verdict"], r["reason"], r["created"], r["quality"],
                    r["machine"])
            for r in rows]  # fmt: skip


def _any_owner(store: Store, session_id: str) -> str | None:
    """The session's owner (the caller was checked already by the session core)."""
    with store.connect() as db:
        r = db.one("SELECT owner FROM sessions WHERE id = ?", (session_id,))
    if r is None:
        raise InputError(f"unknown session {str(session_id)[:6]}…: start a new one")
    return r["owner"]
