"""Rules for attribute edits, which generative tools do: sizes, materials, expressions, poses, orientations and other
looks of an object (attribute_edit), counts ("increase the number of birds") and vague object edits. Moves, styles,
viewpoints and crops are in `view_rules.py`.

Each rule takes a `ClauseContext` and returns drafts, an `Unsupported` reason, or None when it does not apply; they are
placed in `image_rules.IMAGE_RULES` where their phrasings would otherwise be misread ("make it look like a Van Gogh
painting" is a style, not a replacement of "it look like"). The word lists are in `lexicon.py`.

>>> from costa.planner.clauses import mask_quotes
>>> def ctx(text): return ClauseContext(mask_quotes(text), text, False, frozenset())
>>> [(d.kind, d.target, d.result, dict(d.params)) for d in size_rule(ctx("make the moon four times larger"))]
[('attribute_edit', 'moon', 'larger', {'attribute': 'size', 'scale': 4.0})]
"""

from __future__ import annotations

import re

from costa.colours import parse_colour
from costa.errors import PlanningError
from costa.planner.lexicon import (
    ACTIONS,
    ADJUSTABLE,
    EMOTIONS,
    EXPRESSION_VERBS,
    LOOKS,
    MATERIAL_ADJECTIVES,
    MATERIALS,
    PROPERTIES,
    alternation,
    read_scale,
)
from costa.planner.phrases import ClauseContext, Draft, Outcome, rx

_IMAGE_NOUN = (
    r"(?:(?:the\s+|this\s+|that\s+|my\s+)?(?:whole\s+|entire\s+)?"
    r"(?:image|photo|picture|photograph|pic|scene|frame|shot))"
)
_IT_OR_IMAGE = rf"(?:{_IMAGE_NOUN}|it|this)"
_MOD = (
    r"(?:(?:a\s+(?:little\s+)?(?:bit\s+)?|slightly\s+|much\s+|a\s+lot\s+|even\s+|way\s+|somewhat\s+|far\s+|more\s+)*)"
)

# ------------------------------------------------------------------------------------------------------ sizes

_BIGGER = r"(?:larger|bigger|greater|taller|longer|wider|higher|huger|heavier|fatter|thicker)"
_SMALLER = r"(?:smaller|tinier|shorter|narrower|thinner|slimmer|lower|littler)"
_BIG = r"(?:big|large|tall|long|wide|huge|high)"
_SMALL = r"(?:small|tiny|short|narrow|thin|little)"
_AMOUNT = (
    r"(?:(?:\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|a\s+hundred|twenty|fifty)\s*"
    r"(?:times|x|×|fold|-fold|%|\s+percent)|twice|thrice|double|triple|quadruple|half|a\s+third|a\s+quarter"
    r"|by\s+(?:a\s+factor\s+of\s+)?\S+(?:\s+percent|\s*%)?)"
)
_SIZE_NOUN = r"(?:size|scale|original\s+size|current\s+size|height|length|width)"
_SIZE_PATTERNS = (
    # make the moon four times larger / make the car five times as large / make the bird slightly larger
    rx(
        rf"make\s+(?P<x>.+?)\s+{_MOD}(?P<amount>{_AMOUNT}\s+)?(?:as\s+)?(?P<dir>{_BIGGER}|{_SMALLER}|{_BIG}|{_SMALL})"
        r"(?:\s+(?:than\s+(?:before|it\s+is|now|they\s+are)|as\s+(?:before|it\s+is|now)|in\s+size|overall))?"
    ),
    # make the cat twice its size / make the bottle half its size
    rx(rf"make\s+(?P<x>.+?)\s+(?P<amount>{_AMOUNT})\s+(?:its|their|the|his|her)\s+{_SIZE_NOUN}"),
    # double the size of the pizza / increase the size of the fish by 20%
    rx(
        r"(?P<verb>double|triple|quadruple|halve|increase|decrease|reduce|enlarge|expand|shrink|grow|scale\s+up|"
        r"scale\s+down|boost|raise|lower|cut)\s+(?:the\s+)?(?:overall\s+)?(?:size|scale|dimensions|height|length)"
        r"\s+of\s+(?P<x>.+?)(?P<rest>\s+(?:by|to)\s+.+)?"
    ),
    # shrink the car to half its size / enlarge the flower 3x / scale the tree up by 20% / blow up the balloon
    rx(
        r"(?P<verb>shrink|enlarge|grow|resize|rescale|scale(?:\s+(?:up|down))?|blow\s+up|magnify|miniaturi[sz]e|"
        r"downsize|upsize|inflate|supersize)\s+(?P<x>.+?)(?P<updown>\s+(?:up|down))?"
        r"(?P<rest>\s+(?:by|to|until|so)\b.+|\s+\d.*|\s+(?:twice|thrice|half|double|triple|two|three|four|five|six|"
        r"eight|ten)\b.*|\s+\w+fold\b.*|\s+(?:slightly|a\s+bit|"
        r"a\s+little|a\s+lot|considerably|significantly|dramatically))?"
    ),
    # blow it up
    rx(r"blow\s+(?P<x>.+?)\s+up(?P<rest>\s+.+)?"),
)
_VERB_SCALE = {"double": 2.0, "triple": 3.0, "quadruple": 4.0, "halve": 0.5}
_DOWN_VERB = re.compile(r"(?:halve|decrease|reduce|shrink|scale\s+down|lower|cut|miniaturi|downsize)", re.IGNORECASE)


