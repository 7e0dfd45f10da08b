"""Offline rule planner: an English instruction → a validated `Plan`, with no LLM.

How it reads an instruction:

1. Quoted strings become opaque placeholders (`clauses.mask_quotes`), so quoted text is data and never triggers a rule.
2. Constraint clauses ("… and keep the trees unchanged", "without touching the dog", "but not the door") are cut
   out first (`keeps.read_constraints`); they bind the edits instead of being edits (`keeps.apply_keeps`: the kept
   object is located first and every edit lists it in `params["keep"]`).
3. The text is split into clauses on sentences, ";", ", and", "then", "also", "while" and "and" before a verb
   (`clauses.split_clauses`).
4. Each clause goes through the text rules, then the image rules; the first rule that applies gives its subtasks, or a
   reason it is not supported. A clause no rule recognises becomes an `Unsupported` entry.
5. "it" / "them" / "its" resolve to the previous clause's object: the new object after a replacement or addition,
   nothing after a removal (reported as unsupported). With no object named before, "it" means the region the user
   pointed at, or the whole image: target None ("recolor it to pink").
6. Parents link each subtask to the one it depends on: text edits chain in order, text reads follow the last text edit,
   an object subtask follows the last edit of the same object. `validate.validate_subtasks` then checks and reorders.

Limits, by design: instructions longer than `MAX_INSTRUCTION_CHARS` raise `InputError` (split them into turns); an
instruction with nothing editable gives a plan with no subtasks and an `Unsupported` entry saying so (and that only
English is read, when it looks like another language); two colours for one target raise `PlanningError` asking which.
Quoted or spelled-out text targets ("remove 'FREE'", "the word FREE") carry `params["literal"] = True`, so the text
tools match them letter by letter rather than as a kind of text ("the email", "the phone number").

>>> plan = plan_with_rules("Replace the truck with a car and make it red")
>>> [(s.id, s.kind, s.target, s.result, s.parents) for s in plan.subtasks]
[('s1', 'object_replacement', 'truck', 'car', ()), ('s2', 'object_recoloration', 'car', 'red', ('s1',))]
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import replace

from costa.errors import InputError
from costa.planner.clauses import Masked, mask_quotes, split_clauses
from costa.planner.conversational import is_bare_fix, rewrite_clause, rewrite_sentence
from costa.planner.coordination import plan_coordinated
from costa.planner.image_rules import IMAGE_RULES
from costa.planner.keeps import apply_keeps, read_constraints
from costa.planner.kinds import load_subtask_kinds
from costa.planner.phrases import ClauseContext, Draft
from costa.planner.text_rules import TEXT_RULES
from costa.planner.validate import OBJECT_KINDS, TEXT_EDIT_KINDS, TEXT_READ_KINDS, object_key, validate_subtasks
from costa.types import Plan, Subtask, Unsupported

#: Longest instruction the rule planner reads, in characters; longer ones raise `InputError` rather than being cut.
MAX_INSTRUCTION_CHARS = 2000
#: Start of the reason given when no subtask kind matches (the CLI turns a plan with no subtasks into an error).
NOTHING_RECOGNISED = "nothing editable was recognised"

_RULES = TEXT_RULES + IMAGE_RULES
_NO_ANTECEDENT = "'it'/'them' refers to an object removed earlier, which cannot be edited: name the object to edit"
_OBJECT_EDIT_KINDS = OBJECT_KINDS - {"object_detection", "object_segmentation"}


def plan_with_rules(instruction: str, kinds: Collection[str] | None = None) -> Plan:
    """Plan an English edit instruction with rules.

    Args:
        instruction: what the user typed, e.g. "remove the cat and make the wall yellow".
        kinds: subtask ids known to the tables; defaults to tool_tables/subtasks.yaml. Subtasks of other kinds are
            reported in `unsupported`.

    Returns:
        A validated chain plan (`planner="rules"`): ids s1, s2, … in execution order, parents pointing earlier, and
        `unsupported` entries for every part of the instruction no subtask kind covers.

    Raises:
        InputError: the instruction is not a string, is empty, or is longer than `MAX_INSTRUCTION_CHARS`.
        PlanningError: the instruction contradicts itself ("make the wall red and blue").
    """
    if not isinstance(instruction, str):
        raise InputError(f"the instruction must be text, got {type(instruction).__name__}")
    text = instruction.strip()
    if not text:
        raise InputError("empty instruction")
    if len(text) > MAX_INSTRUCTION_CHARS:
        raise InputError(
            f"instruction is {len(text)} characters; the planner reads at most {MAX_INSTRUCTION_CHARS}: "
            "split it into several turns"
        )
    known = frozenset(kinds) if kinds is not None else load_subtask_kinds()
    masked = mask_quotes(text)
    body, kept = read_constraints(masked.text)  # "… and keep the trees unchanged": binds the edits, not an edit
    masked = Masked(rewrite_sentence(body), masked.quotes)
    drafts: list[Draft] = []
    unsupported: list[Unsupported] = []
    # What "it" means now: None before any object clause (then "it" is the region the user pointed at, or the whole
    # image: target None); [] after a removal (a removed object cannot be edited); else the objects last named.
    referents: list[str] | None = None
    stated = False  # the previous clause stated a problem ("the photo is blurry"): a bare "fix it" adds nothing
    for clause in split_clauses(masked.text):
        if stated and is_bare_fix(clause.text):
            continue
        context = ClauseContext(masked, clause.text, clause.question, known, clause.purpose)
        outcome = _plan_clause(context)
        rewrite = rewrite_clause(clause.text)
        stated = rewrite is not None and rewrite.statement
        if isinstance(outcome, Unsupported):
            unsupported.append(outcome)
            continue
        resolved: list[Draft] = []
        for draft in outcome:
            if not draft.pronoun:
                resolved.append(draft)
            elif referents:
                resolved += [replace(draft, target=r, pronoun=False) for r in referents]
            elif draft.kind == "object_addition":
                resolved.append(replace(draft, params={}, pronoun=False))  # "add a hat to it": anywhere will do
            elif referents is None:
                resolved.append(replace(draft, target=None, pronoun=False))
            else:
                unsupported.append(context.unsupported(_NO_ANTECEDENT))
        objects = [d for d in resolved if d.kind in OBJECT_KINDS]
        named = [r for r in (d.referent for d in objects) if r]
        if named:
            referents = named
        elif any(d.kind == "object_removal" for d in objects):
            referents = []
        drafts += resolved
    bound, unkept = apply_keeps(merge_drafts(drafts), kept, known, text)
    subtasks, dropped = validate_subtasks(_link(bound), known)
    unsupported += [*unkept, *dropped]
    if not subtasks and not unsupported:
        unsupported.append(Unsupported(text=text, reason=f"{NOTHING_RECOGNISED} in the instruction"))
    if not subtasks and looks_non_english(text):
        unsupported = [Unsupported(text=text, reason=NOT_ENGLISH)]
    return Plan(instruction=text, subtasks=subtasks, form="chain", unsupported=tuple(unsupported), planner="rules")


#: Reason given when an instruction with nothing planned looks like another language than English.
NOT_ENGLISH = (
    f"{NOTHING_RECOGNISED}: the offline planner reads English instructions only and this looks like another "
    "language; rephrase it in English, or configure an LLM endpoint (OPENAI_BASE_URL, COSTA_LLM_MODEL) to plan it"
)


def _word_set(*groups: str) -> frozenset[str]:
    return frozenset(word for group in groups for word in group.split())


# Frequent function words of other languages written in Latin script that are not English words.
_FOREIGN_WORDS = _word_set(
    "der das und bitte eine einen entferne mache ändere füge ersetze nicht mit auf vom zum",
    "les et une des est dans avec pour sur supprime enlève remplace ajoute mets",
    "el los las una por favor quita elimina cambia añade reemplaza pon del",
    "il gli che di della rimuovi aggiungi sostituisci",
    "het een van niet verwijder voeg maak",
    "os um uma não remova adicione troque",
)
_ENGLISH_WORDS = _word_set("the a an and to of it in on with please make remove add change replace")


def looks_non_english(text: str) -> bool:
    """True when `text` is mostly in a non-Latin script, or uses other languages' function words and no English ones.

    >>> looks_non_english("Entferne die Katze"), looks_non_english("把猫去掉"), looks_non_english("remove the cat")
    (True, True, False)
    """
    letters = [ch for ch in text if ch.isalpha()]
    if letters and sum(not ch.isascii() for ch in letters) / len(letters) > 0.3:
        return True
    words = re.findall(r"[^\W\d_]+", text.casefold())
    return any(w in _FOREIGN_WORDS for w in words) and not any(w in _ENGLISH_WORDS for w in words)


def _plan_clause(context: ClauseContext) -> list[Draft] | Unsupported:
    """Plan one clause: as written, or in the rules' words when it is a wish, a problem or a phrasal verb
    (`conversational.rewrite_clause`); an `Unsupported` is reported in the user's words."""
    rewrite = rewrite_clause(context.text)
    if rewrite is not None:
        said = replace(context, text=rewrite.text)
        outcome = plan_coordinated(said, _apply_rules) or _apply_rules(said)
        if not isinstance(outcome, Unsupported):
            return outcome
    outcome = plan_coordinated(context, _apply_rules) or _apply_rules(context)
    return outcome


