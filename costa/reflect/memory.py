"""Cross-turn memory: per turn the plan, the accepted masks and the reflection feedback; references resolved from it.

- `SessionMemory.protected(shape)`: earlier turns' edited regions, which the preservation expert checks every turn
  (a region whose image size no longer matches — after an upscale or outpaint — is left out).
- `SessionMemory.resolve(text)`: "it", "that", "the same colour", "make it bigger", "use green instead", "do the same
  to the other sign" rewritten from history into an instruction the planner can read, with the turn it is about and
  that turn's user box (so "make it red" after "make the object blue" with a box acts on the same box).
- `SessionMemory.summary_lines()`: a short history for the LLM planner and the VLM experts (sent as quoted data).

Stored through `costa.store.Store` (migration `_m3_memory`): one row per turn, masks as packed bits.

Example:
    >>> m = SessionMemory()
    >>> steps = (("object_recoloration", "object", "red"),)
    >>> m.add(TurnRecord(1, "Make the object red.", "Make the object red.", steps))
    >>> m.resolve("Use green instead.").text
    'Make the object green.'
    >>> m.resolve("Make it bigger.").text
    'Make the object bigger.'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from costa.reflect.experts import ProtectedRegion
from costa.types import Box

_PRONOUN = r"(?:it|that|this|that one|this one)"
_VERBS_OBJECT = r"(?:remove|erase|delete|highlight|blur|redact|recolou?r|paint|colou?r|turn|make)"


@dataclass(frozen=True)
class TurnRecord:
    """One remembered turn. `steps` are (subtask kind, target, result) of its plan; `masks` its accepted regions."""

    turn: int
    instruction: str
    resolved: str
    steps: tuple[tuple[str, str | None, str | None], ...] = ()
    masks: tuple[tuple[str, np.ndarray], ...] = ()  # (subtask id, bool H×W)
    feedback: tuple[str, ...] = ()
    box: Box | None = None


@dataclass(frozen=True)
class Resolution:
    """An instruction after reference resolution: the text to plan, the turn it refers to (0 = none), and why."""

    text: str
    about: int = 0
    box: Box | None = None
    note: str = ""

    @property
    def changed(self) -> bool:
        return self.about > 0


@dataclass
class SessionMemory:
    turns: list[TurnRecord] = field(default_factory=list)

    def add(self, record: TurnRecord) -> None:
        self.turns.append(record)

    def protected(self, shape: tuple[int, int]) -> tuple[ProtectedRegion, ...]:
        out = []
        for t in self.turns:
            for sid, mask in t.masks:
                if mask.shape == tuple(shape) and mask.any():
                    label = next((f"{k} of {tg!r}" if tg else k for k, tg, _ in t.steps), "an earlier edit")
                    out.append(ProtectedRegion(t.turn, sid, label, mask))
        return tuple(out)

    def summary_lines(self, last: int = 6) -> list[str]:
        lines = []
        for t in self.turns[-last:]:
            steps = ", ".join(
                k + (f" of {tg!r}" if tg else "") + (f" to {res!r}" if res else "") for k, tg, res in t.steps
            )
            extra = f"; feedback: {'; '.join(t.feedback[:2])}" if t.feedback else ""
            lines.append(f"turn {t.turn}: {t.resolved!r} → {steps or 'nothing done'}{extra}")
        return lines

    # ------------------------------------------------------------------------------------------ references

    def _last(self, want: str = "target") -> tuple[TurnRecord, tuple[str, str | None, str | None]] | None:
        for t in reversed(self.turns):
            for step in reversed(t.steps):
                _kind, target, result = step
                if want == "target" and target:
                    return t, step
                if want == "colour" and result and _is_colour(result):
                    return t, step
        return None

    def resolve(self, text: str) -> Resolution:
        """Rewrite references to earlier turns; text without one comes back unchanged (about 0)."""
        s = text.strip()
        if not self.turns:
            return Resolution(s)
        m = re.match(r"^(?:now\s+|and\s+)?(?:use|try|make it|go with)\s+([a-z]+)\s+instead\b\.?$", s, re.I)
        if m and _is_colour(m.group(1)):
            found = self._last("colour")
            if found is not None:
                t, (_, _, old) = found
                assert old is not None
                new = re.sub(rf"\b{re.escape(old)}\b", m.group(1).lower(), t.resolved, flags=re.I)
                return Resolution(new, t.turn, t.box, f"'{s}' repeats turn {t.turn} with {m.group(1).lower()}")
        if re.search(r"\bthe same colou?r\b", s, re.I):
            found = self._last("colour")
            if found is not None:
                t, (_, _, colour) = found
                assert colour is not None
                new = re.sub(r"\bthe same colou?r(?: as before)?\b", str(colour), s, flags=re.I)
                new = re.sub(r"\s+", " ", new)
                pron = self._pronoun(new)
                return Resolution(pron.text, pron.about or t.turn, pron.box or t.box, f"'the same colour' = {colour}")
        m = re.match(r"^(?:now\s+)?do the same (?:to|for|with|on) (.+?)\.?$", s, re.I)
        if m:
            found = self._last("target")
            if found is not None:
                t, (_, old, _) = found
                assert old is not None
                new_target = m.group(1).strip()
                new = _swap_target(t.resolved, old, new_target)
                if new != t.resolved:
                    return Resolution(new, t.turn, None, f"'{s}' repeats turn {t.turn} on {new_target}")
        return self._pronoun(s)

    def _pronoun(self, s: str) -> Resolution:
        pat = rf"^((?:now\s+|also\s+|and\s+)?{_VERBS_OBJECT}\s+){_PRONOUN}(\b.*)$"
        m = re.match(pat, s, re.I)
        if not m:
            return Resolution(s)
        rest = m.group(2)
        verb = m.group(1).strip().lower()
        if verb in ("make", "turn", "paint", "colour", "color"):
            # "make it red / bigger" refers to a target; "make it darker" means the image (a global adjustment).
            word = re.match(r"\s*(?:to\s+)?([a-z]+)", rest, re.I)
            if not word or not (_is_colour(word.group(1)) or word.group(1).lower() in _SIZE_WORDS):
                return Resolution(s)
        found = self._last("target")
        if found is None:
            return Resolution(s)
        t, (kind, target, _) = found
        assert target is not None
        phrase = _target_phrase(kind, target)
        return Resolution(m.group(1) + phrase + rest, t.turn, t.box, f"'it' = {phrase} (turn {t.turn})")


_SIZE_WORDS = frozenset({"bigger", "larger", "smaller", "wider", "taller"})


def _is_colour(word: str) -> bool:
    from costa.colours import parse_colour

    try:
        return parse_colour(word) is not None
    except Exception:
        return False


def _target_phrase(kind: str, target: str) -> str:
    """How a target reads in a new instruction: text targets as "the word 'X'", objects as "the X"."""
    t = target.strip()
    if kind.startswith("text_") or kind == "keyword_highlighting":
        return f"the word '{t.strip(chr(39) + chr(34))}'"
    return t if t.lower().startswith(("the ", "a ", "an ")) else f"the {t}"


def _swap_target(instruction: str, old: str, new: str) -> str:
    """`instruction` with its target `old` replaced by `new` (quoted words by quoted words, phrases by phrases)."""
    quoted_new = re.match(r"^(?:the (?:word|text) )?['\"](.+)['\"]$", new.strip(), re.I)
    bare_old = old.strip("'\" ")
    if quoted_new:
        return re.sub(rf"(['\"]){re.escape(bare_old)}(['\"])", rf"\g<1>{quoted_new.group(1)}\g<2>", instruction)
    phrase = new if new.lower().startswith(("the ", "a ", "an ")) else f"the {new}"
    quoted_old = rf"(?:the (?:word|text) )?['\"]{re.escape(bare_old)}['\"]"
    if re.search(quoted_old, instruction, re.I):
        return re.sub(quoted_old, phrase, instruction, flags=re.I)
    out = re.sub(rf"\bthe {re.escape(bare_old)}\b", phrase, instruction, flags=re.I)
    if out == instruction:
        out = re.sub(rf"\b{re.escape(bare_old)}\b", phrase, instruction, flags=re.I)
    return out


def record_turn(
    turn: int,
    instruction: str,
    resolved: str,
    plan: Any,
    base: np.ndarray,
    images: Sequence[tuple[str, np.ndarray]],
    feedback: Sequence[str] = (),
    box: Box | None = None,
    level: int = 12,
) -> TurnRecord:
    """A `TurnRecord` from a finished turn: accepted masks are the pixels each subtask changed (> `level`)."""
    from costa.vlm import GLOBAL_KINDS

    steps = tuple((s.kind, s.target, s.result) for s in plan.subtasks) if plan is not None else ()
    kinds = {s.id: s.kind for s in plan.subtasks} if plan is not None else {}
    masks = []
    prev = base
    for sid, img in images:
        if img is None:
            continue
        if img.shape == prev.shape and kinds.get(sid) not in GLOBAL_KINDS:  # a whole-image edit protects nothing
            mask = np.abs(img.astype(np.int16) - prev.astype(np.int16)).max(axis=2) > level
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
    steps = tuple((str(k), t, r) for k, t, r in d.get("steps", ()))
    return TurnRecord(int(d["turn"]), d["instruction"], d["resolved"], steps, masks, tuple(d.get("feedback", ())), box)
