"""Rules for where things are and how the picture looks as a whole: moving an object (object_move), covering one
with another (object_addition), camera changes (viewpoint_change), cropping (image_cropping) and artistic style
(style_transfer).

Each rule takes a `ClauseContext` and returns drafts, an `Unsupported` reason, or None when it does not apply; they are
placed in `image_rules.IMAGE_RULES`. Word lists are in `lexicon.py`.

>>> from costa.planner.clauses import mask_quotes
>>> def ctx(text): return ClauseContext(mask_quotes(text), text, False, frozenset())
>>> [(d.kind, d.result, dict(d.params)) for d in move_rule(ctx("move the cup a bit to the left"))]
[('object_move', 'left', {'direction': 'left'})]
>>> [(d.kind, d.result) for d in style_rule(ctx("make it look like a Van Gogh painting"))]
[('style_transfer', 'van gogh painting')]
"""

from __future__ import annotations

import re

from costa.planner.edit_rules import _MOD, attribute_drafts
from costa.planner.lexicon import POSE_WORDS, alternation, is_style
from costa.planner.phrases import ClauseContext, Draft, Outcome, rx

_COVER = rx(
    r"(?:partially\s+|partly\s+|completely\s+)?(?:obscure|cover|hide|block|shade|surround)\s+(?P<t>.+?)\s+"
    r"(?:with|by|using|behind)\s+(?P<y>.+)"
)


def cover_rule(c: ClauseContext) -> Outcome:
    """partially obscure the sun with rocks / cover the table with a cloth → object_addition over the target."""
    m = _COVER.fullmatch(c.text)
    if m is None or c.is_image(m.group("t")):
        return None
    return [Draft("object_addition", c.noun(m.group("t")), c.noun(m.group("y")), {"relation": "over"})]


# ---------------------------------------------------------------------------------------------------------- move

_MOVE_VERB = (
    r"(?:move|shift|drag|slide|push|pull|nudge|reposition|relocate|transfer|bring|carry|displace|rearrange|reorient|"
    r"arrange|re-?arrange|re-?position|repositions?|place|put|set|position)"
)
_DIRECTION_WORD = (
    r"(?:far\s+)?(?:top|bottom|upper|lower|left|right|center|centre|middle|up|down|upwards?|downwards?|higher|lower|"
    r"leftwards?|rightwards?|forward|forwards|backward|backwards|closer|further|farther|away|aside|sideways|"
    r"foreground|background)"
)
_DIRECTION = re.compile(
    rf"(?:(?:to|towards?|toward|into|in|on|at|over)\s+)?(?:the\s+)?(?:very\s+)?(?P<d>{_DIRECTION_WORD}(?:[\s-]+(?:{_DIRECTION_WORD}))?)"
    r"(?:[\s-]+(?:side|edge|corner|part|half|area|region|portion|border|margin|end))?"
    r"(?:\s+(?:of|in)\s+(?:the\s+)?(?:image|picture|photo|frame|canvas|scene|view|shot|composition))?"
    r"(?:\s+(?:a\s+(?:little\s+)?bit|slightly|a\s+little|a\s+lot|more|somewhat))?",
    re.IGNORECASE,
)
_DIRECTION_NAMES = {
    "top": "up", "upper": "up", "upward": "up", "upwards": "up", "higher": "up", "bottom": "down", "lower": "down",
    "downward": "down", "downwards": "down", "centre": "center", "middle": "center", "leftward": "left",
    "leftwards": "left", "rightward": "right", "rightwards": "right", "forwards": "forward", "backwards": "backward",
    "farther": "further",
}  # fmt: skip
_MOVE_RELATION = re.compile(
    r"(?P<rel>next\s+to|in\s+front\s+of|on\s+top\s+of|to\s+the\s+(?:left|right)\s+of|on\s+the\s+(?:left|right)\s+of|"
    r"closer\s+to|nearer\s+to|further\s+from|away\s+from|beside|behind|inside|onto|into|under|underneath|below|beneath|"
    r"above|over|along|against|around|between|near|towards?|toward|across|to|on|in|at|by)\s+(?P<anchor>.+)",
    re.IGNORECASE,
)
_MOVE = rx(
    rf"{_MOVE_VERB}\s+(?P<x>.+?)(?:\s+{_MOD}(?P<dest>(?:to|towards?|toward|into|onto|in|on|at|over|next|beside|behind|under|"
    r"underneath|below|beneath|above|near|closer|nearer|further|farther|away|against|along|around|between|across|by|"
    r"up|down|upwards?|downwards?|left|right|leftwards?|rightwards?|higher|lower|forwards?|backwards?|aside|sideways)\b.*))?"
)
_POSITION_OF = rx(
    rf"(?:change|alter|modify|adjust|shift|move|fix|update|set)\s+(?:the\s+)?(?:position|placement|location|place)\s+of\s+"
    rf"(?P<x>.+?)(?:\s+{_MOD}(?P<dest>(?:to|towards?|toward|so|closer|further|up|down|left|right)\b.*))?"
    rf"|(?:change|alter|modify|adjust|shift|move)\s+(?P<x2>.+?)(?:'s|’s)\s+(?:position|placement|location)"
    rf"(?:\s+{_MOD}(?P<dest2>(?:to|towards?|toward|closer|up|down|left|right)\b.*))?"
)
_CAMERA = re.compile(r"(?:the\s+)?(?:camera|view|viewpoint|perspective|vantage\s+point)\b", re.IGNORECASE)
_INDEFINITE = re.compile(r"(?:a|an|some|one|two|three|several|many|more|another)\b", re.IGNORECASE)


