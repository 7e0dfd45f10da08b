"""What a subtask's target names: its noun and its attributes, and the record of what a grounder verified.

`parse_target` splits a target phrase into its head noun and the words that describe or choose it: a colour (only in
the head of the noun phrase: "the cup of coffee" names no colour, "the red car" does), a shape noun verified by
geometry ("circle", "ring", "stripe"), a size word ("the bigger"), a position ("on the left", "top"), an ordinal
("second", "last"), a count ("the four women") and a qualifier ("with the umbrella"). A target naming several things
("the cup of coffee and the pair of glasses") has one `TargetPhrase` per thing in `parts`.

Every grounder attaches a `Verification` to the masks or boxes it outputs: what it verified (colour, shape by
geometry, class, pointed-by-user, OCR text, count) and what it could not. Evidence that covers only the colour of a
noun that is not a colour blob ("the red car") leaves the class `missing`, so the target is **unverified** and the
subtask is not reported done.

The embedded backend has no open-vocabulary detector, so `findable_by` says, before anything runs, which grounder
families can find a target at all; `ground_advice` is the one sentence that says what would (a click, a box, or the
neural detector).

Pure: strings in, records out (the colour table is read on first use, see `costa.colours`).

Example:
    >>> t = parse_target("the second red circle from the left")
    >>> t.noun, t.colour, t.shape, t.ordinal, t.position
    ('circle', 'red', 'circle', 2, 'left')
    >>> parse_target("the cup of coffee").colour is None, parse_target("the cup of coffee").noun
    (True, 'cup')
    >>> [p.noun for p in parse_target("both the cup of coffee and the pair of glasses").parts]
    ['cup', 'glasses']
    >>> parse_target("the four women").count, parse_target("the bigger ball").size
    (4, 'largest')
    >>> find_colour("the light blue car")
    ('light blue', (173, 216, 230))
    >>> find_colour("the car") is None, find_colour("the coffee") is None
    (True, True)
    >>> names_faces("the man's face"), names_people("the women"), names_people("the car")
    (True, True, False)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from costa.colours import RGB, parse_colour

#: Words that make a target a face (or faces) for the face detector.
FACE_WORDS = frozenset({"face", "faces", "head", "heads", "identity", "identities"})
#: Words that make a target a person (or people) for the people detector.
PERSON_WORDS = frozenset(
    {
        "person", "persons", "people", "man", "men", "woman", "women", "child", "children", "kid", "kids", "boy",
        "boys", "girl", "girls", "pedestrian", "pedestrians", "human", "humans", "someone", "somebody", "guy", "guys",
        "lady", "ladies", "player", "players", "hiker", "hikers", "walker", "walkers", "figure", "figures", "subject",
        "individual", "individuals", "passerby", "passersby", "crowd", "body", "bodies", "adult", "adults",
    }
)  # fmt: skip
#: Shape nouns → the geometry that verifies them (`costa.tools.colour_ground.shape_score`).
SHAPE_NOUNS: dict[str, str] = {
    "circle": "circle", "circles": "circle", "disc": "circle", "discs": "circle", "disk": "circle",
    "disks": "circle", "ball": "circle", "balls": "circle", "dot": "circle", "dots": "circle", "sphere": "circle",
    "ring": "ring", "rings": "ring", "square": "square", "squares": "square", "rectangle": "rectangle",
    "rectangles": "rectangle", "triangle": "triangle", "triangles": "triangle", "stripe": "line",
    "stripes": "line", "line": "line", "lines": "line", "band": "line", "bar": "line",
}  # fmt: skip
#: Nouns that OCR verifies (the text tools ground these, not the object grounders).
TEXT_NOUNS = frozenset({"sign", "signs", "label", "labels", "text", "word", "words", "letters", "caption", "title"})
#: Nouns that are nothing but a patch of colour: the colour is all there is to verify ("the red area", "the blue one").
BLOB_NOUNS = frozenset(
    {"", "region", "regions", "area", "areas", "part", "parts", "patch", "patches", "bit", "bits", "spot", "spots",
     "blob", "blobs", "object", "objects", "thing", "things", "one", "ones", "shape", "shapes", "stuff", "colour",
     "color", "pixels", "it", "them", "everything"}
)  # fmt: skip
#: Colour names that are also everyday nouns: a colour only when they modify another word ("olive jacket"), not when
#: they are the thing itself ("the coffee", "the rose").
_NOUN_COLOURS = frozenset(
    {"rose", "coffee", "chocolate", "olive", "lime", "peach", "lemon", "mint", "sage", "salmon", "plum", "cream"}
    | {"rust"}
)
#: Nouns whose "of" phrase names the thing itself ("the pair of glasses" is glasses).
_PARTITIVES = frozenset({"pair", "pairs", "group", "groups", "bunch", "set", "couple", "pile", "stack", "row", "piece"})
_ISH = {
    "reddish": "red", "bluish": "blue", "blueish": "blue", "greenish": "green", "yellowish": "yellow",
    "orangish": "orange", "pinkish": "pink", "purplish": "purple", "brownish": "brown", "greyish": "grey",
    "grayish": "grey", "whitish": "white", "blackish": "black",
}  # fmt: skip
_WORD = re.compile(r"[a-z0-9]+(?:'s)?")
_ARTICLES = frozenset(
    {"the", "a", "an", "this", "that", "these", "those", "all", "every", "each", "my", "his", "her", "their", "its",
     "our", "your", "both", "only", "other"}
)  # fmt: skip
#: Words that end the head of a noun phrase: what follows qualifies it ("of coffee", "with the umbrella").
_HEAD_ENDS = frozenset(
    {"of", "with", "in", "on", "at", "near", "by", "behind", "under", "above", "below", "beside", "from", "next",
     "holding", "wearing", "that", "which", "who", "to", "over", "inside", "between", "carrying", "for"}
)  # fmt: skip
_SIZE_WORDS: dict[str, Literal["largest", "smallest"]] = {
    "big": "largest", "bigger": "largest", "biggest": "largest", "large": "largest", "larger": "largest",
    "largest": "largest", "huge": "largest", "small": "smallest", "smaller": "smallest", "smallest": "smallest",
    "little": "smallest", "tiny": "smallest",
}  # fmt: skip
Position = Literal["left", "right", "top", "bottom", "centre"]
_POSITION_WORDS: dict[str, Position] = {
    "left": "left", "leftmost": "left", "right": "right", "rightmost": "right", "top": "top", "upper": "top",
    "topmost": "top", "bottom": "bottom", "lower": "bottom", "centre": "centre", "center": "centre",
    "middle": "centre", "central": "centre",
}  # fmt: skip
_ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5,
    "5th": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "last": -1,
}  # fmt: skip
_COUNTS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "pair": 2,
}  # fmt: skip
#: "on the left", "at the top", "in the middle", "from the left": a position phrase, removed before the head is read.
_POSITION_PHRASE = re.compile(
    r"\b(?:on|at|in|to|from|towards?)\s+(?:the\s+)?(?:far\s+)?(left|right|top|bottom|middle|centre|center)"
    r"(?:\s+(?:side|edge|corner|half))?\b"
)

Aspect = Literal[
    "colour", "shape", "class", "pointed", "text", "count", "size", "position", "ordinal", "qualifier", "extent"
]


@dataclass(frozen=True)
class TargetPhrase:
    """One parsed target phrase. `noun` is the head noun ("" for "it" or a bare colour); `parts` lists one phrase per
    thing named when the target joins several with "and" (a single thing: `parts` is empty)."""

    text: str
    noun: str = ""
    colour: str | None = None
    rgb: RGB | None = None
    shape: str | None = None
    size: Literal["largest", "smallest"] | None = None
    position: Position | None = None
    ordinal: int | None = None  # 1-based; -1 = the last
    count: int | None = None
    qualifier: str = ""
    plural: bool = False
    parts: tuple[TargetPhrase, ...] = ()

    @property
    def things(self) -> tuple[TargetPhrase, ...]:
        """The phrases for each thing named: `parts`, or this phrase alone."""
        return self.parts or (self,)

    @property
    def colour_is_enough(self) -> bool:
        """Whether verifying the colour (and the shape, if named) verifies the whole noun ("the red area")."""
        return self.noun in BLOB_NOUNS or self.shape is not None


@dataclass(frozen=True)
class Evidence:
    """One aspect of a target: what was asked (`value`) and how it was verified or why it could not be."""

    aspect: Aspect
    value: str
    detail: str = ""
    #: Whether another attempt of the same tool (other parameters) could verify it. A class no detector vouches for
    #: (the colour and salient grounders say so where they record it) and one click with no outline of its own to
    #: compare with cannot be mended by a retry: the search drops the tool at once instead of paying for its other
    #: attempts.
    retryable: bool = True

    def describe(self) -> str:
        return f"{self.aspect} {self.value!r}" + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True)
class Verification:
    """What a grounder verified about its output (`verified`), what it could not and that matters (`missing`: the
    target is then unverified) and what it did not check but that does not change which region it is (`unchecked`).
    `method` is the tool id, or "user" for what the user pointed at."""

    method: str
    target: str = ""
    verified: tuple[Evidence, ...] = ()
    missing: tuple[Evidence, ...] = ()
    unchecked: tuple[Evidence, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.missing

    def summary(self) -> str:
        """One line for the chat, the ledger and the CLI."""
        parts = []
        if self.verified:
            parts.append("verified " + ", ".join(e.describe() for e in self.verified))
        if self.missing:
            parts.append("NOT verified " + ", ".join(e.describe() for e in self.missing))
        if self.unchecked:
            parts.append("not checked " + ", ".join(e.describe() for e in self.unchecked))
        return f"{self.method}: " + ("; ".join(parts) or "nothing to verify")


def target_words(target: str | None) -> list[str]:
    """Lower-case words of `target`, possessive 's dropped ("the man's face" → ["the", "man", "face"])."""
    if not target:
        return []
    return [w.removesuffix("'s") for w in _WORD.findall(target.lower().replace("’", "'"))]


