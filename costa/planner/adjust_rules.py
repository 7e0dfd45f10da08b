"""Rules for global (or regional) adjustments of light and colour, and for scenery changes (time of day, season,
weather, setting).

Each rule takes a `ClauseContext` and returns drafts, an `Unsupported` reason, or None when it does not apply; their
order is `image_rules.IMAGE_RULES`.
"""

from __future__ import annotations

import re

from costa.planner.canvas_rules import IMAGE_NOUNS
from costa.planner.phrases import ClauseContext, Draft, Outcome, rx
from costa.tools.adjust import degree_amount

_ADJUST_WORDS: dict[str, str] = {
    "brighter": "brighter",
    "lighter": "brighter",
    "darker": "darker",
    "dimmer": "darker",
    "sunlit": "brighter",
    "sunnier": "brighter",
    "bright": "brighter",
    "warmer": "warmer",
    "cooler": "cooler",
    "colder": "cooler",
    "more vivid": "more saturated",
    "more vibrant": "more saturated",
    "more colorful": "more saturated",
    "more colourful": "more saturated",
    "more saturated": "more saturated",
    "less saturated": "less saturated",
    "less colorful": "less saturated",
    "less colourful": "less saturated",
    "duller": "less saturated",
    "muted": "less saturated",
    "more contrasty": "more contrast",
    "higher contrast": "more contrast",
    "lower contrast": "less contrast",
    "black and white": "grayscale",
    "black-and-white": "grayscale",
    "black & white": "grayscale",
    "grayscale": "grayscale",
    "greyscale": "grayscale",
    "monochrome": "grayscale",
    "sepia": "sepia",
    "less bright": "darker",
    "less dark": "brighter",
    "less warm": "cooler",
    "less cold": "warmer",
    "less cool": "warmer",
    "less blue": "warmer",
    "less yellow": "cooler",
    "less vivid": "less saturated",
    "less vibrant": "less saturated",
    "more muted": "less saturated",
    "more contrast": "more contrast",
    "less contrast": "less contrast",
    "punchier": "more contrast",
    "more punchy": "more contrast",
    "softer": "less contrast",
}
_ADJ = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(_ADJUST_WORDS, key=len, reverse=True))
_MOD = (
    r"(?:(?:a\s+(?:little\s+)?(?:bit\s+)?|slightly\s+|much\s+|a\s+lot\s+|even\s+|way\s+|somewhat\s+|"
    r"more\s+(?=\S+er\b))?)"
)
_QUANTITY: dict[str, tuple[str, str]] = {
    "brightness": ("brighter", "darker"),
    "exposure": ("brighter", "darker"),
    "lightness": ("brighter", "darker"),
    "contrast": ("more contrast", "less contrast"),
    "saturation": ("more saturated", "less saturated"),
    "colour saturation": ("more saturated", "less saturated"),
    "color saturation": ("more saturated", "less saturated"),
    "vibrance": ("more saturated", "less saturated"),
    "vibrancy": ("more saturated", "less saturated"),
    "warmth": ("warmer", "cooler"),
}
_QTY = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(_QUANTITY, key=len, reverse=True))
_TAIL = r"(?:\s+(?:to|by|for|so|in\s+order\s+to|slightly|a\s+bit|a\s+little)\b.*)?"
_GLOBAL = (
    (rx(rf"make\s+(?:(?P<x>.+?)\s+)?{_MOD}(?P<adj>{_ADJ})(?:\s*(?:,|and|but)\s*{_MOD}(?P<adj2>{_ADJ}))?{_TAIL}"), None),
    (rx(rf"(?:turn|convert|change)(?:\s+(?P<x>.+?))?\s+(?:to|into)\s+(?P<adj>{_ADJ}){_TAIL}"), None),
    (rx(rf"(?:turn|get)\s+(?P<x>.+?)\s+{_MOD}(?P<adj>{_ADJ}){_TAIL}"), None),
    (
        rx(
            rf"give\s+(?P<x>.+?)\s+(?:an?\s+)?{_MOD}(?P<adj>{_ADJ})\s+(?:tone|look|feel|cast|tint|glow|finish|colou?r|"
            rf"mood|vibe|grade|treatment){_TAIL}"
        ),
        None,
    ),
    (
        rx(rf"make\s+(?P<x>(?:the\s+)?colou?rs)\s+(?:pop|stand\s+out|sing|richer|deeper|stronger){_TAIL}"),
        "more saturated",
    ),
    (rx(rf"(?:brighten|lighten)(?:\s+(?P<x>.+?))?{_TAIL}"), "brighter"),
    (rx(rf"darken(?:\s+(?P<x>.+?))?{_TAIL}"), "darker"),
    (rx(rf"desaturate(?:\s+(?P<x>.+?))?{_TAIL}"), "less saturated"),
    (rx(rf"(?:saturate)(?:\s+(?P<x>.+?))?{_TAIL}"), "more saturated"),
    (rx(rf"(?:warm\s+up)(?:\s+(?P<x>.+?))?{_TAIL}"), "warmer"),
    (rx(rf"(?:cool\s+down)(?:\s+(?P<x>.+?))?{_TAIL}"), "cooler"),
    (rx(rf"(?:tone\s+down)(?:\s+(?P<x>.+?))?{_TAIL}"), "less saturated"),
    (
        rx(
            r"(?P<dir>increase|raise|boost|enhance|add(?:\s+more|\s+some|\s+extra|\s+a\s+bit\s+of|\s+a\s+little)?|improve|"
            r"heighten|strengthen|bump\s+up|turn\s+up|crank\s+up|pump\s+up|up|"
            r"decrease|reduce|lower|lessen|drop|tone\s+down|cut|diminish|weaken|turn\s+down|dial\s+down)\s+"
            rf"(?:the\s+)?(?:overall\s+)?(?:image\s+|photo\s+|picture\s+|scene\s+)?(?P<qty>{_QTY})(?:\s+(?:and|&)\s+(?:the\s+)?(?P<qty2>{_QTY}))?"
            rf"(?:\s+(?:of|on|in)\s+(?P<x>.+?))?{_TAIL}"
        ),
        None,
    ),
)
_UP = re.compile(
    r"increase|raise|boost|enhance|add.*|improve|heighten|strengthen|bump|turn\s+up|crank\s+up|pump\s+up|up",
    re.IGNORECASE,
)
#: What a light or colour adjustment of "the colours" or "the whole thing" means: the whole image.
_WHOLE = frozenset(
    {"colours", "colors", "colour", "color", "tones", "tone", "whole thing", "entire thing", "lighting", "light"}
)