_POSE_DEST = re.compile(rf"(?:to|into)\s+(?:a\s+)?(?P<p>{alternation(POSE_WORDS)})(?:\s+(?:position|pose))?", re.I)
_FROM = re.compile(r"\s+from\s+(?:the\s+)?\S.*$", re.IGNORECASE)


_MOVE_WORD = re.compile(
    r"\s(?:to|towards?|toward|into|onto|further|farther|closer|nearer|away|back|up|down|left|right)\b", re.IGNORECASE
)


def _resplit(x: str, dest: str | None) -> tuple[str, str | None]:
    """Re-cut object and destination: "the person on the left | to a new position" (the object keeps its own place
    words when a "to …" destination follows), and "X from A | to B" (where it was is not part of the object)."""
    if (
        dest
        and re.match(r"(?:on|in|at|near|by|with)\s", dest, re.IGNORECASE)
        and not _DIRECTION.fullmatch(dest.strip())
    ):
        m = _MOVE_WORD.search(" " + dest)
        if m and m.start() > 0:
            x, dest = f"{x} {dest[: m.start() - 1].strip()}", dest[m.start() :].strip()
    return _FROM.sub("", x), dest


def move_rule(c: ClauseContext) -> Outcome:
    """move the cup to the left / shift the lamp slightly right / place the cup behind the laptop → object_move."""
    m = _POSITION_OF.fullmatch(c.text)
    if m:
        x, dest = m.group("x") or m.group("x2"), m.group("dest") or m.group("dest2")
    else:
        m = _MOVE.fullmatch(c.text)
        if m is None:
            return None
        x, dest = m.group("x"), m.group("dest")
        verb = c.text.split()[0].lower()
        if verb in ("place", "put", "set", "position", "bring", "carry") and (_INDEFINITE.match(x) or not dest):
            return None  # "place a cup on the table" adds a cup
        if verb in ("arrange",) and not dest:
            return None
        if verb == "reorient" and not _FROM.search(x):
            return None  # "reorient the stream to run diagonally" turns it (orientation_rule)
    if _CAMERA.match(x):
        return None  # "move the camera to the left" is a viewpoint change
    x, dest = _resplit(x, dest)
    if dest and (pose := _POSE_DEST.fullmatch(dest.strip())):
        return attribute_drafts(c, x, pose.group("p").lower(), "pose")  # "change the child's position to standing"
    if c.is_image(x) and not c.is_pronoun(x):
        return None
    params: dict[str, str] = {}
    result: str | None = None
    if dest:
        dest = dest.strip()
        d = _DIRECTION.fullmatch(dest)
        if d:
            words = [
                _DIRECTION_NAMES.get(w.lower(), w.lower())
                for w in re.split(r"[\s-]+", d.group("d"))
                if w.lower() != "far"
            ]
            direction = " ".join(dict.fromkeys(words))
            params["direction"] = direction
            result = direction
        else:
            rel = _MOVE_RELATION.fullmatch(dest)
            if rel:
                anchor = c.noun(rel.group("anchor"))
                if anchor:
                    params["relation"] = " ".join(rel.group("rel").lower().split())
                    params["anchor"] = anchor
            result = c.restore(re.sub(r"^(?:to|into)\s+", "", dest, flags=re.IGNORECASE)).lower()
    drafts = c.objects("object_move", x)
    return [Draft(d.kind, d.target, result, dict(params), d.pronoun) for d in drafts]


