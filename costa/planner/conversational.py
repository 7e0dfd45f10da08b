"""How people say an edit when they talk to an editor, rewritten into the imperative the rules read.

The rules read imperatives ("remove the car", "paint the door green"). People also state wishes and problems:

- wishes: "I don't want the car in the photo" → remove the car; "the bin has to go" → remove the bin; "I'd like the
  door painted green" → paint the door green; "I only want the bird" → keep only the bird; "there should be a lamp on
  the desk" → add a lamp on the desk; "can the bus be yellow?" → make the bus yellow;
- text said as what it should read: "'recieve' should be 'receive'", "the sign should say 'OPEN' instead of
  'CLOSED'" → replace the first with the second;
- phrasal verbs with the particle after the object: "take the subtitles out" → remove the subtitles; "get the
  timestamp off the photo" → remove the timestamp from the photo; "brighten it up" → brighten it; "warm it up" →
  warm up it; "sharpen up the face" → sharpen the face; "read me the sign" → read the sign;
- problems: "the photo is blurry" → deblur the image; "the image is too dark" → make the image brighter (a following
  "fix it" adds nothing: `is_bare_fix`);
- "instead of the bicycle, show a motorbike" → replace the bicycle with a motorbike (a whole sentence, before it is
  cut into clauses: `rewrite_sentence`).

Every rewrite is a pattern over the masked clause (quotes are placeholders, so quoted text never triggers one); the
rules then plan the rewritten clause, and an `Unsupported` is still reported in the user's own words.

>>> rewrite_clause("I'd like the door painted green")
Rewrite(text='paint the door green', statement=False)
>>> rewrite_clause("take the subtitles out").text, rewrite_clause("the photo is blurry").text
('remove the subtitles', 'deblur the image')
>>> rewrite_sentence("instead of the bicycle, show a motorbike")
'replace the bicycle with a motorbike'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from costa.planner.clauses import QUOTE

_DET = r"(?:the|this|that|these|those|my|his|her|their|our|your|its|a|an|some|all|every|both)"
_IMAGE = r"(?:(?:the|this|that|my)\s+)?(?:whole\s+|entire\s+)?(?:image|photo|picture|photograph|pic|shot|scene)"
_THERE = (
    r"(?:\s+(?:in|on|from|off|out\s+of)\s+(?:the\s+|this\s+|my\s+)?(?:image|photo|picture|photograph|pic|shot|scene)"
    r"|\s+(?:there|here|anymore|any\s+more|at\s+all))*"
)


@dataclass(frozen=True)
class Rewrite:
    """A clause in the rules' words; `statement` when it was a problem stated ("the photo is blurry")."""

    text: str
    statement: bool = False


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern.replace("{Q}", QUOTE).replace("{IMAGE}", _IMAGE), re.IGNORECASE)


# Irregular participles of verbs the rules read; regular ones lose -ed / -d / a doubled consonant + ed.
_IRREGULAR = {
    "made": "make", "taken": "take", "blown": "blow", "cut": "cut", "put": "put", "done": "do", "drawn": "draw",
    "shown": "show", "set": "set", "redone": "redo", "rewritten": "rewrite", "written": "write", "shrunk": "shrink",
    "removed": "remove", "got": "get", "gotten": "get", "lit": "light",
}  # fmt: skip


def verb_of(participle: str) -> str | None:
    """The edit verb a past participle comes from ("painted" → "paint", "upscaled" → "upscale"), or None.

    >>> verb_of("painted"), verb_of("upscaled"), verb_of("blurred"), verb_of("taken"), verb_of("door")
    ('paint', 'upscale', 'blur', 'take', None)
    """
    w = participle.lower()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if not w.endswith("ed"):
        return None
    for candidate in (w[:-2], w[:-1], w[:-3], w[:-3] + "y"):  # painted, upscaled, blurred, dyed / tidied
        if candidate in _EDIT_VERBS:
            return candidate
    return None


_EDIT_VERBS = frozenset(
    " ".join(
        (
            "remove erase delete paint repaint color colour recolor recolour dye tint upscale upsample enlarge sharpen",
            "deblur brighten darken lighten crop blur pixelate replace swap change turn make move shift add insert",
            "highlight redact extend expand widen outpaint rotate flip resize scale shrink fix cut take blow draw",
            "write show put set",
        )
    ).split()
)

