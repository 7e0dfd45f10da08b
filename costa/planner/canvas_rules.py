"""Rules for whole-image edits and queries: background blur, privacy blur, deblurring, upscaling, outpainting,
captions, depth, landmarks, sentiment, caption checks, background removal, and requests that match no kind.

Each rule takes a `ClauseContext` and returns drafts, an `Unsupported` reason, or None when it does not apply; their
order is `image_rules.IMAGE_RULES`.
"""

from __future__ import annotations

import re

from costa.colours import parse_colour
from costa.planner.phrases import ClauseContext, Draft, Outcome, read_factor, rx

IMAGE_NOUNS = (
    r"(?:(?:the\s+|this\s+|that\s+|my\s+)?(?:whole\s+|entire\s+)?(?:image|photo|picture|photograph|pic|scene|frame|"
    r"canvas|shot)|it|this)"
)
_PICTURE = (
    r"(?:(?:the\s+|this\s+|that\s+|my\s+)?(?:whole\s+|entire\s+)?(?:image|photo|picture|photograph|pic|shot)|it|this)"
)
#: A factor in words or digits: "2x", "by a factor of three", "fourfold", "four times", "twice".
_FACTOR = (
    r"(?:(?:by\s+)?(?:a\s+factor\s+of\s+)?(?:\d+(?:\.\d+)?|two|three|four|five|six|eight|ten)\s*-?\s*(?:x|×|times|fold)?"
    r"|twice|double|triple|quadruple|\w+fold)"
)


_BG = r"(?:background|backdrop|bg|surroundings|scenery\s+behind)"
_BLURRY = r"(?:blurry|blurred|blurrier|out\s+of\s+focus|soft(?:er)?|fuzzy|hazy|defocused|unfocused|bokeh)"
_SUBJECT = r"(?:the\s+)?(?:main\s+)?(?:subject|foreground)"
_HOW_MUCH = r"(?:\s+(?:a\s+little|a\s+bit|slightly|softly|gently|lightly|heavily|strongly|a\s+lot|more|some))?"
_ALL_BUT = r"(?:except(?:\s+for)?|but(?:\s+for)?|apart\s+from|other\s+than|save\s+for|aside\s+from)"
_BG_BLUR = rx(
    rf"(?:blur|soften|defocus)(?:\s+out)?\s+(?:the\s+|my\s+|its\s+|their\s+)?{_BG}{_HOW_MUCH}"
    r"(?:\s+(?:behind|around|of|but\s+(?:keep|leave)|and\s+(?:keep|leave)|except|except\s+for|while\s+keeping)"
    rf"\s+(?P<x>.+?)(?:\s+(?:sharp|in\s+focus|crisp|clear|as\s+it\s+is|untouched))?)?{_HOW_MUCH}"
    r"|(?:(?:i\s*)?(?:want|need|would\s+like|'d\s+like|like)|make|turn|get|have|render)\s+(?:the\s+|my\s+)?"
    rf"{_BG}(?:\s+(?:behind|around)\s+(?P<y>.+?))?\s+(?:(?:a\s+little|a\s+bit|slightly|more)\s+)?{_BLURRY}"
    rf"|(?:put|throw|take)\s+(?:the\s+)?{_BG}\s+out\s+of\s+focus"
    r"|(?:blur|soften|defocus)\s+(?:out\s+)?(?:everything|all|the\s+rest|everything\s+else|all\s+else)"
    rf"(?:\s+(?:{_ALL_BUT}|around|behind)\s+(?P<z>.+?))?{_HOW_MUCH}"
    r"|(?:make|turn|render)\s+(?:everything|all|the\s+rest)(?:\s+else)?"
    rf"(?:\s+{_ALL_BUT}\s+(?P<e>.+?))?\s+(?:(?:a\s+little|a\s+bit|slightly|more)\s+)?{_BLURRY}"
    r"|(?:keep|leave)\s+(?P<k>.+?)\s+(?:sharp|in\s+focus|crisp)\s+(?:and|but|while)\s+(?:you\s+)?"
    rf"(?:blur|soften|defocus)\s+(?:out\s+)?(?:the\s+)?(?:{_BG}|rest|everything\s+else|all\s+else)"
    r"|(?:add|apply|use|give\s+(?:it|me|(?:the|this|my)\s+(?:photo|image|picture|shot|portrait|pic)))?\s*"
    r"(?:an?\s+|some\s+)?(?:background\s+blur|bokeh|shallow\s+depth\s+of\s+field|portrait\s+(?:mode|effect|look|blur)|"
    r"depth[-\s]of[-\s]field\s+(?:effect|blur))(?:\s+effect)?(?:\s+(?:to|on|for|around|behind)\s+(?P<w>.+))?"
    rf"|(?:focus|keep\s+the\s+focus)\s+on\s+(?P<f>.+?)\s+(?:and|by|with)\s+(?:blurring|blur|a\s+blurred)\s+"
    rf"(?:the\s+)?{_BG}"
)


