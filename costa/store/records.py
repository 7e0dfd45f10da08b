"""The store's records (frozen dataclasses) and the task-accuracy arithmetic over scores (pure)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

VersionKind = Literal["upload", "subtask", "turn"]
TurnStatus = Literal["running", "done", "partial", "unverified", "proposed", "failed", "stopped", "interrupted"]
#: What became of a subtask's target: verified by its grounder, found but not verified, or needing the user to point.
TargetStatus = Literal["verified", "unverified", "pointing_needed"]
#: Scores evaluators may give a subtask: fail, partial credit 0.1 … 0.9 (CoSTA*'s human-evaluation rubric), full.
SCORE_LEVELS: tuple[float, ...] = tuple(round(i / 10, 1) for i in range(11))


@dataclass(frozen=True)
class Session:
    id: str
    owner: str | None
    created: float
    head: int | None
    redo: tuple[int, ...] = ()


@dataclass(frozen=True)
class Version:
    """One image in a session's history; `parent_id` makes the history a tree (branches keep both futures)."""

    id: int
    session_id: str
    parent_id: int | None
    turn_id: int | None
    subtask_id: str | None
    kind: str
    label: str
    file: str
    sha256: str
    width: int
    height: int
    created: float

    def summary(self) -> dict[str, object]:
        """The fields a client or a reproducibility bundle shows (no session id, file path or time)."""
        return {
            "id": self.id,
            "parent_id": self.parent_id,
            "kind": self.kind,
            "label": self.label,
            "turn_id": self.turn_id,
            "subtask_id": self.subtask_id,
            "sha256": self.sha256,
            "width": self.width,
            "height": self.height,
        }


@dataclass(frozen=True)
class Turn:
    """One instruction and what came of it; `events` are dicts from `costa.eventlog.event_to_dict`."""

    id: int
    session_id: str
    base_version: int | None
    result_version: int | None
    instruction: str
    plan: dict[str, Any] | None
    params: dict[str, Any]
    status: str
    events: list[dict[str, Any]]
    summary: dict[str, Any]
    created: float
    finished: float | None


@dataclass(frozen=True)
class Score:
    id: int
    session_id: str
    turn_id: int
    subtask_id: str
    score: float
    comment: str
    evaluator: str
    created: float


def row_session(r: Mapping[str, Any]) -> Session:
    return Session(r["id"], r["owner"], r["created"], r["head"], tuple(json.loads(r["redo"])))


def row_version(r: Mapping[str, Any]) -> Version:
    return Version(
        id=r["id"],
        session_id=r["session_id"],
        parent_id=r["parent_id"],
        turn_id=r["turn_id"],
        subtask_id=r["subtask_id"],
        kind=r["kind"],
        label=r["label"],
        file=r["file"],
        sha256=r["sha256"],
        width=r["width"],
        height=r["height"],
        created=r["created"],
    )


def row_turn(r: Mapping[str, Any]) -> Turn:
    return Turn(
        id=r["id"],
        session_id=r["session_id"],
        base_version=r["base_version"],
        result_version=r["result_version"],
        instruction=r["instruction"],
        plan=json.loads(r["plan"]) if r["plan"] else None,
        params=json.loads(r["params"]),
        status=r["status"],
        events=json.loads(r["events"]),
        summary=json.loads(r["summary"]),
        created=r["created"],
        finished=r["finished"],
    )


def row_score(r: Mapping[str, Any]) -> Score:
    return Score(
        r["id"], r["session_id"], r["turn_id"], r["subtask_id"], r["score"], r["comment"], r["evaluator"], r["created"]
    )


def accuracy(scores: Sequence[Score]) -> tuple[dict[int, float], float | None]:
    """Task accuracy per turn (mean over its scored subtasks, evaluators averaged first) and overall (mean of tasks).

    >>> s = [Score(1, "s", 1, "s1", 1.0, "", "a", 0), Score(2, "s", 1, "s2", 0.5, "", "a", 0),
    ...      Score(3, "s", 2, "s1", 0.0, "", "a", 0)]
    >>> accuracy(s)
    ({1: 0.75, 2: 0.0}, 0.375)
    """
    per_subtask: dict[tuple[int, str], list[float]] = {}
    for s in scores:
        per_subtask.setdefault((s.turn_id, s.subtask_id), []).append(s.score)
    per_turn: dict[int, list[float]] = {}
    for (tid, _), values in per_subtask.items():
        per_turn.setdefault(tid, []).append(sum(values) / len(values))
    tasks = {tid: round(sum(v) / len(v), 4) for tid, v in sorted(per_turn.items())}
    overall = round(sum(tasks.values()) / len(tasks), 4) if tasks else None
    return tasks, overall
