"""A per-turn memo of tool runs: within one turn nothing runs twice on the same input.

A run is keyed by the tool, what the subtask asks (kind, target, result, the plan's params), the parameters it runs
with, and its input state (the image's pixels and every artifact: the user's region, the boxes and masks earlier
steps made). The whole-plan search meets the same step after another ordering, reflection's retries re-search a
subtask whose grounder already ran on that image, the fast–slow fallback searches again from where a rule failed:
each of those finds the earlier run here and replays it at 0 s (the ledger says so), and nothing is learned from the
replay (it says nothing new about the tool).

What is remembered is what the run produced and what its check said, or the tool's recorded failure; a run the
user's Stop interrupted is never remembered.

Example:
    >>> import numpy as np
    >>> from costa.types import EditState, Subtask
    >>> memo = RunMemo()
    >>> s = Subtask(id="s1", kind="image_upscaling")
    >>> key = memo.key("lanczos_upscale", s, {"factor": 2}, EditState(np.zeros((4, 4, 3), np.uint8)))
    >>> memo.get(key) is None, len(memo)
    (True, 0)
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from costa.types import EditState, Subtask, ToolOutput, Verdict

#: Runs remembered per turn (the oldest are forgotten first); a turn rarely makes more than a few hundred.
MEMO_SIZE = 512


def digest(array: np.ndarray) -> str:
    """A short content hash of an array with its shape and dtype (equal arrays, equal digests)."""
    a = np.ascontiguousarray(array)
    return hashlib.blake2b(a.tobytes(), digest_size=12).hexdigest() + f"{a.shape}{a.dtype}"


def value_key(value: Any) -> str:
    """A string identifying an artifact's value: arrays by content hash, records field by field, the rest by repr."""
    if isinstance(value, np.ndarray):
        return digest(value)
    if isinstance(value, tuple | list):
        return "(" + ",".join(value_key(v) for v in value) + ")"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{k}:{value_key(v)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))) + "}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = (f"{f.name}={value_key(getattr(value, f.name))}" for f in dataclasses.fields(value))
        return f"{type(value).__name__}(" + ",".join(parts) + ")"
    return repr(value)


def state_key(edit: EditState) -> str:
    """The input a tool sees: the image and every artifact."""
    return digest(edit.image) + "|" + value_key(dict(edit.artifacts))


@dataclass(frozen=True, eq=False)
class MemoEntry:
    """One remembered run: what the tool produced and its check's verdict, or the tool's failure (`error`), the
    seconds it took when it ran, and where it ran first (subtask id, tool, attempt) for the ledger."""

    output: ToolOutput | None
    verdict: Verdict | None
    error: Exception | None
    seconds: float
    first: tuple[str, str, int]


@dataclass
class RunMemo:
    """The memo of one turn's tool runs (thread-safe: a stopped call's worker may still return)."""

    size: int = MEMO_SIZE
    hits: int = 0
    _runs: dict[Hashable, MemoEntry] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def key(self, tool: str, subtask: Subtask, params: Mapping[str, Any], before: EditState) -> Hashable:
        """The identity of a run: tool, what the subtask asks, parameters, input state."""
        asked = (subtask.kind, subtask.target, subtask.result, value_key(dict(subtask.params)))
        return (tool, asked, value_key(dict(params)), state_key(before))

    def get(self, key: Hashable) -> MemoEntry | None:
        with self._lock:
            entry = self._runs.get(key)
            if entry is not None:
                self.hits += 1
            return entry

    def put(self, key: Hashable, entry: MemoEntry) -> None:
        with self._lock:
            if key not in self._runs and len(self._runs) >= self.size:
                self._runs.pop(next(iter(self._runs)))
            self._runs[key] = entry

    def __len__(self) -> int:
        with self._lock:
            return len(self._runs)