#: "keep the cat sharp" — in "keep the cat sharp and blur the rest" the clause splitter hands it over alone; the two
#: drafts are merged into one (`rules._merge_neighbours`).
_KEEP_SHARP = rx(r"(?:keep|leave)\s+(?P<s>.+?)\s+(?:sharp|in\s+focus|crisp|in\s+sharp\s+focus)")


def background_blur_rule(c: ClauseContext) -> Outcome:
    """blur the background / make the background blurry / blur everything except the dog / portrait mode / add
    bokeh / keep the cat sharp and blur the rest → one background_blur that keeps the named (or main) subject sharp."""
    m = _BG_BLUR.fullmatch(c.text)
    if m is None:
        keep = _KEEP_SHARP.fullmatch(c.text)
        if keep is None or c.is_image(keep.group("s")) or c.is_pronoun(keep.group("s")):
            return None
        m = keep
    if "background_blur" not in c.kinds:
        return c.unsupported("blurring the background (background_blur) is not a subtask kind in the tables")
    x = next((g for g in m.groupdict().values() if g), None)
    if x is not None and re.fullmatch(_SUBJECT, x.strip()):
        x = None  # "blur the background behind the subject": the main subject
    if x is None or c.is_image(x):
        return [Draft("background_blur", None)]
    drafts = c.objects("background_blur", x)
    if len(drafts) > 1:
        return c.unsupported("keeping several things sharp at once is not built yet: name one, or brush over them all")
    return drafts


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
    r"(?:upscale|upsample|up-scale|super[-\s]?resolve|scale\s+up|(?:increase|bump\s+up|bump|raise|boost|enhance|improve|"
    r"up)\s+(?:the\s+)?(?:image\s+|photo\s+)?resolution(?:\s+up)?(?:\s+of)?"
    r"|(?:double|triple|quadruple)\s+(?:the\s+)?(?:size|resolution|pixel\s+count)(?:\s+of)?)(?:\s+(?P<rest>.+))?"
)
_ENLARGE = rx(
    rf"(?:enlarge|magnify|blow\s+up|scale\s+up)(?:\s+{_PICTURE})?(?:\s+(?P<rest>(?:by\s+|to\s+)?\d.*|{_FACTOR}\b.*))?"
)
_MAKE_BIGGER = rx(
    rf"make\s+{_PICTURE}\s+(?:bigger|larger|higher[-\s]res(?:olution)?|high[-\s]res(?:olution)?|hi-?res)(?P<rest>.*)"
    rf"|(?:make|get)\s+(?:the\s+|its\s+)?resolution\s+(?:{_FACTOR}\s+)?(?:higher|bigger|larger|greater|better)(?:\s+.*)?"
    rf"|give\s+{_PICTURE}\s+(?:{_FACTOR}\s+)(?:the|its|more)\s+(?:resolution|pixels)(?:\s+.*)?"
)


def upscale_rule(c: ClauseContext) -> Outcome:
    """upscale the image 2x / increase the resolution / enlarge it by 4 → image_upscaling, result the factor."""
    if not (_UPSCALE.fullmatch(c.text) or _ENLARGE.fullmatch(c.text) or _MAKE_BIGGER.fullmatch(c.text)):
        return None
    return [Draft("image_upscaling", None, read_factor(c.text))]


_OUTPAINT = rx(
    r"(?:outpaint|out-paint|uncrop|zoom\s+out)(?:\s+(?P<rest>.*))?"
    rf"|(?:expand|extend|widen|broaden|enlarge|grow|pad)\s+(?:{IMAGE_NOUNS}|(?:the\s+)?(?:canvas|borders?|edges?|frame|"
    r"view|field\s+of\s+view))(?:\s+out)?(?:\s+(?P<rest2>.*))?"
    r"|(?:expand|extend|widen|broaden)(?:\s+(?P<rest3>(?:to|on|towards?|by|horizontally|vertically|outwards?|in\s+all)\b.*))?"
    rf"|make\s+(?:{IMAGE_NOUNS})\s+(?:wider|taller)(?P<rest4>.*)"
    rf"|(?:make|turn|get|bring)\s+(?:{IMAGE_NOUNS})\s+(?:in)?(?:to\s+)?(?:an?\s+)?(?P<rest5>\d+\s*:\s*\d+\b.*)"
    r"|add\s+(?:more|some|extra)\s+(?:sky|space|room|background|scenery|canvas|ground|floor|sea|landscape|margin)\s+"
    r"(?P<rest6>(?:at|on|to|along|around)\s+.+)"
)
_DIRECTION = rx(
    r".*?\b(?P<d>left|right|top|bottom|up|down|upwards?|downwards?|horizontally|vertically|all\s+sides|both\s+sides|"
    r"all\s+around|every\s+side|sideways|the\s+sides)\b.*"
)
_DIRECTION_NAMES = {
    "upward": "up", "upwards": "up", "downward": "down", "downwards": "down", "both sides": "horizontally",
    "the sides": "horizontally", "sideways": "horizontally", "all around": "all sides", "every side": "all sides",
}  # fmt: skip
_ASPECT = rx(r".*?\b(?P<a>\d+\s*:\s*\d+|\d+\s*%).*")