def _colour_in(words: list[str]) -> tuple[str, RGB, int, int] | None:
    """The longest colour phrase among `words` as (phrase, rgb, start, end); "-ish" colours count ("reddish")."""
    words = [_ISH.get(w, w) for w in words]
    for size in (3, 2, 1):
        for i in range(len(words) - size + 1):
            phrase = " ".join(words[i : i + size])
            if size == 1 and phrase in _NOUN_COLOURS and i == len(words) - 1:
                continue
            rgb = parse_colour(phrase)
            if rgb is not None:
                return phrase, rgb, i, i + size
    return None


def _parse_one(text: str) -> TargetPhrase:
    lowered = text.lower().replace("’", "'")
    position: Position | None = None
    match = _POSITION_PHRASE.search(lowered)
    if match:
        position = _POSITION_WORDS[match.group(1)]
        lowered = lowered[: match.start()] + " " + lowered[match.end() :]
    words = target_words(lowered)
    cut = next((i for i, w in enumerate(words) if w in _HEAD_ENDS and i > 0), len(words))
    head, rest = words[:cut], words[cut:]
    if head and head[-1] in _PARTITIVES and rest[:1] == ["of"] and len(rest) > 1:
        count = _COUNTS.get(head[-1])
        head, rest = [*head[:-1], *rest[1:2]], rest[2:]  # "pair of glasses" → glasses
    else:
        count = None
    kept: list[str] = []
    size = None
    ordinal = None
    for w in head:
        if w in _ARTICLES:
            continue
        if w in _COUNTS and w != "pair":
            count = _COUNTS[w]
        elif w.isdigit() and len(w) < 4:
            count = int(w)
        elif w in _ORDINALS:
            ordinal = _ORDINALS[w]
        elif w in _SIZE_WORDS:
            size = _SIZE_WORDS[w]
        elif w in _POSITION_WORDS:
            position = position or _POSITION_WORDS[w]
        else:
            kept.append(w)
    colour = _colour_in(kept)
    noun_words = kept
    if colour is not None:
        noun_words = kept[: colour[2]] + kept[colour[3] :]
    noun = noun_words[-1] if noun_words else ""
    if noun in _POSITION_WORDS:
        noun = ""
    plural = (noun.endswith("s") and not noun.endswith("ss")) or noun in {"men", "women", "people", "children"}
    return TargetPhrase(
        text=text.strip(),
        noun=noun,
        colour=colour[0] if colour else None,
        rgb=colour[1] if colour else None,
        shape=SHAPE_NOUNS.get(noun),
        size=size,
        position=position,
        ordinal=ordinal,
        count=count,
        qualifier=" ".join(rest),
        plural=plural or (count is not None and count > 1),
    )