# ------------------------------------------------------------------------------------------------------ viewpoint

_VIEW_NOUN = (
    r"(?:camera(?:\s+(?:angle|view|position|perspective|placement|height|shot))?|angle|perspective|viewpoint|"
    r"view(?:ing)?\s+angle|point\s+of\s+view|pov|vantage\s+point|camera's\s+angle|framing|shot|lens|view|"
    r"focus|focal\s+point|depth\s+of\s+field)"
)
_VIEW_CHANGE = rx(
    r"(?:change|adjust|alter|modify|shift|rotate|tilt|lower|raise|move|reposition|switch|set|turn|pan|angle|swing|"
    rf"reorient|lift|drop|update)\s+(?:the\s+)?(?:(?:image|photo|picture|shot|scene)(?:'s)?\s+)?(?P<noun>{_VIEW_NOUN})"
    r"(?:\s+(?:of|on)\s+(?P<x>.+?))?"
    r"(?:\s+(?:to|into|toward|towards|so\s+(?:that\s+)?|for|from|slightly|a\s+bit|a\s+little|up|down|left|right|"
    r"upward|downward|higher|lower|closer)\b\s*(?P<y>.*))?"
)
_VIEW_FROM = rx(
    r"(?:show|view|see|depict|render|photograph|shoot|capture|present|display|picture)\s+(?P<x>.+?)\s+"
    r"(?P<y>from\s+(?:a\s+|an\s+|the\s+)?(?:above|below|behind|the\s+(?:side|front|back|rear|top|bottom|left|right|air)|"
    r"(?:\w+[\s-]){0,2}(?:angle|view|perspective|side|distance|height|level|eye|viewpoint)).*)"
)
_VIEW_NAMED = rx(
    r"(?:make\s+(?:it|this|the\s+(?:image|photo|picture|shot))\s+|(?:show|give\s+me|create|render|use)\s+)?"
    r"(?:a\s+|an\s+)?(?P<y>(?:bird'?s[\s-]eye|aerial|top[\s-]down|overhead|low[\s-]angle|high[\s-]angle|worm'?s[\s-]eye|"
    r"side|front|rear|back|isometric|wide[\s-]angle|close[\s-]up|closeup|macro|panoramic|first[\s-]person)"
    r"(?:\s+(?:view|angle|shot|perspective))?)(?:\s+(?:of|on)\s+(?P<x>.+))?"
)
_ZOOM = rx(r"zoom\s+in(?:\s+(?:on|to|towards?|at)\s+(?P<x>.+?))?"
           r"(?P<rest>\s+(?:slightly|a\s+bit|a\s+little|more|closer))?"
           r"|(?:get|move|come)\s+closer\s+(?:to|on)\s+(?P<x2>.+)")  # fmt: skip
_FOCUS = rx(r"(?:focus|centre|center|frame)\s+(?:more\s+)?(?:the\s+(?:camera|view|shot)\s+)?on\s+(?P<x>.+)")