def _whole(c: ClauseContext, x: str | None) -> bool:
    return x is None or c.is_image(x) or c.is_pronoun(x) or c.noun(x) in _WHOLE


_LIGHTING = rx(
    r"(?:adjust|change|modify|alter|set|tweak|fix|balance|rebalance|correct)\s+(?:the\s+)?(?:overall\s+)?"
    r"(?:(?:scene|image|photo|picture|environment|room|setting)(?:'s|’s)?\s+)?(?:lighting|light|lights|illumination|brightness|exposure|contrast|saturation|warmth|tones?|"
    r"colou?r\s+(?:tone|temperature|balance|grading)|colou?rs?\s+and\s+lighting|lighting\s+and\s+colou?rs?)"
    r"(?:\s+(?:of|in|on|across|around|for)\s+(?P<x>.+?))?"
    rf"(?:\s+(?:to\s+(?:be|look|appear|become)\s+|so\s+(?:it|they)\s+(?:is|are|looks?)\s+)?{_MOD}(?P<adj>{_ADJ}))?"
)
_PURPOSE_ADJ = rx(rf".*?\b(?P<adj>{_ADJ})\b.*")
_PURPOSE_QTY = rx(rf".*?\b(?P<dir>increase|raise|boost|enhance|add|improve|heighten|reduce|decrease|lower|lessen)\s+"
                  rf"(?:the\s+)?(?P<qty>{_QTY})\b.*")  # fmt: skip
_NO_DIRECTION = (
    "a lighting or colour adjustment needs a direction: say brighter, darker, warmer, cooler, or more or less "
    "contrast or saturation"
)


def _lighting(c: ClauseContext) -> Outcome:
    """adjust the lighting to be dimmer / change the overall lighting to be warmer / adjust lighting (no direction)."""
    m = _LIGHTING.fullmatch(c.text)
    if m is None:
        return None
    result = _ADJUST_WORDS[" ".join(m.group("adj").lower().split())] if m.group("adj") else None
    if result is None and (q := _PURPOSE_QTY.fullmatch(c.purpose)):
        up, down = _QUANTITY[" ".join(q.group("qty").lower().split())]
        result = up if _UP.fullmatch(q.group("dir")) else down
    if result is None and (a := _PURPOSE_ADJ.fullmatch(c.purpose)):
        result = _ADJUST_WORDS[" ".join(a.group("adj").lower().split())]
    if result is None:
        return c.unsupported(_NO_DIRECTION)
    x = m.group("x")
    if x is None or c.is_image(x) or c.is_pronoun(x):
        return [Draft("global_adjustment", None, result)]
    return [Draft(d.kind, d.target, result, d.params) for d in c.objects("global_adjustment", x)]


