"""Coordinated edits of one kind in one clause: "recolour A to x and B to y", "remove both the cup of coffee and the
pair of glasses", "add a lamp and a plant to the desk".

The clause is cut at "and", "," and "as well as"; the first conjunct's verb is lent to the others ("recolour B to y")
and every conjunct is planned by the rules on its own. The cut is kept only when every conjunct plans to subtasks of
one kind with a real target, and either each conjunct has its own result (a colour, a replacement, new text), or the
kind has no result and the conjunction is explicit ("both … and", "as well as") or each later conjunct starts with a
definite determiner or a quote ("the man with the hat and the woman in red"). Otherwise the clause is planned whole,
so "recolour the car to red and blue" is still a contradiction and "replace the dog with a cat and a bird" one
replacement.

>>> split_conjuncts("recolour the mug to yellow and the plate to green")
('recolour', ['recolour the mug to yellow', 'the plate to green'], False)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from costa.planner.clauses import QUOTE
from costa.planner.lexicon import PROPERTIES
from costa.planner.phrases import ClauseContext, Draft
from costa.types import Unsupported

#: Kinds whose subtasks carry no result, so a conjunct cannot show by a result of its own that it is complete.
_NO_RESULT_KINDS = frozenset(
    {
        "object_removal",
        "object_detection",
        "object_segmentation",
        "background_removal",
        "background_blur",
        "privacy_blur",
        "text_removal",
        "text_redaction",
        "keyword_highlighting",
        "text_detection",
    }
)
_CUT = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s+as\s+well\s+as\s+|\s*&\s*", re.IGNORECASE)
_EXPLICIT = re.compile(r"\bboth\b|\bas\s+well\s+as\b", re.IGNORECASE)
_OBJECT_START = re.compile(
    r"(?<![\w\ue001])(?:both\s+|all\s+)?(?:the|a|an|this|that|these|those|his|her|their|its|my|your|our|some|each|every|"
    + QUOTE
    + r")(?:\s|$|(?<=\ue001))",
    re.IGNORECASE,
)
_DEFINITE = re.compile(r"(?:the|this|that|these|those|his|her|their|its|my|your|our)\s|" + QUOTE, re.IGNORECASE)
_INDEFINITE = re.compile(
    r"(?:a|an|some|another|one|two|three|four|five|six|several|many|more|few|a\s+few|a\s+couple\s+of)\s", re.IGNORECASE
)
_MODIFIED = re.compile(r"\b(?:wearing|holding|carrying|with|having|dressed|riding|playing|eating)\b", re.IGNORECASE)
_BARE_DETERMINER = re.compile(r"(?:the|a|an|this|that|both|all|some)", re.IGNORECASE)

Apply = Callable[[ClauseContext], "list[Draft] | Unsupported"]


def split_conjuncts(text: str) -> tuple[str, list[str], bool] | None:
    """The verb, the conjuncts and whether the conjunction was explicit; None when the clause has no conjunction or
    no verb before its first object."""
    parts = [p for p in _CUT.split(text) if p and p.strip()]
    if len(parts) < 2:
        return None
    m = _OBJECT_START.search(parts[0])
    if m is None and len(parts[0].split()) >= 2:
        verb = parts[0].split()[0]  # "add people and a boat": a bare plural after the verb
    elif m is None or m.start() == 0:
        return None
    else:
        verb = parts[0][: m.start()].strip()
    if not verb:
        return None
    return verb, parts, bool(_EXPLICIT.search(text))


def plan_coordinated(context: ClauseContext, apply: Apply) -> list[Draft] | None:
    """Plan the clause as coordinated same-kind edits, or None when it is not one (see the module docstring).

    Args:
        context: the clause.
        apply: the rule planner for one clause (drafts, or an `Unsupported`).
    """
    split = split_conjuncts(context.text)
    if split is None:
        return None
    verb, parts, explicit = split
    texts = [parts[0]] + [p if p.lower().startswith(verb.lower() + " ") else f"{verb} {p}" for p in parts[1:]]
    outcomes = []
    for text in texts:
        outcome = apply(replace(context, text=text))
        if isinstance(outcome, Unsupported) or not outcome:
            return None
        outcomes.append(outcome)
    kinds = {d.kind for o in outcomes for d in o}
    if len(kinds) != 1:
        return None
    kind = next(iter(kinds))
    drafts = [d for o in outcomes for d in o]
    if any(d.target is not None and (_BARE_DETERMINER.fullmatch(d.target) or d.target in PROPERTIES) for d in drafts):
        return None  # "adjust the number and arrangement of the snacks": the conjuncts are properties, not objects
    if kind in ("attribute_edit", "object_move") and any(d.target is None and not d.pronoun for d in drafts):
        return None
    if kind in _NO_RESULT_KINDS:
        if not explicit and not all(_DEFINITE.match(p.strip()) for p in parts[1:]):
            return None
        return drafts
    if any(d.result is None for d in drafts):
        return None
    if kind == "object_addition":
        # "add a person wearing a white shirt and striped apron" is one person: later conjuncts must be new things
        # ("a boat", "two chairs") and the first must not be still describing its object
        if _MODIFIED.search(parts[0]) or not all(_INDEFINITE.match(p.strip()) for p in parts[1:]):
            return None
        return _share_anchor(drafts)
    return drafts


def _share_anchor(drafts: list[Draft]) -> list[Draft]:
    """ "add a lamp and a plant to the desk": the last conjunct's place is every conjunct's place."""
    last = drafts[-1]
    if last.target is None and not last.params:
        return drafts
    return [replace(d, target=last.target, params=dict(last.params), pronoun=last.pronoun) if d.target is None and not
            d.params else d for d in drafts]  # fmt: skip
