"""The record of one remembered turn, shared by the memory and what is derived from it (entities, references)."""

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