def merge_drafts(drafts: list[Draft]) -> list[Draft]:
    """Fold what one request said twice: "keep only the dog and make the background white" is one background
    removal (the subject from one clause, the fill from the other); "the image is too dark, lighten it" one
    brightening (identical neighbours); "keep the cat sharp and blur the rest" one background blur."""
    out: list[Draft] = []
    for d in drafts:
        last = out[-1] if out else None
        if last is not None and d == last:
            continue
        keeps_subject = d.kind in ("background_removal", "background_blur")  # "keep the cat sharp and blur the rest"
        if last is not None and keeps_subject and d.kind == last.kind and not (d.target and last.target):
            out[-1] = replace(last, target=last.target or d.target, params={**last.params, **d.params})
            continue
        out.append(d)
    return out


def _apply_rules(context: ClauseContext) -> list[Draft] | Unsupported:
    outcome = _first_rule(context)
    if outcome is None and (rephrased := _rephrase(context.text)) is not None:
        outcome = _first_rule(replace(context, text=rephrased))
        if isinstance(outcome, Unsupported):
            outcome = context.unsupported(outcome.reason)  # report it in the user's words, not the rephrasing
    return outcome or context.unsupported(f"{NOTHING_RECOGNISED} (no subtask kind matches this request)")


def _first_rule(context: ClauseContext) -> list[Draft] | Unsupported | None:
    for rule in _RULES:
        outcome = rule(context)
        if outcome is not None:
            return outcome
    return None


