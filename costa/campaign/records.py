"""Records of a campaign as stored: the campaign, its items (a task under one condition), their subtasks to score.

An item's subtasks (`Unit`) are what evaluators score: every planned subtask of every turn (done, proposed,
unverified, failed or skipped alike), every part of an instruction no subtask kind covers (`kind` "unsupported"),
and, for a turn that could not be planned at all, the turn itself (`kind` "unplanned"). `verdict` is costa's own
verdict on it, which the evaluators never see.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from costa.campaign.conditions import Condition
from costa.campaign.tasks import TaskSet
from costa.errors import InputError

#: A campaign name: letters, digits, `.`, `_`, `-` (it names files and appears in commands).
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: Item states: not run yet, running now, finished (scorable), failed (our error; `run` tries it again).
ITEM_STATES = ("pending", "running", "done", "failed")
#: costa's own verdicts on a unit. "done" is the only one in which costa vouches for the result.
VERDICTS = ("done", "proposed", "unverified", "failed", "skipped", "unsupported", "unplanned")


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise InputError(f"campaign name must be 1–64 letters, digits, '.', '_' or '-', got {name!r}")
    return name


def item_id(campaign: str, task_id: str, condition: Condition) -> str:
    """An opaque, stable item id: it names neither the task nor the condition (evaluators may see it)."""
    digest = hashlib.sha256(f"{campaign}\x00{task_id}\x00{condition.label}".encode()).hexdigest()
    return "i" + digest[:10]


@dataclass(frozen=True)
class Campaign:
    name: str
    task_file: str
    tasks: TaskSet
    conditions: tuple[Condition, ...]
    evaluators: tuple[str, ...]
    overlap: int
    created: float
    admins: tuple[str, ...] = ()  # who may open the admin view when login is on (it reveals the conditions)


@dataclass(frozen=True)
class Item:
    """One task run under one condition (its own session in the store)."""

    id: str
    campaign: str
    position: int
    task_id: str
    condition: Condition
    status: str
    session_id: str | None = None
    error: str = ""
    tool_seconds: float | None = None
    turn_seconds: float | None = None
    started: float | None = None
    finished: float | None = None


@dataclass(frozen=True)
class Unit:
    """One subtask of an item to score, with the versions to show before and after it."""

    item_id: str
    unit: str  # "t<turn>.<subtask id>", e.g. "t1.s2"; "t1.u1" an unsupported part; "t1.turn" an unplanned turn
    position: int
    turn: int  # 1-based turn number within the task
    kind: str  # subtask kind ("object_recoloration"), or "unsupported" / "unplanned"
    category: str  # the kind's name ("Object Recoloration"): the subtask-accuracy table's row
    description: str  # what was asked, for the evaluator ("Object Recoloration: 'the leaves' → red")
    verdict: str  # costa's own verdict (`VERDICTS`), never shown to evaluators
    before_version: int | None
    after_version: int | None
    tool: str = ""  # the final tool of the subtask's chosen path ("" when none ran to the end)
    pointing: str = "none"  # how the task's turn pointed: none / click / box / brush
    answer: str = ""  # a read-only subtask's text result (a caption, the text read), shown to evaluators
    boxes: tuple[tuple[int, int, int, int, str], ...] = ()  # what it found: (x, y, w, h, label), drawn for evaluators


@dataclass(frozen=True)
class Assignment:
    item_id: str
    evaluator: str
    position: int
