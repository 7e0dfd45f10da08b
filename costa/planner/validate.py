"""Validate and reorder a plan: the constraints every planner's output must meet, rule-based or LLM.

Rules applied, in this order:

1. Ids are unique and every parent names a subtask of the plan (else `PlanningError`); parents may point forward here,
   since reordering follows.
2. A subtask whose kind is not in the tables moves to `unsupported` with the reason; its children inherit its parents.
3. One target per object subtask: "car and the bus" becomes two subtasks (see `split_targets`).
4. Duplicates (same kind, target, result and params) merge into the first; references follow.
5. Contradictory edits of one target (recolour the wall red and blue; brighter and darker) raise `PlanningError`
   asking which one.
6. Dependencies are added: an object subtask whose target a replacement or addition creates gets that subtask as
   parent; text detection and extraction read the text after every text edit (parent: the last text edit before
   them once sorted).
7. Analysis runs on the photo's own pixels (IMAGAgent's dependency ordering): a subtask that only looks at the image
   (detection, segmentation, reading, captioning…: `edits_image` false) comes before every subtask that paints
   pixels the photo never had (`invents`: outpainting, removal fills, generated objects), unless the plan or the
   rules above order it after one, or its target asks about the new content ("the person in the extended part").
   CoSTA*'s sample 40 once extended the canvas first and HOG then "detected a person" in the invented margin.
8. Subtasks are sorted topologically, outpainting first among those free to run, otherwise in the order given; ids
   become s1, s2, … and every parent points earlier.

>>> from costa.types import Plan, Subtask
>>> plan = Plan(subtasks=(
...     Subtask(id="a", kind="object_recoloration", target="car and the bus", result="red"),
...     Subtask(id="b", kind="outpainting"),
... ))
>>> [s.describe() for s in validate_plan(plan, {"object_recoloration", "outpainting"}).subtasks]
['outpainting', "object_recoloration target='car' result='red'", "object_recoloration target='bus' result='red'"]
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from costa.errors import PlanningError
from costa.tables import KindSet, Tables
from costa.types import Plan, Subtask, Unsupported

#: Kinds whose target is an object noun (split into one subtask per object; linked to the edit that creates it).
OBJECT_KINDS = KindSet("target", "object")
#: Kinds whose `result` names an object that exists only after they run.
CREATING_KINDS = KindSet("creates")
#: Kinds that change the text in the image; chained in the order written.
TEXT_EDIT_KINDS = KindSet("edits_text")
#: Kinds that read the text and so run after every text edit.
TEXT_READ_KINDS = KindSet("reads_text")
#: Kinds that run before everything else (they change the canvas every later edit works on).
FIRST_KINDS = KindSet("runs_first")
#: Kinds that paint pixels the photo never had; analysis runs before them.
INVENTING_KINDS = KindSet("invents")
#: Kinds that only look at the image.
ANALYSIS_KINDS = KindSet("edits_image", False)
#: Kinds where two different results for one target contradict each other.
_EXCLUSIVE_KINDS = KindSet("exclusive")
#: Global adjustments that undo each other.
_OPPOSITES: dict[str, str] = {
    "brighter": "darker",
    "more contrast": "less contrast",
    "more saturated": "less saturated",
    "warmer": "cooler",
}
_OPPOSITES.update({v: k for k, v in _OPPOSITES.items()})

_ARTICLE = re.compile(r"^(?:the|a|an|this|that|these|those|his|her|their|its|my|your|our)\s+", re.IGNORECASE)
_TARGET_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+)?|\s+(?:and|&)\s+|\s*&\s*", re.IGNORECASE)
# An "and" inside a modifier ("the man wearing a hat and a scarf") does not separate targets.
_MODIFIER = re.compile(r"\b(?:with|wearing|holding|carrying|having|in|of|on|from|near|between)\b", re.IGNORECASE)


def object_key(text: str | None) -> str:
    """A comparison key for object nouns: lower case, no leading article, crude singular ("the Cars" → "car")."""
    if not text:
        return ""
    key = _ARTICLE.sub("", " ".join(text.casefold().split()))
    if len(key) > 3 and key.endswith("s") and not key.endswith("ss"):
        key = key[:-1]
    return key


def split_targets(target: str) -> list[str]:
    """Split "car and the bus" / "cat, the dog and the bird" into one noun each; leave "salt and pepper" whole.

    A list is split only when every item after the first starts with an article or determiner and no item but the last
    carries a modifier ("with", "wearing", "in", …), where an "and" is usually part of the description.

    >>> split_targets("car and the bus")
    ['car', 'bus']
    >>> split_targets("man wearing a hat and a scarf")
    ['man wearing a hat and a scarf']
    """
    parts = [p for p in _TARGET_SEPARATOR.split(target.strip()) if p]
    if len(parts) < 2:
        return [target.strip()]
    if not all(_ARTICLE.match(p) for p in parts[1:]) or any(_MODIFIER.search(p) for p in parts[:-1]):
        return [target.strip()]
    return [_ARTICLE.sub("", p).strip() for p in parts]


def validate_plan(plan: Plan, kinds: Collection[str]) -> Plan:
    """Return `plan` with the rules in this module's docstring applied.

    Args:
        plan: a plan from any planner.
        kinds: the subtask ids known to the tables.

    Returns:
        A new plan: known kinds only, one target each, no duplicates, ordered, ids s1… with earlier parents.

    Raises:
        PlanningError: duplicate ids, unknown parents, a dependency cycle, or contradictory edits of one target.
    """
    subtasks, unsupported = validate_subtasks(plan.subtasks, kinds)
    return Plan(
        instruction=plan.instruction,
        subtasks=subtasks,
        form=plan.form,
        unsupported=plan.unsupported + unsupported,
        planner=plan.planner,
    )


def validate_subtasks(
    subtasks: Sequence[Subtask], kinds: Collection[str]
) -> tuple[tuple[Subtask, ...], tuple[Unsupported, ...]]:
    """Apply the validation rules to raw subtasks whose parents may point forward (e.g. parsed LLM output).

    Returns:
        The validated subtasks (ids s1…) and the parts moved to unsupported.

    Raises:
        PlanningError: as `validate_plan`.
    """
    items = [_Item(s.id, s.kind, s.target, s.result, dict(s.params), list(s.parents)) for s in subtasks]
    _check_ids(items)
    items, unsupported = _drop_unknown_kinds(items, frozenset(kinds))
    items = _split_object_targets(items)
    items = _merge_duplicates(items)
    _check_params(items)
    _check_contradictions(items)
    ordering = _add_dependencies(items)
    ordered = _topological_order(items, ordering)
    _link_text_reads(ordered)
    return _renumber(ordered), tuple(unsupported)


@dataclass
class _Item:
    """A mutable working copy of a subtask while the rules rewrite the plan."""

    id: str
    kind: str
    target: str | None
    result: str | None
    params: dict[str, Any]
    parents: list[str]

    def describe(self) -> str:
        return Subtask(id=self.id, kind=self.kind, target=self.target, result=self.result).describe()


def _check_ids(items: list[_Item]) -> None:
    ids = [it.id for it in items]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise PlanningError(f"the plan repeats subtask ids {dupes}")
    known = set(ids)
    for it in items:
        bad = [p for p in it.parents if p not in known or p == it.id]
        if bad:
            raise PlanningError(f"subtask {it.id!r} ({it.describe()}) has parents {bad} that are not other subtasks")


def _replace_parent(items: Iterable[_Item], old: str, new: Sequence[str]) -> None:
    for it in items:
        if old in it.parents:
            merged = [p for p in it.parents if p != old]
            merged += [p for p in new if p not in merged and p != it.id]
            it.parents = merged


def _drop_unknown_kinds(items: list[_Item], kinds: frozenset[str]) -> tuple[list[_Item], list[Unsupported]]:
    kept: list[_Item] = []
    unsupported: list[Unsupported] = []
    for it in items:
        if it.kind in kinds:
            kept.append(it)
            continue
        unsupported.append(Unsupported(text=it.describe(), reason=f"{it.kind!r} is not a subtask kind in the tables"))
        _replace_parent(items, it.id, it.parents)
    return kept, unsupported


def _split_object_targets(items: list[_Item]) -> list[_Item]:
    out: list[_Item] = []
    for it in items:
        targets = split_targets(it.target) if it.kind in OBJECT_KINDS and it.target else [it.target]
        if len(targets) == 1:
            out.append(it)
            continue
        copies = [
            _Item(f"{it.id}#{k}" if k else it.id, it.kind, t, it.result, dict(it.params), list(it.parents))
            for k, t in enumerate(targets)
        ]
        _replace_parent(items, it.id, [c.id for c in copies])
        out.extend(copies)
    return out


def _merge_duplicates(items: list[_Item]) -> list[_Item]:
    first: dict[tuple[str, str, str, str], _Item] = {}
    out: list[_Item] = []
    for it in items:
        key = (it.kind, object_key(it.target), (it.result or "").casefold().strip(), repr(sorted(it.params.items())))
        kept = first.get(key)
        if kept is None:
            first[key] = it
            out.append(it)
            continue
        kept.parents += [p for p in it.parents if p not in kept.parents and p != kept.id]
        _replace_parent(items, it.id, [kept.id])
    return out


#: Directions an object move may name in params.direction (single words, or two such as "top left").
MOVE_DIRECTIONS = frozenset(
    {"left", "right", "up", "down", "center", "top", "bottom", "forward", "backward", "closer", "further", "away",
     "aside", "sideways", "foreground", "background"}
)  # fmt: skip


def _check_params(items: list[_Item]) -> None:
    """The params the new kinds' tools and checks read: an attribute edit names its attribute; a size change says
    larger or smaller and a positive scale; a move's direction is one costa knows."""
    for it in items:
        if it.kind == "attribute_edit":
            attribute = it.params.get("attribute")
            if not isinstance(attribute, str) or not attribute.strip():
                raise PlanningError(
                    f"subtask {it.id!r} ({it.describe()}) needs params.attribute (material, expression, pose, size…)"
                )
            if attribute == "size":
                scale = it.params.get("scale")
                if scale is not None and (isinstance(scale, bool) or not isinstance(scale, int | float) or scale <= 0):
                    raise PlanningError(f"subtask {it.id!r} has scale {scale!r}: it must be a positive number")
                if (it.result or "").strip().casefold() not in ("larger", "smaller"):
                    raise PlanningError(f"subtask {it.id!r} changes a size: its result must be 'larger' or 'smaller'")
                if scale is not None and (scale > 1) != ((it.result or "").strip().casefold() == "larger"):
                    raise PlanningError(f"subtask {it.id!r}: scale {scale} contradicts result {it.result!r}")
        elif it.kind == "object_move" and it.params.get("direction") is not None:
            direction = it.params["direction"]
            words = direction.split() if isinstance(direction, str) else []
            if not words or not set(words) <= MOVE_DIRECTIONS:
                raise PlanningError(
                    f"subtask {it.id!r} moves {it.target!r} in direction {direction!r}; use one or two of "
                    f"{sorted(MOVE_DIRECTIONS)} or give a place (relation and anchor) instead"
                )


