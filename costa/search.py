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
    >>> r = search_toolpath(g, "START", "GOAL", lambda n: est[n], run, SearchPolicy(alpha=0.0, threshold=0.0))
    >>> r.path, r.executions
    (('a',), 1)
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Generator, Hashable, Iterable, Iterator
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
from costa.fronts import FRONT_CAP, completions, update_completions

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
    reported as stopped, not failed, and it is no observation (a stopped call says nothing about the tool). `cached`
    means the caller replayed an earlier identical run: it is not counted as an execution.
    """

    seconds: float
    quality: float
    state: S | None = None
    reasons: tuple[str, ...] = ()
    error: str | None = None
    stopped: bool = False
    cached: bool = False  # replayed from the turn's memo of tool runs: not run again, nothing new learned


@dataclass(frozen=True)
class Observation(Generic[N]):
    """One measured attempt, for updating estimates in later searches (`cached`: a replay, nothing to learn)."""

    node: N
    seconds: float
    quality: float
    passed: bool
    attempt: int = 0
    cached: bool = False


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
    stopped: bool = False  # the user's Stop ended the search (then nothing was found)


def _one_attempt(node: Any) -> int:
    return 1


def _plain_label(node: Hashable) -> tuple[str, str]:
    return ("", str(node))


def _itself(node: Any) -> Hashable:
    return cast(Hashable, node)


def _no_params(node: Any, attempt: int) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class SearchPolicy:
    """How one search runs: α, the threshold, retries, expansion, and how steps are named and identified.

    alpha: cost/quality trade-off in [0, 2]. threshold: a step passes when its quality ≥ threshold (0.8 in the
    papers). max_attempts: node → how many attempts its retry schedule allows (≥ 1). lazy: False runs every successor
    as soon as its parent is expanded (the published code's eager expansion, the benchmark baseline). label: node →
    (subtask id, tool id) for events; also called on the start and goal. key: node → identity shared by nodes that are
    "the same step" (e.g. the same tool chain on the same subtask after a different earlier path): a measurement of
    one becomes the estimate of the others, and a step that failed is dropped for all of them. params_of: (node,
    attempt) → the parameters that attempt runs with, reported in `ToolStarted` (the caller's `execute` applies them).
    dry_run: the α preview — `execute` is not called and every step "measures" its estimate, under the same threshold
    and queue rules (a step estimated below the threshold is tried in its turn and fails, as it would).
    """

    alpha: float
    threshold: float = DEFAULT_THRESHOLD
    max_attempts: Callable[[Any], int] = _one_attempt
    lazy: bool = True
    label: Callable[[Hashable], tuple[str, str]] = _plain_label
    key: Callable[[Any], Hashable] = _itself
    params_of: Callable[[Any, int], dict[str, Any]] = _no_params
    dry_run: bool = False

    def __post_init__(self) -> None:
        check_alpha(self.alpha)
        if not 0.0 <= self.threshold <= 1.0:
            raise SearchError(f"threshold must be in [0, 1], got {self.threshold}")


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


#: Largest graph (edges) whose completions follow every measurement; larger graphs keep the first estimates (a dropped
#: step still leaves the completions of every larger graph at once: its ancestors are updated).
REFRESH_EDGES = 4_000


class _AStar(Generic[N, S]):
    """One run of the search over one graph (see `iter_search`): the queue, the measurements, the completions."""

    def __init__(
        self,
        graph: nx.DiGraph,
        ends: tuple[Hashable, Hashable],
        estimate: Callable[[N], tuple[float, float]],
        execute: Callable[[N, S, int], Outcome[S]],
        policy: SearchPolicy,
        initial_state: S | None,
    ) -> None:
        start, goal = ends
        if start not in graph or goal not in graph:
            raise SearchError(f"start {start!r} and goal {goal!r} must be graph nodes")
        try:
            self.order = list(nx.topological_sort(graph))
        except nx.NetworkXUnfeasible as e:
            raise SearchError("the tool graph must be acyclic") from e
        self.graph, self.start, self.goal = graph, start, goal
        self.estimate, self.execute, self.p, self.initial_state = estimate, execute, policy, initial_state
        self.labels: dict[Hashable, tuple[str, str]] = {}
        self.by_key: dict[Hashable, list[N]] = {}
        for m in self.order:
            if m != start and m != goal:
                self.by_key.setdefault(policy.key(m), []).append(m)
        self.measured: dict[Hashable, tuple[float, float]] = {}
        self.failed: set[Hashable] = set()  # keys
        self.dropped: set[N] = set()  # nodes whose key failed
        # Small graphs (all real plans) get exact Pareto completions, refreshed after every measurement; large ones
        # the cheaper ideal-point bound computed once, so overhead stays low on 500-tool tables.
        self.refresh = graph.number_of_edges() <= REFRESH_EDGES
        self.cap = FRONT_CAP if self.refresh else 1
        self.fronts = completions(self.order, graph, goal, self.est, self.dropped, self.cap)
        self.position = {m: i for i, m in enumerate(self.order)}
        self.reshaped = False  # completions changed since the queue was last re-ranked
        self.version = 0
        self.counter = itertools.count()
        self.heap: list[tuple[float, int, int, int, _Node[N, S]]] = []  # (f, -depth, insertion, stamp, entry)
        self.waiting: dict[Hashable, list[_Node[N, S]]] = {}  # key → queued unexecuted entries
        self.changed: set[Hashable] = set()  # keys measured since the queue was last re-ranked
        self.observations: list[Observation[N]] = []
        self.executions = 0
        self.spent = 0.0
        self.halted: list[str] = []  # why the user stopped the run, once an execute reported it

    def label_of(self, m: Hashable) -> tuple[str, str]:
        found = self.labels.get(m)
        if found is None:
            found = self.labels[m] = self.p.label(m)
        return found

    def est(self, n: N) -> tuple[float, float]:
        return self.measured.get(self.p.key(n)) or self.estimate(n)

    def priority(self, n: _Node[N, S]) -> float:
        front = self.fronts.get(n.node)
        if front is None:
            return math.inf
        c0, q0, alpha = n.cost, n.quality, self.p.alpha
        if not n.executed:
            ec, eq = self.est(n.node)
            c0, q0 = c0 + ec, q0 * eq
        if len(front) == 1:
            c, q = front[0]
            return _score(c0 + c, q0 * q, alpha)
        return min(_score(c0 + c, q0 * q, alpha) for c, q in front)

    def push(self, n: _Node[N, S]) -> Event | None:
        if n.node not in self.fronts:  # nothing left after it reaches the goal (its continuations failed)
            return None
        f = self.priority(n)
        heapq.heappush(self.heap, (f, -len(n.path), next(self.counter), n.stamp, n))
        if not n.executed:
            self.waiting.setdefault(self.p.key(n.node), []).append(n)
        sid, tool = self.label_of(n.node)
        return NodeQueued(sid, tool, n.tools, f, n.executed)

    def run(self, n: _Node[N, S]) -> Iterator[Event]:
        """Execute n's step with its retry schedule; on success mark n executed, else drop its key."""
        sid, tool = self.label_of(n.node)
        key = self.p.key(n.node)
        total = 0.0
        attempts = max(1, self.p.max_attempts(n.node))
        for attempt in range(attempts):
            yield ToolStarted(sid, tool, attempt, self.p.params_of(n.node, attempt))
            # A parent is executed, so its state is its step's; the initial state is None only when omitted, where
            # the caller's S admits None.
            parent_state = cast(S, n.parent.state if n.parent else self.initial_state)
            if self.p.dry_run:
                out: Outcome[S] = Outcome(*self.est(n.node), state=parent_state)
            else:
                out = self.execute(n.node, parent_state, attempt)
            self.executions += 0 if out.cached else 1
            self.spent += out.seconds
            total += out.seconds
            if out.stopped:
                self.halted.append(out.error or "stopped")
                yield ToolFinished(sid, tool, attempt, out.seconds, 0.0, False, (out.error or "stopped",), True)
                return
            quality = 0.0 if out.error else out.quality
            ok = out.error is None and quality >= self.p.threshold
            self.observations.append(Observation(n.node, out.seconds, quality, ok, attempt, out.cached))
            reasons = out.reasons if out.error is None else (out.error, *out.reasons)
            yield ToolFinished(sid, tool, attempt, out.seconds, quality, ok, reasons, cached=out.cached)
            if ok:
                base_c = n.parent.cost if n.parent else 0.0
                base_q = n.parent.quality if n.parent else 1.0
                n.cost, n.quality = base_c + total, base_q * quality
                n.step_seconds, n.step_quality = total, quality
                n.state, n.executed = out.state, True
                self.measured[key] = (total, quality)
                self.changed.add(key)
                self.update(self.by_key.get(key, ()) if self.refresh else ())
                break
            why = out.error or f"quality {quality:.2f} below threshold {self.p.threshold:.2f}"
            if attempt + 1 < attempts:
                yield Retry(sid, tool, attempt + 1, why)
            else:
                self.failed.add(key)
                gone = self.by_key.get(key, ())
                self.dropped.update(gone)
                self.update(gone)
                yield ToolFailed(sid, tool, f"{why} after {attempts} attempt(s)")
        self.version += 1

    def update(self, changed: Iterable[N]) -> None:
        """The completions after `changed` nodes were measured or dropped (their ancestors', nearest the goal first).

        A drop reaches every graph's completions, large ones too: otherwise the steps before a subtask that no tool
        can do still look completable, and the search tries every combination of them before it gives up.
        """
        if changed:
            rule = (self.est, self.dropped, self.cap)
            update_completions(self.fronts, self.position, self.graph, self.goal, changed, rule)
            self.reshaped = True

    def rerank(self) -> None:
        """Estimates changed: re-rank the entries they touch, whichever way they moved."""
        if self.reshaped:  # completions changed, so any entry may have moved: rank them all again
            live = (e for e in self.heap if e[3] == e[-1].stamp and e[-1].node in self.fronts)
            self.heap = [(self.priority(e[-1]), e[1], e[2], e[3], e[-1]) for e in live]
            heapq.heapify(self.heap)
        else:  # completions are fixed; only entries whose own step was measured (by key) changed
            for k in self.changed:
                for m in self.waiting.pop(k, ()):
                    if not m.executed and m.node in self.fronts:
                        m.stamp += 1
                        heapq.heappush(self.heap, (self.priority(m), -len(m.path), next(self.counter), m.stamp, m))
        self.changed.clear()
        self.reshaped = False

    def found(self, n: _Node[N, S]) -> SearchResult[N, S]:
        chain: list[_Node[N, S]] = []
        cur: _Node[N, S] | None = n.parent
        while cur is not None and cur.node != self.start:
            chain.append(cur)
            cur = cur.parent
        chain.reverse()
        return SearchResult(
            path=tuple(c.node for c in chain),
            seconds=n.cost,
            quality=n.quality,
            score=score(n.cost, n.quality, self.p.alpha),
            state=n.state,
            executions=self.executions,
            spent_seconds=self.spent,
            observations=tuple(self.observations),
            step_quality=tuple(c.step_quality for c in chain),
            step_seconds=tuple(c.step_seconds for c in chain),
        )

    def expand(self, n: _Node[N, S]) -> Iterator[Event]:
        """Queue n's successors (eager expansion runs each at once)."""
        goal_node = cast(N, self.goal)
        for succ in self.graph.successors(n.node):
            if succ in self.dropped:
                continue
            path = (*n.path, succ)
            if succ == self.goal:
                ev = self.push(_Node(goal_node, n, n.cost, n.quality, n.state, True, path=path, tools=n.tools))
                if ev is not None:
                    yield ev
                continue
            tools = (*n.tools, self.label_of(succ)[1])
            child: _Node[N, S] = _Node(succ, n, n.cost, n.quality, None, False, path=path, tools=tools)
            if not self.p.lazy:
                yield from self.run(child)
                if self.halted:
                    return
                if not child.executed:
                    continue
            if (ev := self.push(child)) is not None:
                yield ev

    def search(self) -> Generator[Event, None, SearchResult[N, S]]:
        root: _Node[N, S] = _Node(cast(N, self.start), None, 0.0, 1.0, self.initial_state, executed=True)
        if (first := self.push(root)) is not None:
            yield first
        ranked_at = self.version
        while self.heap and not self.halted:
            if ranked_at != self.version:
                self.rerank()
                ranked_at = self.version
                if not self.heap:
                    break
            f, _, _, stamp, n = heapq.heappop(self.heap)
            if stamp != n.stamp or n.node not in self.fronts:
                continue
            if n.node != self.start and n.node != self.goal and self.p.key(n.node) in self.failed:
                continue
            sid, tool = self.label_of(n.node)
            if n.node != self.start:
                yield NodePopped(sid, tool, n.tools, f, n.executed)
            if not n.executed:
                yield from self.run(n)
                if not self.halted and n.executed and (ev := self.push(n)) is not None:
                    yield ev
                continue
            if n.node == self.goal:
                result = self.found(n)
                labels = tuple(self.label_of(p) for p in result.path)
                yield PathChosen(labels, n.cost, n.quality, result.score, self.executions, self.spent)
                return result
            yield from self.expand(n)
        if self.halted:
            reason = f"stopped by the user ({self.halted[0]})"
        elif self.executions:
            reason = "every tool path failed its checks"
        else:
            reason = "no tool path reaches the goal"
        yield SearchFailed(reason, self.executions, self.spent, bool(self.halted))
        obs, halted = tuple(self.observations), bool(self.halted)
        return SearchResult(
            (), math.inf, 0.0, math.inf, None, self.executions, self.spent, obs, False, reason, stopped=halted
        )


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
    return (yield from _AStar(graph, (start, goal), estimate, execute, policy, initial_state).search())


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
    key: Callable[[N], Hashable] = _itself,
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
