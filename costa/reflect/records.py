"""The record of one remembered turn, shared by the memory and what is derived from it (entities, references), and
what reading a follow-up against them gives (`Resolution`, `Restore`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from costa.types import Box


@dataclass(frozen=True)
class TurnRecord:
    """One remembered turn. `steps` are (subtask kind, target, result, subtask id) of its plan (older rows have no id);
    `masks` its accepted regions (subtask id, the pixels it changed)."""

    turn: int
    instruction: str
    resolved: str
    steps: tuple[tuple[Any, ...], ...] = ()
    masks: tuple[tuple[str, np.ndarray], ...] = ()  # (subtask id, bool H×W)
    feedback: tuple[str, ...] = ()
    box: Box | None = None


@dataclass(frozen=True, eq=False)
class Restore:
    """Put `region` back as it was before `turn`'s subtask `subtask_id` changed it ("change it back")."""

    entity: str  # what it is called now ("the yellow rose")
    before: str  # what it is called once restored ("the pink rose")
    turn: int
    subtask_id: str
    region: np.ndarray


@dataclass(frozen=True, eq=False)
class Resolution:
    """An instruction after reference resolution: the text to plan, the turn it refers to (0 = none), the box and
    region of what it names, the reference type read, and a restore or a question instead of an edit. `parts` are
    the things a plural reference names, each with its own region ((name without "the", region)): "them" after an
    edit of several things, so each subtask of the plan acts on its own thing's pixels, not on all of them."""

    text: str
    about: int = 0
    box: Box | None = None
    note: str = ""
    region: np.ndarray | None = None
    reference: str = ""
    question: str | None = None
    restore: Restore | None = None
    parts: tuple[tuple[str, np.ndarray], ...] = ()

    @property
    def changed(self) -> bool:
        return self.about > 0 or self.restore is not None or self.question is not None
