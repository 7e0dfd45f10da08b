"""Cost-sensitive lazy A* over a tool graph (CoSTA*'s search, done lazily).

Pure: the graph, an `estimate` function, an `execute` callback and α go in; events and a result come out. No I/O, no
globals, no images — the search treats execution states as opaque values handed back to `execute`.

Score (lower is better), used for f, for comparing paths and for α predictions:

    score(C, Q, α) = C^α · (2 − Q)^(2 − α)     C in seconds (sum along a path), Q in [0, 1] (product along a path)

f of a queue entry combines what is known (executed seconds and quality so far, or for a not-yet-run step its table
estimate) with an optimistic completion: the fewest estimated seconds and the best estimated quality from there to the
goal, each taken separately over the remaining DAG. Because score rises with C and falls with Q, that completion never
overestimates, so the first completed path popped is the best under the estimates.

Lazy expansion: expanding a node queues its successors *unexecuted*, at estimated f; a tool runs only when its entry
is popped. Its measured seconds and checked quality then replace the estimate and the entry is re-queued. A quality
below the threshold (or an error) triggers the tool's retry schedule, the retry's seconds added to the path; a step that
still fails is dropped and the search goes on with the next entry. Eager expansion (`lazy=False`, the published code's
behaviour) runs every successor as soon as its parent is expanded; it exists as the benchmark baseline.

The package: `records` holds the score, the records and `SearchPolicy`; `astar` the engine (one run over one graph);
this module the entry points, and every public name is importable from here.

Example:
    >>> import networkx as nx
    >>> g = nx.DiGraph([("START", "a"), ("START", "b"), ("a", "GOAL"), ("b", "GOAL")])
    >>> est = {"a": (1.0, 1.0), "b": (0.5, 0.5)}
    >>> run = lambda node, state, attempt: Outcome(*est[node], state=state)
    >>> r = search_toolpath(g, "START", "GOAL", lambda n: est[n], run, SearchPolicy(alpha=0.0, threshold=0.0))
    >>> r.path, r.executions
    (('a',), 1)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Hashable
from typing import Any

import networkx as nx

from costa.errors import SearchError
from costa.events import Event, drain
from costa.search.astar import REFRESH_EDGES, AStar
from costa.search.records import (
    DEFAULT_THRESHOLD,
    N,
    Observation,
    Outcome,
    S,
    SearchPolicy,
    SearchResult,
    check_alpha,
    node_itself,
    score,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "REFRESH_EDGES",
    "Observation",
    "Outcome",
    "SearchPolicy",
    "SearchResult",
    "check_alpha",
    "iter_search",
    "predict_best",
    "score",
    "search_toolpath",
]


def iter_search(
    graph: nx.DiGraph,
    start: Hashable,
    goal: Hashable,
    estimate: Callable[[N], tuple[float, float]],
    execute: Callable[[N, S, int], Outcome[S]],
    policy: SearchPolicy,
    initial_state: S | None = None,
) -> Generator[Event, None, SearchResult[N, S]]:
    """Run the search, yielding events as it goes; the generator's return value is the `SearchResult`.

    Args:
        graph: a DAG from `start` to `goal`; every other node is a tool step (an `N`).
        estimate: node → (seconds, quality) expected before running it.
        execute: (node, parent state, attempt) → `Outcome`; attempt 0 is the first try, 1.. are retries.
        policy: α, threshold, retries, expansion, labels and step identity (`SearchPolicy`).
        initial_state: the state the first steps start from. When omitted the first steps get None, so the caller's
            `S` must then admit None.

    Queue order: f (lower first), then deeper entries first, then insertion order. A step expected to fail its check
    is not ranked last by rule: its low estimated quality already raises its f, and ranking whole paths by "every step
    expected to pass" made lazy explore every expected-to-pass prefix before a cheaper path whose one doubtful step
    would have passed (seeded bench plan 0: 232 executions for a 22 % worse path than eager's 50). Whenever an
    execution changes the estimates (a measurement, a dropped step), every queued entry is re-ranked, so an entry
    whose estimate improved moves forward as surely as one whose estimate got worse moves back.
    """
    return (yield from AStar(graph, (start, goal), estimate, execute, policy, initial_state).search())


def search_toolpath(
    graph: nx.DiGraph,
    start: Hashable,
    goal: Hashable,
    estimate: Callable[[N], tuple[float, float]],
    execute: Callable[[N, S, int], Outcome[S]],
    policy: SearchPolicy,
    initial_state: S | None = None,
    on_event: Callable[[Event], None] | None = None,
) -> SearchResult[N, S]:
    """Run `iter_search` to the end and return its result; `on_event` sees each event."""
    return drain(iter_search(graph, start, goal, estimate, execute, policy, initial_state), on_event)


def predict_best(
    graph: nx.DiGraph,
    start: Hashable,
    goal: Hashable,
    estimate: Callable[[N], tuple[float, float]],
    alpha: float,
    threshold: float = DEFAULT_THRESHOLD,
    key: Callable[[N], Hashable] = node_itself,
) -> tuple[tuple[N, ...], float, float]:
    """The α slider's prediction: (path, seconds, quality) of the path the search tries first; nothing is executed.

    It is `iter_search` itself with the same `threshold` and `key`, every step taken to measure its estimate: the path
    the search settles on when every tool performs as its table row says (a step estimated below the threshold fails
    there, as it would when run). When every path has such a step the search would try them all and fail; the
    prediction is then the best path with the threshold ignored (its quality, below the threshold, says so).
    ((), inf, 0.0) when no path reaches the goal.
    """
    for th in (threshold, 0.0):
        policy = SearchPolicy(alpha, th, key=key, dry_run=True)
        result = search_toolpath(graph, start, goal, estimate, _never_called, policy)
        if result.found:
            return result.path, result.seconds, result.quality
    return (), math.inf, 0.0


def _never_called(node: Any, state: Any, attempt: int) -> Outcome[Any]:
    raise SearchError("a dry run must not execute tools")  # pragma: no cover - guarded by dry_run