_REMOVE_WISH = _rx(
    rf"(?:i|we)\s+(?:don'?t|do\s+not|no\s+longer)\s+(?:want|need|like)\s+(?P<x>{_DET}\b.+?){_THERE}"
    rf"|(?P<x2>{_DET}\b.+?)\s+(?:has|have|needs?|ought)\s+to\s+(?:go|disappear|be\s+removed|be\s+gone)"
    rf"|(?P<x3>{_DET}\b.+?)\s+(?:must|should|can|could|shall)\s+(?:go|disappear|be\s+removed)(?:\s+away)?"
)
_DONE_WISH = _rx(
    r"(?:i|we)(?:'d|\s+would|\s+want|\s+need|\s+wish)?\s*(?:like|love|want|need|prefer)?\s*(?:to\s+have\s+|to\s+see\s+)?"
    rf"(?P<x>{_DET}\b.+?)\s+(?P<v>[a-z]+(?:ed|en)|cut|put|set|shrunk|lit)(?P<rest>(?:\s+.*)?)"
)
_ONLY_WISH = _rx(r"(?:i|we)\s+(?:only|just)\s+(?:want|need|care\s+about)\s+(?P<x>.+)")
_THERE_BE = _rx(
    r"(?:there\s+(?:should|must|needs\s+to|has\s+to|could)\s+be|(?:i|we)(?:'d|\s+would)?\s+(?:like|want|need)"
    r"(?:\s+to\s+(?:have|see))?)\s+(?P<x>(?:a|an|some|two|three|four|five|several|more|another)\b.+?\s+"
    r"(?:on|in|at|next\s+to|beside|near|under|above|behind|in\s+front\s+of|over|by)\s+.+)"
)
_CAN_BE = _rx(
    r"(?:can|could|would)\s+(?P<x>(?:the|this|that|my|his|her|their|these|those)\b.+?)\s+(?:be|become|look)\s+"
    r"(?P<y>.+?)(?:\s+instead(?:\s+of\s+.+)?)?"
)
_SHOULD_READ = _rx(
    r"(?:(?:fix|correct)\s+(?:the\s+)?(?:typo|spelling|misspelling|mistake|error)s?\s*:?\s*)?(?P<old>{Q})\s+"
    r"(?:should|must|needs?\s+to)\s+(?:be|read|say|become)\s+(?P<new>{Q})"
    r"|(?P<x>.+?)\s+(?:should|must|needs?\s+to)\s+(?:say|read|show)\s+(?P<new2>{Q})\s+instead\s+of\s+(?P<old2>{Q})"
    r"|(?P<x3>.+?)\s+(?:should|must|needs?\s+to)\s+(?:say|read|show)\s+(?P<new3>{Q})"
)
# Phrasal verbs with the particle after the object.
_TAKE_OUT = _rx(
    r"(?:take|get|lift|knock)\s+(?P<x>(?!out\b|off\b|away\b|rid\b).+?)\s+(?:out|off|away)"
    r"(?:\s+(?:of|from)\s+(?P<y>.+))?"
)
_CLEAN_OFF = _rx(
    r"(?:clean|wipe|scrape|rub|scrub|strip|peel|wash|clear)\s+(?P<x>(?!out\b|off\b|away\b|up\b).+?)\s+(?:off|away|out)"
    r"(?:\s+(?:of|from)?\s*(?P<y>.+))?"
)
_PULL_OUT = _rx(r"(?:pull|get)\s+(?P<x>.+?)\s+out\s+of\s+(?P<y>.+)")
_KEEP_PARTICLE = _rx(
    r"(?P<v>warm|cool|tone|blow|scale|liven|jazz|dial|turn)\s+(?P<x>it|this|that|them|{IMAGE}|(?:the|this|that)\s+"
    r"\S+(?:\s+\S+)?)\s+(?P<p>up|down)(?P<rest>(?:\s+.*)?)"
)
_DROP_PARTICLE = _rx(
    r"(?P<v>brighten|lighten|darken|sharpen|dim|crisp|clean|touch|fix|clear)\s+(?P<x>it|this|that|them|{IMAGE}|"
    r"(?:the|this|that)\s+\S+(?:\s+\S+)?)\s+up(?P<rest>(?:\s+.*)?)"
    r"|(?P<v2>brighten|lighten|darken|sharpen)\s+up\s+(?P<rest2>.+)"
)
_TO_ME = _rx(r"(?P<v>read|transcribe|describe|caption)\s+(?:me|us)\s+(?P<rest>.+)")
_STRONG_REMOVE = _rx(
    r"(?:lose|nuke|kill|scrap|axe|zap|purge|bin|trash|banish|vanish|eradicate|obliterate|get\s+shot\s+of|"
    r"rub\s+out|scrub\s+out|scrape\s+off|strip\s+out|edit\s+out|blot\s+out)\s+(?P<rest>.+)"
)
# Problems stated about the whole image, and the edit that answers each.
_PROBLEMS: dict[str, str] = {
    "blurry": "deblur the image", "blurred": "deblur the image", "out of focus": "deblur the image",
    "soft": "deblur the image", "unsharp": "deblur the image", "fuzzy": "deblur the image",
    "dark": "make the image brighter", "dim": "make the image brighter", "underexposed": "make the image brighter",
    "gloomy": "make the image brighter", "bright": "make the image darker", "overexposed": "make the image darker",
    "washed out": "increase the contrast", "flat": "increase the contrast", "dull": "make the image more saturated",
    "grey": "make the image more saturated", "gray": "make the image more saturated",
    "cold": "make the image warmer", "blue": "make the image warmer", "warm": "make the image cooler",
    "yellow": "make the image cooler", "orange": "make the image cooler",
    "small": "upscale the image", "tiny": "upscale the image", "low res": "upscale the image",
    "low resolution": "upscale the image", "low-res": "upscale the image", "pixelated": "upscale the image",
    "saturated": "make the image less saturated", "oversaturated": "make the image less saturated",
}  # fmt: skip
_PROBLEM = _rx(
    r"(?:{IMAGE}|it|this|everything)\s+(?:is|looks|seems|feels|'s|’s)\s+(?:way\s+|far\s+|a\s+bit\s+|a\s+little\s+|"
    r"kind\s+of\s+|kinda\s+|really\s+|very\s+|quite\s+|so\s+|rather\s+|slightly\s+|pretty\s+)*(?:too\s+|overly\s+)?"
    r"(?:(?:a\s+bit|a\s+little|very|really|quite|so)\s+)?(?P<adj>"
    + "|".join(re.escape(k).replace(r"\ ", r"\s+") for k in sorted(_PROBLEMS, key=len, reverse=True))
    + r")(?:\s*,?\s*(?:and\s+|so\s+)?(?:please\s+)?(?:(?:can|could|would)\s+you\s+)?(?:fix|correct|sort\s+out|improve|"
    r"repair)\s+(?:it|this|that)(?:\s+please)?)?"
)
_BARE_FIX = _rx(
    r"(?:(?:can|could|would|will)\s+you\s+|please\s+)?(?:fix|correct|sort\s+out|improve|repair)(?:\s+(?:it|this|that|"
    r"that\s+up|it\s+up|this\s+up|the\s+problem|it\s+please))?(?:\s+(?:for\s+me|please))?"
    r"|(?:do\s+something\s+about\s+(?:it|this|that))|(?:sort\s+(?:it|this|that)\s+out)"
)


