"""Rules for object edits (recolour, replace, remove, add, detect, segment) and whole-image edits and queries.

Each rule takes a `ClauseContext` and returns drafts, an `Unsupported` reason, or None when it does not apply. They are
tried in the order of `IMAGE_RULES`, after the text rules; the first that applies wins.
"""

from __future__ import annotations

import re

from costa.colours import parse_colour
from costa.planner.edit_rules import (
    count_rule,
    expression_rule,
    generic_edit_rule,
    look_rule,
    material_rule,
    orientation_rule,
    pose_rule,
    property_rule,
    size_rule,
)
from costa.planner.phrases import (
    ClauseContext,
    Draft,
    Outcome,
    read_colour,
    read_factor,
    read_position,
    rx,
    split_trailing_colour,
)
from costa.planner.view_rules import cover_rule, crop_rule, move_rule, style_rule, viewpoint_rule

_IMAGE = (
    r"(?:(?:the\s+|this\s+|that\s+|my\s+)?(?:whole\s+|entire\s+)?(?:image|photo|picture|photograph|pic|scene|frame|"
    r"canvas)|it|this)"
)
_PICTURE = r"(?:(?:the\s+|this\s+|that\s+|my\s+)?(?:whole\s+|entire\s+)?(?:image|photo|picture|photograph|pic)|it|this)"


_PRIVACY_BLUR = rx(
    r"(?:blur(?:\s+out)?|pixel(?:ate|ise|ize)|anonymi[sz]e|mosaic)\s+(?P<x>.+)"
    r"|(?:censor|obscure|hide|conceal)\s+(?P<y>.*\b(?:faces?|people|persons?|pedestrians|plates?|identit(?:y|ies))\b.*)"
)


def privacy_blur_rule(c: ClauseContext) -> Outcome:
    """blur the faces / pixelate the licence plates / anonymise the people → privacy_blur when the tables have it."""
    m = _PRIVACY_BLUR.fullmatch(c.text)
    if m is None:
        return None
    if "privacy_blur" not in c.kinds:
        return c.unsupported(
            "blurring or pixelating part of the image (privacy_blur) is not a subtask kind in the tables"
        )
    return c.objects("privacy_blur", m.group("x") or m.group("y"))


_DEBLUR = rx(
    r"(?:deblur|de-blur|unblur|sharpen|refocus)(?:\s+(?P<x>.+))?"
    r"|(?:remove|reduce|fix|correct|eliminate|get\s+rid\s+of|undo)\s+(?:the\s+|any\s+|all\s+)?(?:motion\s+)?"
    r"(?:blur|blurriness|blurring)(?:\s+(?:from|in|on|of)\s+(?P<y>.+))?"
    r"|make\s+(?P<z>.+?)\s+(?:sharper|less\s+blurry|crisper|clearer|sharp|crisp|in\s+focus|not\s+blurry)"
    r"|(?:increase|improve|enhance|boost|fix|restore)\s+(?:the\s+)?(?:overall\s+)?(?:sharpness|focus|clarity|detail)"
    r"(?:\s+and\s+(?:the\s+)?(?:sharpness|focus|clarity|detail))?(?:\s+(?:of|on|in)\s+(?P<w>.+))?"
)


def deblur_rule(c: ClauseContext) -> Outcome:
    """deblur the image / remove the blur / sharpen the car / make it sharper."""
    m = _DEBLUR.fullmatch(c.text)
    if m is None:
        return None
    x = m.group("x") or m.group("y") or m.group("z") or m.group("w")
    if x:
        x = re.sub(r"\s+for\s+.*$", "", x, flags=re.IGNORECASE)  # "sharpen the image for a sharper presentation"
    return [Draft("image_deblurring", None if c.is_image(x) or c.is_pronoun(x) else c.noun(x))]


_UPSCALE = rx(
    r"(?:upscale|upsample|up-scale|super[-\s]?resolve|scale\s+up|increase\s+(?:the\s+)?resolution(?:\s+of)?"
    r"|(?:enhance|improve|boost|raise)\s+(?:the\s+)?resolution(?:\s+of)?|double\s+(?:the\s+)?(?:size|resolution)"
    r"(?:\s+of)?)(?:\s+(?P<rest>.+))?"
)
_ENLARGE = rx(
    rf"(?:enlarge|magnify)(?:\s+{_PICTURE})?(?:\s+(?P<rest>(?:by\s+|to\s+)?\d.*|(?:by\s+)?(?:double|twice|triple|quadruple).*))?"
)
_MAKE_BIGGER = rx(
    rf"make\s+{_PICTURE}\s+(?:bigger|larger|higher[-\s]res(?:olution)?|high[-\s]res(?:olution)?|hi-?res)(?P<rest>.*)"
)