def size_rule(c: ClauseContext) -> Outcome:
    """make the moon four times larger / twice its size / shrink the car / blow it up → attribute_edit (size);
    the whole image → image_upscaling with the factor."""
    for pattern in _SIZE_PATTERNS:
        m = pattern.fullmatch(c.text)
        if m is None:
            continue
        groups = m.groupdict()
        x = groups["x"]
        verb = (groups.get("verb") or "").lower()
        if groups.get("dir") is not None:
            smaller = re.fullmatch(f"{_SMALLER}|{_SMALL}", groups["dir"], re.IGNORECASE) is not None
        else:
            smaller = bool(_DOWN_VERB.match(verb)) or (groups.get("updown") or verb).lower().endswith("down")
        tail = " ".join(g for g in (groups.get("amount"), groups.get("rest")) if g)
        scale = read_scale(tail, smaller) if tail else _VERB_SCALE.get(verb)
        if groups.get("dir") is None and not verb and scale is not None:
            smaller = scale < 1  # "make the bottle half its size"
        if re.fullmatch(r"resize|rescale|scale", (groups.get("verb") or "").lower()) and groups.get("updown") is None:
            if scale is None:
                return None  # "resize the image": no direction, no size; not ours
            smaller = scale < 1
        if c.is_image(x) and not c.is_pronoun(x):
            if smaller:
                return c.unsupported("making the whole image smaller (downscaling) is not a subtask kind")
            factor = scale if scale is not None else 2.0
            return [Draft("image_upscaling", None, _factor_text(factor))]
        params: dict[str, object] = {"attribute": "size"}
        if scale is not None:
            params["scale"] = scale
        result = "smaller" if smaller else "larger"
        return [Draft(d.kind, d.target, result, dict(params), d.pronoun) for d in c.objects("attribute_edit", x)]
    return None


def _factor_text(factor: float) -> str:
    return str(int(factor)) if float(factor).is_integer() else f"{factor:g}"


# --------------------------------------------------------------------------------------------------- materials

