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

from collections.abc import Callable, Hashable
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
        if points:
            front = pareto(points)
            if len(front) > cap:
                front = ((front[0][0], front[-1][1]),)
            fronts[n] = front
    return fronts
