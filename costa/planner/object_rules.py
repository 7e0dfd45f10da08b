"""Rules for object edits: recolouring, replacement, removal, addition, detection and segmentation, and the
late catch of moves and rotations that match no kind.

Each rule takes a `ClauseContext` and returns drafts, an `Unsupported` reason, or None when it does not apply; their
order is `image_rules.IMAGE_RULES`.
"""

from __future__ import annotations

import re

from costa.colours import parse_colour
from costa.planner.phrases import (
    ClauseContext,
    Draft,
    Outcome,
    read_colour,
    read_position,
    rx,
    split_trailing_colour,
)

_RECOLOUR_VERB = r"(?:recolou?r|re-colou?r|colou?r|paint|repaint|dye|tint)"
_COLOUR_OF = rx(
    r"(?:change|set|switch|alter|modify|turn|make|adjust)\s+(?:the\s+)?colou?r\s+of\s+(?P<x>.+?)\s+(?:to|into|as|so\s+it\s+is)\s+"
    r"(?P<c>.+)"
)
_X_COLOUR = rx(
    r"(?:change|set|switch|alter|modify|turn|make|adjust)\s+(?P<x>.+?)(?:'s|’s)?\s+colou?r\s+(?:to|into|as)\s+(?P<c>.+)"
)
_RECOLOUR_TO = rx(
    rf"{_RECOLOUR_VERB}\s+(?P<x>.+?)\s+(?:to|in|into|with|as|so\s+(?:that\s+)?(?:it|they)(?:'s|’s|'re|’re|\s+is|\s+are|"
    r"\s+becomes?|\s+looks?))\s+(?P<c>.+)"
)
_COLOUR_JOB = rx(
    r"give\s+(?P<x>(?:the|this|that|these|those|his|her|their|my|our|your)\s+.+?)\s+(?:an?\s+)?(?:new\s+|fresh\s+)?"
    r"(?:coat\s+of\s+(?P<c2>\S+(?:\s+\S+){0,2}?)(?:\s+paint)?"
    r"|(?P<c>\S+(?:\s+\S+){0,2}?)\s+(?:paint\s+job|coat(?:\s+of\s+paint)?|paint|colou?r|finish|respray|makeover))"
)
_RECOLOUR_BARE = rx(rf"{_RECOLOUR_VERB}\s+(?P<rest>.+)")
_CHANGE_TO = rx(r"(?:change|turn|switch|convert|transform|make)\s+(?P<x>.+?)\s+(?:to|into)\s+(?P<c>(?!(?:a|an)\s).+)")
_MAKE_COLOUR = rx(r"(?:make|turn|render)\s+(?P<rest>.+)")


_COLOUR_ONE = rx(
    r"(?:turn|change|convert|transform|make|paint|colou?r)\s+(?P<x>.+?)\s+(?:(?:in)?to\s+(?:(?:a|an)\s+)?|(?:a|an)\s+)"
    r"(?P<c>.+?)\s+ones?"
)


def recolour_rule(c: ClauseContext) -> Outcome:
    """recolor the car to pink / make the wall yellow / paint the bench light blue / change the colour of X to Y /
    turn the taxi into a green one."""
    one = _COLOUR_ONE.fullmatch(c.text)
    if one and parse_colour(c.restore(one.group("c"))) is not None:
        read = read_colour(c, one.group("c"), c.noun(one.group("x")))
        if read is not None:
            return _drafts(c, one.group("x"), read[0], read[1])
    job = _COLOUR_JOB.fullmatch(c.text)
    if job and (read := read_colour(c, job.group("c") or job.group("c2"), c.noun(job.group("x")))) is not None:
        return _drafts(c, job.group("x"), read[0], read[1])
    explicit = _COLOUR_OF.fullmatch(c.text) or _X_COLOUR.fullmatch(c.text) or _RECOLOUR_TO.fullmatch(c.text)
    if explicit:
        return _recolour(c, explicit.group("x"), explicit.group("c"), strict=True)
    m = _RECOLOUR_BARE.fullmatch(c.text) or _MAKE_COLOUR.fullmatch(c.text)
    if m:
        split = split_trailing_colour(c, m.group("rest"))
        if split is not None:
            x, words, rgb = split
            x = re.sub(r"\s+(?:appear|look|be|become|seem)(?:\s+(?:more|\S+er))?$", "", x, flags=re.IGNORECASE)
            return _drafts(c, x, words, rgb)
    m = _CHANGE_TO.fullmatch(c.text)
    if m:
        return _recolour(c, m.group("x"), m.group("c"), strict=False)
    return None