_MATERIAL = alternation(MATERIALS)
_MATERIAL_ADJ = alternation(MATERIAL_ADJECTIVES)
_MATERIAL_PATTERNS = (
    rx(
        rf"(?:make|build|turn|recreate|remake|render)\s+(?P<x>.+?)\s+(?:look\s+(?:like\s+it(?:'s|\s+is|\s+was)|as\s+if\s+it\s+(?:is|were|was))\s+)?"
        rf"(?:(?:be\s+)?made\s+)?(?:out\s+of|of|from|in)\s+(?P<m>(?:solid\s+|shiny\s+|polished\s+|clear\s+)?{_MATERIAL})"
    ),
    rx(rf"make\s+(?P<x>.+?)\s+(?:look\s+)?(?P<m>{_MATERIAL_ADJ})"),
    rx(
        rf"(?:turn|change|convert|transform|make)\s+(?P<x>.+?)\s+(?:in)?to\s+(?:a|an)\s+(?P<m>{_MATERIAL}|{_MATERIAL_ADJ})\s+ones?"
        rf"|make\s+(?P<x2>.+?)\s+(?:a|an)\s+(?P<m2>{_MATERIAL}|{_MATERIAL_ADJ})\s+ones?"
    ),
    rx(
        r"(?:change|switch|alter|modify|set|swap|replace)\s+(?:the\s+)?material\s+of\s+(?P<x>.+?)\s+(?:to|into|with|for)\s+(?P<m>.+)"
        r"|(?:change|switch|alter|modify|set)\s+(?P<x2>.+?)(?:'s|’s)\s+material\s+(?:to|into)\s+(?P<m2>.+)"
    ),
    rx(
        rf"give\s+(?P<x>.+?)\s+(?:a|an)\s+(?P<m>{_MATERIAL}|{_MATERIAL_ADJ})\s+(?P<what>texture|finish|look|surface|material)"
    ),
)
_TEXTURE = rx(
    r"(?:change|switch|alter|modify|set|make)\s+(?:the\s+)?(?P<what>texture|surface|finish|pattern)\s+of\s+(?P<x>.+?)"
    r"\s+(?:to|into)\s+(?:a\s+|an\s+)?(?P<m>.+?)(?:\s+(?:texture|pattern|finish))?"
)


def material_rule(c: ClauseContext) -> Outcome:
    """make the table wooden / out of glass / turn the bench into a stone one / change the material of X to Y."""
    m = _TEXTURE.fullmatch(c.text)
    if m:
        attribute = "texture" if m.group("what").lower() in ("texture", "surface", "finish") else "pattern"
        return attribute_drafts(c, m.group("x"), c.restore(m.group("m")).lower(), attribute)
    for pattern in _MATERIAL_PATTERNS:
        m = pattern.fullmatch(c.text)
        if m is None:
            continue
        groups = m.groupdict()
        x = groups.get("x") or groups.get("x2") or ""
        material = groups.get("m") or groups.get("m2") or ""
        if c.is_image(x) and not c.is_pronoun(x):
            return None
        what = (groups.get("what") or "").lower()
        return attribute_drafts(c, x, c.restore(material).lower(), "texture" if what == "texture" else "material")
    return None


def attribute_drafts(c: ClauseContext, x: str, result: str | None, attribute: str) -> list[Draft]:
    """One attribute_edit draft per object named in `x` (pronouns marked), with `attribute` in its params."""
    params = {"attribute": attribute}
    return [Draft(d.kind, d.target, result, dict(params), d.pronoun) for d in c.objects("attribute_edit", x)]


# -------------------------------------------------------------------------------------------------- expressions

_EMOTION = alternation(EMOTIONS)
_EXPRESSION_VERB = alternation(EXPRESSION_VERBS)
_EXPRESSION_PATTERNS = (
    rx(
        rf"(?:make|let|have|get)\s+(?P<x>.+?)\s+(?P<e>{_EXPRESSION_VERB})(?:\s+(?:more|widely|broadly|happily|a\s+bit|slightly))?"
    ),
    rx(rf"(?:make|turn)\s+(?P<x>.+?)\s+(?:look|appear|seem|feel)?\s*{_MOD}(?P<e>{_EMOTION})"),
    rx(
        rf"give\s+(?P<x>.+?)\s+(?:a|an)\s+(?P<e>(?:(?:{_EMOTION}|big|wide|slight|warm|gentle|broad)\s+)?"
        r"(?:expression|look|face|smile|frown|grin|scowl)|smile|frown|grin)"
    ),
    rx(
        r"(?:change|alter|modify|adjust|switch|set)\s+(?:the\s+)?(?:facial\s+)?(?:expression|emotion|face)\s+of\s+(?P<x>.+?)"
        r"(?:\s+(?:to|into)\s+(?:a\s+|an\s+)?(?P<e>.+?)(?:\s+(?:one|expression|look))?)?"
        r"|(?:change|alter|modify|adjust|switch|set)\s+(?P<x2>.+?)(?:'s|’s)\s+(?:facial\s+)?(?:expression|emotion|face)"
        r"(?:\s+(?:to|into)\s+(?:a\s+|an\s+)?(?P<e2>.+?)(?:\s+(?:one|expression|look))?)?"
    ),
)


