"""Constraint clauses: "keep X unchanged", "without touching X", "but not X", "leave X alone" say what must NOT change.

A constraint is not an edit of its own: it binds every edit of the instruction. `read_constraints` cuts each one
out of the (quote-masked) text before it is split into clauses and returns the kept things; `apply_keeps` then binds
them to the planned edits:

- a kept object ("the trees") is located first, by an `object_segmentation` subtask with `params["role"] = "keep"`,
  and every edit lists it in `params["keep"]`; the turn carries its mask as the `kept` artifact, every tool output
  puts those pixels back as they were and the edit's check verifies they did not change (`costa.constraints`);
- a kept background or surroundings ("keeping the background sharp") needs no locating: it is everything outside
  a regional edit's target, which that edit's unchanged-outside check already verifies; it is listed in `keep`;
- "without changing anything else" / "the rest should stay as it is" is what every edit's check asks anyway: noted
  nowhere, planned as the edit alone;
- a constraint that cannot be honoured is reported as an `Unsupported` part, never dropped: a kept background with
  an edit of the whole image, a kept object with an edit that resizes or re-renders the image, a thing both edited
  and kept.

A "keep X sharp" next to a blur is the subject of a background blur (`canvas_rules`), and "keep only X" a background
removal: neither is a constraint.

>>> text, kept = read_constraints("make the sky blue and keep the trees unchanged")
>>> text, [k.target for k in kept]
('make the sky blue', ['trees'])
>>> read_constraints("Without touching the windows, paint the house grey.")[0]
'paint the house grey.'
>>> [k.target for k in read_constraints("remove the bin, leave the bike and the lamp post alone")[1]]
['bike', 'lamp post']
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from costa.planner.clauses import QUOTE
from costa.planner.phrases import Draft
from costa.tables import KindSet
from costa.types import Unsupported

#: Kinds whose result changes the image's size; with `_REDRAWN`, those after which no pixel stays where it was, so a
#: kept region cannot be put back or compared.
_RESIZING_KINDS = KindSet("resizes")
_REDRAWN = frozenset({"viewpoint_change"})
#: Kinds that edit the whole image when they have no target (a kept background cannot be outside them), with the
#: regional-or-global ones that do too without a target.
_WHOLE_IMAGE_KINDS = KindSet("whole_image")
_GLOBAL_WITHOUT_TARGET = frozenset({"global_adjustment", "image_deblurring"})
#: Kinds that change pixels (the edits a constraint binds).
_EDIT_KINDS = KindSet("edits_image")

_STATE = (
    r"(?:unchanged|untouched|intact|alone|unaltered|unedited|unmodified|original|in\s+place|as\s+is|"
    r"(?:exactly\s+)?(?:as|the\s+way)\s+(?:it|they|he|she|that|this)\s+(?:is|are|was|were|looks?)|"
    r"(?:exactly\s+)?the\s+same|(?:exactly\s+)?as\s+before|as\s+it\s+is\s+now|sharp|crisp|in\s+(?:sharp\s+)?focus|"
    r"clear|clean|untouched\s+by\s+it|how\s+(?:it|they)\s+(?:is|are))"
)
_STATE_TAIL = re.compile(
    rf"\s+(?:(?:stays?|remains?|is|are|will\s+(?:stay|remain|be)|looks?|should\s+(?:stay|remain|be))\s+)?{_STATE}$",
    re.IGNORECASE,
)
_KEEP_VERB = r"(?:keep(?:ing)?|leav(?:e|ing)|preserv(?:e|ing)|maintain(?:ing)?|retain(?:ing)?|protect(?:ing)?)"
_PROTECT_VERB = re.compile(r"^(?:preserv|maintain|retain|protect)", re.IGNORECASE)
_TOUCH_VERB = (
    r"(?:touch|chang|alter|affect|modif|edit|mess(?:ing)?\s+with|disturb|harm|damag|recolou?r|brighten|darken|blur)"
    r"[a-z]*"
)
_NEGATION = r"(?:do\s+not|don'?t|doesn'?t|never|without|but\s+not|and\s+not|not)"
_LEAD = (
    r"(?P<lead>^|\s*[,;]\s*(?:and\s+|but\s+|while\s+|whilst\s+)?|\s+(?:and|but|while|whilst|yet)\s+"
    r"|\s+(?=without\s))"
)
_FORMS = re.compile(
    _LEAD
    + r"(?:also\s+|please\s+|just\s+)?"
    + r"(?:(?P<neg>"
    + _NEGATION
    + r"\s+"
    + _TOUCH_VERB
    + r")\s+"
    + r"|(?P<sure>(?:mak(?:e|ing)|be|being)\s+sure\s+(?:that\s+)?|ensur(?:e|ing)\s+(?:that\s+)?)"
    + rf"|(?P<keep>{_KEEP_VERB})\s+(?!(?:only|just|nothing|but)\b)"
    + r"|(?P<not>not)\s+(?=(?:the|a|an|his|her|its|their|my|our|your|any|this|that|these|those)\b))",
    re.IGNORECASE,
)
# Where a constraint's object ends: a comma, a semicolon, "and"/"then" before a new request, or the end.
_VERB_NEXT = (
    r"(?:remove|erase|delete|replace|recolou?r|add|make|paint|turn|change|brighten|darken|blur|sharpen|swap|put|"
    r"give|write|crop|move|lighten|colou?r|insert|upscale|extend|highlight|then)\b"
)
_END = re.compile(rf"\s*[,;]\s*|\s+(?:and\s+)?then\b|\s+and\s+(?={_VERB_NEXT})|\s+but\s+|$", re.IGNORECASE)
# A whole clause that says something stays as it is: "the rest should stay as it is".
_STAYS = re.compile(
    rf"^(?P<x>.+?)\s+(?:should|must|has\s+to|have\s+to|needs?\s+to|will|can)\s+(?:stay|remain|be\s+left|be\s+kept)\s+"
    rf"{_STATE}$",
    re.IGNORECASE,
)
_BLUR_WORDS = re.compile(r"\b(?:blur\w*|bokeh|defocus\w*|out\s+of\s+focus|portrait|soft(?:en)?)\b", re.IGNORECASE)
_SHARP_STATE = re.compile(r"\s(?:sharp|crisp|in\s+(?:sharp\s+)?focus)$", re.IGNORECASE)
_DETERMINER = re.compile(
    r"^(?:(?:all|both|any|each|every|none)\s+(?:of\s+)?)?(?:the|a|an|my|our|your|his|her|its|their|this|that|these|"
    r"those)\s+",
    re.IGNORECASE,
)
#: What every edit keeps anyway: the rest of the image outside its target.
_REST = re.compile(
    r"^(?:anything|everything|all|the\s+rest|rest)(?:\s+(?:else|of\s+(?:it|the\s+(?:image|photo|picture|scene))))?$|"
    r"^(?:the\s+)?other\s+(?:things|parts|stuff)$|^(?:the\s+)?rest\s+of\s+(?:it|the\s+(?:image|photo|picture|scene))$",
    re.IGNORECASE,
)
_BACKGROUND = re.compile(r"^(?:the\s+)?(?:background|backdrop|surroundings|setting|scene\s+behind)$", re.IGNORECASE)


@dataclass(frozen=True)
class Keep:
    """One thing a constraint keeps: its name as written (articles dropped), and whether it is the background
    (everything outside the edit's target)."""

    target: str
    background: bool = False


def read_constraints(masked_text: str) -> tuple[str, list[Keep]]:
    """Cut every constraint out of `masked_text`; return the rest and the kept things, in order written.

    Args:
        masked_text: the instruction with quotes masked (`clauses.mask_quotes`).

    Returns:
        The text without its constraints (the sentences' separators kept) and what they keep; "anything else" /
        "the rest" keep nothing extra (every edit keeps the outside of its target).
    """
    parts = re.split(r"((?<=[.!?])\s+|[;\n]+\s*)", masked_text)
    kept: list[Keep] = []
    out: list[str] = []
    for k, part in enumerate(parts):
        if k % 2:
            out.append(part)
            continue
        text, keeps = _sentence_constraints(part)
        kept += [x for x in keeps if x not in kept]
        out.append(text)
    return "".join(out).strip(" ,;"), kept


def _sentence_constraints(sentence: str) -> tuple[str, list[Keep]]:
    m = _STAYS.match(sentence.strip().rstrip(".!"))
    if m:
        return "", _things(m.group("x"))
    kept: list[Keep] = []
    text = sentence
    start = 0
    while True:
        found = _next_constraint(text, start)
        if found is None:
            return text, kept
        begin, end, things = found
        kept += things
        cut = text[:begin].rstrip(" ,")
        rest = text[end:]
        if not cut.strip():  # a leading constraint ("Without touching the windows, paint …")
            rest = re.sub(r"^\s*(?:,\s*)?", "", rest)
        elif rest and not re.match(r"\s*[.!?]?\s*$", rest):
            rest = (", " if not re.match(r"\s*[,;]", rest) else "") + rest.lstrip()
        text = cut + rest
        start = len(cut)


def _next_constraint(text: str, start: int) -> tuple[int, int, list[Keep]] | None:
    """(start, end, kept things) of the first constraint at or after `start`, or None."""
    for m in _FORMS.finditer(text, start):
        if m.group("lead").strip() == "" and m.start() > 0 and m.group("not"):
            continue  # "not" alone: only "but not X" / ", not X"
        if m.group("not") and not re.search(r"(?:but|,)\s*$", text[: m.start("not")]):
            continue
        span_start = m.end()
        e = _END.search(text, span_start)
        end = e.start() if e else len(text)
        phrase = text[span_start:end].strip()
        if not phrase or re.search(QUOTE, phrase):
            continue
        things = _constraint_things(m, phrase, text)
        if things is None:
            continue
        return m.start(), end, things
    return None


def _constraint_things(m: re.Match[str], phrase: str, sentence: str) -> list[Keep] | None:
    """What the constraint `m` over `phrase` keeps, or None when it is not a constraint after all."""
    if m.group("sure"):
        tail = _STATE_TAIL.search(phrase)
        return _things(phrase[: tail.start()]) if tail else None
    if m.group("keep"):
        tail = _STATE_TAIL.search(phrase)
        if tail is not None and _SHARP_STATE.search(phrase) and _BLUR_WORDS.search(sentence):
            return None  # "keep the cat sharp and blur the rest": the subject of a background blur
        if tail is None:
            plain_ok = _PROTECT_VERB.match(m.group("keep")) or m.group("lead").strip(" ,").lower() in ("but", "while")
            if not plain_ok or re.search(r"\bonly\b|\bjust\b", phrase, re.IGNORECASE):
                return None
            return _things(phrase)
        return _things(phrase[: tail.start()])
    return _things(_STATE_TAIL.sub("", phrase))


def _things(phrase: str) -> list[Keep]:
    """The kept things a noun phrase names: "the bike and the lamp post" → bike, lamp post; "the rest" → none."""
    out: list[Keep] = []
    for part in re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|nor)\s+", phrase.strip(" .")):
        part = part.strip()
        if not part or _REST.match(part):
            continue
        name = _DETERMINER.sub("", part).strip()
        if name:
            out.append(Keep(name, bool(_BACKGROUND.match(part))))
    return out