def _recolour(c: ClauseContext, x: str, colour: str, strict: bool) -> Outcome:
    target = None if c.is_pronoun(x) else c.noun(x)
    read = read_colour(c, colour, target)
    if read is None:
        if not strict:
            return None
        return c.unsupported(
            f"unknown colour {c.restore(colour)!r} "
            "(use a colour name such as 'light blue' or a hex code like '#ff00aa')"
        )
    return _drafts(c, x, read[0], read[1])


def _drafts(c: ClauseContext, x: str, words: str, rgb: list[int]) -> list[Draft]:
    return [Draft(d.kind, d.target, words, {"rgb": rgb}, d.pronoun) for d in c.objects("object_recoloration", x)]


_REPLACE = rx(
    r"(?P<verb>replace|swap(?:\s+out)?|switch(?:\s+out)?|exchange|substitute|trade)\s+(?P<x>.+?)\s+(?P<conn>with|for|by)\s+(?P<y>.+)"
    r"|(?:change|turn|transform|convert|morph)\s+(?P<x2>.+?)\s+(?:into|to)\s+(?P<y2>.+)"
    r"|make\s+(?P<x3>.+?)\s+(?:into\s+)?(?P<y3>(?:a|an)\s+.+)"
    r"|(?:put|place|add|draw|show|paint|insert)\s+(?P<y4>.+?)\s+where\s+(?P<x4>.+?)\s+(?:is|was|are|were|stands?|sits?|"
    r"stood|sat)(?:\s+(?:now|right\s+now|at\s+the\s+moment))?"
)


_LOOK_RESULT = re.compile(r"\b(?:appearance|look|feel|finish|state|condition|version)$", re.IGNORECASE)

#: "make me a sandwich": the person after "make" is who the thing is for, not an object to replace.
_FOR_THE_USER = frozenset({"me", "us", "myself", "ourselves", "me and my friends"})


def replacement_rule(c: ClauseContext) -> Outcome:
    """replace the truck with a car / turn the cat into a dog / substitute a car for the truck."""
    m = _REPLACE.fullmatch(c.text)
    if m is None:
        return None
    x = m.group("x") or m.group("x2") or m.group("x3") or m.group("x4")
    y = m.group("y") or m.group("y2") or m.group("y3") or m.group("y4")
    if m.group("x3") and " ".join(m.group("x3").lower().split()) in _FOR_THE_USER:
        return c.unsupported(
            "'make me …' asks to create something, not to edit this image; no subtask kind makes new things from "
            "scratch (to put an object into the picture, say e.g. 'add a sandwich to the table')"
        )
    if m.group("verb") and m.group("verb").lower() == "substitute" and m.group("conn").lower() == "for":
        x, y = y, x  # "substitute a car for the truck" puts the car where the truck was
    if c.is_image(x) and not c.is_pronoun(x):
        return c.unsupported("changing the whole image into something else (style transfer) is not a subtask kind")
    result = c.noun(y)
    if result and _LOOK_RESULT.search(result) and not c.is_image(x):
        # "change the sky to a mostly cloudy appearance": the same object, another look
        return [Draft("attribute_edit", d.target, result, {"attribute": "appearance"}, d.pronoun)
                for d in c.objects("attribute_edit", x)]  # fmt: skip
    drafts = c.objects("object_replacement", x)
    if len(drafts) == 1 and drafts[0].target and result and _is_landscape(drafts[0].target):
        return [Draft("changing_scenery", None, result, {"from": drafts[0].target})]
    return [Draft(d.kind, d.target, _one(result, d.target), d.params, d.pronoun) for d in drafts]