def expression_rule(c: ClauseContext) -> Outcome:
    """make the man smile / make her look sad / give the woman a surprised expression → attribute_edit expression."""
    for pattern in _EXPRESSION_PATTERNS:
        m = pattern.fullmatch(c.text)
        if m is None:
            continue
        groups = m.groupdict()
        x = groups.get("x") or groups.get("x2") or ""
        if c.is_image(x) and not c.is_pronoun(x):
            return None
        e = groups.get("e") or groups.get("e2")
        result = c.restore(e).lower() if e else "changed expression"
        result = re.sub(r"\s+(?:expression|look|face)$", "", result) if result.split()[0] != "a" else result
        return attribute_drafts(c, x, result, "expression")
    return None


# ------------------------------------------------------------------------------------------------------- poses

_ACTION = alternation(ACTIONS)
_POSE_PATTERNS = (
    rx(rf"(?:make|let|have|get)\s+(?P<x>.+?)\s+(?P<a>(?:{_ACTION})(?:s|es)?\b.*)"),
    rx(
        r"(?:change|alter|modify|adjust|switch|set|fix)\s+(?:the\s+)?(?:pose|posture|stance|gesture|body\s+position|"
        r"action|activity|body\s+language|"
        r"position\s+of\s+(?:the\s+)?(?:arms?|legs?|hands?|head|body|feet|tail))\s+of\s+(?P<x>.+?)"
        r"(?:\s+(?:to|into|so\s+(?:that\s+)?)\s*(?:a\s+|an\s+)?(?P<a>.+?)(?:\s+pose)?)?"
        r"|(?:change|alter|modify|adjust|switch|set|fix)\s+(?P<x2>.+?)(?:'s|’s)\s+(?:pose|posture|stance|gesture|"
        r"(?:arm|leg|hand|head|body)\s+position)(?:\s+(?:to|into|so\s+(?:that\s+)?)\s*(?:a\s+|an\s+)?(?P<a2>.+?)(?:\s+pose)?)?"
    ),
    rx(
        r"(?:pose|position)\s+(?P<x>.+?)\s+(?P<a>(?:like|as\s+if|so\s+that|as)\s+.+|(?:sitting|standing|lying|kneeling)\b.*)"
    ),
)


_HOLDING = rx(
    r"(?:make|let|have|get)\s+(?P<x>.+?)\s+(?:hold|wear|carry|get|put\s+on)\s+(?P<y>(?:a|an|some|two|three)\s+.+)"
)


def pose_rule(c: ClauseContext) -> Outcome:
    """let the horse run / make the dog sit / have the child cross her arms / change the pose of X → attribute_edit
    pose; "make the woman hold a plate" adds the plate to her."""
    m = _HOLDING.fullmatch(c.text)
    if m:
        anchor = m.group("x")
        if c.is_pronoun(anchor):
            return [Draft("object_addition", None, c.noun(m.group("y")), {"relation": "on"}, pronoun=True)]
        return [Draft("object_addition", c.noun(anchor), c.noun(m.group("y")), {"relation": "on"})]
    for pattern in _POSE_PATTERNS:
        m = pattern.fullmatch(c.text)
        if m is None:
            continue
        groups = m.groupdict()
        x = groups.get("x") or groups.get("x2") or ""
        if c.is_image(x) and not c.is_pronoun(x):
            return None
        a = groups.get("a") or groups.get("a2")
        result = c.restore(a).lower() if a else "changed pose"
        attribute = "orientation" if re.match(r"(?:face|facing|turn)\b", result) else "pose"
        return attribute_drafts(c, x, result, attribute)
    return None


