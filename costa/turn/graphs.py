"""The tool graphs a turn searches, and what the user must point at before anything runs.

`build_graph` is the whole plan's tool subgraph (a grounder that cannot find a subtask's target by its words is left
out for that subtask); `subtask_graph` is one subtask's own graph, less the chains a caller rules out (reflection's
rejected chains, the step a failed rule took); `pointing_needed` lists the targets no ready tool can find by itself.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

import networkx as nx

from costa.events import PointingNeeded
from costa.graph import GOAL, START, StepNode, ToolGraph, build_plan_graph, build_subtask_graph, step_key
from costa.targets import findable_by, ground_advice
from costa.turn.records import UserRegion
from costa.types import Plan, Subtask, ToolSpec


def build_graph(services: Any, plan: Plan, region: UserRegion) -> ToolGraph:
    """The plan's tool subgraph; a grounder that cannot find a subtask's target by its words (the colour grounder
    for a target with no colour, the face detector for "the tower") is left out for that subtask."""
    pointed = frozenset(region.artifacts())
    # what the user pointed at is the edit's target, never the thing the instruction keeps ("keep the trees")
    given = {s.id: frozenset() if s.params.get("role") == "keep" else pointed for s in plan.subtasks}
    return build_plan_graph(
        services.tables,
        plan,
        services.is_ready_fn(),
        given,
        why_not=lambda t: services.why_not(t) or "ready",
        can_serve=serving_rule(services, lambda s: given[s.id]),
    )


def serving_rule(services: Any, pointed: Callable[[Subtask], frozenset[str]]) -> Callable[[Subtask, str], str | None]:
    """The graph's `can_serve`: a grounder that cannot find the subtask's target by its words, and an image-wide
    editor a target limits where `region_refusal` says no, are left out (`pointed`: the artifact types the user
    gave for a subtask)."""
    tools = services.tables.tools
    # kinds an editor fed a grounder's masks serves: only there can a box around a named thing be segmented first
    segmentable = frozenset(k for t in tools.values() if t.in_region and "masks" in t.inputs for k in t.subtasks)

    def can_serve(subtask: Subtask, tool_id: str) -> str | None:
        spec = tools[tool_id]
        if spec.in_region:
            return region_refusal(subtask, spec, pointed(subtask), subtask.kind in segmentable)
        if not subtask.target or findable_by(spec.family, subtask.target):
            return None
        return f"{tool_id} cannot find {subtask.target!r} ({spec.family} grounding);"

    return can_serve


def region_refusal(subtask: Subtask, spec: ToolSpec, pointed: frozenset[str], segmentable: bool = True) -> str | None:
    """Why an image-wide editor that a target limits (`ToolSpec.in_region`) cannot serve `subtask`, or None.

    With a target it acts inside the target's region: one that reads the region from the state only (no `masks`
    input) needs the user's box or brush or a remembered region — it cannot locate "the blue square" by itself, and
    the message says so in the words `pointing_events` asks for pointing on; one fed by a grounder's masks serves when
    no region was given (with a region given, the first serves it directly: the same edit twice is not a fallback).
    A box alone does not give the region of a named thing ("make the flag darker" with a box around the flag): the
    first would change the whole rectangle, so a segmenter fed the box finds the flag and the second acts inside it;
    a target that names the region itself ("this area", `names_a_region`) is the box, and so is any box where no
    editor fed masks serves the kind (`segmentable` False: "sharpen the red car" with a box sharpens the box). Without
    a target the edit is the whole image, which needs no grounder.
    """
    grounded = "masks" in spec.inputs
    if not subtask.target:
        return f"{spec.id} edits a named target's region and this edit is the whole image;" if grounded else None
    located = bool(pointed & {"boxes", "masks"})
    if grounded and "masks" in pointed:
        return f"{spec.id}: the region of {subtask.target!r} is given already;"
    if not grounded and not located:
        return f"{spec.id} cannot find {subtask.target!r} by itself (it needs its region);"
    if not grounded and segmentable and "masks" not in pointed and not names_a_region(subtask.target):
        # a box only bounds "the flag": acting on the whole rectangle changes the wall behind it too
        return f"{spec.id} would change the whole box around {subtask.target!r}, not only it;"
    return None


#: Words that make a target the pointed region itself ("this area", "the top left corner"), not a thing inside it.
REGION_WORDS = frozenset(
    [
        "area",
        "region",
        "box",
        "rectangle",
        "selection",
        "selected",
        "part",
        "corner",
        "patch",
        "spot",
        "section",
        "half",
        "side",
        "top",
        "bottom",
        "left",
        "right",
        "middle",
        "centre",
        "center",
        "here",
        "this",
    ]
)


def names_a_region(target: str) -> bool:
    """Whether `target` names the pointed region itself rather than an object in it, by its head (last) word: "area",
    "the selected region", "top left corner" do; "flag", "blue cup", "top hat", "left eye" do not."""
    words = target.lower().replace("-", " ").split()
    return bool(words) and words[-1] in REGION_WORDS


def subtask_graph(
    services: Any,
    subtask: Subtask,
    region: UserRegion,
    allow: Callable[[tuple[str, ...]], bool] | None = None,
    skip: Iterable[Hashable] = (),
    ready: Callable[[str], bool] | None = None,
) -> ToolGraph:
    """One subtask's tool graph (the local search's), keeping only the complete chains `allow` accepts and leaving
    out the steps whose `step_key` is in `skip`; `unavailable` says why when no ready chain serves it at all.
    `ready` is the turn's readiness (asked once per tool), default the services'."""
    given = frozenset(region.artifacts())
    tg = build_subtask_graph(
        services.tables,
        subtask,
        ready or services.is_ready_fn(),
        given,
        why_not=lambda t: services.why_not(t) or "ready",
        can_serve=serving_rule(services, lambda _s: given),
    )
    skipped = set(skip)
    if allow is None and not skipped:
        return tg

    def out(n: Any) -> bool:
        if not isinstance(n, StepNode):
            return False
        return step_key(n) in skipped or (allow is not None and n.final and not allow(n.tools))

    graph = tg.graph.copy()
    graph.remove_nodes_from([n for n in graph if out(n)])
    return ToolGraph(graph, tg.unavailable)


def reaches_goal(graph: nx.DiGraph) -> bool:
    """Whether a search over `graph` can complete (a path from START to GOAL is left)."""
    return START in graph and GOAL in graph and nx.has_path(graph, START, GOAL)


def pointing_needed(services: Any, plan: Plan, region: UserRegion) -> list[PointingNeeded]:
    """Before anything runs: the targets no ready tool can find by itself with what the user pointed at so far."""
    return pointing_events(plan, dict(build_graph(services, plan, region).unavailable))


def pointing_events(plan: Plan, unavailable: dict[str, str]) -> list[PointingNeeded]:
    """One `PointingNeeded` per target whose subtasks are unavailable only because no ready tool can find it."""
    by_target: dict[str, list[str]] = {}
    for sid, why in unavailable.items():
        sub = plan.by_id(sid)
        if sub.params.get("role") == "keep":
            continue  # a kept thing is located by its words or not at all (`costa.turn.kept`): pointing is the edit's
        if sub.target and "cannot find" in why:
            by_target.setdefault(sub.target, []).append(sid)
    return [
        PointingNeeded(tuple(sids), target, f"no ready tool can find {target!r} by itself. {ground_advice(target)}")
        for target, sids in by_target.items()
    ]