def outpaint_rule(c: ClauseContext) -> Outcome:
    """expand the image / outpaint / extend the canvas to the left / zoom out → outpainting (placed first later)."""
    m = _OUTPAINT.fullmatch(c.text)
    if m is None:
        return None
    rest = " ".join(g for g in m.groups() if g)
    aspect = _ASPECT.fullmatch(rest)
    direction = _DIRECTION.fullmatch(rest)
    params: dict[str, str] = {}
    if direction:
        d = " ".join(direction.group("d").lower().split())
        params["direction"] = _DIRECTION_NAMES.get(d, d)
    if aspect and ":" in aspect.group("a"):
        params.pop("direction", None)  # "16:9 by extending the sides": the ratio says which sides grow
    return [Draft("outpainting", None, re.sub(r"\s+", "", aspect.group("a")) if aspect else None, params)]


_CAPTION = rx(
    r"(?:caption|describe|summari[sz]e)(?:\s+.*)?"
    r"|(?:generate|write|create|give|produce|make|add|provide|get|suggest)(?:\s+me|\s+us)?\s+(?:a\s+|an\s+|the\s+|one\s+)?"
    r"(?:short\s+|brief\s+|one-sentence\s+|detailed\s+)?(?:caption|description|summary|alt[\s-]text)(?:\s+.*)?"
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


_REMOVE_VERB = (
    r"(?:remove|delete|erase|drop|get\s+rid\s+of|take\s+out|clear|strip|eliminate|cut\s+away|cut|lose|wipe\s+out|"
    r"wipe|blank\s+out|white\s+out|hide|ditch)"
)
_ELSE = (
    r"(?:everything|all|anything|the\s+rest|all\s+the\s+rest|all\s+else|the\s+background|the\s+backdrop|"
    r"the\s+surroundings|everything\s+around\s+(?:it|them|him|her))"
)
_BUT = r"(?:except(?:\s+for)?|but(?:\s+for)?|apart\s+from|other\s+than|besides|save\s+for|aside\s+from)"
_FILL_WORD = r"(?:transparent|white|plain|blank|empty|black|clear|solid\s+\w+|grey|gray|[a-z]+)"
_BG_REMOVE = rx(
    rf"{_REMOVE_VERB}\s+(?:the\s+)?(?:background|backdrop|bg)(?:\s+(?:from|behind|around|of)\s+(?P<x>.+))?"
    rf"|make\s+(?:the\s+)?(?:background|backdrop)\s+(?P<fill>{_FILL_WORD})"
    r"|(?:isolate|segment\s+out|separate|extract)\s+(?P<y>.+?)(?:\s+from\s+(?:the\s+|its\s+)?background)?"
    r"|(?:keep|leave|retain|preserve|show|want)\s+(?:only|just)\s+(?P<k>.+?)"
    rf"(?:\s+(?:in\s+(?:the\s+)?(?:picture|photo|image|shot))?)?"
    r"|(?:keep|leave|retain)\s+(?P<k2>.+?)\s+(?:only|alone)"
    rf"|{_REMOVE_VERB}\s+(?:out\s+)?(?:everything|all|anything)(?:\s+else)?\s+{_BUT}\s+(?P<k3>.+)"
    rf"|{_REMOVE_VERB}\s+(?P<rest>everything\s+else|the\s+rest|all\s+the\s+rest|all\s+else|everything\s+around\s+"
    r"(?:it|them|him|her))"
    r"|(?:cut|clip|lift|separate|pull)\s+(?:out\s+)?(?P<z>.+?)\s+(?:out\s+)?(?:from|against|of)\s+(?:the\s+|its\s+)?"
    r"(?:background|backdrop|surroundings)"
    rf"|(?:put|place|set|show|present)\s+(?P<w>.+?)\s+(?:on|against|in\s+front\s+of|over)\s+(?:an?\s+|the\s+)?"
    rf"(?P<fill2>{_FILL_WORD})\s+(?:background|backdrop)"
)
_FILLS = frozenset({"transparent", "white", "plain", "blank", "empty", "black", "clear"})


def background_removal_rule(c: ClauseContext) -> Outcome:
    """remove the background / make the background transparent / keep only the dog / remove everything except the
    cat / cut the dog out of the background / put the cat on a white background."""
    m = _BG_REMOVE.fullmatch(c.text)
    if m is None:
        return None
    fill = m.group("fill") or m.group("fill2")
    if fill and fill.lower() not in _FILLS and parse_colour(c.restore(fill)) is None:
        return None  # "make the background beach-like": not a fill
    x = m.group("x") or m.group("y") or m.group("z") or m.group("k") or m.group("k2") or m.group("k3") or m.group("w")
    params = {"fill": c.restore(fill).lower()} if fill else {}
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