def _check_contradictions(items: list[_Item]) -> None:
    seen: dict[tuple[str, str], _Item] = {}
    for it in items:
        target = object_key(it.target)
        result = (it.result or "").casefold().strip()
        if it.kind == "global_adjustment" and result in _OPPOSITES:
            other = seen.get((it.kind + ":" + _OPPOSITES[result], target))
            if other is not None:
                what = f"the {it.target}" if it.target else "the image"
                raise PlanningError(f"{what} cannot be both {other.result} and {it.result}: which one do you want?")
            seen[(it.kind + ":" + result, target)] = it
        if it.kind not in _EXCLUSIVE_KINDS:
            continue
        other = seen.get((it.kind, target))
        if other is not None and (other.result or "").casefold().strip() != result:
            raise PlanningError(contradiction_message(it.kind, it.target, other.result, it.result))
        seen[(it.kind, target)] = it


def contradiction_message(kind: str, target: str | None, first: str | None, second: str | None) -> str:
    """Ask the user to choose between two results for one target ("the wall cannot be both red and blue…")."""
    what = f"the {target}" if target else "the image"
    if kind == "object_recoloration":
        return f"{what} cannot be both {first} and {second}: which colour should it be?"
    if kind == "text_replacement":
        return f"the text {target!r} cannot become both {first!r} and {second!r}: which one do you want?"
    return f"{what} cannot become both {first} and {second}: which one do you want?"