def parse_target(target: str | None) -> TargetPhrase:
    """Parse a target phrase into its noun and attributes (see the module docstring); "" and None give an empty one."""
    text = (target or "").strip()
    pieces = [p for p in re.split(r"\s*(?:,\s*and\b|,|\band\b)\s*", text, flags=re.IGNORECASE) if p.strip()]
    if len(pieces) <= 1:
        return _parse_one(text)
    parts = tuple(_parse_one(p) for p in pieces)
    if any(not p.noun for p in parts):  # "black and white stripes", "red and blue": one thing
        return _parse_one(text)
    first = parts[0]
    return TargetPhrase(text=text, noun=first.noun, colour=first.colour, rgb=first.rgb, plural=True, parts=parts)


def find_colour(target: str | None) -> tuple[str, RGB] | None:
    """The colour phrase the head of a target's noun phrase names and its sRGB, or None when it names none.

    The longest phrase wins ("light blue" over "blue"); words after the head ("the cup of coffee") never count, and a
    colour name that is also a noun counts only when it modifies a later word. With several things named, each must
    name a colour and the first one's is returned.
    """
    phrase = parse_target(target)
    if any(p.colour is None for p in phrase.things):
        return None
    first = phrase.things[0]
    assert first.colour is not None and first.rgb is not None  # checked just above
    return first.colour, first.rgb


