"""Cross-turn memory: per turn the plan, the accepted masks and the reflection feedback; what is on the image now and
the references to it are derived from these.

- `SessionMemory.protected(shape)`: earlier turns' edited regions, which the preservation expert checks every turn
  (a region whose image size no longer matches — after an upscale or outpaint — is left out).
- `SessionMemory.entities()`: what is on the image now (`costa.reflect.entities`): "the yellow rose" after the pink
  rose was recoloured, the word 'OPEN' in its new box after 'SALE' was replaced, added things, not removed ones.
- `SessionMemory.resolve(text)`: references to those ("it", "the text", "use red instead", "the same colour as X",
  "the other one", "a bit more", "change it back") read by `costa.reflect.references` into an instruction the
  planner can read, the region it acts on, a restore, or one short question.
- `SessionMemory.summary_lines()`: a short history for the LLM planner and the VLM experts (sent as quoted data).

Stored through `costa.store.Store` (migration `_m3_memory`): one row per turn, masks as packed bits.

Example:
    >>> m = SessionMemory()
    >>> steps = (("object_recoloration", "object", "red", "s1"),)
    >>> m.add(TurnRecord(1, "Make the object red.", "Make the object red.", steps))
    >>> m.resolve("Use green instead.").text
    'make the red object green'
    >>> m.resolve("Make it bigger.").text
    'Make the red object bigger'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from costa.reflect.entities import Entity, derive_entities
from costa.reflect.experts import ProtectedRegion
from costa.reflect.records import TurnRecord
from costa.reflect.references import Resolution
from costa.reflect.wording import swap_target
from costa.types import Box

__all__ = ["CHANGED_LEVEL", "Resolution", "SessionMemory", "TurnRecord", "record_turn", "swap_target"]

#: A pixel whose largest channel moved by more than this (0–255) was changed by the subtask.
CHANGED_LEVEL = 12


@dataclass
class SessionMemory:
    """The remembered turns, oldest first. Read for a session (`costa.session.conversation.path_memory`), each
    record's `turn` is the number the session shows for it (its chat, ledger and history count 1, 2, 3… per
    session) and `ids` maps those numbers back to the store's turn ids; built by hand, `turn` is whatever the caller
    gave and `ids` is empty."""

    turns: list[TurnRecord] = field(default_factory=list)
    ids: Mapping[int, int] = field(default_factory=dict)

    def add(self, record: TurnRecord) -> None:
        self.turns.append(record)

    def turn_id(self, number: int) -> int:
        """The store's id of the turn the session numbers `number` (the number itself when no ids are known)."""
        return self.ids.get(number, number)

    def protected(self, shape: tuple[int, int]) -> tuple[ProtectedRegion, ...]:
        out = []
        for t in self.turns:
            for sid, mask in t.masks:
                if mask.shape == tuple(shape) and mask.any():
                    label = next((f"{st[0]} of {st[1]!r}" if st[1] else st[0] for st in t.steps), "an earlier edit")
                    out.append(ProtectedRegion(t.turn, sid, label, mask))
        return tuple(out)

    def summary_lines(self, last: int = 6) -> list[str]:
        lines = []
        for t in self.turns[-last:]:
            steps = ", ".join(
                st[0] + (f" of {st[1]!r}" if st[1] else "") + (f" to {st[2]!r}" if st[2] else "") for st in t.steps
            )
            extra = f"; feedback: {'; '.join(t.feedback[:2])}" if t.feedback else ""
            lines.append(f"turn {t.turn}: {t.resolved!r} → {steps or 'nothing done'}{extra}")
        return lines

    def resolve(self, text: str, turns: Sequence[TurnRecord] | None = None) -> Resolution:
        """Resolve references to what is on the image now (`costa.reflect.references`); text without one comes
        back unchanged (about 0). `turns`: the remembered turns on the current version's path (default: all)."""
        from costa.reflect.references import resolve_references

        return resolve_references(text, self.turns if turns is None else turns)

    def entities(self) -> list[Entity]:
        """What is on the image now (`costa.reflect.entities`), most recently changed last."""
        return derive_entities(self.turns)


def record_turn(
    turn: int,
    instruction: str,
    resolved: str,
    plan: Any,
    base: np.ndarray,
    images: Sequence[tuple[str, np.ndarray]],
    feedback: Sequence[str] = (),
    box: Box | None = None,
) -> TurnRecord:
    """A `TurnRecord` from a finished turn: accepted masks are the pixels each subtask changed (> `CHANGED_LEVEL`)."""
    from costa.vlm import GLOBAL_KINDS

    steps = tuple((s.kind, s.target, s.result, s.id) for s in plan.subtasks) if plan is not None else ()
    kinds = {s.id: s.kind for s in plan.subtasks} if plan is not None else {}
    regional = {s.id for s in plan.subtasks if s.target} if plan is not None else set()
    masks = []
    prev = base
    for sid, img in images:
        if img is None:
            continue
        # a whole-image edit protects nothing; the same kind limited to a target ("darken the rose") is regional
        if img.shape == prev.shape and (kinds.get(sid) not in GLOBAL_KINDS or sid in regional):
            mask = np.abs(img.astype(np.int16) - prev.astype(np.int16)).max(axis=2) > CHANGED_LEVEL
            if mask.any():
                masks.append((sid, mask))
        prev = img
    return TurnRecord(turn, instruction, resolved, steps, tuple(masks), tuple(feedback)[:6], box)


# ---------------------------------------------------------------------------------------------- persistence


def pack_mask(mask: np.ndarray) -> tuple[int, int, bytes]:
    """(height, width, packed bits) of a bool mask."""
    return int(mask.shape[0]), int(mask.shape[1]), np.packbits(mask.astype(bool), axis=None).tobytes()


def unpack_mask(height: int, width: int, data: bytes) -> np.ndarray:
    bits = np.unpackbits(np.frombuffer(data, np.uint8), count=height * width)
    return bits.reshape(height, width).astype(bool)


def record_to_row(r: TurnRecord) -> dict[str, Any]:
    """JSON-ready fields plus packed masks, for `Store.save_memory`."""
    return {
        "turn": r.turn,
        "instruction": r.instruction,
        "resolved": r.resolved,
        "steps": [list(s) for s in r.steps],
        "feedback": list(r.feedback),
        "box": [r.box.x, r.box.y, r.box.w, r.box.h] if r.box is not None else None,
        "masks": [(sid, *pack_mask(m)) for sid, m in r.masks],
    }


def record_from_row(d: Mapping[str, Any]) -> TurnRecord:
    box = Box(*d["box"]) if d.get("box") else None
    masks = tuple((sid, unpack_mask(h, w, data)) for sid, h, w, data in d.get("masks", ()))
    steps = tuple((str(st[0]), *st[1:]) for st in d.get("steps", ()))
    return TurnRecord(int(d["turn"]), d["instruction"], d["resolved"], steps, masks, tuple(d.get("feedback", ())), box)