def _sub(pattern: re.Pattern[str], build: Callable[[re.Match[str]], str | None]) -> Callable[[str], str | None]:
    def apply(text: str) -> str | None:
        m = pattern.fullmatch(text)
        return build(m) if m else None

    return apply


def _from(y: str | None) -> str:
    if not y or re.fullmatch(r"(?:there|here|it|this|that)", y.strip(), re.IGNORECASE):
        return ""
    return f" from {y.strip()}"


def _take_out(x: str, y: str | None) -> str:
    """ "take the mug out of the photo" removes the mug; "lift the puppy out of its background" keeps it."""
    if y and re.fullmatch(r"(?:the\s+|its\s+|their\s+)?(?:background|backdrop|surroundings)", y.strip(), re.IGNORECASE):
        return f"isolate {x}"
    return f"remove {x}{_from(y)}"


def _done_wish(m: re.Match[str]) -> str | None:
    verb = verb_of(m.group("v"))
    return f"{verb} {m.group('x')}{m.group('rest')}" if verb else None


def _should_read(m: re.Match[str]) -> str:
    if m.group("old"):
        return f"replace {m.group('old')} with {m.group('new')}"
    if m.group("old2"):
        return f"replace {m.group('old2')} with {m.group('new2')}"
    return f"make {m.group('x3')} read {m.group('new3')}"


