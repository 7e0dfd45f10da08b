"""Where reflection meets a session: its memory loaded from and saved to the store, and the α preview's extra cost.

The session core (app, API) calls `load_session_memory` before planning a turn (to resolve references and protect
earlier regions), `remember_turn` after it, and `expected_reflection_seconds` for the α preview.

>>> p = load_protocol()
>>> expected_reflection_seconds(10.0, 2, 0, p)  # offline experts only: the table's share of the tool seconds
4.0
>>> expected_reflection_seconds(10.0, 2, 3, p)  # plus 3 VLM experts × 2 subtasks × the table's seconds per call
22.0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from costa.reflect.memory import SessionMemory, record_from_row, record_to_row, record_turn
from costa.reflect.protocol import Protocol, load_protocol
from costa.types import Box

__all__ = [
    "FinishedTurn",
    "expected_reflection_seconds",
    "load_protocol",
    "load_session_memory",
    "remember_turn",
    "vlm_expert_count",
]


def load_session_memory(store: Any, session_id: str) -> SessionMemory:
    """The session's remembered turns, oldest first (empty for a new session)."""
    from costa.store import load_memory

    return SessionMemory([record_from_row(r) for r in load_memory(store, session_id)])


@dataclass(frozen=True, eq=False)
class FinishedTurn:
    """A finished turn as the memory keeps it: its id, the instruction and what it resolved to (references replaced),
    its plan, the image it started from, its events (per-subtask images, reflection), the box it was pointed at."""

    turn_id: int
    instruction: str
    resolved: str
    plan: Any
    base: np.ndarray
    events: Sequence[Any]
    box: Box | None = None


def remember_turn(store: Any, session_id: str, turn: FinishedTurn) -> None:
    """Save a finished turn's plan, accepted masks (from its per-subtask images) and reflection feedback."""
    from costa.store import save_memory

    events = turn.events
    # A proposed subtask's result is remembered too: it is on the version path only once the user accepts it (a
    # discarded proposal makes no version, so its turn is never among the turns a follow-up resolves against), and
    # without it "make it darker" after an accepted replacement could not find the word it wrote.
    by_subtask = {
        e.subtask_id: e.image
        for e in events
        if e.kind in ("subtask_done", "subtask_proposed") and getattr(e, "image", None) is not None
    }
    images = list(by_subtask.items())
    feedback = [
        n for e in events if e.kind == "reflection" and e.decision != "accept" for x in e.experts for n in x["negative"]
    ]
    feedback += [
        f["text"]
        for e in events
        if e.kind == "reflection" and e.decision != "accept"
        for f in (getattr(e, "merged", None) or {}).get("fix", [])
    ]  # the aggregator's merged fixes
    feedback += [e.reason for e in events if e.kind == "reflection_kept" and not e.accepted]
    record = record_turn(
        turn.turn_id, turn.instruction, turn.resolved, turn.plan, turn.base, images, feedback, turn.box
    )
    save_memory(store, session_id, turn.turn_id, record_to_row(record))


def expected_reflection_seconds(tool_seconds: float, n_subtasks: int, n_vlm: int, protocol: Protocol) -> float:
    """Seconds reflection is expected to add to a turn whose path is predicted at `tool_seconds`.

    The offline experts and expected retries cost `expected_cost_share` of the tool seconds (from the table, measured
    by `costa bench reflection`); each VLM expert adds `vlm_seconds` per subtask.
    """
    return round(tool_seconds * protocol.expected_cost_share + n_subtasks * n_vlm * protocol.vlm_seconds, 6)


def vlm_expert_count(settings: Any) -> int:
    """How many VLM experts a turn would ask: the table's roles when an endpoint is configured, else 0."""
    from costa.llm_client import LlmConfig

    if LlmConfig.from_settings(settings) is None or not settings.reflect_vlm:
        return 0
    return len(load_protocol(settings.reflection_table).vlm_roles)
