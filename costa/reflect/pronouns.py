"""Plural references across turns: "them", "those", "these" after an edit of several things.

`resolve_references` (`costa.reflect.references`) reads "make them darker" with these: after "make the cup and the
saucer red" "them" is both (their regions together); after "remove the cars" they are gone, so it asks instead of
guessing another thing; after one thing, when an earlier turn edited a set that holds it, it asks which is meant.

>>> import numpy as np
>>> from costa.reflect.entities import Change, Entity
>>> m = np.zeros((4, 4), bool); m[0, 0] = True
>>> cup = Entity(1, "object", "cup", "red", m, (Change(1, "s1", "object_recoloration", "red", "the cup", m),))
>>> saucer = Entity(2, "object", "saucer", "red", m.T.copy(), (Change(1, "s2", "object_recoloration", "red", "", m),))
>>> plural("balls"), plural("glass"), Group((cup, saucer)).describe()
(True, False, 'the red cup and the red saucer')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from costa.reflect.entities import Entity
from costa.reflect.records import Resolution
from costa.types import Box

if TYPE_CHECKING:
    from costa.reflect.records import TurnRecord


@dataclass(frozen=True, eq=False)
class Group:
    """Several things named together in a question ("the red cup and the red saucer")."""

    members: tuple[Entity, ...]

    def describe(self) -> str:
        return group_name(self.members)


def group_name(members: Sequence[Entity]) -> str:
    """How an instruction names several things: "the yellow mug and the green plate"; the same name twice once, in
    the plural ("the blue discs")."""
    names = list(dict.fromkeys(x.describe() for x in members))
    if len(names) == 1 and len(members) > 1 and members[0].kind == "object" and not plural(names[0]):
        return names[0] + ("es" if names[0].endswith(("s", "x", "ch", "sh")) else "s")
    return " and ".join(names)


def plural(noun: str) -> bool:
    """Whether a noun or a list of names reads as plural ("balls", "the cup and the saucer"); crude, like
    `entities._singular`."""
    last = noun.lower().split()[-1] if noun.split() else ""
    return " and " in noun.lower() or (len(last) > 3 and last.endswith("s") and not last.endswith("ss"))


def removed_last(entities: Sequence[Entity], turns: Sequence[TurnRecord]) -> str:
    """What the last turn removed, when removing was all it did to things still named ("the cars"), else ""."""
    if not turns:
        return ""
    t = turns[-1]
    removed = [st[1] for st in t.steps if st[0] == "object_removal" and st[1]]
    if not removed or any(e.turn == t.turn and e.kind != "image" for e in entities):
        return ""
    return " and ".join(f"the {r}" if not r.lower().startswith("the ") else r for r in removed)


def earlier_group(entities: Sequence[Entity], last: Entity) -> tuple[Entity, ...]:
    """The most recent set of several things one earlier turn changed, `last` among them, still on the image."""
    turns = sorted({x.turn for x in entities if x.kind != "image"}, reverse=True)
    for t in turns:
        members = tuple(x for x in entities if x.kind != "image" and any(c.turn == t for c in x.changes))
        if len(members) > 1 and last in members:
            return members
    return ()


def group_resolution(s: str, m: re.Match[str], group: Sequence[Entity], said: str) -> Resolution:
    """ "them" = every thing of the last turn: the names joined, their regions and boxes together."""
    names = group_name(group)
    new = " ".join((s[m.start("head") : m.start("p")] + names + s[m.end("p") :]).split())
    regions = [x.region for x in group if x.region is not None]
    region = None
    if regions and all(r.shape == regions[0].shape for r in regions):
        region = np.logical_or.reduce(regions)
    box = None
    boxes = [b for b in (x.box() for x in group) if b is not None]
    if boxes:
        x0, y0 = min(b.x for b in boxes), min(b.y for b in boxes)
        box = Box(x0, y0, max(b.x2 for b in boxes) - x0, max(b.y2 for b in boxes) - y0)
    turn = max(x.turn for x in group)
    note = f"'{said}' = {names} (turn {turn})"
    parts = tuple((x.describe().removeprefix("the "), x.region) for x in group if x.region is not None)
    return Resolution(new, turn, box, note, region, "them", parts=parts if region is not None else ())
