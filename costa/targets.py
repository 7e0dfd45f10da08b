"""What a subtask's target names, as far as the embedded (CPU) grounders can tell: a colour, faces, people.

The embedded backend has no open-vocabulary detector, so it grounds a target only by a colour word ("the red car"),
as a face or a person, or from what the user pointed at. `ground_advice` is the one sentence every grounder ends its
failure with, so a turn that cannot find its target says what would: a click or a box, or the neural detector.

Pure: strings in, strings out (the colour table is read on first use, see `costa.colours`).

Example:
    >>> find_colour("the light blue car")
    ('light blue', (173, 216, 230))
    >>> find_colour("the car") is None, find_colour("the coffee") is None
    (True, True)
    >>> names_faces("the man's face"), names_people("the women"), names_people("the car")
    (True, True, False)
"""

from __future__ import annotations

import re

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
#: Colour names that are also everyday nouns: a colour only when they modify another word ("olive jacket"), not when
#: they are the thing itself ("the coffee", "the rose").
_NOUN_COLOURS = frozenset(
    {"rose", "coffee", "chocolate", "olive", "lime", "peach", "lemon", "mint", "sage", "salmon", "plum", "cream"}
    | {"rust"}
)
_WORD = re.compile(r"[a-z]+(?:'s)?")
_ARTICLES = frozenset({"the", "a", "an", "this", "that", "these", "those", "all", "every", "each", "my", "his", "her"})


def target_words(target: str | None) -> list[str]:
    """Lower-case words of `target`, possessive 's dropped ("the man's face" → ["the", "man", "face"])."""
    if not target:
        return []
    return [w.removesuffix("'s") for w in _WORD.findall(target.lower().replace("’", "'"))]


def find_colour(target: str | None) -> tuple[str, RGB] | None:
    """The colour phrase a target names and its sRGB, or None when it names none.

    The longest phrase wins ("light blue" over "blue"); hex and rgb() forms are not looked for (people do not write
    "the #ff0000 car"). A colour name that is also a noun counts only when it modifies a later word.
    """
    words = [w for w in target_words(target) if w not in _ARTICLES]
    for size in (3, 2, 1):
        for i in range(len(words) - size + 1):
            phrase = " ".join(words[i : i + size])
            if size == 1 and phrase in _NOUN_COLOURS and i == len(words) - 1:
                continue
            rgb = parse_colour(phrase)
            if rgb is not None:
                return phrase, rgb
    return None


def names_faces(target: str | None) -> bool:
    """Whether the target asks for faces ("faces", "the man's face", "their identities")."""
    return any(w in FACE_WORDS for w in target_words(target))


def names_people(target: str | None) -> bool:
    """Whether the target asks for people ("the person", "the women", "pedestrians") and not only their faces."""
    words = target_words(target)
    return any(w in PERSON_WORDS for w in words) and not any(w in FACE_WORDS for w in words)


def ground_advice(target: str | None) -> str:
    """The sentence that tells the user what would ground `target` when the embedded grounders cannot."""
    what = f"'{target.strip()}'" if target and target.strip() else "the object"
    return (
        f"To edit {what}, click on it or draw a box around it (CLI: --point x,y or --box x,y,w,h); finding {what} by "
        "name needs the neural backend's open-vocabulary detector (Grounding DINO; `costa doctor` says what it needs)"
    )
