"""Rules for whole-image edits and queries: privacy blur, deblurring, upscaling, outpainting, captions, depth,
landmarks, sentiment, caption checks, background removal, and requests that match no kind.

Each rule takes a `ClauseContext` and returns drafts, an `Unsupported` reason, or None when it does not apply; their
order is `image_rules.IMAGE_RULES`.
"""

from __future__ import annotations

import re

from costa.planner.phrases import ClauseContext, Draft, Outcome, read_factor, rx

IMAGE_NOUNS = (
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
    rf"|(?:expand|extend|widen|broaden|enlarge|grow)\s+(?:{IMAGE_NOUNS}|(?:the\s+)?(?:canvas|borders?|edges?|frame|view|"
    r"field\s+of\s+view))(?:\s+(?P<rest2>.*))?"
    r"|(?:expand|extend|widen|broaden)(?:\s+(?P<rest3>(?:to|on|towards?|by|horizontally|vertically|outwards?|in\s+all)\b.*))?"
    rf"|make\s+(?:{IMAGE_NOUNS})\s+(?:wider|taller)(?P<rest4>.*)"
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