def apply_keeps(
    drafts: Sequence[Draft], kept: Sequence[Keep], known: Collection[str], where: str
) -> tuple[list[Draft], list[Unsupported]]:
    """Bind the kept things to the planned edits (see the module docstring).

    Args:
        drafts: the instruction's planned drafts, in order.
        kept: what its constraints keep (`read_constraints`).
        known: the subtask kinds the tables have.
        where: the instruction as written, for the unsupported parts.

    Returns:
        The drafts with a locating `object_segmentation` per kept object first and every edit's `params["keep"]`,
        and the constraints that cannot be honoured, each with its reason.
    """
    edits = [d for d in drafts if d.kind in _EDIT_KINDS]
    if not kept or not edits:
        return list(drafts), []
    problems: list[Unsupported] = []
    usable: list[Keep] = []
    for k in kept:
        why = _why_not(k, edits, known)
        if why is None:
            usable.append(k)
        else:
            problems.append(Unsupported(text=f"{where} (keep {k.target})", reason=why))
    if not usable:
        return list(drafts), problems
    names = [k.target for k in usable]
    locate = [Draft("object_segmentation", k.target, None, {"role": "keep"}) for k in usable if not k.background]
    bound = [replace(d, params={**d.params, "keep": names}) if d.kind in _EDIT_KINDS else d for d in drafts]
    return locate + bound, problems


def _why_not(k: Keep, edits: Sequence[Draft], known: Collection[str]) -> str | None:
    """Why the kept thing `k` cannot be honoured with these edits, or None when it can."""
    from costa.planner.validate import object_key

    what = "the background" if k.background else f"the {k.target}"
    for d in edits:
        if d.kind in _RESIZING_KINDS or d.kind in _REDRAWN:
            return f"cannot keep {what} as it is while the image is resized or redrawn ({d.kind}): do it in two turns"
        if d.target and object_key(d.target) == object_key(k.target):
            return f"{what} is both edited and kept as it is: say which one"
        whole = d.kind in _WHOLE_IMAGE_KINDS or d.kind in _GLOBAL_WITHOUT_TARGET
        if k.background and whole and not d.target:
            return f"cannot keep {what} as it is: {d.kind} changes the whole image; name the thing to change"
    if not k.background and "object_segmentation" not in known:
        return f"cannot check that {what} stays as it is: no subtask kind locates it (object_segmentation)"
    return None