def names_faces(target: str | None) -> bool:
    """Whether the target asks for faces ("faces", "the man's face", "their identities")."""
    return any(w in FACE_WORDS for w in target_words(target))


def names_people(target: str | None) -> bool:
    """Whether the target asks for people ("the person", "the women", "pedestrians") and not only their faces."""
    words = target_words(target)
    return any(w in PERSON_WORDS for w in words) and not any(w in FACE_WORDS for w in words)


def findable_by(family: str, target: str | None) -> bool:
    """Whether a grounder of tool `family` can produce a candidate for `target` at all (decided before running).

    The colour grounder needs a colour in the head of every thing named; the face and people detectors need a target
    naming faces or people; the salient-object masker (U²-Net-p without pointing) serves no named target. Other
    families (pointing, box segmentation, editors, neural detectors) are not limited
    by the target's words.
    """
    if family == "colour_ground":
        return find_colour(target) is not None
    if family == "faces":
        return names_faces(target)
    if family == "people":
        return names_people(target)
    # The salient-object masker knows no class: it serves subtasks without a named target only.
    return family != "salient"


def ground_advice(target: str | None) -> str:
    """The sentence that tells the user what would ground `target` when the embedded grounders cannot."""
    if not (target and target.strip()):  # "blur the background", "remove the background": the kept thing unnamed
        return (
            "To say what the main subject is, click on it or draw a box or brush over it (CLI: --point x,y or --box "
            "x,y,w,h)"
        )
    what = f"'{target.strip()}'"
    return (
        f"To edit {what}, click on it or draw a box around it (CLI: --point x,y or --box x,y,w,h); finding {what} by "
        "name needs the neural backend's open-vocabulary detector (Grounding DINO; `costa doctor` says what it needs)"
    )