_ROTATE = rx(
    r"(?:rotate|turn|spin|twist|tilt|flip|reorient|angle)\s+(?P<x>.+?)"
    r"(?P<rest>\s+(?:around|round|sideways|upside\s+down|over|to\s+face\b.*|to\s+(?:run|point|lie|sit|stand)\b.*|"
    r"so\s+(?:that\s+)?(?:it|they)\s+(?:faces?|points?)\b.*|"
    r"(?:by\s+)?\d+\s*(?:degrees|°).*|(?:clockwise|counter-?clockwise|anticlockwise|slightly|a\s+bit|a\s+little|"
    r"to\s+the\s+(?:left|right))(?:\s+.*)?))?"
)
_ORIENTATION = rx(
    r"(?:change|alter|modify|adjust|switch|set|fix)\s+(?:the\s+)?(?:\S+\s+)?(?:orientation|direction|angle|rotation|"
    r"facing\s+direction)\s+of\s+(?P<x>.+?)(?:\s+(?:to|so\s+(?:that\s+)?)\s*(?P<rest>.+))?"
    r"|(?:change|alter|modify|adjust)\s+(?P<x2>.+?)(?:'s|’s)\s+(?:orientation|direction|angle|rotation)(?:\s+(?:to|so)\s+(?P<rest2>.+))?"
)


def orientation_rule(c: ClauseContext) -> Outcome:
    """rotate the chair to face the window / turn the car around / adjust the orientation of X → attribute_edit
    orientation (the whole image: not a subtask kind)."""
    m = _ORIENTATION.fullmatch(c.text)
    if m:
        x, rest = m.group("x") or m.group("x2"), m.group("rest") or m.group("rest2")
    else:
        m = _ROTATE.fullmatch(c.text)
        if m is None:
            return None
        x, rest = m.group("x"), m.group("rest")
        if m.group(0).lower().startswith("turn") and not rest:
            return None  # "turn the lights" is not a rotation
    if c.is_image(x) and not c.is_pronoun(x):
        return c.unsupported("rotating or flipping the whole image is not a subtask kind")
    if re.match(r"(?:the\s+)?camera\b", x, re.IGNORECASE):
        return None
    result = (rest or "").strip()
    result = re.sub(r"^(?:to\s+)?(?:slightly|a\s+bit|a\s+little)\s*", "", result, flags=re.IGNORECASE).strip()
    result = re.sub(r"^to\s+(?=face\b)", "", result, flags=re.IGNORECASE)
    return attribute_drafts(c, x, c.restore(result).lower() if result else "rotated", "orientation")


# ------------------------------------------------------------------------------------------- other looks, counts

_LOOK_WORD = alternation(LOOKS)
_LOOK = rx(
    rf"(?:make|turn|render)\s+(?P<x>.+?)\s+(?P<verb>look|appear|seem)?\s*{_MOD}(?P<y>(?:{_LOOK_WORD})(?:er)?|older|younger|"
    r"newer|cleaner|dirtier|wetter|drier|shinier|rustier|fresher|healthier|riper)"
    rf"|make\s+(?P<x2>.+?)\s+(?:look|appear|seem)\s+{_MOD}(?P<y2>[a-z-]+(?:\s+and\s+[a-z-]+)?)"
)


def look_rule(c: ClauseContext) -> Outcome:
    """make the old car look new / make the bread look burnt / make the tree look older → attribute_edit."""
    m = _LOOK.fullmatch(c.text)
    if m is None:
        return None
    x = m.group("x") or m.group("x2")
    y = m.group("y") or m.group("y2")
    if c.is_image(x) and not c.is_pronoun(x):
        return None
    if parse_colour(y) is not None:
        return None
    return attribute_drafts(c, x, c.restore(y).lower(), "appearance")


