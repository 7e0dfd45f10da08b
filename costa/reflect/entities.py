"""What is on the image now, as the conversation left it: one entity per thing an accepted edit touched.

Entities are derived by replaying the remembered turns (`memory.TurnRecord`) in order, so they need no storage of
their own and always agree with the turns on the current version's path (an undone turn's edits are not replayed):

- recolouring the pink rose yellow leaves an entity "the yellow rose" whose region is the rose's pixels;
- replacing the word 'SALE' with 'OPEN' leaves a text entity holding 'OPEN' and the box the new word was drawn in;
- an added object or text is a new entity; a removed object is gone; a replaced object takes the new noun;
- a whole-image edit (brightness, scenery, style) changes the image entity.

Each entity keeps its changes (oldest first) with the turn, the subtask and the region each changed, so "change it
back" can restore the region exactly as it was before the last change (`costa.session.conversation`).

>>> import numpy as np
>>> from costa.reflect.records import TurnRecord
>>> m = np.zeros((4, 4), bool); m[1:3, 1:3] = True
>>> rec = TurnRecord(1, "make the pink rose yellow", "make the pink rose yellow",
...                  (("object_recoloration", "pink rose", "yellow", "s1"),), (("s1", m),))
>>> [e.describe() for e in derive_entities([rec])]
['the yellow rose']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from costa.targets import parse_target
from costa.types import Box

if TYPE_CHECKING:
    from costa.reflect.records import TurnRecord

#: Subtask kinds that change the whole image (the image entity), whatever their target.
_WHOLE_IMAGE = frozenset(
    {"global_adjustment", "changing_scenery", "style_transfer", "image_deblurring", "image_upscaling", "outpainting",
     "image_cropping", "viewpoint_change", "background_removal", "background_blur"}
)  # fmt: skip
_TEXT_EDITS = frozenset({"text_replacement", "text_addition", "text_removal", "text_redaction", "keyword_highlighting"})
_OBJECT_EDITS = frozenset(
    {"object_recoloration", "object_replacement", "object_addition", "object_removal", "attribute_edit", "object_move",
     "privacy_blur"}
)  # fmt: skip


@dataclass(frozen=True, eq=False)
class Change:
    """One accepted edit of an entity: the turn and subtask, its kind and result, what the entity was called before,
    and the pixels it changed (None for an edit that changed no pixel one can point at)."""

    turn: int
    subtask_id: str
    kind: str
    result: str | None
    before: str
    region: np.ndarray | None


@dataclass(frozen=True, eq=False)
class Entity:
    """A thing on the image now: `kind` "object", "text" or "image"; `noun` the object's noun ("rose") or the text
    itself ("OPEN"); `colour` its colour word when known; `region` the pixels the last edits of it touched."""

    key: int
    kind: str
    noun: str
    colour: str | None = None
    region: np.ndarray | None = None
    changes: tuple[Change, ...] = ()

    @property
    def turn(self) -> int:
        """The last turn that changed it."""
        return self.changes[-1].turn if self.changes else 0

    def describe(self) -> str:
        """How a new instruction names it: "the yellow rose", "the word 'OPEN'", "the image"."""
        if self.kind == "image":
            return "the image"
        if self.kind == "text":
            return f"the word '{self.noun}'"
        return f"the {self.colour} {self.noun}" if self.colour else f"the {self.noun}"

    def box(self, pad: int = 2) -> Box | None:
        """The bounding box of its region (padded by `pad` pixels inside the image), or None without one."""
        if self.region is None or not self.region.any():
            return None
        ys, xs = np.nonzero(self.region)
        h, w = self.region.shape
        x0, y0 = max(0, int(xs.min()) - pad), max(0, int(ys.min()) - pad)
        x1, y1 = min(w, int(xs.max()) + 1 + pad), min(h, int(ys.max()) + 1 + pad)
        return Box(x0, y0, x1 - x0, y1 - y0)

    def matches(self, phrase: str | None) -> bool:
        """Whether a target phrase names this entity ("rose", "the yellow rose", "'OPEN'", "the word OPEN")."""
        if not phrase:
            return False
        text = phrase.strip().strip("'\"").lower()
        if self.kind == "text":
            bare = text.removeprefix("the ").removeprefix("word ").removeprefix("text ").strip("'\" ")
            return bare == self.noun.lower()
        p = parse_target(phrase)
        if not p.noun or _singular(p.noun) != _singular(self.noun):
            return False
        return p.colour is None or self.colour is None or p.colour.lower() == self.colour.lower()


def _singular(noun: str) -> str:
    words = noun.lower().split()
    last = words[-1] if words else ""
    if len(last) > 3 and last.endswith("s") and not last.endswith("ss"):
        last = last[:-1]
    return " ".join([*words[:-1], last])


def _split(target: str) -> tuple[str, str | None]:
    """ "pink rose" → ("rose", "pink"); "the red circle" → ("circle", "red")."""
    p = parse_target(target)
    noun = p.noun or target.strip()
    for article in ("the ", "a ", "an "):
        noun = noun.removeprefix(article)
    return noun, p.colour


def derive_entities(turns: Sequence[TurnRecord]) -> list[Entity]:
    """Replay `turns` (oldest first) into the entities on the image now, most recently changed last."""
    entities: list[Entity] = []
    for t in turns:
        masks = dict(t.masks)
        for step in t.steps:
            kind, target, result = step[0], step[1], step[2]
            sid = step[3] if len(step) > 3 else ""
            entities = _apply(entities, t.turn, kind, target, result, sid, masks.get(sid))
    return sorted(entities, key=lambda e: e.turn)


def _find(entities: list[Entity], kind: str, phrase: str | None) -> int | None:
    for i in range(len(entities) - 1, -1, -1):
        if entities[i].kind == kind and entities[i].matches(phrase):
            return i
    return None


def _apply(
    entities: list[Entity],
    turn: int,
    kind: str,
    target: str | None,
    result: str | None,
    sid: str,
    region: np.ndarray | None,
) -> list[Entity]:
    """The entities after one accepted subtask."""
    out = list(entities)
    key = max((e.key for e in out), default=0) + 1
    if kind == "restore":
        return _apply_restore(out, turn, target, result, sid, region)
    if kind in _TEXT_EDITS:
        return _apply_text(out, key, turn, kind, target, result, sid, region)
    if kind in _WHOLE_IMAGE and not (kind == "global_adjustment" and target):
        i = next((k for k, e in enumerate(out) if e.kind == "image"), None)
        image = out.pop(i) if i is not None else Entity(key, "image", "image")
        change = Change(turn, sid, kind, result, image.describe(), None)
        out.append(replace(image, changes=(*image.changes, change)))
        return out
    if kind not in _OBJECT_EDITS and kind != "global_adjustment":
        return out  # detection, segmentation, reading: nothing on the image changed
    j = _find(out, "text", target) if kind == "global_adjustment" and target else None
    if j is not None:  # "make it darker" after a replacement: the word costa wrote is darkened, it stays that word
        word = out.pop(j)
        out.append(replace(word, changes=(*word.changes, Change(turn, sid, kind, result, word.describe(), region))))
        return out
    if kind == "object_addition":
        noun, colour = _split(result or "object")
        out.append(Entity(key, "object", noun, colour, region, (Change(turn, sid, kind, result, "", region),)))
        return out
    i = _find(out, "object", target) if target else None
    if i is None:
        noun, colour = _split(target or "region")
        old = Entity(key, "object", noun, colour, None)
    else:
        old = out.pop(i)
    if kind == "object_removal":
        return out  # a removed object is gone
    change = Change(turn, sid, kind, result, old.describe(), region)
    # The thing keeps the region it was first found in while edits only recolour or shade it: each edit's changed
    # pixels include a feathered rim, and taking their union made the region grow turn after turn (a long session
    # then recoloured the saucer and the sign too). An edit that changes its shape gives the new region.
    reshaped = kind in ("object_replacement", "attribute_edit", "object_move")
    keep = old.region is not None and region is not None and old.region.shape == region.shape and not reshaped
    new = replace(old, region=old.region if keep or region is None else region, changes=(*old.changes, change))
    if kind == "object_recoloration" and result:
        new = replace(new, colour=result.lower())
    elif kind == "object_replacement" and result:
        noun, colour = _split(result)
        new = replace(new, noun=noun, colour=colour)
    out.append(new)
    return out


def _apply_text(
    out: list[Entity],
    key: int,
    turn: int,
    kind: str,
    target: str | None,
    result: str | None,
    sid: str,
    region: np.ndarray | None,
) -> list[Entity]:
    if kind == "text_addition":
        change = Change(turn, sid, kind, result, "", region)
        out.append(Entity(key, "text", (result or "").strip(), None, region, (change,)))
        return out
    i = _find(out, "text", target) if target else None
    old = out.pop(i) if i is not None else Entity(key, "text", (target or "").strip("'\" ") or "text")
    if kind in ("text_removal", "text_redaction") and old.noun != "text":
        return out  # the word is gone (or hidden): nothing to refer to by its letters
    change = Change(turn, sid, kind, result, old.describe(), region)
    new = replace(old, region=old.region if region is None else region, changes=(*old.changes, change))
    if kind == "text_replacement" and result:
        new = replace(new, noun=result.strip(), region=region if region is not None else new.region)
    out.append(new)
    return out


def _apply_restore(
    out: list[Entity], turn: int, target: str | None, result: str | None, sid: str, region: np.ndarray | None
) -> list[Entity]:
    """A restore ("change it back") named the thing as it was called (`target`) and as it is again (`result`)."""
    i = next((k for k in range(len(out) - 1, -1, -1) if out[k].describe() == target), None)
    if i is None or not result:
        return out
    old = out.pop(i)
    change = Change(turn, sid, "restore", result, old.describe(), region)
    if old.kind == "text":
        word = result.removeprefix("the word ").strip("'\" ")
        out.append(replace(old, noun=word or old.noun, changes=(*old.changes, change)))
    else:
        noun, colour = _split(result)
        out.append(replace(old, noun=noun, colour=colour, changes=(*old.changes, change)))
    return out
