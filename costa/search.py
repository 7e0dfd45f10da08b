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
from collections.abc import Callable, Generator, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

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
    drain,
)

DEFAULT_THRESHOLD = 0.8

#: A tool-step node of the graph (every node but `start` and `goal`, which are sentinels the search never executes).
N = TypeVar("N", bound=Hashable)
#: The caller's execution state, opaque to the search: handed from one `Outcome` to the next step's `execute`.
S = TypeVar("S")


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


def _score(cost: float, quality: float, alpha: float) -> float:
    """`score` without validation, for the search's inner loop (its inputs are validated once up front)."""
    return cost**alpha * (2.0 - quality) ** (2.0 - alpha)


def check_alpha(alpha: float) -> None:
    if not isinstance(alpha, int | float) or math.isnan(alpha) or not 0.0 <= alpha <= 2.0:
        raise SearchError(f"alpha must be a number in [0, 2], got {alpha!r}")


@dataclass(frozen=True)
class Outcome(Generic[S]):
    """What `execute` reports for one attempt: measured seconds, checked quality, the new state, and why.

    `error` set means the tool raised (a recorded failure, not a crash); quality and state are then ignored. `state`
    is None only on such failures, or where the caller's states admit None (a passing step's state is handed on as is).
    `stopped` (with `error` saying how) means the user stopped the run: the search ends at once, the attempt is
    reported as stopped, not failed, and it is no observation (a stopped call says nothing about the tool).
    """

    seconds: float
    quality: float
    state: S | None = None
    reasons: tuple[str, ...] = ()
    error: str | None = None
    stopped: bool = False


@dataclass(frozen=True)
class Observation(Generic[N]):
    """One measured attempt, for updating estimates in later searches."""

    node: N
    seconds: float
    quality: float
    passed: bool


@dataclass(frozen=True)
class SearchResult(Generic[N, S]):
    """The chosen path (nodes in order), its seconds and quality, and what the search paid for it.

    `state` is the last step's state when `found` (None when nothing was found).
    """

    path: tuple[N, ...]
    seconds: float
    quality: float
    score: float
    state: S | None
    executions: int
    spent_seconds: float
    observations: tuple[Observation[N], ...]
    found: bool = True
    reason: str = ""
    step_quality: tuple[float, ...] = ()
    step_seconds: tuple[float, ...] = ()


@dataclass(eq=False)
class _Node(Generic[N, S]):
    node: N  # also `start` / `goal` (cast): those are never estimated, executed or keyed
    parent: _Node[N, S] | None
    cost: float  # seconds so far, retries included
    quality: float  # product of step qualities so far
    state: S | None  # None until executed
    executed: bool
    step_seconds: float = 0.0
    step_quality: float = 1.0
    path: tuple[N, ...] = field(default=())
    tools: tuple[str, ...] = field(default=())  # event labels along `path`, kept incrementally
    stamp: int = 0  # bumped when the entry is re-queued at a new rank; older heap tuples for it are stale


Front = tuple[tuple[float, float], ...]  # Pareto-optimal (seconds, quality) completions, seconds ascending

#: Completions kept per node before falling back to the (fewest seconds, best quality) ideal point.
FRONT_CAP = 24
#: Largest graph (edges) whose completions are recomputed after each measurement; larger graphs keep the first ones.
REFRESH_EDGES = 4_000


def _pareto(points: list[tuple[float, float]]) -> Front:
    """Keep the points no other point beats on both seconds (lower) and quality (higher)."""
    points.sort(key=lambda p: (p[0], -p[1]))
    front: list[tuple[float, float]] = []
    for c, q in points:
        if not front or q > front[-1][1]:
            front.append((c, q))
    return tuple(front)


def _completions(
    order: list[Any],
    graph: nx.DiGraph,
    goal: Hashable,
    estimate: Callable[[Any], tuple[float, float]],
    dropped: set[Any],
    cap: int = FRONT_CAP,
) -> dict[Hashable, Front]:
    """For every node: the Pareto front of estimated (seconds, quality) of the steps after it up to `goal`.

    The best completion for a given prefix depends on α and the prefix, so the whole front is kept; when a front grows
    past `FRONT_CAP` it is replaced by its ideal point (fewest seconds, best quality), which still never overestimates.
    """
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
            front = _pareto(points)
            if len(front) > cap:
                front = ((front[0][0], front[-1][1]),)
            fronts[n] = front
    return fronts


