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

Example:
    >>> import networkx as nx
    >>> g = nx.DiGraph([("START", "a"), ("START", "b"), ("a", "GOAL"), ("b", "GOAL")])
    >>> est = {"a": (1.0, 1.0), "b": (0.5, 0.5)}
    >>> run = lambda node, state, attempt: Outcome(*est[node], state=state)
    >>> r = search_toolpath(g, "START", "GOAL", lambda n: est[n], run, alpha=0.0, threshold=0.0)
    >>> r.path, r.executions
    (('a',), 1)
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from costa.errors import SearchError
from costa.events import (
    Event,
    NodePopped,
    NodeQueued,
    PathChosen,
    Retry,
    SearchFailed,
    ToolFailed,
    ToolFinished,
    ToolStarted,
)

DEFAULT_THRESHOLD = 0.8


def score(cost: float, quality: float, alpha: float) -> float:
    """Return C^α · (2 − Q)^(2 − α); lower is better.

    Args:
        cost: seconds, ≥ 0.
        quality: in [0, 1].
        alpha: in [0, 2]; 0 optimises quality only, 2 cost only.

    >>> round(score(12.265, 0.89, 1.0), 4)
    13.6141
    """
    check_alpha(alpha)
    if cost < 0:
        raise SearchError(f"cost must be >= 0 seconds, got {cost}")
    if not 0.0 <= quality <= 1.0:
        raise SearchError(f"quality must be in [0, 1], got {quality}")
    return cost**alpha * (2.0 - quality) ** (2.0 - alpha)


def check_alpha(alpha: float) -> None:
    if not isinstance(alpha, int | float) or math.isnan(alpha) or not 0.0 <= alpha <= 2.0:
        raise SearchError(f"alpha must be a number in [0, 2], got {alpha!r}")


@dataclass(frozen=True)
class Outcome:
    """What `execute` reports for one attempt: measured seconds, checked quality, the new state, and why.

    `error` set means the tool raised (a recorded failure, not a crash); quality is then ignored.
    """

    seconds: float
    quality: float
    state: Any = None
    reasons: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class Observation:
    """One measured attempt, for updating estimates in later searches."""

    node: Hashable
    seconds: float
    quality: float
    passed: bool


@dataclass(frozen=True)
class SearchResult:
    """The chosen path (nodes in order), its seconds and quality, and what the search paid for it."""

    path: tuple[Hashable, ...]
    seconds: float
    quality: float
    score: float
    state: Any
    executions: int
    spent_seconds: float
    observations: tuple[Observation, ...]
    found: bool = True
    reason: str = ""
    step_quality: tuple[float, ...] = ()
    step_seconds: tuple[float, ...] = ()


@dataclass(eq=False)
class _Node:
    node: Hashable
    parent: _Node | None
    cost: float  # seconds so far, retries included
    quality: float  # product of step qualities so far
    state: Any
    executed: bool
    step_seconds: float = 0.0
    step_quality: float = 1.0
    path: tuple[Hashable, ...] = field(default=())


def _completions(
    graph: nx.DiGraph, goal: Hashable, estimate: Callable[[Any], tuple[float, float]]
) -> dict[Hashable, tuple[float, float]]:
    """For every node: (fewest estimated seconds, best estimated quality) of the steps after it up to `goal`."""
    best: dict[Hashable, tuple[float, float]] = {goal: (0.0, 1.0)}
    for n in reversed(list(nx.topological_sort(graph))):
        if n == goal:
            continue
        options = []
        for s in graph.successors(n):
            if s not in best:
                continue
            c, q = best[s]
            if s != goal:
                ec, eq = estimate(s)
                c, q = c + ec, q * eq
            options.append((c, q))
        if options:
            best[n] = (min(o[0] for o in options), max(o[1] for o in options))
    return best