def _keep_particle(m: re.Match[str]) -> str:
    return f"{m.group('v')} {m.group('p')} {m.group('x')}{m.group('rest')}"


def _drop_particle(m: re.Match[str]) -> str:
    if m.group("v2"):
        return f"{m.group('v2')} {m.group('rest2')}"
    return f"{m.group('v')} {m.group('x')}{m.group('rest')}"


_REWRITES: tuple[Callable[[str], str | None], ...] = (
    _sub(_REMOVE_WISH, lambda m: f"remove {m.group('x') or m.group('x2') or m.group('x3')}"),
    _sub(_ONLY_WISH, lambda m: f"keep only {m.group('x')}"),
    _sub(_THERE_BE, lambda m: f"add {m.group('x')}"),
    _sub(_SHOULD_READ, _should_read),
    _sub(_CAN_BE, lambda m: f"make {m.group('x')} {m.group('y')}"),
    _sub(_PULL_OUT, lambda m: f"extract {m.group('x')} from {m.group('y')}" if _texty(m.group("x")) else None),
    _sub(_TAKE_OUT, lambda m: _take_out(m.group("x"), m.group("y"))),
    _sub(_CLEAN_OFF, lambda m: f"remove {m.group('x')}{_from(m.group('y'))}"),
    _sub(_KEEP_PARTICLE, _keep_particle),
    _sub(_DROP_PARTICLE, _drop_particle),
    _sub(_TO_ME, lambda m: f"{m.group('v')} {m.group('rest')}"),
    _sub(_STRONG_REMOVE, lambda m: f"remove {m.group('rest')}"),
    _sub(_DONE_WISH, _done_wish),
)


def _texty(span: str) -> bool:
    return re.search(r"\b(?:text|writing|words?|numbers?|lettering|details)\b", span, re.IGNORECASE) is not None


def rewrite_clause(text: str) -> Rewrite | None:
    """The clause in the rules' words, or None when it is already an imperative the rules read as written.

    Rewrites apply one after another (at most three times: "I'd like the label taken off" → "take the label off"
    → "remove the label").
    """
    m = _PROBLEM.fullmatch(text)
    if m:
        return Rewrite(_PROBLEMS[" ".join(m.group("adj").lower().split())], statement=True)
    current, changed = text, False
    for _ in range(3):
        for apply in _REWRITES:
            new = apply(current)
            if new is not None and new != current:
                current, changed = " ".join(new.split()), True
                break
        else:
            break
    return Rewrite(current) if changed else None


def is_bare_fix(text: str) -> bool:
    """ "fix it", "can you fix that", "sort it out": nothing of its own after a problem was stated."""
    return _BARE_FIX.fullmatch(text.strip()) is not None


_INSTEAD_OF = _rx(
    r"(?P<lead>.*?\b)?instead\s+of\s+(?P<x>.+?)\s*,?\s+(?:please\s+)?(?:show|put|use|have|add|place|draw|paint|give\s+me|"
    r"i\s+want|there\s+should\s+be|make\s+it)\s+(?P<y>[^.;!?]+)(?P<tail>[.;!?].*)?"
)


#: "there should be …" / "there needs to be …": said before the clauses are cut, or "to be …" reads as a purpose.
_THERE_SHOULD = _rx(
    r"(?:(?<=^)|(?<=[.;,!?]\s)|(?<=\band\s))there\s+(?:should|must|needs\s+to|has\s+to|could|ought\s+to|"
    r"would\s+need\s+to)\s+be\s+(?=(?:a|an|some|two|three|four|five|several|more|another)\b)"
)


def rewrite_sentence(masked_text: str) -> str:
    """Rewrite frames that span a comma or would be cut as a purpose before the instruction is cut into clauses
    ("instead of X, show Y" → replace X with Y; "there needs to be a rug on the floor" → add a rug on the floor)."""
    text = _THERE_SHOULD.sub("add ", masked_text.strip())
    m = _INSTEAD_OF.fullmatch(text)
    if m and not (m.group("lead") or "").strip():
        return f"replace {m.group('x')} with {m.group('y').strip()}{m.group('tail') or ''}"
    return text