def upscale_rule(c: ClauseContext) -> Outcome:
    """upscale the image 2x / increase the resolution / enlarge it by 4 → image_upscaling, result the factor."""
    if not (_UPSCALE.fullmatch(c.text) or _ENLARGE.fullmatch(c.text) or _MAKE_BIGGER.fullmatch(c.text)):
        return None
    return [Draft("image_upscaling", None, read_factor(c.text))]


_OUTPAINT = rx(
    r"(?:outpaint|out-paint|uncrop|zoom\s+out)(?:\s+(?P<rest>.*))?"
    rf"|(?:expand|extend|widen|broaden|enlarge|grow)\s+(?:{_IMAGE}|(?:the\s+)?(?:canvas|borders?|edges?|frame|view|"
    r"field\s+of\s+view))(?:\s+(?P<rest2>.*))?"
    r"|(?:expand|extend|widen|broaden)(?:\s+(?P<rest3>(?:to|on|towards?|by|horizontally|vertically|outwards?|in\s+all)\b.*))?"
    rf"|make\s+(?:{_IMAGE})\s+(?:wider|taller)(?P<rest4>.*)"
)
_DIRECTION = rx(r".*?\b(?P<d>left|right|top|bottom|up|down|upwards|downwards|horizontally|vertically|all\s+sides)\b.*")
_ASPECT = rx(r".*?\b(?P<a>\d+\s*:\s*\d+|\d+\s*%).*")


def outpaint_rule(c: ClauseContext) -> Outcome:
    """expand the image / outpaint / extend the canvas to the left / zoom out → outpainting (placed first later)."""
    m = _OUTPAINT.fullmatch(c.text)
    if m is None:
        return None
    rest = " ".join(g for g in m.groups() if g)
    aspect = _ASPECT.fullmatch(rest)
    direction = _DIRECTION.fullmatch(rest)
    params = {"direction": direction.group("d").lower()} if direction else {}
    return [Draft("outpainting", None, re.sub(r"\s+", "", aspect.group("a")) if aspect else None, params)]


_CAPTION = rx(
    r"(?:caption|describe|summari[sz]e)(?:\s+.*)?"
    r"|(?:generate|write|create|give|produce|make|add|provide|get|suggest)(?:\s+me|\s+us)?\s+(?:a\s+|an\s+|the\s+|one\s+)?"
    r"(?:short\s+|brief\s+|one-sentence\s+|detailed\s+)?(?:caption|description|summary|alt\s+text)(?:\s+.*)?"
)


def caption_rule(c: ClauseContext) -> Outcome:
    """caption the image / describe the picture / generate a caption."""
    return [Draft("image_captioning")] if _CAPTION.fullmatch(c.text) else None


_DEPTH = rx(
    r"(?:estimate|compute|predict|get|generate|create|make|produce|show|calculate|extract|infer|output|give\s+me|"
    r"render|build|find|measure|return)\s+(?:me\s+)?(?:the\s+|a\s+)?(?:relative\s+|per-pixel\s+)?"
    r"(?:depth|depths)(?!\s+of\s+field)\b.*|depth\s+(?:map|estimation)\b.*"
)


def depth_rule(c: ClauseContext) -> Outcome:
    """estimate depth / generate a depth map."""
    return [Draft("depth_estimation")] if _DEPTH.fullmatch(c.text) else None


_LANDMARK = rx(
    r"(?:identify|detect|recogni[sz]e|name|find|tell\s+me|determine|classify|recognize)\s+(?:the\s+|which\s+|what\s+)?"
    r"(?:famous\s+)?(?:landmarks?|monuments?)\b.*"
)
_SENTIMENT = rx(
    r"(?:analy[sz]e|classify|determine|detect|assess|evaluate|judge|get|find|identify|tell\s+me|predict)\s+(?:the\s+)?"
    r"(?:sentiment|tone|mood|emotion)\b.*|(?:run\s+|perform\s+|do\s+)?sentiment\s+analysis\b.*"
)
_CAPTION_CHECK = rx(
    r"(?:check|verify|confirm|test|see|determine|tell\s+me)\s+(?:whether|if)\s+(?:the\s+)?"
    r"(?:caption\s+|description\s+|sentence\s+|text\s+)?(?P<q>{Q})\s+(?:matches|describes|fits|is\s+consistent\s+with|"
    r"corresponds\s+to|accurately\s+describes)\b.*"
    r"|(?:check|verify)\s+(?:the\s+)?(?:caption|description)\s+(?P<r>{Q})(?:\s+.*)?"
)