def iter_search(
    graph: nx.DiGraph,
    start: Hashable,
    goal: Hashable,
    estimate: Callable[[Any], tuple[float, float]],
    execute: Callable[[Any, Any, int], Outcome],
    alpha: float,
    threshold: float = DEFAULT_THRESHOLD,
    max_attempts: Callable[[Any], int] = lambda n: 1,
    initial_state: Any = None,
    lazy: bool = True,
    label: Callable[[Any], tuple[str, str]] = lambda n: ("", str(n)),
) -> Iterator[Event]:
    """Run the search, yielding events as it goes; the generator's return value is the `SearchResult`.

    Args:
        graph: a DAG from `start` to `goal`; every other node is a tool step.
        estimate: node → (seconds, quality) expected before running it.
        execute: (node, parent state, attempt) → `Outcome`; attempt 0 is the first try, 1.. are retries.
        alpha: cost/quality trade-off in [0, 2].
        threshold: a step passes when its quality ≥ threshold (0.8 in the papers).
        max_attempts: node → how many attempts its retry schedule allows (≥ 1).
        label: node → (subtask id, tool id) for events.
    """
    check_alpha(alpha)
    if not 0.0 <= threshold <= 1.0:
        raise SearchError(f"threshold must be in [0, 1], got {threshold}")
    if start not in graph or goal not in graph:
        raise SearchError(f"start {start!r} and goal {goal!r} must be graph nodes")
    if not nx.is_directed_acyclic_graph(graph):
        raise SearchError("the tool graph must be acyclic")
    h = _completions(graph, goal, estimate)
    counter = itertools.count()
    heap: list[tuple[float, int, _Node]] = []
    failed: set[Hashable] = set()
    observations: list[Observation] = []
    executions = 0
    spent = 0.0

    def f_of(n: _Node) -> float:
        hc, hq = h.get(n.node, (math.inf, 0.0))
        if n.executed:
            return score(n.cost + hc, n.quality * hq, alpha) if math.isfinite(hc) else math.inf
        ec, eq = estimate(n.node)
        return score(n.cost + ec + hc, n.quality * eq * hq, alpha) if math.isfinite(hc) else math.inf

    def push(n: _Node) -> Event:
        f = f_of(n)
        heapq.heappush(heap, (f, next(counter), n))
        sid, tool = label(n.node)
        return NodeQueued(sid, tool, tuple(label(p)[1] for p in n.path), f, n.executed)

    def run(n: _Node) -> Iterator[Event]:
        """Execute n's step with its retry schedule; on success mark n executed, else add it to `failed`."""
        nonlocal executions, spent
        sid, tool = label(n.node)
        total = 0.0
        attempts = max(1, max_attempts(n.node))
        for attempt in range(attempts):
            yield ToolStarted(sid, tool, attempt)
            out = execute(n.node, n.parent.state if n.parent else initial_state, attempt)
            executions += 1
            spent += out.seconds
            total += out.seconds
            ok = out.error is None and out.quality >= threshold
            observations.append(Observation(n.node, out.seconds, 0.0 if out.error else out.quality, ok))
            reasons = out.reasons if out.error is None else (out.error, *out.reasons)
            yield ToolFinished(sid, tool, attempt, out.seconds, 0.0 if out.error else out.quality, ok, reasons)
            if ok:
                base_c = n.parent.cost if n.parent else 0.0
                base_q = n.parent.quality if n.parent else 1.0
                n.cost, n.quality = base_c + total, base_q * out.quality
                n.step_seconds, n.step_quality = total, out.quality
                n.state, n.executed = out.state, True
                return
            why = out.error or f"quality {out.quality:.2f} below threshold {threshold:.2f}"
            if attempt + 1 < attempts:
                yield Retry(sid, tool, attempt + 1, why)
            else:
                failed.add(n.node)
                yield ToolFailed(sid, tool, f"{why} after {attempts} attempt(s)")

    root = _Node(start, None, 0.0, 1.0, initial_state, executed=True)
    yield push(root)
    while heap:
        f, _, n = heapq.heappop(heap)
        if n.node in failed:
            continue
        sid, tool = label(n.node)
        if n.node != start:
            yield NodePopped(sid, tool, tuple(label(p)[1] for p in n.path), f, n.executed)
        if not n.executed:
            yield from run(n)
            if n.executed:
                yield push(n)
            continue
        if n.node == goal:
            path = n.path[:-1]  # drop GOAL
            chain: list[_Node] = []
            cur: _Node | None = n.parent
            while cur is not None and cur.node != start:
                chain.append(cur)
                cur = cur.parent
            chain.reverse()
            result = SearchResult(
                path=path,
                seconds=n.cost,
                quality=n.quality,
                score=score(n.cost, n.quality, alpha),
                state=n.state,
                executions=executions,
                spent_seconds=spent,
                observations=tuple(observations),
                step_quality=tuple(c.step_quality for c in chain),
                step_seconds=tuple(c.step_seconds for c in chain),
            )
            yield PathChosen(tuple(label(p) for p in path), n.cost, n.quality, result.score, executions, spent)
            return result
        for succ in graph.successors(n.node):
            if succ in failed:
                continue
            path = (*n.path, succ)
            if succ == goal:
                child = _Node(goal, n, n.cost, n.quality, n.state, executed=True, path=path)
                yield push(child)
                continue
            child = _Node(succ, n, n.cost, n.quality, None, executed=False, path=path)
            if not lazy:
                yield from run(child)
                if not child.executed:
                    continue
            yield push(child)
    reason = "every tool path failed its checks" if executions else "no tool path reaches the goal"
    yield SearchFailed(reason, executions, spent)
    return SearchResult((), math.inf, 0.0, math.inf, None, executions, spent, tuple(observations), False, reason)


def search_toolpath(
    graph: nx.DiGraph,
    start: Hashable,
    goal: Hashable,
    estimate: Callable[[Any], tuple[float, float]],
    execute: Callable[[Any, Any, int], Outcome],
    alpha: float,
    threshold: float = DEFAULT_THRESHOLD,
    max_attempts: Callable[[Any], int] = lambda n: 1,
    initial_state: Any = None,
    lazy: bool = True,
    on_event: Callable[[Event], None] | None = None,
) -> SearchResult:
    """Run `iter_search` to the end and return its result; `on_event` sees each event."""
    gen = iter_search(graph, start, goal, estimate, execute, alpha, threshold, max_attempts, initial_state, lazy)
    while True:
        try:
            ev = next(gen)
        except StopIteration as stop:
            return stop.value
        if on_event is not None:
            on_event(ev)


def predict_best(
    graph: nx.DiGraph, start: Hashable, goal: Hashable, estimate: Callable[[Any], tuple[float, float]], alpha: float
) -> tuple[tuple[Hashable, ...], float, float]:
    """Best path under the estimates alone (no execution): (path, seconds, quality) — the α slider's prediction."""
    result = search_toolpath(
        graph, start, goal, estimate, lambda n, s, a: Outcome(*estimate(n), state=s), alpha, threshold=0.0
    )
    return result.path, result.seconds, result.quality