def _word_set(*groups: str) -> frozenset[str]:
    return frozenset(word for group in groups for word in group.split())


#: Nouns for the setting of a photo: replacing one with something else changes the scenery, not an object.
_LANDSCAPES = _word_set(
    "mountain mountains range desert field fields lake snowland plain plains street beach forest jungle sea ocean",
    "meadow valley hills countryside savanna savannah grassland prairie tundra landscape scenery seaside rainforest",
    "cityscape skyline background backdrop surroundings setting",
)


def _is_landscape(noun: str) -> bool:
    words = noun.split()
    return bool(words) and words[-1] in _LANDSCAPES and not re.search(r"\b(?:of|with|on|in|near)\b", noun)


def _one(result: str | None, target: str | None) -> str | None:
    """ "a metal one" after "turn the kitten into" means a metal kitten."""
    m = re.fullmatch(r"(?P<what>.+?)\s+ones?", result or "")
    return f"{m.group('what')} {target}" if m and target else result


_REMOVE = rx(
    r"(?:remove|erase|delete|get\s+rid\s+of|take\s+(?:out|away|off)|eliminate|clear\s+away|clear|wipe\s+out|wipe\s+off|"
    r"wipe\s+away|wipe|drop|ditch|scrub\s+out|scrub|cut|exclude|omit|hide|banish|lose|discard|edit\s+out|nuke|kill|"
    r"rub\s+out|scrape\s+off|scrape\s+away|"
    r"paint\s+out|rub\s+out|strip\s+away)\s+(?P<x>.+?)(?:\s+(?:from|off|out\s+of)\s+(?P<where>.+))?"
    r"|(?:make|let)\s+(?P<x2>.+?)\s+(?:disappear|vanish|go\s+away)"
)


_CUT_OUT = rx(r"(?:cut|clip)\s+(?:out\s+.+|.+\s+out)")  # "cut out the dog" keeps the dog: a segmentation


def removal_rule(c: ClauseContext) -> Outcome:
    """remove the cat / erase the person / delete the bottle / remove the camera from the desk."""
    m = _REMOVE.fullmatch(c.text)
    if m is None or _CUT_OUT.fullmatch(c.text):
        return None
    x, where = m.group("x") or m.group("x2"), m.group("where")
    if where and x.count("(") > x.count(")"):
        x, where = c.text[m.start("x") :], None  # "(second from left)" describes the object, not where it is
    params = {"region": c.noun(where) or ""} if where and not c.is_image(where) else {}
    return c.objects("object_removal", x, params={k: v for k, v in params.items() if v})


_ADD = rx(r"(?:add|insert|put|place|include|introduce|draw|create|generate|paint|show)\s+(?P<rest>.+)")
_GIVE = rx(
    r"give\s+(?P<t>.+?)\s+(?P<y>(?:a|an|some|two|three|more|new)\s+.+)"
    r"|give\s+(?P<t2>(?:the|this|that|his|her|their|my|our|your)\s+(?:\w+(?:'s|’s)\s+)?\w+)\s+(?P<y2>\w+(?:\s+\w+)?)"
)
_RELATION = rx(
    r"\s(?P<rel>next\s+to|in\s+front\s+of|on\s+top\s+of|to\s+the\s+(?:left|right)\s+of|on\s+the\s+(?:left|right)\s+of|"
    r"beside|behind|inside|onto|into|under|underneath|below|beneath|above|over|along|around|between|near|across|to|on|"
    r"in|at|by)\s+"
)
_ANCHOR_START = rx(r"(?:the|this|that|these|those|his|her|their|its|my|our|your|it|them|him|each|every|both)\b.*")


_FILL = rx(r"fill\s+(?P<t>.+?)\s+(?:up\s+)?with\s+(?P<y>.+)")