_PROPERTY = alternation(PROPERTIES)
_UP_VERBS = (
    r"increase|enhance|improve|boost|raise|heighten|strengthen|amplify|intensify|emphasi[sz]e|accentuate|"
    r"maximi[sz]e|add"
)
_DOWN_VERBS = r"decrease|reduce|lower|lessen|diminish|weaken|soften|minimi[sz]e|tone\s+down|dial\s+down|cut|dim"
_PROPERTY_RX = rx(
    rf"(?P<verb>{_UP_VERBS}|{_DOWN_VERBS}|adjust|change|alter|modify|vary|refine|tweak|correct|fix|redefine|retouch|reshape)"
    rf"\s+(?:the\s+)?(?:overall\s+)?(?P<prop>{_PROPERTY})(?:\s+and\s+(?:the\s+)?(?:{_PROPERTY}))?"
    r"(?:\s+(?:of|on|in|for|around|across)\s+(?P<x>.+?))?(?:\s+(?:to|into)\s+(?P<y>.+))?"
    rf"|(?P<verb2>{_UP_VERBS}|{_DOWN_VERBS}|adjust|change|alter|modify|vary|refine|tweak)\s+(?P<x2>.+?)(?:'s|’s)\s+"
    rf"(?P<prop2>{_PROPERTY})(?:\s+(?:to|into)\s+(?P<y2>.+))?"
)


def property_rule(c: ClauseContext) -> Outcome:
    """increase the visibility of the lake / adjust the texture of the rock / change the shape of X to Y →
    attribute_edit with the property as its attribute."""
    m = _PROPERTY_RX.fullmatch(c.text)
    if m is None:
        return None
    verb = (m.group("verb") or m.group("verb2")).lower()
    prop = " ".join((m.group("prop") or m.group("prop2")).lower().split())
    x, y = m.group("x") or m.group("x2"), m.group("y") or m.group("y2")
    if y:
        result = c.restore(y).lower()
    elif re.fullmatch(_UP_VERBS, verb):
        result = f"more {prop}"
    elif re.fullmatch(_DOWN_VERBS, verb):
        result = f"less {prop}"
    else:
        result = f"{verb} {prop}"
    if x is None or (c.is_image(x) and not c.is_pronoun(x)):
        return [Draft("attribute_edit", None, result, {"attribute": prop})]
    return attribute_drafts(c, x, result, prop)


_COUNT = rx(
    r"(?P<verb>increase|raise|boost|double|triple|add\s+to|reduce|decrease|lower|halve|lessen|cut|minimi[sz]e|thin\s+out)\s+"
    r"(?:the\s+)?(?:number|count|amount|quantity|density|population)\s+of\s+(?P<x>.+?)(?:\s+(?:to|by)\s+(?P<n>.+))?"
    r"|(?P<verb2>add\s+more|put\s+more|include\s+more)\s+(?P<x2>.+?)"
)


def count_rule(c: ClauseContext) -> Outcome:
    """increase the number of birds → object_addition of more birds; reduce the number of cars → object_removal of
    some of them."""
    m = _COUNT.fullmatch(c.text)
    if m is None:
        return None
    verb = (m.group("verb") or m.group("verb2")).lower()
    noun = c.noun(m.group("x") or m.group("x2"))
    if noun is None or noun in ADJUSTABLE:
        return None  # "add more contrast" adjusts the image (adjust_rules), it adds nothing
    params: dict[str, object] = {
        "count": "more" if re.match(r"increase|raise|boost|double|triple|add|put|include", verb) else "fewer"
    }
    if m.group("n"):
        params["to"] = c.restore(m.group("n")).lower()
    if params["count"] == "more":
        return [Draft("object_addition", None, f"more {noun}", params)]
    return [Draft("object_removal", noun, None, params)]


# ------------------------------------------------------------------------------------------------ other object edits

