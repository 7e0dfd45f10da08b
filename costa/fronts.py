"""Optimistic completions for the cost-sensitive A*: per node, the Pareto front of estimated (seconds, quality) of
the steps after it up to the goal (pure; `costa.search` ranks its queue with them).

Because the score C^α · (2 − Q)^(2 − α) rises with C and falls with Q, the best completion for a prefix depends on α
and the prefix, so the whole front is kept; a front that grows past `FRONT_CAP` is replaced by its ideal point (fewest
seconds, best quality), which never overestimates either.

Example:
    >>> import networkx as nx
    >>> g = nx.DiGraph([("S", "a"), ("S", "b"), ("a", "G"), ("b", "G")])
    >>> est = {"a": (1.0, 0.9), "b": (2.0, 1.0)}.__getitem__
    >>> completions(list(nx.topological_sort(g)), g, "G", est, set())["S"]
    ((1.0, 0.9), (2.0, 1.0))
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

import networkx as nx

Front = tuple[tuple[float, float], ...]  # Pareto-optimal (seconds, quality) completions, seconds ascending

#: Completions kept per node before falling back to the (fewest seconds, best quality) ideal point.
FRONT_CAP = 24


def pareto(points: list[tuple[float, float]]) -> Front:
    """Keep the points no other point beats on both seconds (lower) and quality (higher)."""
    points.sort(key=lambda p: (p[0], -p[1]))
    front: list[tuple[float, float]] = []
    for c, q in points:
        if not front or q > front[-1][1]:
            front.append((c, q))
    return tuple(front)


def _front(
    n: Hashable,
    graph: nx.DiGraph,
    goal: Hashable,
    fronts: dict[Hashable, Front],
    estimate: Callable[[Any], tuple[float, float]],
    cap: int,
) -> Front | None:
    """n's front from its successors' fronts (None: no successor reaches the goal)."""
    points: list[tuple[float, float]] = []
    for s in graph.successors(n):
        front = fronts.get(s)
        if front is None:
            continue
        if s == goal:
            points.extend(front)
            continue
        ec, eq = estimate(s)
        points.extend((c + ec, q * eq) for c, q in front)
    if not points:
        return None
    front = pareto(points)
    return ((front[0][0], front[-1][1]),) if len(front) > cap else front


def completions(
    order: list[Any],
    graph: nx.DiGraph,
    goal: Hashable,
    estimate: Callable[[Any], tuple[float, float]],
    dropped: set[Any],
    cap: int = FRONT_CAP,
) -> dict[Hashable, Front]:
    """For every node (in reverse topological `order`): the Pareto front of estimated (seconds, quality) of the steps
    after it up to `goal`, leaving out `dropped` nodes; a node with no way to the goal has no entry."""
    fronts: dict[Hashable, Front] = {goal: ((0.0, 1.0),)}
    for n in reversed(order):
        if n == goal or n in dropped:
            continue
        front = _front(n, graph, goal, fronts, estimate, cap)
        if front is not None:
            fronts[n] = front
    return fronts


def update_completions(
    fronts: dict[Hashable, Front],
    position: Mapping[Hashable, int],
    graph: nx.DiGraph,
    goal: Hashable,
    changed: Iterable[Any],
    rule: tuple[Callable[[Any], tuple[float, float]], set[Any], int],
) -> None:
    """Bring `fronts` (from `completions`) up to date in place after the nodes in `changed` got a new estimate or
    were dropped: only their ancestors are recomputed, nearest the goal first, and a node whose front did not change
    stops the walk there. The result equals `completions` run afresh with the same `rule` (estimate, dropped, cap).

    Args:
        position: node → its index in the topological order `fronts` was computed over.
        changed: nodes whose own estimate changed or that are now in `dropped`.

    >>> g = nx.DiGraph([("S", "a"), ("a", "b"), ("b", "G"), ("S", "c"), ("c", "G")])
    >>> order = list(nx.topological_sort(g))
    >>> est = {"a": (1.0, 1.0), "b": (1.0, 1.0), "c": (5.0, 1.0)}.__getitem__
    >>> fronts = completions(order, g, "G", est, set())
    >>> update_completions(fronts, {n: i for i, n in enumerate(order)}, g, "G", ["b"], (est, {"b"}, FRONT_CAP))
    >>> fronts["S"], "a" in fronts
    (((5.0, 1.0),), False)
    """
    estimate, dropped, cap = rule
    heap: list[tuple[int, Hashable]] = []
    queued: set[Hashable] = set()

    def queue_parents(m: Hashable) -> None:
        for p in graph.predecessors(m):
            if p not in queued and p != goal and p not in dropped:
                queued.add(p)
                heapq.heappush(heap, (-position[p], p))

    for m in changed:
        if m in dropped:
            fronts.pop(m, None)
        queue_parents(m)
    while heap:
        _, n = heapq.heappop(heap)
        front = _front(n, graph, goal, fronts, estimate, cap)
        if front == fronts.get(n):
            continue
        if front is None:
            del fronts[n]
        else:
            fronts[n] = front
        queue_parents(n)
