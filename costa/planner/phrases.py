"""What the planner rules share: the draft record, the clause being read, and phrase readers (nouns, colours,
positions, scale factors).

>>> from costa.planner.clauses import mask_quotes
>>> c = ClauseContext(mask_quotes("paint the bench"), "paint the bench", False, frozenset())
>>> c.noun("the bench in the image")
'bench'
>>> read_factor("upscale the image 2x"), read_position("at the top left corner")
('2', 'top left')
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from costa.colours import parse_colour
from costa.errors import PlanningError
from costa.planner.clauses import QUOTE, Masked
from costa.planner.validate import CREATING_KINDS, OBJECT_KINDS, contradiction_message, split_targets
from costa.types import Unsupported

#: Words that refer back to the previous clause's object.
PRONOUNS: frozenset[str] = frozenset(
    {"it", "its", "them", "they", "this", "that", "these", "those", "him", "her", "this one", "that one", "the same"}
)
#: Nouns that mean the whole picture rather than an object in it.
IMAGE_WORDS: frozenset[str] = frozenset(
    {
        "image",
        "photo",
        "picture",
        "photograph",
        "pic",
        "scene",
        "frame",
        "canvas",
        "shot",
        "everything",
        "whole image",
        "entire image",
        "whole picture",
        "entire picture",
        "whole photo",
        "entire photo",
        "whole scene",
        "entire scene",
        "overall image",
        "image overall",
    }
)
_DETERMINER = re.compile(
    r"^(?:all\s+(?:of\s+)?|(?:the|a|an|this|that|these|those|some|any|every|each|both|his|her|their|my|your|our)\s+)",
    re.IGNORECASE,
)
_IMAGE_TAIL = re.compile(
    r"\s+(?:in|from|of|on|within|across|throughout)\s+(?:the\s+|this\s+|that\s+|my\s+|our\s+)?(?:whole\s+|entire\s+)?"
    r"(?:image|photo|picture|photograph|pic|scene|frame|shot)$",
    re.IGNORECASE,
)
_COLOUR_ARTICLE = re.compile(r"^(?:(?:a|an|the)\s+)?(?:colou?r\s+)?", re.IGNORECASE)
_COLOUR_LIST = re.compile(r"\s*(?:,|/|\band\b|\bor\b)\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Draft:
    """A subtask before ids and parents: what one clause asked for.

    `pronoun` marks a target written as "it"/"them", to be resolved to the previous clause's object.
    """

    kind: str
    target: str | None = None
    result: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    pronoun: bool = False

    @property
    def referent(self) -> str | None:
        """What "it" means after this subtask: the created object for a replacement or addition, else the target."""
        if self.kind not in OBJECT_KINDS or self.kind == "object_removal":
            return None
        return self.result if self.kind in CREATING_KINDS else self.target


#: What a rule returns: drafts, a reason it cannot be done, or None when the rule does not apply.
Outcome = list[Draft] | Unsupported | None


@dataclass(frozen=True)
class ClauseContext:
    """One clause as the rules see it: masked `text`, the quotes, whether it was a question, the known kinds, and the
    purpose tail cut from it."""

    masked: Masked
    text: str
    question: bool
    kinds: frozenset[str]
    purpose: str = ""  # the "to make it brighter" tail cut from the clause (see `clauses.Clause`)

    def restore(self, span: str | None = None) -> str:
        """The span (default: the whole clause) as the user wrote it, quotes included."""
        return self.masked.restore(self.text if span is None else span).strip()

    def unsupported(self, reason: str) -> Unsupported:
        return Unsupported(text=self.restore(), reason=reason)

    def literal(self, span: str) -> str:
        """A quoted span's content, or the span as written (case kept) when it is not one quote."""
        lit = self.masked.literal(span)
        return lit if lit is not None else self.restore(span.strip(" ,.;:!?"))

    def is_pronoun(self, span: str | None) -> bool:
        return span is not None and " ".join(span.lower().split()) in PRONOUNS

    def noun(self, span: str | None) -> str | None:
        """An object noun phrase: lower case outside quotes, no leading determiner or "in the image" tail."""
        if span is None:
            return None
        text = " ".join(span.split()).strip(" ,.;:!?")
        previous = None
        while previous != text:
            previous = text
            text = _DETERMINER.sub("", text)
            text = _IMAGE_TAIL.sub("", text).strip(" ,.;:!?")
        return self.masked.restore(text.lower()) or None

    def is_image(self, span: str | None) -> bool:
        """True when the span means the whole picture ("the image", "it" as a whole, nothing at all)."""
        noun = self.noun(span)
        return noun is None or noun in IMAGE_WORDS

    def objects(self, kind: str, span: str, **fields: Any) -> list[Draft]:
        """One draft of `kind` per object named in `span` ("the car and the bus" → two); pronouns marked."""
        if self.is_pronoun(span):
            return [Draft(kind, None, pronoun=True, **fields)]
        noun = self.noun(span)
        if noun is None or noun in IMAGE_WORDS:
            return [Draft(kind, None, **fields)]
        return [Draft(kind, t, **fields) for t in split_targets(noun)]


def read_colour(c: ClauseContext, span: str, target: str | None) -> tuple[str, list[int]] | None:
    """Read a colour phrase as written plus its RGB; None when it names no known colour.

    Raises:
        PlanningError: the phrase names two colours ("red and blue"), which contradict each other.
    """
    words = _COLOUR_ARTICLE.sub("", c.restore(span).strip(" ,.;:!?"))
    words = re.sub(r"\s+(?:colou?r|shade|tone|paint)$", "", words, flags=re.IGNORECASE).strip()
    rgb = parse_colour(words)
    if rgb is not None:
        return words, list(rgb)
    parts = [p for p in _COLOUR_LIST.split(words) if p]
    if len(parts) > 1 and all(parse_colour(_COLOUR_ARTICLE.sub("", p)) for p in parts):
        raise PlanningError(contradiction_message("object_recoloration", target, parts[0], " or ".join(parts[1:])))
    if len(parts) == 1:
        # "vivid red", "a lighter blue": keep the words as written, take the RGB of the colour they end with.
        tail = words.split()
        for k in range(min(3, len(tail) - 1), 0, -1):
            rgb = parse_colour(" ".join(tail[-k:]))
            if rgb is not None:
                return words, list(rgb)
    return None