def _ancestors(items: list[_Item]) -> dict[str, set[str]]:
    """Every subtask's ancestors through `parents` (iterative, so long chains do not hit the recursion limit)."""
    by_id = {it.id: it for it in items}
    memo: dict[str, set[str]] = {}
    for start in by_id:
        if start in memo:
            continue
        stack = [(start, iter(by_id[start].parents))]
        on_path = {start}
        while stack:
            node, pending = stack[-1]
            parent = next(pending, None)
            if parent is None:
                stack.pop()
                on_path.discard(node)
                memo[node] = {a for p in by_id[node].parents for a in ({p} | memo[p])}
            elif parent in on_path:
                raise PlanningError(f"the subtask parents form a cycle through {parent!r}")
            elif parent not in memo:
                on_path.add(parent)
                stack.append((parent, iter(by_id[parent].parents)))
    return memo


def _add_dependencies(items: list[_Item]) -> dict[str, set[str]]:
    """Add implied parents; return the ordering edges (child id → ids that must come before it)."""
    ancestors = _ancestors(items)
    creators = [it for it in items if it.kind in CREATING_KINDS and it.result]
    text_edits = [it for it in items if it.kind in TEXT_EDIT_KINDS]
    ordering: dict[str, set[str]] = {it.id: set(it.parents) for it in items}
    for it in items:
        if it.kind in OBJECT_KINDS and it.target:
            for c in creators:
                if c is not it and object_key(c.result) == object_key(it.target) and c.id not in ancestors[it.id]:
                    if it.id in ancestors[c.id]:
                        continue  # the plan says the other way round; respect it
                    it.parents.append(c.id)
                    ordering[it.id].add(c.id)
        if it.kind in TEXT_READ_KINDS:
            ordering[it.id] |= {e.id for e in text_edits if it.id not in ancestors[e.id]}
    _analysis_first(items, ordering)
    return ordering