def query_rule(c: ClauseContext) -> Outcome:
    """identify the landmark / analyse the sentiment / check whether 'a dog on a beach' matches the image."""
    if _LANDMARK.fullmatch(c.text):
        return [Draft("landmark_detection")]
    if _SENTIMENT.fullmatch(c.text):
        return [Draft("sentiment_analysis")]
    m = _CAPTION_CHECK.fullmatch(c.text)
    if m:
        return [Draft("caption_consistency_check", c.literal(m.group("q") or m.group("r")))]
    return None


_BG_REMOVE = rx(
    r"(?:remove|delete|erase|drop|get\s+rid\s+of|take\s+out|clear|strip|eliminate|cut\s+away)\s+(?:the\s+)?"
    r"(?:background|backdrop|bg)(?:\s+(?:from|behind|around|of)\s+(?P<x>.+))?"
    r"|make\s+(?:the\s+)?(?:background|backdrop)\s+(?P<fill>transparent|white|plain|blank|empty|black)"
    r"|(?:isolate|segment\s+out|keep\s+only|separate|extract)\s+(?P<y>.+?)(?:\s+from\s+(?:the\s+)?background)?"
    r"|(?:cut|clip)\s+out\s+(?P<z>.+?)\s+(?:from|against)\s+(?:the\s+|its\s+)?(?:background|backdrop|surroundings)"
)


def background_removal_rule(c: ClauseContext) -> Outcome:
    """remove the background / make the background transparent / cut out the dog."""
    m = _BG_REMOVE.fullmatch(c.text)
    if m is None:
        return None
    x = m.group("x") or m.group("y") or m.group("z")
    params = {"fill": m.group("fill").lower()} if m.group("fill") else {}
    if x is None or c.is_image(x):
        return [Draft("background_removal", None, params=params)]
    return c.objects("background_removal", x, params=params)


_NOT_A_KIND: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        rx(
            r"(?:remove|reduce|eliminate|clean(?:\s+up)?|fix|denoise)\s+(?:the\s+|any\s+|all\s+)?(?:image\s+)?"
            r"(?:noise|grain|graininess|artifacts|compression\s+artifacts|jpeg\s+artifacts)\b.*|denoise\b.*"
        ),
        "denoising is not a subtask kind",
    ),
)


def not_a_kind_rule(c: ClauseContext) -> Outcome:
    """Requests that look like edits but match no subtask kind (camera, pose, style, noise), with the reason."""
    for pattern, reason in _NOT_A_KIND:
        if pattern.fullmatch(c.text):
            return c.unsupported(reason)
    return None


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
    (rx(rf"(?:brighten|lighten)(?:\s+(?P<x>.+?))?{_TAIL}"), "brighter"),
    (rx(rf"darken(?:\s+(?P<x>.+?))?{_TAIL}"), "darker"),
    (rx(rf"desaturate(?:\s+(?P<x>.+?))?{_TAIL}"), "less saturated"),
    (rx(rf"(?:saturate)(?:\s+(?P<x>.+?))?{_TAIL}"), "more saturated"),
    (rx(rf"(?:warm\s+up)(?:\s+(?P<x>.+?))?{_TAIL}"), "warmer"),
    (rx(rf"(?:cool\s+down)(?:\s+(?P<x>.+?))?{_TAIL}"), "cooler"),
    (
        rx(
            r"(?P<dir>increase|raise|boost|enhance|add(?:\s+more)?|improve|heighten|strengthen|bump\s+up|turn\s+up|up|"
            r"decrease|reduce|lower|lessen|drop|tone\s+down|cut|diminish|weaken|turn\s+down|dial\s+down)\s+"
            rf"(?:the\s+)?(?:overall\s+)?(?:image\s+|photo\s+|picture\s+|scene\s+)?(?P<qty>{_QTY})(?:\s+(?:and|&)\s+(?:the\s+)?(?P<qty2>{_QTY}))?"
            rf"(?:\s+(?:of|on|in)\s+(?P<x>.+?))?{_TAIL}"
        ),
        None,
    ),
)
_UP = re.compile(r"increase|raise|boost|enhance|add|improve|heighten|strengthen|bump|turn\s+up|up", re.IGNORECASE)


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
        if x is None or c.is_image(x) or c.is_pronoun(x):
            return [Draft("global_adjustment", None, r) for r in results]
        return [Draft(d.kind, d.target, r, d.params) for r in results for d in c.objects("global_adjustment", x)]
    return None