#: Verbs that ask for a change of an object's look without naming a kind ("adjust the stream of water to pour over
#: the tomato", "extend the net further into the ocean"): an instruction-guided attribute edit of the object.
_EDIT_VERB = (
    r"(?:adjust|alter|modify|change|enhance|increase|decrease|reduce|intensify|extend|lengthen|shorten|widen|narrow|"
    r"thicken|thin(?:\s+out)?|soften|strengthen|weaken|refine|improve|minimi[sz]e|maximi[sz]e|emphasi[sz]e|accentuate|"
    r"style|restyle|distribute|redistribute|disperse|scatter|spread(?:\s+out)?|consolidate|open|close|slice|fold|unfold|"
    r"lower|raise|lift|bend|straighten|tidy(?:\s+up)?|clean(?:\s+up)?|fix|repair|retouch|reshape|vary|diversify|"
    r"simplify|smooth(?:\s+out)?|roughen|amplify|deepen|curl|stretch|compress|flatten|tilt|expand|grow|age|"
    r"de-?age|animate|freeze|melt|light\s+up|fill\s+out|dim|calm|sharpen\s+up|update|redesign|decorate|enrich)"
)
_GENERIC = rx(rf"(?P<verb>{_EDIT_VERB})\s+(?P<rest>.+)")
_MORE_LESS = rx(
    r"make\s+(?P<x>.+?)\s+(?P<y>(?:much\s+|a\s+bit\s+|slightly\s+|even\s+)?(?:more|less)\s+[a-z-]+(?:\s+and\s+(?:more|less)\s+[a-z-]+)?)"
)
_TARGET_END = re.compile(
    r"\s+(?:to|so|for|by|into|with|while|across|slightly|subtly|more|less|further|farther|somewhat|a\s+bit|"
    r"a\s+little|very|over|towards?|toward|until|as|from|along|around|through|beyond|and)\b.*$",
    re.IGNORECASE,
)
_ADDING = re.compile(r"\bby\s+adding\s+(?P<y>.+?)(?:\s+(?:to|so|in\s+order)\b.*)?$", re.IGNORECASE)
_INCLUDE_MORE = re.compile(r"to\s+(?:include|show|feature|have)\s+(?P<y>(?:more|additional|extra)\s+.+)", re.IGNORECASE)
_VAGUE_TARGETS = frozenset({"it", "this", "that", "everything", "things", "scene overall", "overall"})


def _colours_only(text: str) -> bool:
    """ "more white and red" names colours, not things to add."""
    words = [w for w in re.split(r"\s+|,", text.lower()) if w and w not in ("more", "and", "or", "additional", "extra")]
    return bool(words) and all(parse_colour(w) is not None for w in words)


def generic_edit_rule(c: ClauseContext) -> Outcome:
    """make some coral structures more prominent / extend the net into the ocean / adjust the stream of water to pour
    over the tomato → attribute_edit of the object, the instruction as written as its result (for an
    instruction-guided editor; no programmatic check can verify it)."""
    m = _MORE_LESS.fullmatch(c.text)
    if m:
        x = m.group("x")
        if c.is_image(x) and not c.is_pronoun(x):
            return None
        return attribute_drafts(c, x, c.restore(m.group("y")).lower(), "appearance")
    m = _GENERIC.fullmatch(c.text)
    if m is None:
        return None
    adding = _ADDING.search(c.text) or _INCLUDE_MORE.fullmatch(c.purpose)
    if adding and not _colours_only(adding.group("y")):
        return [Draft("object_addition", None, c.noun(adding.group("y")))]
    rest = m.group("rest")
    x = _TARGET_END.sub("", rest).strip()
    of = re.fullmatch(r"(?:the\s+)?(?P<prop>[a-z]+(?:\s+[a-z]+)?)\s+of\s+(?P<x>.+)", x, re.IGNORECASE)
    attribute = "appearance"
    if of and not re.search(r"\b(?:cup|glass|pair|piece|group|pile|stack|bunch|row|set|herd|flock)$", of.group("prop")):
        attribute, x = " ".join(of.group("prop").lower().split()), of.group("x")
    noun = c.noun(x)
    if not noun or noun in _VAGUE_TARGETS:
        return None
    if attribute in ("size", "scale", "dimensions"):
        raise PlanningError(f"should the {noun} become larger or smaller (and by how much, e.g. 'twice as large')?")
    result = " ".join(p for p in (c.restore().rstrip("."), c.purpose.rstrip(".")) if p)
    if c.is_image(x) and not c.is_pronoun(x):
        return [Draft("attribute_edit", None, result, {"attribute": attribute})]
    return attribute_drafts(c, x, result, attribute)