def _must_follow(later: str, earlier: str, ordering: dict[str, set[str]]) -> bool:
    """Whether `ordering` (child → ids before it) already puts `earlier` before `later`, directly or through others."""
    seen, stack = set(), [later]
    while stack:
        for before in ordering[stack.pop()]:
            if before == earlier:
                return True
            if before not in seen:
                seen.add(before)
                stack.append(before)
    return False


def _analysis_first(items: list[_Item], ordering: dict[str, set[str]]) -> None:
    """Rule 7: each analysis subtask before every inventing one it is not already ordered after."""
    from costa.invented import asks_for_invented

    inventing = [it for it in items if it.kind in INVENTING_KINDS]
    for it in items:
        if it.kind not in ANALYSIS_KINDS or it.kind in INVENTING_KINDS:
            continue
        if asks_for_invented(Subtask(id=it.id, kind=it.kind, target=it.target, result=it.result)):
            continue
        for g in inventing:
            if g is not it and not _must_follow(it.id, g.id, ordering):
                ordering[g.id].add(it.id)


def _link_text_reads(ordered: list[_Item]) -> None:
    """Give each text read without a text-edit parent the last text edit before it (the edits are chained)."""
    edits = {it.id for it in ordered if it.kind in TEXT_EDIT_KINDS}
    last: str | None = None
    for it in ordered:
        if it.kind in TEXT_EDIT_KINDS:
            last = it.id
        elif it.kind in TEXT_READ_KINDS and last is not None and not edits & set(it.parents):
            it.parents.append(last)


def _topological_order(items: list[_Item], ordering: dict[str, set[str]]) -> list[_Item]:
    index = {it.id: k for k, it in enumerate(items)}
    waiting = {it.id: set(ordering[it.id]) for it in items}
    children: dict[str, list[str]] = {it.id: [] for it in items}
    for child, before in waiting.items():
        for b in before:
            children[b].append(child)
    heap = [(_rank(it), index[it.id], it.id) for it in items if not waiting[it.id]]
    heapq.heapify(heap)
    by_id = {it.id: it for it in items}
    out: list[_Item] = []
    while heap:
        _, _, i = heapq.heappop(heap)
        out.append(by_id[i])
        for c in children[i]:
            waiting[c].discard(i)
            if not waiting[c]:
                heapq.heappush(heap, (_rank(by_id[c]), index[c], c))
    if len(out) != len(items):
        stuck = sorted(set(by_id) - {it.id for it in out})
        raise PlanningError(f"the subtask dependencies form a cycle among {stuck}")
    return out


def _rank(it: _Item) -> int:
    return 0 if it.kind in FIRST_KINDS else 1


def _renumber(items: list[_Item]) -> tuple[Subtask, ...]:
    new_id = {it.id: f"s{k}" for k, it in enumerate(items, start=1)}
    position = {it.id: k for k, it in enumerate(items)}
    return tuple(
        Subtask(
            id=new_id[it.id],
            kind=it.kind,
            target=it.target,
            result=it.result,
            params=it.params,
            parents=tuple(new_id[p] for p in sorted(set(it.parents), key=position.__getitem__)),
        )
        for it in items
    )


def plan_param_problems(plan: Plan, tables: Tables) -> list[str]:
    """Why the plan's own parameter values cannot be used: each value a subtask gives (`strength: 5`) must fit the
    declaration (type, range, choices) of every tool serving its kind that declares that parameter. Empty when fine.

    Checked when the plan is validated and again before a turn runs a tool, so an out-of-range value is refused up
    front with the value and the range, never raised from inside a tool halfway through a turn.
    """
    from costa.tools.params import param_problem

    problems: list[str] = []
    for s in plan.subtasks:
        for name, value in s.params.items():
            for tool in tables.tools_for(s.kind):
                spec = next((p for p in tool.params if p.name == name), None)
                if spec is None or spec.type is None:
                    continue
                problem = param_problem(spec, value)
                if problem:
                    problems.append(f"subtask {s.id} ({s.kind}): {problem} for {tool.id}")
                    break
    return problems