def viewpoint_rule(c: ClauseContext) -> Outcome:
    """change the camera angle to a low angle / show the car from the side / zoom in on the dog / a bird's-eye view →
    viewpoint_change."""
    m = _VIEW_CHANGE.fullmatch(c.text)
    if m and m.group("x") and m.group("noun").lower() == "angle" and not (c.is_image(m.group("x"))):
        return None  # "adjust the angle of the wedding arch" turns the arch (orientation_rule)
    if m:
        y = (m.group("y") or "").strip()
        if not y and c.purpose:
            y = re.sub(r"^(?:in\s+order\s+)?to\s+", "", c.purpose, flags=re.IGNORECASE)
        y = re.sub(r"^(?:a|an|the)\s+", "", y, flags=re.IGNORECASE)
        if not y:
            verb = c.text.split()[0].lower()
            y = verb if verb in ("tilt", "pan", "lower", "raise", "rotate") else "new angle"
        return [Draft("viewpoint_change", _view_target(c, m.group("x")), c.restore(y).lower())]
    m = _VIEW_FROM.fullmatch(c.text)
    if m:
        return [Draft("viewpoint_change", _view_target(c, m.group("x")), c.restore(m.group("y")).lower())]
    m = _ZOOM.fullmatch(c.text)
    if m:
        return [Draft("viewpoint_change", _view_target(c, m.group("x") or m.group("x2")), "zoom in")]
    m = _VIEW_NAMED.fullmatch(c.text)
    if m:
        y = " ".join(re.split(r"[\s-]+", c.restore(m.group("y")).lower()))
        return [Draft("viewpoint_change", _view_target(c, m.group("x")), y)]
    m = _FOCUS.fullmatch(c.text)
    if m:
        return [Draft("viewpoint_change", _view_target(c, m.group("x")), "focus on")]
    return None


def _view_target(c: ClauseContext, x: str | None) -> str | None:
    if x is None or c.is_image(x) or c.is_pronoun(x):
        return None
    return c.noun(x)


_CROP = rx(
    r"crop(?:\s+out)?(?:\s+(?P<x>(?!(?:to|into|as|around|down\s+to)\b).+?))?(?:\s+(?:to|into|as|around|down\s+to|"
    r"so\s+(?:that\s+)?it\s+(?:shows|is)|(?:in|close)\s+on)\s+(?:(?:just|only)\s+)?(?P<y>.+?))?"
    r"|(?:trim|cut)\s+(?:the\s+)?(?P<edges>edges|borders?|margins?|sides)(?:\s+off)?(?:\s+of\s+.+)?"
)
_EDGES = re.compile(r"(?:the\s+)?(?:edges|borders?|margins?|sides|corners)(?:\s+of\s+.+)?", re.IGNORECASE)
_SHAPE = re.compile(
    r"(?:a\s+|an\s+)?(?P<s>square|circle|portrait|landscape|\d+\s*:\s*\d+|widescreen)(?:\s+(?:format|shape|aspect(?:\s+ratio)?|crop))?",
    re.IGNORECASE,
)


def crop_rule(c: ClauseContext) -> Outcome:
    """crop the image to the dog / crop the photo to a square / crop out the edges → image_cropping."""
    m = _CROP.fullmatch(c.text)
    if m is None:
        return None
    if m.group("edges"):
        return [Draft("image_cropping")]
    x, y = m.group("x"), m.group("y")
    target: str | None = None
    result: str | None = None
    if x and not _EDGES.fullmatch(x) and not (c.is_image(x) or c.is_pronoun(x)):
        target = c.noun(x)
    if y:
        shape = _SHAPE.fullmatch(y.strip())
        if shape:
            result = re.sub(r"\s+", "", shape.group("s").lower())
        elif not (c.is_image(y) or c.is_pronoun(y)):
            target = c.noun(re.sub(r"^(?:show|focus\s+on|include)\s+", "", y, flags=re.IGNORECASE))
    if target is None and (focus := re.search(r"\bfocus\s+on\s+(.+)$", c.purpose, re.IGNORECASE)):
        target = c.noun(focus.group(1))
    return [Draft("image_cropping", target, result)]