#: Words before a colour name that describe its shade ("bright red"), kept with the colour.
_SHADE_WORDS = frozenset(
    {"bright", "vivid", "deep", "rich", "neon", "soft", "pastel", "hot", "electric", "brilliant", "muted", "dusty"}
)


_DETERMINER_WORDS = frozenset({"the", "a", "an", "this", "that", "these", "those", "my", "its", "their", "all", "both"})


def split_trailing_colour(c: ClauseContext, span: str) -> tuple[str, str, list[int]] | None:
    """Split "the wall light blue" into ("the wall", "light blue", rgb) using the longest colour at the end.

    Raises:
        PlanningError: the end is a list of colours ("the wall red and blue").
    """
    words = span.split()
    m = re.fullmatch(r"(?P<left>.+)\s+(?:and|or)\s+(?P<right>.+)", span, re.IGNORECASE)
    if m and parse_colour(m.group("right")):
        left = m.group("left").split()
        for k in (3, 2, 1):
            if len(left) > k and parse_colour(" ".join(left[-k:])):
                target = c.noun(" ".join(left[:-k]))
                raise PlanningError(
                    contradiction_message("object_recoloration", target, " ".join(left[-k:]), m.group("right"))
                )
    for k in (4, 3, 2, 1):
        if len(words) <= k:
            continue
        colour = " ".join(words[-k:])
        rgb = parse_colour(colour)
        left = words[:-k]
        if all(w.lower() in _DETERMINER_WORDS for w in left):
            continue  # "make the sky blue": "sky blue" is a colour, but then nothing is left to recolour
        if rgb is not None and not re.fullmatch(r"(?:a|an|the)\b.*", colour, re.IGNORECASE):
            if len(words) > k + 1 and words[-k - 1].lower() in _SHADE_WORDS:
                k += 1  # "bright red": the shade word belongs to the colour, not to the object
                colour = " ".join(words[-k:])
            return " ".join(words[:-k]), c.restore(colour), list(rgb)
    return None


_NUMBER_WORDS = {"two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "eight": "8", "ten": "10"}
_N = r"(\d+(?:\.\d+)?|two|three|four|five|six|eight|ten)"
_FACTOR_PATTERNS = (
    re.compile(_N + r"\s*-?\s*(?:x|×|times|fold)(?![a-z])", re.IGNORECASE),
    re.compile(r"(?<![a-z])[x×]\s*(\d+(?:\.\d+)?)\b", re.IGNORECASE),
    re.compile(r"\bby\s+(?:a\s+factor\s+of\s+)?" + _N + r"\b(?!\s*%)", re.IGNORECASE),
    re.compile(r"\bfactor\s+(?:of\s+)?" + _N + r"\b", re.IGNORECASE),
)
_FACTOR_WORDS = re.compile(r"\b(?P<word>double|twice|triple|quadruple|doubled|tripled|quadrupled)\b", re.I)
_FACTOR_VALUES = {"double": "2", "twice": "2", "triple": "3", "quadruple": "4"}


def read_factor(text: str, default: str = "2") -> str:
    """The scale factor in "upscale 2x" / "by a factor of four" / "threefold" / "double the resolution" as a string
    ("2", "1.5").

    >>> read_factor("by a factor of three"), read_factor("fourfold"), read_factor("by four"), read_factor("2.5x")
    ('3', '4', '4', '2.5')
    """
    for pattern in _FACTOR_PATTERNS:
        m = pattern.search(text)
        if m:
            word = m.group(1).lower()
            value = float(_NUMBER_WORDS.get(word, word))
            return str(int(value)) if value.is_integer() else str(value)
    m = _FACTOR_WORDS.search(text)
    if m:
        return _FACTOR_VALUES[m.group("word").lower().removesuffix("d")]
    return default


_POSITION = re.compile(
    r"(?:at|in|on|to|along|across|near|towards?|into)\s+(?:the\s+)?(?:very\s+)?"
    r"(?P<v>top|bottom|upper|lower|left|right|center|centre|middle)(?:[\s-]+(?P<h>left|right|center|centre|middle))?"
    r"(?:[\s-]+(?:corner|edge|side|part|half|area|region|portion|border|margin))?"
    r"(?:\s+(?:of|on)\s+(?:the\s+)?(?:image|picture|photo|sign|poster|page|frame|canvas|scene|view|shot))?",
    re.IGNORECASE,
)
_POSITION_WORD = {"upper": "top", "lower": "bottom", "centre": "center", "middle": "center"}


def read_position(text: str) -> str | None:
    """A position phrase ("at the top left corner", "in the middle") as "top left", "center", …; None otherwise."""
    m = _POSITION.fullmatch(text.strip())
    if not m:
        return None
    v = _POSITION_WORD.get(m.group("v").lower(), m.group("v").lower())
    h = _POSITION_WORD.get((m.group("h") or "").lower(), (m.group("h") or "").lower())
    return f"{v} {h}" if h and h != v else v


def rx(pattern: str) -> re.Pattern[str]:
    """Compile a case-insensitive rule pattern; `{Q}` stands for one quoted string."""
    return re.compile(pattern.replace("{Q}", QUOTE), re.IGNORECASE)