def addition_rule(c: ClauseContext) -> Outcome:
    """add a hat to the dog / insert a lamp next to the sofa / add a red car in the center / fill the cup with
    coffee."""
    m = _FILL.fullmatch(c.text)
    if m:
        return [_addition(c, m.group("y"), "in", m.group("t"))]
    m = _GIVE.fullmatch(c.text)
    if m:
        return [_addition(c, m.group("y") or m.group("y2"), "on", m.group("t") or m.group("t2"))]
    m = _ADD.fullmatch(c.text)
    if m is None:
        return None
    rest = m.group("rest")
    # The first relation whose object is definite or a position says where the new thing goes; in "a man in a suit"
    # the indefinite "in a suit" is part of what is added.
    for rel in _RELATION.finditer(rest):
        what, anchor = rest[: rel.start()], rest[rel.end() :]
        if "," in anchor:  # "into the scene, holding a carrot": the tail after the comma still describes the new thing
            anchor, _, tail = anchor.partition(",")
            what = f"{what} {tail.strip()}"
        position = read_position(rel.group("rel") + " " + anchor)
        if position:
            return [Draft("object_addition", None, c.noun(what), {"position": position})]
        if _ANCHOR_START.fullmatch(anchor):
            return [_addition(c, what, " ".join(rel.group("rel").lower().split()), anchor)]
    return [_addition(c, rest, None, None)]


def _addition(c: ClauseContext, what: str, relation: str | None, anchor: str | None) -> Draft:
    if anchor is None or c.is_image(anchor):
        return Draft("object_addition", None, c.noun(what))
    params = {"relation": relation} if relation else {}
    if c.is_pronoun(anchor):
        return Draft("object_addition", None, c.noun(what), params, pronoun=True)
    return Draft("object_addition", c.noun(anchor), c.noun(what), params)


_DETECT = rx(
    r"(?P<verb>detect|find|locate|spot|identify|select|pick\s+out|pick|choose|locali[sz]e|box|point\s+out|mark|show\s+me|count|search\s+for|"
    r"look\s+for|draw\s+(?:a\s+)?(?:bounding\s+)?box(?:es)?\s+(?:around|on))\s+(?P<x>.+)"
)
_SEGMENT = rx(
    r"(?:cut|clip)\s+(?P<y>.+?)\s+out|(?:segment|mask|outline|trace|cut\s+out|clip\s+out|cutout|(?:create|get|generate|make|produce|compute)\s+(?:a\s+|the\s+)?"
    r"(?:segmentation\s+)?mask\s+(?:of|for))\s+(?P<x>.+)"
)


def detection_rule(c: ClauseContext) -> Outcome:
    """detect the bench / find all the people / count the cars / segment the dog."""
    m = _SEGMENT.fullmatch(c.text)
    if m:
        return c.objects("object_segmentation", m.group("x") or m.group("y"))
    m = _DETECT.fullmatch(c.text)
    if m:
        params = {"count": True} if m.group("verb").lower() == "count" else {}
        return c.objects("object_detection", m.group("x"), params=params)
    return None


_LATE_NOT_A_KIND: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        rx(r"(?:rotate|flip|mirror|tilt|straighten|turn\s+.+\s+(?:around|upside\s+down|sideways))\b.*"),
        "rotating or flipping is not a subtask kind",
    ),
    (
        rx(
            r"(?:increase|reduce|decrease|lower|raise|double|halve|change|adjust|boost|add\s+to)\s+(?:the\s+)?"
            r"(?:number|count|amount|density|quantity)\s+of\b.*"
        ),
        "changing how many objects there are is not a subtask kind: add or remove specific objects instead "
        "(e.g. 'add two fish', 'remove the birds')",
    ),
    (rx(r"(?:blur)\b.*"), "blurring is not a subtask kind"),
)


def late_not_a_kind_rule(c: ClauseContext) -> Outcome:
    """Moving, rotating, resizing, cropping: recognised, not a subtask kind."""
    for pattern, reason in _LATE_NOT_A_KIND:
        if pattern.fullmatch(c.text):
            return c.unsupported(reason)
    return None
