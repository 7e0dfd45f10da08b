"""The tool dependency graph (TDG) and the tool subgraph a search runs over.

The TDG is derived from typed I/O only: an edge A → B exists when A outputs an artifact type, other than the image
every tool sees, that B takes as input. There are no hand-written edges.

A subtask's *tool chains* are walks in the TDG restricted to the tools serving that subtask: the first tool needs only
what is given (the image, plus any user box/mask), each later tool needs only what is given or made earlier in the
chain and consumes something its predecessor made, and the chain ends at the first tool that outputs the subtask's goal
artifact (from subtasks.yaml). The *plan graph* strings subtasks' chains together along each allowed ordering of the
plan (one ordering for a chain plan, CoSTA*'s alternatives for a tree plan), merging shared ordering prefixes, between a
START and a GOAL node. The search walks START → GOAL.

Pure: tables and plan in, graph out; no I/O.

Example:
    >>> from costa.tables import load_tables
    >>> from costa.types import Plan, Subtask
    >>> t = load_tables()
    >>> plan = Plan(subtasks=(Subtask(id="s1", kind="text_removal"),))
    >>> g = build_plan_graph(t, plan, is_ready=lambda tool: t.tools[tool].status == "ready")
    >>> [n.tools[-1] for n in sorted(g.graph, key=str) if isinstance(n, StepNode) and n.final]
    ['text_paint_over', 'text_remove_patchmatch', 'text_remove_telea']
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field

import networkx as nx

from costa.tables import Tables
from costa.types import Plan, Subtask

START = "START"
GOAL = "GOAL"
DEFAULT_MAX_CHAIN = 4
DEFAULT_MAX_ORDERINGS = 24


@dataclass(frozen=True)
class StepNode:
    """One tool run at one place in the plan.

    `order` is the ordering prefix of subtask ids ending with this subtask (so the same tool on the same subtask after a
    different ordering is a different node); `tools` is the chain prefix within this subtask, ending with this node's
    tool.
    """

    order: tuple[str, ...]
    tools: tuple[str, ...]
    kind: str
    final: bool

    def __post_init__(self) -> None:
        # Searches hash nodes millions of times on large tables; hashing the nested tuples once saves most of that.
        object.__setattr__(self, "_hash", hash((self.order, self.tools, self.kind, self.final)))

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined]

    @property
    def subtask_id(self) -> str:
        return self.order[-1]

    @property
    def tool(self) -> str:
        return self.tools[-1]


def step_key(node: Hashable) -> Hashable:
    """Identity the search shares measurements and failures by: the same tool chain on the same subtask is the same
    step whichever earlier path led to it (ordering and earlier tools aside)."""
    return (node.subtask_id, node.tools) if isinstance(node, StepNode) else node


@dataclass(frozen=True)
class ToolGraph:
    """The graph a search walks: START → StepNode … → GOAL.

    `unavailable` maps subtask ids that no ready tool chain can serve to the reason (which tools would, and what they
    lack); those subtasks are left out of the graph.
    """

    graph: nx.DiGraph
    unavailable: Mapping[str, str] = field(default_factory=dict)

    @property
    def steps(self) -> tuple[StepNode, ...]:
        return tuple(n for n in self.graph if isinstance(n, StepNode))

    def tools(self) -> tuple[str, ...]:
        return tuple(sorted({n.tool for n in self.steps}))


def build_tdg(tables: Tables, tool_ids: Iterable[str] | None = None) -> nx.DiGraph:
    """Tool dependency graph over `tool_ids` (default all): edge A → B with `types` = what A hands to B."""
    ids = list(tables.tools) if tool_ids is None else list(tool_ids)
    g = nx.DiGraph()
    g.add_nodes_from(ids)
    for a, b in itertools.permutations(ids, 2):
        shared = (set(tables.tools[a].outputs) & set(tables.tools[b].inputs)) - {"image"}
        if shared:
            g.add_edge(a, b, types=frozenset(shared))
    return g


def subtask_chains(
    tables: Tables,
    kind: str,
    given: frozenset[str],
    is_ready: Callable[[str], bool],
    max_chain: int = DEFAULT_MAX_CHAIN,
) -> tuple[tuple[str, ...], ...]:
    """All tool chains that complete a subtask of `kind` from the artifact types in `given`.

    Args:
        given: artifact types available before the subtask starts ("image" is always added).
        is_ready: whether a tool id may be used (ready status and requirements met).
        max_chain: longest chain considered, in tools.
    """
    if kind not in tables.subtasks:
        raise KeyError(f"unknown subtask kind {kind!r}")
    goal = tables.subtasks[kind].produces
    have0 = frozenset(given) | {"image"}
    serving = [t.id for t in tables.tools_for(kind) if is_ready(t.id)]
    tdg = build_tdg(tables, serving)
    chains: list[tuple[str, ...]] = []

    def walk(chain: tuple[str, ...], have: frozenset[str]) -> None:
        last = tables.tools[chain[-1]]
        if goal in last.outputs:
            chains.append(chain)
            return
        if len(chain) >= max_chain:
            return
        for nxt in tdg.successors(chain[-1]):
            spec = tables.tools[nxt]
            if nxt not in chain and set(spec.inputs) <= have:
                walk((*chain, nxt), have | set(spec.outputs))

    for tid in serving:
        spec = tables.tools[tid]
        if set(spec.inputs) <= have0:
            walk((tid,), have0 | set(spec.outputs))
    return tuple(chains)


def _why_unavailable(tables: Tables, kind: str, is_ready: Callable[[str], bool], why_not: Callable[[str], str]) -> str:
    candidates = tables.tools_for(kind)
    ready = [t.id for t in candidates if is_ready(t.id)]
    parts = [f"{t.id}: {why_not(t.id)}" for t in candidates if not is_ready(t.id)]
    if ready:
        parts.insert(0, f"ready tools {ready} need inputs this turn does not have (e.g. a box or mask)")
    return f"no ready tool path for {tables.subtasks[kind].name}; " + "; ".join(parts)


def plan_orderings(plan: Plan, limit: int = DEFAULT_MAX_ORDERINGS) -> list[tuple[str, ...]]:
    """Orderings of the plan's subtask ids: the listed one for a chain, up to `limit` topological orders for a tree."""
    listed = tuple(s.id for s in plan.subtasks)
    if plan.form == "chain":
        return [listed]
    dag = nx.DiGraph()
    dag.add_nodes_from(listed)
    for s in plan.subtasks:
        for p in s.parents:
            dag.add_edge(p, s.id)
    orders = [listed]
    for order in nx.all_topological_sorts(dag):
        if len(orders) >= limit:
            break
        if tuple(order) != listed:
            orders.append(tuple(order))
    return orders


