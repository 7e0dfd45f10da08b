"""Follow-ups that refer to what is on the image now, resolved against the session's entities (`entities.py`).

`resolve_references(text, turns)` reads one follow-up and returns a `Resolution`: the instruction to plan (references
replaced by what they name), the region the named thing occupies (so the edit acts there), the reference type read
(for `bench conversation`), and, instead of an edit, a `Restore` ("change it back") or one short question when the
reference is ambiguous. References it reads:

- "it", "that", "this", "them", "this one" → the last edited thing ("now make it darker" after recolouring the rose
  darkens the rose, not the image, unless the image itself was the last thing edited);
- "the text", "the word", "the word I just wrote", "the new text" → the last text entity, by its current letters;
- "use red instead", "make it 'SOON' instead" → the last edit again with the new value;
- "the same colour as X" → X's colour (from memory, or the colour word in X), "the same colour" → the last colour;
- "the other one" / "the other sign", "the previous one" → another remembered thing of that noun / the one before;
- "a bit more", "a little less", "again" → the last edit once more, or its opposite, a little;
- "change it back", "put the rose back", "revert that", and an edit that undoes the last one (recolouring the rose
  back to the colour it had, writing back the word that was there) → restore its region as it was;
- "do the same to X" → the last turn's instruction on X.

>>> import numpy as np
>>> from costa.reflect.records import TurnRecord
>>> m = np.zeros((8, 8), bool); m[2:5, 2:5] = True
>>> turns = [TurnRecord(1, "make the pink rose yellow", "make the pink rose yellow",
...                     (("object_recoloration", "pink rose", "yellow", "s1"),), (("s1", m),))]
>>> r = resolve_references("now make it darker", turns)
>>> r.text, r.reference, int(r.region.sum())
('make the yellow rose darker', 'it', 9)
>>> resolve_references("use red instead", turns).text
'make the yellow rose red'
>>> resolve_references("change it back", turns).restore.before
'the pink rose'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from costa.reflect.entities import Entity, derive_entities
from costa.reflect.pronouns import Group, earlier_group, group_resolution, plural, removed_last
from costa.reflect.records import Resolution, Restore
from costa.reflect.wording import is_adjustment, is_colour, swap_target

if TYPE_CHECKING:
    from costa.reflect.records import TurnRecord

_LEAD = (
    r"^(?:(?:now|also|and|then|ok|okay|so|please|actually|hmm|right|great|nice|good|cool)[,!.]?\s+"
    r"|(?:no|nope|oops|sorry|wait|oh|hm+)[,!.]\s+)*"  # "no, use 'FREE' instead": a correction's lead, with its comma
)
_PRONOUN = r"(?:it|that|this|them|this\s+one|that\s+one|those|these)"
_WHOLE_IMAGE_WORDS = re.compile(
    r"\blook(?:s)?\s+like\b|\bstyle\b|\bpainting\b|\bupscale\b|\bresolution\b|\bcrop\b|\boutpaint\b|\bextend\b|"
    r"\bwiden\b|\bwinter\b|\bnight\b|\bsunset\b|\bblack\s+and\s+white\b|\bsepia\b|\bsharpen\b|\bdeblur\b",
    re.IGNORECASE,
)


def resolve_references(text: str, turns: Sequence[TurnRecord]) -> Resolution:
    """Resolve `text` against `turns` (the remembered turns on the current version's path, oldest first)."""
    s = " ".join(text.strip().split()).rstrip(".!").strip()
    if not turns:
        return Resolution(" ".join(text.strip().split()))
    entities = derive_entities(turns)
    readers = (
        _back,
        _instead,
        _same_colour_as,
        _more_or_less,
        _do_the_same,
        _other_or_previous,
        _text_ref,
        _it,
        _named_thing,
    )
    for reader in readers:
        found = reader(s, entities, turns)
        if found is not None:
            if found.about and found.box is None and found.region is None:
                # no pixels remembered for it (an older turn): act where that turn's user box was
                box = next((t.box for t in turns if t.turn == found.about), None)
                found = replace(found, box=box)
            return found
    return Resolution(" ".join(text.strip().split()))


# ----------------------------------------------------------------------------------------------------- helpers


def _last(entities: Sequence[Entity], kind: str | None = None) -> Entity | None:
    for e in reversed(entities):
        if kind is None or e.kind == kind:
            return e
    return None


def _named(entities: Sequence[Entity], phrase: str | None) -> Entity | None:
    if not phrase:
        return None
    for e in reversed(entities):
        if e.matches(phrase):
            return e
    return None


def _resolved(text: str, e: Entity, reference: str, note: str = "") -> Resolution:
    region = e.region if e.kind != "image" else None
    if e.kind == "text" and region is not None and (box := e.box(4)) is not None:
        region = np.zeros_like(region)
        region[box.y : box.y2, box.x : box.x2] = True  # a word is edited in its box, not only on its glyphs
    return Resolution(text, e.turn, e.box(), note or f"'{reference}' = {e.describe()} (turn {e.turn})", region,
                      reference)  # fmt: skip


def _ambiguous(entities: Sequence[Entity]) -> list[Entity]:
    """The things the last turn changed, when it changed more than one (then "it" needs a question)."""
    last = _last(entities)
    if last is None:
        return []
    same_turn = [e for e in entities if e.turn == last.turn and e.kind != "image"]
    return same_turn if len(same_turn) > 1 else []


def _question(candidates: Sequence[Entity | Group]) -> Resolution:
    names = [e.describe() for e in candidates]
    if any(isinstance(e, Group) for e in candidates):  # "the blue cup, or the red saucer and the blue cup?"
        return Resolution("", question=f"Which do you mean: {', or '.join(names)}?", reference="ambiguous")
    listed = ", ".join(names[:-1]) + f" or {names[-1]}"
    return Resolution("", question=f"Which one do you mean: {listed}?", reference="ambiguous")


# ----------------------------------------------------------------------------------------------------- readers

_BACK = re.compile(
    _LEAD + r"(?:(?:change|turn|put|set|make|switch|bring|colou?r|paint)\s+(?P<x>it|that|this|them|the\s+.+?)\s+back"
    r"(?:\s+(?:(?:to\s+)?(?:how|what|the\s+way|as)\s+(?:it|they)\s+(?:was|were)(?:\s+before)?|again|to\s+normal"
    r"|to\s+the\s+original"
    r"(?:\s+colou?r)?|to\s+before|to\s+its\s+original\s+colou?r))?"
    r"|(?:revert|restore|reset)\s+(?:it|that|this|them|the\s+(?P<x2>.+?))(?:\s+to\s+(?:how\s+it\s+was|the\s+original|"
    r"before|normal))?"
    r"|(?:(?:put|change|set)\s+it\s+)?back\s+to\s+(?:how\s+it\s+was|the\s+original|normal|before)"
    r"|(?:make|turn)\s+(?:it|that|this|them)\s+(?P<again>.+?)\s+again)[.!]?$",
    re.IGNORECASE,
)


_GENERIC_TEXT = re.compile(r"(?:the\s+)?(?:word|words|text|writing|lettering|wording|sign|label)", re.IGNORECASE)


def _back(s: str, entities: Sequence[Entity], turns: Sequence[TurnRecord]) -> Resolution | None:
    m = _BACK.fullmatch(s)
    if m is None:
        return _opposite(s, entities)
    phrase = m.group("x2") or (m.group("x") if m.group("x") and m.group("x").lower().startswith("the ") else None)
    if phrase and _GENERIC_TEXT.fullmatch(phrase):  # "change the word back": the last text costa wrote
        text = _last([x for x in entities if x.kind == "text"])
        phrase = None if text is None else f"'{text.noun}'"
    e = _named(entities, phrase) if phrase else None
    if e is None:
        if not phrase and (choices := _ambiguous(entities)):
            return _question(choices)
        e = _last([x for x in entities if x.kind != "image"]) if phrase is None else None
    if e is None or not e.changes or e.changes[-1].region is None:
        return Resolution("", question="What should I change back? Name it or click on it.", reference="back")
    last = e.changes[-1]
    if m.group("again") and not _same_state(m.group("again"), last.before):
        return None  # "make it red again" when it was not red before: an edit, not a restore
    assert last.region is not None
    before = last.before or "as it was"
    restore = Restore(e.describe(), before, last.turn, last.subtask_id, last.region)
    note = f"'{s}': {e.describe()} back to {before} (as before turn {last.turn})"
    return Resolution(s, last.turn, e.box(), note, last.region, "back", restore=restore)


def _same_state(words: str, before: str) -> bool:
    """Whether "red" (as in "make it red again") is what "the red circle" was."""
    w = words.strip().strip("'\"").lower()
    return bool(w) and re.search(rf"(?:^|\s|'){re.escape(w)}(?:$|\s|')", before.lower()) is not None


def _opposite(s: str, entities: Sequence[Entity]) -> Resolution | None:
    """An edit that undoes the last change of a thing ("make the blue circle red" after red → blue; "replace 'OPEN'
    with 'SALE'" after 'SALE' → 'OPEN') restores its region rather than editing it again (no drift)."""
    from costa.errors import CostaError
    from costa.planner import plan_with_rules

    try:
        plan = plan_with_rules(s)
    except CostaError:
        return None
    if len(plan.subtasks) != 1 or plan.subtasks[0].kind not in ("object_recoloration", "text_replacement"):
        return None
    sub = plan.subtasks[0]
    kind = "text" if sub.kind == "text_replacement" else "object"
    e = _named([x for x in entities if x.kind == kind], sub.target)
    if e is None or not e.changes or e.changes[-1].kind != sub.kind or e.changes[-1].region is None:
        return None
    last = e.changes[-1]
    if not sub.result or not _same_state(sub.result, last.before):
        return None
    assert last.region is not None
    restore = Restore(e.describe(), last.before, last.turn, last.subtask_id, last.region)
    note = f"'{s}' undoes turn {last.turn}: {e.describe()} back to {last.before}, restored as it was"
    return Resolution(s, last.turn, e.box(), note, last.region, "opposite", restore=restore)


_INSTEAD = re.compile(
    _LEAD
    + r"(?:(?:let'?s\s+)?(?:use|try|make\s+(?:it|them|that)|go\s+with|do|have|choose|pick|prefer|i\s+(?:want|meant))"
    r"\s+)?(?P<v>.+?)\s+instead(?:\s+of\s+.+?)?(?:\s+please)?[.!]?$",
    re.IGNORECASE,
)


def _instead(s: str, entities: Sequence[Entity], turns: Sequence[TurnRecord]) -> Resolution | None:
    m = _INSTEAD.fullmatch(s)
    if m is None:
        return None
    value = m.group("v").strip()
    adjusted = [e for e in entities if any(c.kind == "global_adjustment" for c in e.changes)]
    if is_adjustment(value) and adjusted:  # "no, make it brighter instead" after "make the flag darker"
        shaded = adjusted[-1]
        what = "the image" if shaded.kind == "image" else shaded.describe()
        return _resolved(f"make {what} {value.lower()}", shaded, "instead")
    things = [x for x in entities if x.kind != "image" and x.changes]
    e = _last(things)
    if e is None:
        return None
    kinds = (
        ("object_recoloration",) if is_colour(value) else ("text_replacement", "text_addition", "object_replacement")
    )
    last = next((c for c in reversed(e.changes) if c.kind in kinds), e.changes[-1])
    if last.kind == "object_recoloration" and is_colour(value):
        return _resolved(f"make {e.describe()} {value.lower()}", e, "instead")
    if last.kind in ("text_replacement", "text_addition") and e.kind == "text":
        word = value.strip("'\"“”‘’")
        return _resolved(f"replace the text '{e.noun}' with '{word}'", e, "instead")
    if last.kind == "object_replacement":
        return _resolved(f"replace {e.describe()} with {value}", e, "instead")
    return None


_SAME_AS = re.compile(r"\bthe\s+same\s+colou?r\s+as\s+(?P<x>.+?)(?=$|[.,;!?]|\s+(?:and|then)\s)", re.IGNORECASE)
_SAME = re.compile(r"\bthe\s+same\s+colou?r(?:\s+as\s+before)?\b", re.IGNORECASE)


def _same_colour_as(s: str, entities: Sequence[Entity], turns: Sequence[TurnRecord]) -> Resolution | None:
    from costa.targets import parse_target

    m = _SAME_AS.search(s)
    if m is not None:
        phrase = m.group("x")
        e = _named(entities, phrase)
        colour = e.colour if e is not None and e.colour else parse_target(phrase).colour
        if colour is None:
            return Resolution("", question=f"What colour is {phrase}? Name the colour (e.g. 'make it red').",
                              reference="same colour as")  # fmt: skip
        new = " ".join((s[: m.start()] + colour + s[m.end() :]).split())
        inner = _it(new, entities, turns)
        note = f"'the same colour as {phrase}' = {colour}"
        if inner is not None and inner.question is None:
            return Resolution(inner.text, inner.about, inner.box, f"{note}; {inner.note}", inner.region,
                              "same colour as")  # fmt: skip
        return Resolution(new, e.turn if e else 0, None, note, None, "same colour as")
    if _SAME.search(s):
        coloured = [e for e in entities if e.colour]
        e = _last(coloured)
        if e is None or e.colour is None:
            return None
        new = " ".join(_SAME.sub(e.colour, s).split())
        inner = _it(new, entities, turns)
        about = inner if inner is not None and inner.question is None else Resolution(new, e.turn)
        return Resolution(about.text, about.about, about.box, f"'the same colour' = {e.colour}", about.region,
                          "same colour")  # fmt: skip
    return None


_BARE = re.compile(
    _LEAD + r"(?P<mod>a\s+(?:little\s+)?bit\s+|a\s+little\s+|slightly\s+|even\s+|much\s+|a\s+lot\s+|way\s+|"
    r"somewhat\s+)?(?P<adj>darker|brighter|lighter|warmer|cooler|bigger|larger|smaller|more\s+saturated|"
    r"less\s+saturated|more\s+contrast|less\s+contrast)(?:\s+still)?(?:\s+please)?[.!]?$",
    re.IGNORECASE,
)
_MORE = re.compile(
    _LEAD + r"(?:(?P<mod>a\s+(?:little\s+)?bit|a\s+little|slightly|even|much|a\s+lot|way|just\s+a\s+touch)\s+)?"
    r"(?P<d>more|less|stronger|weaker|further)(?:\s+(?:please|than\s+that|of\s+(?:it|that)))?[.!]?$"
    r"|" + _LEAD + r"(?P<again>(?:do\s+(?:it|that)\s+)?again|once\s+more|one\s+more\s+time|repeat\s+(?:it|that))[.!]?$",
    re.IGNORECASE,
)
_OPPOSITES = {
    "brighter": "darker", "darker": "brighter", "warmer": "cooler", "cooler": "warmer",
    "more contrast": "less contrast", "less contrast": "more contrast", "more saturated": "less saturated",
    "less saturated": "more saturated", "larger": "smaller", "smaller": "larger",
}  # fmt: skip


def _on_the_group(
    phrase: str, entities: Sequence[Entity], turns: Sequence[TurnRecord], reference: str
) -> Resolution | None:
    """`phrase` ("make them a little darker") read for every thing the last turn changed, when it changed several:
    "a bit more" after "make the square and the disc darker" is both again, each in its own region (it was the disc
    alone); None when the last turn changed one thing, or its things differently ("make the mug red and the plate
    darker", then "a bit more": the plate, the last one)."""
    group = _ambiguous(entities)
    if not group or len({(x.changes[-1].kind, x.changes[-1].result) for x in group if x.changes}) != 1:
        return None
    r = _it(phrase, entities, turns)
    if r is None or r.question is not None or r.reference != "them":
        return None
    return replace(r, reference=reference, note=r.note.replace("'them'", f"'{reference}'", 1))


def _more_or_less(s: str, entities: Sequence[Entity], turns: Sequence[TurnRecord]) -> Resolution | None:
    bare = _BARE.fullmatch(s)
    if bare is not None:  # "even darker", "a bit brighter": the last edited thing, not the image
        e = _last(entities)
        if e is None or e.kind == "image":
            return None
        mod = (bare.group("mod") or "").strip()
        adj = " ".join(bare.group("adj").lower().split())
        said = f"{mod + ' ' if mod and mod != 'even' else ''}{adj}"
        group = _on_the_group(f"make them {said}", entities, turns, "a bit more")
        return group or _resolved(" ".join(f"make {e.describe()} {said}".split()), e, "a bit more")
    m = _MORE.fullmatch(s)
    if m is None:
        return None
    e = _last([x for x in entities if x.changes])
    if e is None:
        return None
    last = e.changes[-1]
    less = (m.group("d") or "").lower() in ("less", "weaker")
    if last.kind in ("global_adjustment", "attribute_edit") and last.result in _OPPOSITES:
        result = _OPPOSITES[last.result] if less else last.result
        what = "it" if e.kind == "image" else e.describe()
        word = "bigger" if result == "larger" else result
        how = f"a little {word}" if less or m.group("mod") else word
        said = "a bit less" if less else "a bit more"
        group = _on_the_group(f"make them {how}", entities, turns, said) if e.kind != "image" else None
        return group or _resolved(f"make {what} {how}", e, said)
    if m.group("again") or not less:
        record = next((t for t in reversed(turns) if t.turn == last.turn), None)
        if record is not None:
            return _resolved(record.resolved, e, "again")
    return None


_DO_THE_SAME = re.compile(_LEAD + r"do\s+the\s+same\s+(?:to|for|with|on)\s+(?P<x>.+?)[.!]?$", re.IGNORECASE)


def _do_the_same(s: str, entities: Sequence[Entity], turns: Sequence[TurnRecord]) -> Resolution | None:
    m = _DO_THE_SAME.fullmatch(s)
    if m is None or not turns:
        return None
    t = turns[-1]
    target = next((step[1] for step in reversed(t.steps) if step[1]), None)
    if target is None:
        return None
    new = swap_target(t.resolved, target, m.group("x").strip())
    if new == t.resolved:
        return None
    return Resolution(new, t.turn, None, f"'{s}' repeats turn {t.turn} on {m.group('x').strip()}", None, "do the same")


_OTHER = re.compile(r"\bthe\s+(?P<which>other|previous|first|earlier)\s+(?P<noun>one|ones|\w+)\b", re.IGNORECASE)


def _other_or_previous(s: str, entities: Sequence[Entity], turns: Sequence[TurnRecord]) -> Resolution | None:
    m = _OTHER.search(s)
    if m is None:
        return None
    things = [e for e in entities if e.kind != "image"]
    last = _last(things)
    if last is None:
        return None
    noun = m.group("noun").lower()
    same = noun in ("one", "ones") or last.matches(noun)
    if m.group("which").lower() == "other":
        pool = [e for e in things if e is not last and (e.noun == last.noun if same else e.matches(noun))]
    else:
        pool = [e for e in things if e is not last and (noun in ("one", "ones") or e.matches(noun))]
        if not pool and noun in ("one", "ones"):
            # one thing remembered: "the previous one" is the thing edited before (a later edit that failed, "make
            # the saucer white", left nothing on the image to remember), not a request to find another one
            pool = [last]
    if not pool:
        what = last.noun if same else noun
        return Resolution("", question=f"Which other {what}? Click on it in the image.", reference="the other one")
    e = pool[-1]
    new = " ".join((s[: m.start()] + e.describe() + s[m.end() :]).split())
    kind = "the other one" if m.group("which").lower() == "other" else "the previous one"
    return _resolved(new, e, kind)


_TEXT_REF = re.compile(
    r"\b(?:the\s+(?:new\s+|last\s+)?(?:text|word|writing|lettering|wording)(?!\s*['\"‘“\ue000])"
    r"(?:\s+(?:i|you)\s+(?:just\s+)?(?:wrote|added|typed|put(?:\s+in)?|changed|replaced))?"
    r"|what\s+(?:i|you)\s+(?:just\s+)?(?:wrote|typed|added))\b",
    re.IGNORECASE,
)


def _text_ref(s: str, entities: Sequence[Entity], turns: Sequence[TurnRecord]) -> Resolution | None:
    m = _TEXT_REF.search(s)
    if m is None or re.search(r"\bthe\s+(?:text|word)\s+['\"‘“]", s, re.IGNORECASE):
        return None
    e = _last([x for x in entities if x.kind == "text"])
    if e is None:
        return None
    new = " ".join((s[: m.start()] + e.describe() + s[m.end() :]).split())
    return _resolved(new, e, "the text")


#: "both of them", "all of those", "each of these", "both": the plural pronouns with a quantifier, read as "them"
#: (the quantifier is part of what is replaced: "darken both of them" → "darken the mug and the plate", not
#: "darken both of the mug and the plate", whose target the planner read as "of mug and plate").
_QUANTIFIED = r"(?:both|all|each)(?:\s+of)?\s+(?:them|those|these)|both"
_IT = re.compile(_LEAD + rf"(?P<head>.*?\b)(?P<p>{_QUANTIFIED}|{_PRONOUN})(?P<tail>(?:\s+.*)?)$", re.IGNORECASE)
#: Words after "that"/"this" that keep it a pronoun ("make that red", "move this to the left"), not a determiner
#: ("make that rose red").
_AFTER_PRONOUN = frozenset(
    " ".join(
        (
            "to into onto with on in by for from at so a an some slightly more less bit little back again please",
            "now too instead darker brighter lighter bigger smaller larger up down left right away off out",
        )
    ).split()
)


def _it(s: str, entities: Sequence[Entity], turns: Sequence[TurnRecord]) -> Resolution | None:
    m = _IT.fullmatch(s)
    if m is None or not m.group("head").strip():
        return None  # "it" must follow a verb or a preposition ("make it red", "put a hat on it")
    tail = (m.group("tail") or "").strip()
    pronoun = m.group("p").lower()
    if re.match(r"(?:'s|is|was|looks|seems)\b", tail, re.IGNORECASE):
        return None  # "it's too dark" is about the image
    nxt = tail.split()[0].lower().strip(".,!?") if tail else ""
    if (
        pronoun in ("that", "this", "those", "these", "both")
        and nxt
        and nxt not in _AFTER_PRONOUN
        and not is_colour(nxt)
    ):
        return None  # "make that rose red", "make both discs darker": a determiner
    if _WHOLE_IMAGE_WORDS.search(s):
        return None  # "make it look like winter", "upscale it": the whole image
    many = pronoun.split()[-1] in ("them", "those", "these", "both")
    gone = removed_last(entities, turns) if many else ""
    if gone:  # "remove the cars", then "make them darker": they are gone; guessing another thing would be wrong
        verb = "were" if plural(gone) else "was"
        return Resolution("", question=f"{gone[0].upper()}{gone[1:]} {verb} removed: which do you mean now? Name "
                          "them or click on them.", reference="ambiguous")  # fmt: skip
    group = _ambiguous(entities)
    e = _last(entities)
    if e is None or e.kind == "image":
        return None  # the image was the last thing edited: "it" is the image, as the planner reads it
    if group and not many:
        return _question(group)
    if not group and many and not plural(e.noun) and (earlier := earlier_group(entities, e)):
        return _question([e, Group(earlier)])  # "them" after one thing: that one, or the set edited before?
    said = " ".join(m.group("p").lower().split())
    if group:  # "make them red": every thing the last turn changed, acting on all their regions
        return group_resolution(s, m, group, said)
    new = s[m.start("head") : m.start("p")] + e.describe() + s[m.end("p") :]
    return _resolved(" ".join(new.split()), e, said)


def _named_thing(s: str, entities: Sequence[Entity], turns: Sequence[TurnRecord]) -> Resolution | None:
    """ "make the green suit darker": a thing named as it is now acts where it is (its remembered region)."""
    from costa.errors import CostaError
    from costa.planner import plan_with_rules
    from costa.targets import parse_target

    try:
        plan = plan_with_rules(s)
    except CostaError:
        return None
    targets = [t.target for t in plan.subtasks if t.target]
    if len(targets) != 1:
        return None
    things = [x for x in entities if x.kind != "image"]
    e = _named(things, targets[0])
    if e is None or e.region is None or (e.kind == "object" and not e.colour):
        return None  # only a name that says which one ("the green suit"), not any suit
    if parse_target(targets[0]).colour is None and sum(x.matches(targets[0]) for x in things) > 1:
        return None  # "the cup" when two cups were edited: the planner's own words, not a guess
    return _resolved(s, e, "named")