def iter_search(
    graph: nx.DiGraph,
    start: Hashable,
    goal: Hashable,
    estimate: Callable[[N], tuple[float, float]],
    execute: Callable[[N, S, int], Outcome[S]],
    alpha: float,
    threshold: float = DEFAULT_THRESHOLD,
    max_attempts: Callable[[N], int] = lambda n: 1,
    initial_state: S | None = None,
    lazy: bool = True,
    label: Callable[[Hashable], tuple[str, str]] = lambda n: ("", str(n)),
    key: Callable[[N], Hashable] = lambda n: n,
    params_of: Callable[[N, int], dict[str, Any]] = lambda n, attempt: {},
    *,
    dry_run: bool = False,
) -> Generator[Event, None, SearchResult[N, S]]:
    """Run the search, yielding events as it goes; the generator's return value is the `SearchResult`.

    Args:
        graph: a DAG from `start` to `goal`; every other node is a tool step (an `N`).
        estimate: node → (seconds, quality) expected before running it.
        execute: (node, parent state, attempt) → `Outcome`; attempt 0 is the first try, 1.. are retries.
        alpha: cost/quality trade-off in [0, 2].
        threshold: a step passes when its quality ≥ threshold (0.8 in the papers).
        max_attempts: node → how many attempts its retry schedule allows (≥ 1).
        initial_state: the state the first steps start from. When omitted the first steps get None, so the caller's
            `S` must then admit None.
        label: node → (subtask id, tool id) for events; also called on `start` and `goal`.
        key: node → identity shared by nodes that are "the same step" (e.g. the same tool chain on the same subtask
            after a different earlier path): a measurement of one becomes the estimate of the others, and a step that
            failed is dropped for all of them.
        params_of: (node, attempt) → the parameters that attempt runs with, reported in `ToolStarted` (the search
            never reads them; the caller's `execute` applies them).
        dry_run: the α preview: `execute` is not called and every step "measures" its estimate, under the same
            threshold and queue rules, so the result is the path the search settles on when every tool performs as
            its table row says (a step estimated below the threshold is tried in its turn and fails, as it would).

    Queue order: f (lower first), then deeper entries first, then insertion order. A step expected to fail its check
    is not ranked last by rule: its low estimated quality already raises its f, and ranking whole paths by "every step
    expected to pass" made lazy explore every expected-to-pass prefix before a cheaper path whose one doubtful step
    would have passed (seeded bench plan 0: 232 executions for a 22 % worse path than eager's 50). Whenever an
    execution changes the estimates (a measurement, a dropped step), every queued entry is re-ranked, so an entry
    whose estimate improved moves forward as surely as one whose estimate got worse moves back.
    """
    check_alpha(alpha)
    if not 0.0 <= threshold <= 1.0:
        raise SearchError(f"threshold must be in [0, 1], got {threshold}")
    if start not in graph or goal not in graph:
        raise SearchError(f"start {start!r} and goal {goal!r} must be graph nodes")
    try:
        order = list(nx.topological_sort(graph))
    except nx.NetworkXUnfeasible as e:
        raise SearchError("the tool graph must be acyclic") from e
    labels: dict[Hashable, tuple[str, str]] = {}
    # The sentinels travel through the queue as nodes too; they are never estimated, executed or keyed.
    start_node, goal_node = cast(N, start), cast(N, goal)

    def label_of(m: Hashable) -> tuple[str, str]:
        found = labels.get(m)
        if found is None:
            found = labels[m] = label(m)
        return found

    by_key: dict[Hashable, list[N]] = {}
    for m in order:
        if m != start and m != goal:
            by_key.setdefault(key(m), []).append(m)
    measured: dict[Hashable, tuple[float, float]] = {}
    failed: set[Hashable] = set()  # keys
    dropped: set[N] = set()  # nodes whose key failed

    def est(n: N) -> tuple[float, float]:
        return measured.get(key(n)) or estimate(n)

    # Small graphs (all real plans) get exact Pareto completions, refreshed after every measurement; large ones the
    # cheaper ideal-point bound computed once, so overhead stays low on 500-tool tables.
    refresh = graph.number_of_edges() <= REFRESH_EDGES
    cap = FRONT_CAP if refresh else 1
    fronts = _completions(order, graph, goal, est, dropped, cap)

    version = 0
    counter = itertools.count()
    heap: list[tuple[float, int, int, int, _Node[N, S]]] = []  # (f, -depth, insertion, stamp, entry)
    waiting: dict[Hashable, list[_Node[N, S]]] = {}  # key → queued unexecuted entries (re-ranked when key measured)
    changed: set[Hashable] = set()  # keys measured since the queue was last re-ranked
    observations: list[Observation[N]] = []
    executions = 0
    spent = 0.0
    halted: list[str] = []  # why the user stopped the run, once an execute reported it

    def priority(n: _Node[N, S]) -> float:
        front = fronts.get(n.node)
        if front is None:
            return math.inf
        c0, q0 = n.cost, n.quality
        if not n.executed:
            ec, eq = est(n.node)
            c0, q0 = c0 + ec, q0 * eq
        if len(front) == 1:
            c, q = front[0]
            return _score(c0 + c, q0 * q, alpha)
        return min(_score(c0 + c, q0 * q, alpha) for c, q in front)

    def push(n: _Node[N, S]) -> Event | None:
        if n.node not in fronts:  # nothing left after it reaches the goal (its continuations failed)
            return None
        f = priority(n)
        heapq.heappush(heap, (f, -len(n.path), next(counter), n.stamp, n))
        if not n.executed:
            waiting.setdefault(key(n.node), []).append(n)
        sid, tool = label_of(n.node)
        return NodeQueued(sid, tool, n.tools, f, n.executed)

    def run(n: _Node[N, S]) -> Iterator[Event]:
        """Execute n's step with its retry schedule; on success mark n executed, else drop its key."""
        nonlocal executions, spent, fronts, version
        sid, tool = label_of(n.node)
        total = 0.0
        attempts = max(1, max_attempts(n.node))
        for attempt in range(attempts):
            yield ToolStarted(sid, tool, attempt, params_of(n.node, attempt))
            # A parent is executed, so its state is its step's; the initial state is None only when omitted, where the
            # caller's S admits None (see Args).
            parent_state = cast(S, n.parent.state if n.parent else initial_state)
            out = Outcome(*est(n.node), state=parent_state) if dry_run else execute(n.node, parent_state, attempt)
            executions += 1
            spent += out.seconds
            total += out.seconds
            if out.stopped:
                halted.append(out.error or "stopped")
                yield ToolFinished(sid, tool, attempt, out.seconds, 0.0, False, (out.error or "stopped",), True)
                return
            quality = 0.0 if out.error else out.quality
            ok = out.error is None and quality >= threshold
            observations.append(Observation(n.node, out.seconds, quality, ok))
            reasons = out.reasons if out.error is None else (out.error, *out.reasons)
            yield ToolFinished(sid, tool, attempt, out.seconds, quality, ok, reasons)
            if ok:
                base_c = n.parent.cost if n.parent else 0.0
                base_q = n.parent.quality if n.parent else 1.0
                n.cost, n.quality = base_c + total, base_q * quality
                n.step_seconds, n.step_quality = total, quality
                n.state, n.executed = out.state, True
                measured[key(n.node)] = (total, quality)
                changed.add(key(n.node))
                break
            why = out.error or f"quality {quality:.2f} below threshold {threshold:.2f}"
            if attempt + 1 < attempts:
                yield Retry(sid, tool, attempt + 1, why)
            else:
                failed.add(key(n.node))
                dropped.update(by_key.get(key(n.node), ()))
                yield ToolFailed(sid, tool, f"{why} after {attempts} attempt(s)")
        if refresh:
            fronts = _completions(order, graph, goal, est, dropped, cap)
        version += 1

    root: _Node[N, S] = _Node(start_node, None, 0.0, 1.0, initial_state, executed=True)
    first = push(root)
    if first is not None:
        yield first
    ranked_at = version
    while heap:
        if ranked_at != version:  # estimates changed: re-rank the entries they touch, whichever way they moved
            if refresh:  # completions were recomputed, so any entry may have moved: rank them all again
                live = (e for e in heap if e[3] == e[-1].stamp and e[-1].node in fronts)
                heap = [(priority(e[-1]), e[1], e[2], e[3], e[-1]) for e in live]
                heapq.heapify(heap)
            else:  # completions are fixed; only entries whose own step was measured (by key) changed
                for k in changed:
                    for m in waiting.pop(k, ()):
                        if not m.executed and m.node in fronts:
                            m.stamp += 1
                            heapq.heappush(heap, (priority(m), -len(m.path), next(counter), m.stamp, m))
            changed.clear()
            ranked_at = version
            if not heap:
                break
        f, _, _, stamp, n = heapq.heappop(heap)
        if stamp != n.stamp or n.node not in fronts:
            continue
        if n.node != start and n.node != goal and key(n.node) in failed:
            continue
        sid, tool = label_of(n.node)
        if n.node != start:
            yield NodePopped(sid, tool, n.tools, f, n.executed)
        if not n.executed:
            yield from run(n)
            if halted:
                break
            if n.executed and (ev := push(n)) is not None:
                yield ev
            continue
        if n.node == goal:
            chain: list[_Node[N, S]] = []
            cur: _Node[N, S] | None = n.parent
            while cur is not None and cur.node != start:
                chain.append(cur)
                cur = cur.parent
            chain.reverse()
            path = tuple(c.node for c in chain)
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
            yield PathChosen(tuple(label_of(p) for p in path), n.cost, n.quality, result.score, executions, spent)
            return result
        for succ in graph.successors(n.node):
            if succ in dropped:
                continue
            path = (*n.path, succ)
            if succ == goal:
                ev = push(_Node(goal_node, n, n.cost, n.quality, n.state, executed=True, path=path, tools=n.tools))
                if ev is not None:
                    yield ev
                continue
            child = _Node(succ, n, n.cost, n.quality, None, False, path=path, tools=(*n.tools, label_of(succ)[1]))
            if not lazy:
                yield from run(child)
                if halted:
                    break
                if not child.executed:
                    continue
            if (ev := push(child)) is not None:
                yield ev
        if halted:
            break
    if halted:
        reason = f"stopped by the user ({halted[0]})"
    elif executions:
        reason = "every tool path failed its checks"
    else:
        reason = "no tool path reaches the goal"
    yield SearchFailed(reason, executions, spent, bool(halted))
    return SearchResult((), math.inf, 0.0, math.inf, None, executions, spent, tuple(observations), False, reason)