# Passive and "let …" phrasings (common in MagicBrush) → the imperative the rules read, tried once when no rule
# matched the clause as written.
_REPHRASINGS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), template)
    for pattern, template in (
        (r"(?:let|have)\s+(?P<x>.+?)\s+be\s+replaced\s+(?:with|by)\s+(?P<y>.+)", "replace {x} with {y}"),
        (
            r"(?P<x>.+?)\s+(?:is|are|should\s+be|must\s+be|gets?)\s+replaced\s+(?:with|by)\s+(?P<y>.+)",
            "replace {x} with {y}",
        ),
        (r"(?:let|have)\s+(?P<x>.+?)\s+be\s+removed", "remove {x}"),
        (r"(?P<x>.+?)\s+(?:is|are|should\s+be|must\s+be)\s+removed", "remove {x}"),
        (r"(?:let|have)\s+(?P<x>.+?)\s+(?:have|wear|hold|get)\s+(?P<y>(?:a|an|some)\s+.+)", "give {x} {y}"),
        (r"(?:let|have)\s+(?P<x>.+?)\s+(?:be|become|turn)\s+(?P<y>.+)", "make {x} {y}"),
        (r"(?P<x>.+?)\s+(?:should|must)\s+(?:be|become|look)\s+(?P<y>.+)", "make {x} {y}"),
    )
)


def _rephrase(text: str) -> str | None:
    for pattern, template in _REPHRASINGS:
        m = pattern.fullmatch(text)
        if m:
            return template.format(**m.groupdict())
    return None


def _link(drafts: list[Draft]) -> list[Subtask]:
    """Number the drafts s1… and give each the parent it depends on."""
    subtasks: list[Subtask] = []
    last_text_edit: str | None = None
    edited: list[tuple[str, set[str]]] = []  # (id, object keys) of subtasks that changed an object
    for k, d in enumerate(drafts, start=1):
        sid = f"s{k}"
        parents: tuple[str, ...] = ()
        if d.kind in TEXT_EDIT_KINDS or d.kind in TEXT_READ_KINDS:
            parents = (last_text_edit,) if last_text_edit else ()
        elif d.kind in OBJECT_KINDS and d.target:
            key = object_key(d.target)
            parents = next(((pid,) for pid, keys in reversed(edited) if key in keys), ())
        if d.kind in TEXT_EDIT_KINDS:
            last_text_edit = sid
        if d.kind in _OBJECT_EDIT_KINDS:
            edited.append((sid, {object_key(d.target), object_key(d.result)} - {""}))
        subtasks.append(
            Subtask(id=sid, kind=d.kind, target=d.target, result=d.result, params=dict(d.params), parents=parents)
        )
    return subtasks