# ------------------------------------------------------------------------------------------------------------ style

_STYLE_OF = rx(
    r".*?\b(?:in|into|with)\s+(?:the\s+|an?\s+)?(?:art\s+)?style\s+of\s+(?:an?\s+|the\s+)?(?P<y>.+?)(?:\s+(?:painting|art|artwork))?"
)
_STYLE_NAMED = rx(
    r"(?P<verb>transform|turn|convert|change|make|render|redraw|repaint|restyle|stylise|stylize|apply|give|redo|recreate|"
    r"reimagine|draw|paint|present|reinterpret|switch|set|adopt|use)\s+(?:(?P<x>.+?)\s+)?(?:(?:in)?to|into|as|in|with|"
    r"using)?\s*(?:an?\s+|the\s+)?(?P<y>.+?)\s+(?:style|aesthetic|look|filter|effect|rendering|vibe|feel)"
    r"(?:\s+(?:to|on|for)\s+(?P<x2>.+))?"
)
_STYLE_TO = rx(
    r"(?:change|switch|set|alter|modify)\s+(?:the\s+)?(?:art\s+|artistic\s+|visual\s+|image\s+)?style(?:\s+of\s+(?P<x>.+?))?"
    r"\s+(?:to|into)\s+(?:an?\s+|the\s+)?(?P<y>.+)"
)
_STYLE_LIKE = rx(
    r"(?:make|render|draw|paint|redraw|stylise|stylize|present)\s+(?P<x>.+?)\s+(?:look\s+|appear\s+|seem\s+)?"
    r"(?:like|as\s+if\s+(?:it\s+)?(?:was|were|is)|as)\s+(?:an?\s+|the\s+)?(?P<y>.+)"
)
_STYLE_INTO = rx(
    r"(?:turn|convert|transform|change|make|render|redraw|repaint|recreate|reimagine|present|draw|paint)\s+(?P<x>.+?)\s+"
    r"(?:(?:in)?to|into|as|in)\s+(?:an?\s+|the\s+)?(?P<y>.+)"
)
_STYLE_LOOK = rx(r"make\s+(?P<x>.+?)\s+(?:look|appear|seem)\s+(?P<y>.+)")
_STYLE_GIVE = rx(
    r"give\s+(?P<x>.+?)\s+(?:an?|the)\s+(?P<y>.+?)\s+(?:look|feel|vibe|aesthetic|finish|treatment|style|effect)"
)


def style_rule(c: ClauseContext) -> Outcome:
    """make it look like a Van Gogh painting / in the style of Picasso / turn the photo into a watercolour / apply a
    cyberpunk style → style_transfer."""
    for pattern, needs_style_word in (
        (_STYLE_OF, False),
        (_STYLE_TO, False),
        (_STYLE_GIVE, True),
        (_STYLE_NAMED, True),
        (_STYLE_LIKE, True),
        (_STYLE_INTO, True),
        (_STYLE_LOOK, True),
    ):
        m = pattern.fullmatch(c.text)
        if m is None:
            continue
        groups = m.groupdict()
        y = c.restore(groups["y"]).strip(" .")
        if needs_style_word and not is_style(y):
            continue
        if (
            pattern is _STYLE_NAMED
            and groups.get("verb", "").lower() in ("switch", "set", "adopt", "use")
            and not is_style(y)
        ):
            continue
        x = groups.get("x") or groups.get("x2")
        y = re.sub(r"^(?:an?|the)\s+", "", y, flags=re.IGNORECASE)
        y = re.sub(r"^(?:like)\s+", "", y, flags=re.IGNORECASE)
        if x is None or c.is_image(x):
            return [Draft("style_transfer", None, y.lower())]
        if c.is_pronoun(x):
            return [Draft("style_transfer", None, y.lower(), pronoun=True)]
        return [Draft("style_transfer", c.noun(x), y.lower())]
    return None