def search_toolpath(
    graph: nx.DiGraph,
    start: Hashable,
    goal: Hashable,
    estimate: Callable[[N], tuple[float, float]],
    execute: Callable[[N, S, int], Outcome[S]],
    alpha: float,
    threshold: float = DEFAULT_THRESHOLD,
    max_attempts: Callable[[N], int] = lambda n: 1,
    initial_state: S | None = None,
    lazy: bool = True,
    on_event: Callable[[Event], None] | None = None,
    label: Callable[[Hashable], tuple[str, str]] = lambda n: ("", str(n)),
    key: Callable[[N], Hashable] = lambda n: n,
    *,
    dry_run: bool = False,
) -> SearchResult[N, S]:
    """Run `iter_search` to the end and return its result; `on_event` sees each event."""
    gen = iter_search(
        graph,
        start,
        goal,
        estimate,
        execute,
        alpha,
        threshold,
        max_attempts,
        initial_state,
        lazy,
        label,
        key,
        dry_run=dry_run,
    )
    return drain(gen, on_event)


def predict_best(
    graph: nx.DiGraph,
    start: Hashable,
    goal: Hashable,
    estimate: Callable[[N], tuple[float, float]],
    alpha: float,
    threshold: float = DEFAULT_THRESHOLD,
    key: Callable[[N], Hashable] = lambda n: n,
) -> tuple[tuple[N, ...], float, float]:
    """The α slider's prediction: (path, seconds, quality) of the path the search tries first; nothing is executed.

    It is `iter_search` itself with the same `threshold` and `key`, every step taken to measure its estimate: the path
    the search settles on when every tool performs as its table row says (a step estimated below the threshold fails
    there, as it would when run). When every path has such a step the search would try them all and fail; the
    prediction is then the best path with the threshold ignored (its quality, below the threshold, says so).
    ((), inf, 0.0) when no path reaches the goal.
    """
    for th in (threshold, 0.0):
        result = search_toolpath(
            graph, start, goal, estimate, _never_called, alpha, threshold=th, key=key, dry_run=True
        )
        if result.found:
            return result.path, result.seconds, result.quality
    return (), math.inf, 0.0


def _never_called(node: Any, state: Any, attempt: int) -> Outcome[Any]:
    raise SearchError("a dry run must not execute tools")  # pragma: no cover - guarded by dry_run