def build_plan_graph(
    tables: Tables,
    plan: Plan,
    is_ready: Callable[[str], bool],
    given: Mapping[str, frozenset[str]] | None = None,
    why_not: Callable[[str], str] | None = None,
    max_chain: int = DEFAULT_MAX_CHAIN,
    max_orderings: int = DEFAULT_MAX_ORDERINGS,
    can_serve: Callable[[Subtask, str], str | None] | None = None,
) -> ToolGraph:
    """Tool subgraph for a whole plan (CoSTA*): chains of every subtask, joined along each allowed ordering.

    Args:
        given: per subtask id, artifact types the user supplied for it (e.g. {"boxes"} after a --box).
        why_not: reason a tool is not ready (for the `unavailable` report); defaults to its table status.
        can_serve: (subtask, tool id) → None when the tool may serve that subtask, else why not (a grounder that
            cannot find the subtask's target by its words); a subtask left with no chain is unavailable for that
            reason.
    """
    given = given or {}
    why = why_not or (lambda tid: f"status {tables.tools[tid].status}")
    chains: dict[str, tuple[tuple[str, ...], ...]] = {}
    unavailable: dict[str, str] = {}
    for s in plan.subtasks:
        have = given.get(s.id, frozenset())
        found = subtask_chains(tables, s.kind, have, is_ready, max_chain)
        if found and can_serve is not None:
            verdicts = {t: can_serve(s, t) for c in found for t in c}
            found = tuple(c for c in found if all(verdicts[t] is None for t in c))
            if not found:
                unavailable[s.id] = " ".join(dict.fromkeys(v for v in verdicts.values() if v))
                continue
        if found:
            chains[s.id] = found
        else:
            unavailable[s.id] = _why_unavailable(tables, s.kind, is_ready, why)
    kinds = {s.id: s.kind for s in plan.subtasks}
    g = nx.DiGraph()
    g.add_node(START)
    g.add_node(GOAL)
    for ordering in plan_orderings(plan, max_orderings):
        runnable = tuple(sid for sid in ordering if sid in chains)
        if not runnable:
            continue
        ends: list[object] = [START]
        for k, sid in enumerate(runnable):
            order = runnable[: k + 1]
            new_ends: list[object] = []
            for chain in chains[sid]:
                prev: list[object] = ends
                for i in range(len(chain)):
                    node = StepNode(order, chain[: i + 1], kinds[sid], final=i == len(chain) - 1)
                    for p in prev:
                        g.add_edge(p, node)
                    prev = [node]
                new_ends.append(prev[0])
            ends = list(dict.fromkeys(new_ends))
        for e in ends:
            g.add_edge(e, GOAL)
    return ToolGraph(g, unavailable)


def build_subtask_graph(
    tables: Tables,
    subtask: Subtask,
    is_ready: Callable[[str], bool],
    given: frozenset[str] = frozenset(),
    why_not: Callable[[str], str] | None = None,
    max_chain: int = DEFAULT_MAX_CHAIN,
    can_serve: Callable[[Subtask, str], str | None] | None = None,
) -> ToolGraph:
    """Tool subgraph for one subtask (the local search FaSTA* falls back to); `can_serve` as for a plan's graph."""
    plan = Plan(subtasks=(subtask.model_copy(update={"parents": ()}),))
    return build_plan_graph(tables, plan, is_ready, {subtask.id: given}, why_not, max_chain, can_serve=can_serve)