def global_adjustment_rule(c: ClauseContext) -> Outcome:
    """make it brighter / increase contrast / darken the sky / convert to black and white → global_adjustment."""
    lighting = _lighting(c)
    if lighting is not None:
        return lighting
    for pattern, fixed in _GLOBAL:
        m = pattern.fullmatch(c.text)
        if m is None:
            continue
        groups = m.groupdict()
        if fixed is not None:
            result = fixed
        elif groups.get("qty"):
            up, down = _QUANTITY[" ".join(groups["qty"].lower().split())]
            result = up if _UP.fullmatch(groups["dir"]) else down
        else:
            result = _ADJUST_WORDS[" ".join(groups["adj"].lower().split())]
        results = [result]
        if groups.get("qty2"):
            up, down = _QUANTITY[" ".join(groups["qty2"].lower().split())]
            results.append(up if _UP.fullmatch(groups["dir"]) else down)
        if groups.get("adj2"):
            results.append(_ADJUST_WORDS[" ".join(groups["adj2"].lower().split())])
        x = groups.get("x")
        if x is not None and re.search(r"(?:,|\band)$", x.strip(), re.IGNORECASE):
            return None  # "make it night and brighter": two different edits this rule cannot separate
        amount = degree_amount(c.text)  # "a little darker", "much brighter", "by 30%": the result stays the word
        degree = {"amount": amount} if amount is not None and 0.0 < amount <= 1.0 else {}
        if x is None or _whole(c, x):
            return [Draft("global_adjustment", None, r, degree) for r in results]
        return [
            Draft(d.kind, d.target, r, {**d.params, **degree})
            for r in results
            for d in c.objects("global_adjustment", x)
        ]
    return None


_SCENERY_WORDS = (
    r"raining|rainfall|snowfall|thunderstorm|night|nighttime|night\s+time|midnight|day|daytime|day\s+time|daylight|morning|evening|dusk|dawn|sunset|sunrise|"
    r"twilight|golden\s+hour|winter|summer|autumn|fall|spring|snowy|snowing|snow|rainy|raining|rain|foggy|fog|misty|"
    r"mist|stormy|storm|sunny|cloudy|overcast|wintry|wintery|autumnal|springtime|summertime|wintertime"
)
_SCENERY_MODIFIER = (
    r"(?:snowy|rainy|foggy|sunny|cloudy|cold|warm|dark|late|early|bright|stormy|misty|clear|starry|winter|summer)"
)
#: "look like", "look as if it was taken at", "feel like it's": how people say the scene should seem.
_LOOK_LIKE = (
    r"(?:look|feel|seem|appear)\s+(?:like|as\s+(?:if|though))\s+(?:it(?:'s|’s|\s+is|\s+was|\s+were)\s+)?"
    r"(?:(?:taken|shot|photographed|captured)\s+)?(?:(?:at|in|on|during)\s+)?"
)
_SCENERY = (
    rx(
        r"(?:change|turn|transform|convert|switch|make|set|alter|modify)\s+(?:the\s+)?(?P<what>scenery|scene|season|"
        r"weather|setting|time\s+of\s+day|time|environment|background|landscape|backdrop|surroundings|location)"
        r"(?:\s+from\s+(?P<from>.+?))?\s+(?:to|into)\s+(?P<y>.+)"
    ),
    rx(r"replace\s+(?:the\s+)?(?:background|backdrop|scenery|sky|setting)\s+(?:with|by)\s+(?P<y>.+)"),
    rx(
        rf"make\s+(?:the\s+)?\w+\s+{_LOOK_LIKE}(?P<y>(?:(?:a|an|the)\s+)?(?:{_SCENERY_MODIFIER}\s+)?(?:{_SCENERY_WORDS})"
        r"(?:\s+(?:scene|time|season|day|night|weather|setting|landscape|evening|morning|afternoon|version))?)"
    ),
    rx(
        rf"(?:make|turn|change|transform|convert|set|switch)(?:\s+{IMAGE_NOUNS})?\s+(?:(?:in)?to\s+|{_LOOK_LIKE}|as\s+if\s+it\s+is\s+)?"
        rf"(?P<y>(?:(?:a|an|the)\s+)?(?:{_SCENERY_MODIFIER}\s+)?(?:{_SCENERY_WORDS})(?:\s+(?:scene|time|season|day|night|weather|"
        r"setting|landscape|evening|morning|afternoon|version))?)"
    ),
)


def scenery_rule(c: ClauseContext) -> Outcome:
    """change the scenery to winter / make it night / replace the background with a beach → changing_scenery."""
    for pattern in _SCENERY:
        m = pattern.fullmatch(c.text)
        if m:
            y = re.sub(r"^(?:a|an|the)\s+", "", c.restore(m.group("y")), flags=re.IGNORECASE)
            groups = m.groupdict()
            params = {"from": c.noun(groups["from"]) or ""} if groups.get("from") else {}
            return [Draft("changing_scenery", None, y.lower() if c.masked.literals(m.group("y")) == [] else y, params)]
    return None