_SCENERY_WORDS = (
    r"night|nighttime|night\s+time|midnight|day|daytime|day\s+time|daylight|morning|evening|dusk|dawn|sunset|sunrise|"
    r"twilight|golden\s+hour|winter|summer|autumn|fall|spring|snowy|snowing|snow|rainy|raining|rain|foggy|fog|misty|"
    r"mist|stormy|storm|sunny|cloudy|overcast|wintry|wintery|autumnal|springtime|summertime|wintertime"
)
_SCENERY_MODIFIER = (
    r"(?:snowy|rainy|foggy|sunny|cloudy|cold|warm|dark|late|early|bright|stormy|misty|clear|starry|winter|summer)"
)
_SCENERY = (
    rx(
        r"(?:change|turn|transform|convert|switch|make|set|alter|modify)\s+(?:the\s+)?(?P<what>scenery|scene|season|"
        r"weather|setting|time\s+of\s+day|time|environment|background|landscape|backdrop|surroundings|location)"
        r"(?:\s+from\s+(?P<from>.+?))?\s+(?:to|into)\s+(?P<y>.+)"
    ),
    rx(r"replace\s+(?:the\s+)?(?:background|backdrop|scenery|sky|setting)\s+(?:with|by)\s+(?P<y>.+)"),
    rx(
        rf"(?:make|turn|change|transform|convert|set|switch)(?:\s+{_IMAGE})?\s+(?:(?:in)?to\s+|look\s+like\s+|as\s+if\s+it\s+is\s+)?"
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


_RECOLOUR_VERB = r"(?:recolou?r|re-colou?r|colou?r|paint|repaint|dye|tint)"
_COLOUR_OF = rx(
    r"(?:change|set|switch|alter|modify|turn|make|adjust)\s+(?:the\s+)?colou?r\s+of\s+(?P<x>.+?)\s+(?:to|into|as|so\s+it\s+is)\s+"
    r"(?P<c>.+)"
)
_X_COLOUR = rx(
    r"(?:change|set|switch|alter|modify|turn|make|adjust)\s+(?P<x>.+?)(?:'s|’s)?\s+colou?r\s+(?:to|into|as)\s+(?P<c>.+)"
)
_RECOLOUR_TO = rx(rf"{_RECOLOUR_VERB}\s+(?P<x>.+?)\s+(?:to|in|into|with|as)\s+(?P<c>.+)")
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
)


_LOOK_RESULT = re.compile(r"\b(?:appearance|look|feel|finish|state|condition|version)$", re.IGNORECASE)

#: "make me a sandwich": the person after "make" is who the thing is for, not an object to replace.
_FOR_THE_USER = frozenset({"me", "us", "myself", "ourselves", "me and my friends"})


def replacement_rule(c: ClauseContext) -> Outcome:
    """replace the truck with a car / turn the cat into a dog / substitute a car for the truck."""
    m = _REPLACE.fullmatch(c.text)
    if m is None:
        return None
    x, y = m.group("x") or m.group("x2") or m.group("x3"), m.group("y") or m.group("y2") or m.group("y3")
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
    r"wipe\s+away|wipe|drop|ditch|scrub\s+out|scrub|cut|exclude|omit|hide|banish|lose|discard|edit\s+out|"
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
_GIVE = rx(r"give\s+(?P<t>.+?)\s+(?P<y>(?:a|an|some)\s+.+)")
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
        return [_addition(c, m.group("y"), "on", m.group("t"))]
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


IMAGE_RULES = (
    privacy_blur_rule,
    deblur_rule,
    crop_rule,
    style_rule,
    size_rule,
    upscale_rule,
    outpaint_rule,
    caption_rule,
    depth_rule,
    query_rule,
    viewpoint_rule,
    background_removal_rule,
    not_a_kind_rule,
    count_rule,
    global_adjustment_rule,
    scenery_rule,
    expression_rule,
    material_rule,
    move_rule,
    pose_rule,
    orientation_rule,
    recolour_rule,
    property_rule,
    look_rule,
    replacement_rule,
    cover_rule,
    removal_rule,
    detection_rule,
    addition_rule,
    late_not_a_kind_rule,
    generic_edit_rule,
)
